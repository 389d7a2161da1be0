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

from chess_endgame.tablebase.prober import Prober

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
    driver.get("about:blank")  # a new page each time (a change of the address's #fen alone is not a new page)
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


def _cell_colours(driver: webdriver.Chrome) -> dict[str, str]:
    """Each row's result text -> the colour it is drawn in."""
    return driver.execute_script(
        "const out = {}; for (const row of document.querySelectorAll('#moves tbody tr')) {"
        " const cell = row.cells[1]; out[cell.textContent] = getComputedStyle(cell).color; } return out;")


def test_each_kind_of_result_has_its_own_colour(server: str, phone: webdriver.Chrome) -> None:
    """Win, cursed win, draw, blessed loss, loss: five colours (cursed wins used to be drawn as wins)."""
    driver = phone
    colours: dict[str, str] = {}
    # KBNvK at halfmove clock 79: some moves still win, the slower ones are cursed, Bh6+ draws.
    for fen in ("8/6k1/4K3/6B1/8/8/5N2/8 w - - 79 1", "8/2K5/4B3/3N4/8/8/4k3/8 b - - 48 1"):
        open_position(driver, server, fen)
        colours.update(_cell_colours(driver))
    assert {"win", "cursed-win", "draw", "blessed-loss", "loss"} <= set(colours), colours
    assert len({colours[kind] for kind in ("win", "cursed-win", "draw", "blessed-loss", "loss")}) == 5, colours
    shot(driver, "explorer-5-colours")


def test_an_invalid_fen_shows_the_error_not_a_broken_board(server: str, phone: webdriver.Chrome) -> None:
    driver = phone
    open_position(driver, server, "8/8/8/8/8/8/8/8 w - - 0 1")
    assert "illegal position" in driver.find_element(By.ID, "error").text
    assert not driver.find_element(By.ID, "board").is_displayed()
    shot(driver, "explorer-6-invalid-fen")
    # A good position after it brings the board back.
    box = driver.find_element(By.ID, "fen")
    box.clear()
    box.send_keys(KBNK)
    driver.find_element(By.CSS_SELECTOR, "#fen-form button").click()
    wait(driver, lambda: rows(driver) and board_loaded(driver))
    assert driver.find_element(By.ID, "board").is_displayed() and not driver.find_element(By.ID, "error").text


def test_a_shared_link_with_underscores_shows_spaces_after_back(server: str, phone: webdriver.Chrome) -> None:
    driver = phone
    driver.get(f"{server}/#fen={KBNK.replace(' ', '_')}")
    wait(driver, lambda: rows(driver))
    assert driver.find_element(By.ID, "fen").get_attribute("value") == KBNK
    driver.find_element(By.CSS_SELECTOR, "#moves tbody tr td button").click()
    wait(driver, lambda: driver.find_element(By.ID, "fen").get_attribute("value") != KBNK)
    driver.find_element(By.ID, "back").click()
    wait(driver, lambda: driver.find_element(By.ID, "fen").get_attribute("value") == KBNK)


def test_results_are_for_the_side_that_moves_as_the_note_says(server: str, phone: webdriver.Chrome) -> None:
    driver = phone
    after_kf5 = "8/6k1/8/5KB1/8/8/5N2/8 b - - 1 1"  # Black is lost: every Black move loses for Black
    open_position(driver, server, after_kf5)
    assert set(_cell_colours(driver)) == {"loss"}
    note = driver.find_element(By.CSS_SELECTOR, ".note").text
    assert "for the side that plays it" in note and "loses for the player who makes it" in note
    assert "after the move" not in note


def test_beyond_the_tables_each_move_says_what_is_known(server: str, phone: webdriver.Chrome) -> None:
    """No table for the root: a capture into the tables still shows its result, the other moves say that no
    table covers them, and the searcher's move shows its score."""
    driver = phone
    five = "8/8/3k4/p7/4r3/2K1Q3/8/8 w - - 0 1"  # KQvKRP: no table here; Qxe4 leaves KQvKP, a 4-piece one
    open_position(driver, server, five)
    wait(driver, lambda: driver.find_element(By.ID, "search").text.startswith("search: "), 30)
    assert "beyond the tables" in driver.find_element(By.ID, "verdict").text
    cells = {row.get_attribute("data-uci"): row.find_elements(By.TAG_NAME, "td")[1].text
             for row in driver.find_elements(By.CSS_SELECTOR, "#moves tbody tr")}
    assert cells["e3e4"] == "win", cells  # the capture into the tables
    # The others: what the tables prove after the move (a reply that captures into them), else "no table",
    # and the searcher's own move its score.
    kinds = ("win", "draw", "loss", "cursed-win", "blessed-loss")
    assert all(text in kinds or text == "no table" or text.startswith("search: ") for text in cells.values()), cells
    searched = driver.find_element(By.ID, "search").text
    best = chess.Board(five).parse_san(searched.split("search: ")[1].split(",")[0]).uci()
    assert cells[best].startswith("search: ") or cells[best] in kinds, (searched, cells)
    unknown = [uci for uci, text in cells.items() if text == "no table"]
    assert unknown, cells
    title = driver.find_element(By.CSS_SELECTOR, f'#moves tbody tr[data-uci="{unknown[0]}"]').get_attribute("title")
    assert title.startswith("no table covers the position after it: ")
    shot(driver, "explorer-7-beyond-the-tables")


def test_the_browsers_back_and_forward_step_through_the_positions(server: str, phone: webdriver.Chrome) -> None:
    """Each position is an entry of the browser's history (the page had replaced one entry, so Back left it)."""
    driver = phone
    open_position(driver, server, KBNK)
    first = rows(driver)
    driver.find_element(By.CSS_SELECTOR, "#moves tbody tr td button").click()
    after = chess.Board(KBNK)
    after.push_uci(first[0])
    wait(driver, lambda: driver.find_element(By.ID, "fen").get_attribute("value") == after.fen() and rows(driver))
    assert urllib.parse.unquote_plus(driver.current_url).endswith("#fen=" + after.fen())
    driver.back()
    wait(driver, lambda: driver.find_element(By.ID, "fen").get_attribute("value") == KBNK and rows(driver) == first)
    assert urllib.parse.unquote_plus(driver.current_url).endswith("#fen=" + KBNK)
    assert not driver.find_element(By.ID, "back").is_enabled() and driver.find_element(By.ID, "forward").is_enabled()
    driver.forward()
    wait(driver, lambda: driver.find_element(By.ID, "fen").get_attribute("value") == after.fen())
    # The page's own back button goes through the same history: the browser's Forward undoes it.
    driver.find_element(By.ID, "back").click()
    wait(driver, lambda: driver.find_element(By.ID, "fen").get_attribute("value") == KBNK)
    driver.forward()
    wait(driver, lambda: driver.find_element(By.ID, "fen").get_attribute("value") == after.fen())
    # A link pasted into the address bar is a new position.
    driver.get(f"{server}/#{urllib.parse.urlencode({'fen': ROOK_ENDING})}")
    wait(driver, lambda: driver.find_element(By.ID, "fen").get_attribute("value") == ROOK_ENDING)


def test_a_failed_search_keeps_the_position(server: str, phone: webdriver.Chrome) -> None:
    """Every searcher busy (the server's 503): the board, the verdict and the moves stay; the search line says why."""
    driver = phone
    open_position(driver, server, KBNK)
    driver.execute_script(
        "const real = window.fetch; window.fetch = (url, options) => String(url).startsWith('/api/search') ?"
        " Promise.resolve(new Response(JSON.stringify({error: 'busy: 2 searches running; try again'}),"
        " {status: 503, headers: {'Content-Type': 'application/json'}})) : real(url, options);")
    box = driver.find_element(By.ID, "fen")
    box.clear()
    box.send_keys(ROOK_ENDING)
    driver.find_element(By.CSS_SELECTOR, "#fen-form button").click()
    wait(driver, lambda: driver.find_element(By.ID, "search").text.startswith("search failed: "))
    assert driver.find_element(By.ID, "search").text == "search failed: busy: 2 searches running; try again"
    assert "beyond the tables" in driver.find_element(By.ID, "verdict").text
    assert driver.find_element(By.ID, "board").is_displayed() and not driver.find_element(By.ID, "error").text
    assert len(rows(driver)) == len(list(chess.Board(ROOK_ENDING).legal_moves))
