"""The web explorer in a real browser: Debian's headless Chromium driven by selenium.

CI installs ``chromium`` and ``chromium-driver`` (see .ci/run); a missing browser
fails these tests rather than skipping them. Screenshots go to
``$CHESS_ENDGAME_SCREENSHOTS`` when it is set (CI keeps them as artifacts).
"""

from __future__ import annotations

import os
import shutil
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import chess
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from chess_endgame.tablebase import Prober

from .tbserver import serving

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
KBNK = "8/6k1/4K3/6B1/8/8/5N2/8 w - - 0 1"
ROOK_ENDING = "8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1"


@pytest.fixture(scope="module")
def server(prober: Prober) -> Iterator[str]:
    with serving(prober) as url:
        yield url


def _browser(tmp_path: Path, width: int, height: int) -> webdriver.Chrome:
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.path.exists(path):
            pytest.fail(f"{path} is missing: apt-get install chromium chromium-driver (.ci/run does)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-dev-shm-usage",
                 f"--window-size={width},{height}", f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


@pytest.fixture
def phone(tmp_path: Path) -> Iterator[webdriver.Chrome]:
    driver = _browser(tmp_path, 390, 844)
    try:
        yield driver
    finally:
        driver.quit()


def shot(driver: webdriver.Chrome, name: str) -> None:
    target = os.environ.get("CHESS_ENDGAME_SCREENSHOTS")
    if target:
        os.makedirs(target, exist_ok=True)
        driver.save_screenshot(os.path.join(target, f"{name}.png"))


def rows(driver: webdriver.Chrome) -> list[str]:
    return [row.get_attribute("data-uci") for row in driver.find_elements(By.CSS_SELECTOR, "#moves tbody tr")]


def wait(driver: webdriver.Chrome, condition, seconds: float = 20) -> None:
    WebDriverWait(driver, seconds).until(lambda d: condition())


def open_position(driver: webdriver.Chrome, server: str, fen: str) -> None:
    driver.get(f"{server}/#{urllib.parse.urlencode({'fen': fen})}")
    wait(driver, lambda: rows(driver) or driver.find_element(By.ID, "error").text)


def board_loaded(driver: webdriver.Chrome) -> bool:
    return driver.execute_script("const b = document.getElementById('board');"
                                 "return b.complete && b.naturalWidth > 0;")


def test_play_moves_back_forward_and_flip(server: str, phone: webdriver.Chrome) -> None:
    driver = phone
    open_position(driver, server, KBNK)
    verdict = driver.find_element(By.ID, "verdict").text
    assert verdict.startswith("White to move: win (WIN, DTZ 20"), verdict
    first = rows(driver)
    assert len(first) == len(list(chess.Board(KBNK).legal_moves))
    wait(driver, lambda: board_loaded(driver))
    shot(driver, "explorer-1-kbnk")
    # Click the best move: the board, the FEN and the ranked list show the position after it.
    driver.find_element(By.CSS_SELECTOR, "#moves tbody tr td button").click()
    after = chess.Board(KBNK)
    after.push_uci(first[0])
    wait(driver, lambda: driver.find_element(By.ID, "fen").get_attribute("value") == after.fen()
         and rows(driver) and rows(driver) != first)
    assert driver.find_element(By.ID, "verdict").text.startswith("Black to move: loss")
    assert f"lastmove={first[0]}" in driver.find_element(By.ID, "board").get_attribute("src")
    assert set(rows(driver)) == {m.uci() for m in after.legal_moves}
    wait(driver, lambda: board_loaded(driver))
    shot(driver, "explorer-2-after-a-move")
    # Back and forward.
    driver.find_element(By.ID, "back").click()
    wait(driver, lambda: driver.find_element(By.ID, "fen").get_attribute("value") == KBNK and rows(driver) == first)
    driver.find_element(By.ID, "forward").click()
    wait(driver, lambda: driver.find_element(By.ID, "fen").get_attribute("value") == after.fen())
    # Flip.
    driver.find_element(By.ID, "flip").click()
    wait(driver, lambda: "orientation=black" in driver.find_element(By.ID, "board").get_attribute("src"))
    # A phone-sized window: nothing wider than the screen.
    width = driver.execute_script("return window.innerWidth")
    assert driver.execute_script("return document.documentElement.scrollWidth") <= width
    assert driver.find_element(By.ID, "board").size["width"] <= width


def test_a_move_by_clicking_the_board(server: str, phone: webdriver.Chrome) -> None:
    driver = phone
    open_position(driver, server, KBNK)
    wait(driver, lambda: board_loaded(driver))
    board = driver.find_element(By.ID, "board")
    size = board.size["width"]

    def click_square(name: str) -> None:  # python-chess's SVG: 390 units, a 15-unit margin, 45-unit squares
        file, rank = chess.square_file(chess.parse_square(name)), chess.square_rank(chess.parse_square(name))
        x = (15 + 45 * file + 22.5) * size / 390 - size / 2
        y = (15 + 45 * (7 - rank) + 22.5) * size / 390 - size / 2
        webdriver.ActionChains(driver).move_to_element_with_offset(board, int(x), int(y)).click().perform()

    click_square("e6")
    wait(driver, lambda: "selected=e6" in board.get_attribute("src"))
    click_square("f5")
    after = chess.Board(KBNK)
    after.push_uci("e6f5")
    wait(driver, lambda: driver.find_element(By.ID, "fen").get_attribute("value") == after.fen())


def test_beyond_the_tables_the_search_answers(server: str, phone: webdriver.Chrome) -> None:
    driver = phone
    open_position(driver, server, KBNK)
    box = driver.find_element(By.ID, "fen")
    box.clear()
    box.send_keys(ROOK_ENDING)
    driver.find_element(By.CSS_SELECTOR, "#fen-form button").click()
    wait(driver, lambda: driver.find_element(By.ID, "search").text.startswith("search: "), 30)
    text = driver.find_element(By.ID, "search").text
    assert "depth" in text and "line:" in text
    assert "beyond the tables" in driver.find_element(By.ID, "verdict").text
    assert len(rows(driver)) == len(list(chess.Board(ROOK_ENDING).legal_moves))
    shot(driver, "explorer-3-search")


def test_nothing_from_the_address_runs(server: str, phone: webdriver.Chrome) -> None:
    driver = phone
    attack = '<img src=x onerror="window.pwned=1">'
    driver.get(f"{server}/#{urllib.parse.urlencode({'fen': attack})}")
    wait(driver, lambda: driver.find_element(By.ID, "error").text)
    assert "invalid FEN" in driver.find_element(By.ID, "error").text
    assert attack in driver.find_element(By.ID, "error").text  # shown as text
    assert driver.execute_script("return window.pwned === undefined")
    assert len(driver.find_elements(By.TAG_NAME, "img")) == 1  # the board only
    shot(driver, "explorer-4-escaped")


def test_browser_is_debians(tmp_path: Path) -> None:
    assert shutil.which("chromium") == CHROMIUM and shutil.which("chromedriver") == CHROMEDRIVER
