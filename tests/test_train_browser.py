"""The training page in a real browser (Debian's headless Chromium, as the explorer's tests): a drill won by
following the best moves, a blunder that gets the tables' feedback, the progress kept in the browser.
Screenshots at desktop and phone width go to ``$CHESS_ENDGAME_SCREENSHOTS``."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import chess
import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from chess_endgame.chooser import MoveClass, choose
from chess_endgame.tablebase.prober import Prober

from .tbserver import serving
from .test_explorer_browser import _browser, shot, wait

pytestmark = pytest.mark.slow  # a game in a browser each: 4-10 s


@pytest.fixture(scope="module")
def server(prober: Prober) -> Iterator[str]:
    with serving(prober) as url:
        yield url


@pytest.fixture(params=[(1280, 900, "desktop"), (390, 844, "phone")], ids=["desktop", "phone"])
def browser(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[webdriver.Chrome, str]]:
    width, height, name = request.param
    driver = _browser(tmp_path, width, height)
    try:
        yield driver, name
    finally:
        driver.quit()


def board_fen(driver: webdriver.Chrome) -> str:
    src = driver.find_element(By.ID, "board").get_attribute("src") or ""
    return urllib.parse.parse_qs(urllib.parse.urlparse(src).query)["fen"][0]


def click_square(driver: webdriver.Chrome, name: str, orientation: chess.Color = chess.WHITE) -> None:
    board = driver.find_element(By.ID, "board")
    size = board.size["width"]
    square = chess.parse_square(name)
    file, rank = chess.square_file(square), chess.square_rank(square)
    if orientation == chess.BLACK:
        file, rank = 7 - file, 7 - rank
    x = (15 + 45 * file + 22.5) * size / 390 - size / 2
    y = (15 + 45 * (7 - rank) + 22.5) * size / 390 - size / 2
    webdriver.ActionChains(driver).move_to_element_with_offset(board, int(x), int(y)).click().perform()


def play(driver: webdriver.Chrome, move: chess.Move) -> None:
    """Click the piece, then its square; wait for the answer."""
    before = driver.find_element(By.ID, "verdict").text
    click_square(driver, chess.square_name(move.from_square))
    wait(driver, lambda: f"selected={chess.square_name(move.from_square)}" in
         (driver.find_element(By.ID, "board").get_attribute("src") or ""))
    click_square(driver, chess.square_name(move.to_square))
    wait(driver, lambda: driver.find_element(By.ID, "verdict").text not in (before, "")
         or driver.find_element(By.ID, "error").text)


def new_drill(driver: webdriver.Chrome, server: str, material: str) -> chess.Board:
    driver.get(f"{server}/train")
    wait(driver, lambda: driver.find_element(By.ID, "verdict").text == "your move")  # the default drill
    Select(driver.find_element(By.ID, "drill")).select_by_value("material")
    material_box = driver.find_element(By.ID, "material")
    material_box.clear()
    material_box.send_keys(material)
    Select(driver.find_element(By.ID, "difficulty")).select_by_visible_text("easy")
    driver.find_element(By.ID, "new").click()
    wait(driver, lambda: driver.find_element(By.ID, "goal").text.startswith(material))
    wait(driver, lambda: driver.find_element(By.ID, "verdict").text == "your move")
    return chess.Board(board_fen(driver))


def test_following_the_best_moves_wins_kqvk(server: str, prober: Prober,
                                           browser: tuple[webdriver.Chrome, str]) -> None:
    driver, width = browser
    board = new_drill(driver, server, "KQvK")
    assert "you play white, win" in driver.find_element(By.ID, "goal").text
    shot(driver, f"train-{width}-start")
    for _ in range(30):
        if "won" in driver.find_element(By.ID, "goal").text:
            break
        driver.find_element(By.ID, "hint").click()
        wait(driver, lambda: driver.find_element(By.ID, "detail").text.startswith("best: "))
        san = driver.find_element(By.ID, "detail").text.removeprefix("best: ")
        best = choose(board, prober, full=True).best
        assert best is not None and san == board.san(best.move)
        play(driver, best.move)
        assert "kept" in driver.find_element(By.ID, "verdict").text or "#" in san
        before = board.fen()
        wait(driver, lambda: board_fen(driver) != before)  # noqa: B023 - waited for here, in this iteration
        board = chess.Board(board_fen(driver))
    goal = driver.find_element(By.ID, "goal").text
    assert "won: goal reached" in goal
    cells = [td.text for td in driver.find_elements(By.CSS_SELECTOR, "#progress tbody tr td")]
    assert cells[:3] == ["KQvK", "1", "1"] or ("KQvK" in cells and cells[cells.index("KQvK") + 2] == "1")
    shot(driver, f"train-{width}-won")
    # The mate taken back and played again: still one success for the one attempt.
    driver.find_element(By.ID, "undo").click()
    wait(driver, lambda: driver.find_element(By.ID, "verdict").text == "taken back: your move")
    board = chess.Board(board_fen(driver))
    best = choose(board, prober, full=True).best
    assert best is not None
    play(driver, best.move)
    wait(driver, lambda: "won: goal reached" in driver.find_element(By.ID, "goal").text)
    assert "plies to spare" not in driver.find_element(By.ID, "verdict").text  # no 50-move margin after mate
    cells = [td.text for td in driver.find_elements(By.CSS_SELECTOR, "#progress tbody tr td")]
    assert cells[cells.index("KQvK") + 1:cells.index("KQvK") + 3] == ["1", "1"], cells


def test_the_saavedra_promotes_to_a_rook(server: str, prober: Prober,
                                        browser: tuple[webdriver.Chrome, str]) -> None:
    """A promotion asks for the piece (it always made a queen, and the Saavedra is won by c8=R after Rd4)."""
    driver, width = browser
    driver.get(f"{server}/train")
    wait(driver, lambda: driver.find_element(By.ID, "verdict").text == "your move")
    Select(driver.find_element(By.ID, "drill")).select_by_value("Saavedra")
    driver.find_element(By.ID, "new").click()
    wait(driver, lambda: driver.find_element(By.ID, "goal").text.startswith("Saavedra"))
    wait(driver, lambda: driver.find_element(By.ID, "verdict").text == "your move")
    board = chess.Board(board_fen(driver))
    for _ in range(8):  # c7 Rd6+ Kb5 Rd5+ Kb4 Rd4+ Kb3 Rd3+ Kc2, and the pawn promotes
        best = choose(board, prober, full=True).best
        assert best is not None
        if best.move.promotion:
            break
        play(driver, best.move)
        before = board.fen()
        wait(driver, lambda: board_fen(driver) != before)  # noqa: B023 - waited for here, in this iteration
        board = chess.Board(board_fen(driver))
    assert chess.Move.from_uci("c7c8r") in board.legal_moves, board.fen()
    click_square(driver, "c7")
    click_square(driver, "c8")
    wait(driver, lambda: driver.find_element(By.ID, "promotion").is_displayed())
    choices = [b.text for b in driver.find_elements(By.CSS_SELECTOR, "#promotion button")]
    assert choices == ["queen", "knight", "rook", "bishop", "cancel"], choices
    shot(driver, f"train-{width}-promotion")
    driver.find_element(By.CSS_SELECTOR, '#promotion button[data-uci="c7c8r"]').click()
    wait(driver, lambda: driver.find_element(By.ID, "verdict").text.startswith("c8=R"))  # the piece chosen
    assert not driver.find_element(By.ID, "promotion").is_displayed()


def test_a_blunder_gets_the_tables_feedback_and_the_best_move(server: str, prober: Prober,
                                                             browser: tuple[webdriver.Chrome, str]) -> None:
    driver, width = browser
    for _ in range(20):  # a random drill: one with a move that lets the win go (most have one)
        board = new_drill(driver, server, "KQvK")
        choice = choose(board, prober, full=True)
        blunders = [m for m in choice.moves if m.cls < MoveClass.WIN]
        if blunders:
            break
    assert choice.best is not None and blunders
    blunder = blunders[0]
    play(driver, blunder.move)
    verdict = driver.find_element(By.ID, "verdict").text
    assert verdict.startswith(board.san(blunder.move) + "??") and "win →" in verdict
    detail = driver.find_element(By.ID, "detail").text
    assert detail.startswith(f"best was {board.san(choice.best.move)}: ")
    shot(driver, f"train-{width}-blunder")
    driver.find_element(By.ID, "undo").click()
    wait(driver, lambda: driver.find_element(By.ID, "verdict").text == "taken back: your move")
    assert board_fen(driver) == board.fen()
