"""``chess-endgame serve``: the Lichess tablebase API, the explorer's endpoints, errors and limits.

Every request goes to a server on 127.0.0.1 started by the test.
"""

from __future__ import annotations

import asyncio
import json
import random
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import aiohttp
import chess
import chess.syzygy
import pytest

from chess_endgame.bench.common import percentile
from chess_endgame.board import random_position
from chess_endgame.chooser import Choice, MoveClass, choose
from chess_endgame.serve.app import ServeConfig
from chess_endgame.tablebase.prober import Prober

from .conftest import EXECUTABLE
from .tbserver import serving

STATIC = Path(__file__).resolve().parent.parent / "chess_endgame" / "serve" / "static"
#: The chooser's classes as Lichess categories, written out here rather than imported from the server.
EXPECTED_CATEGORY = {MoveClass.WIN: "win", MoveClass.MAYBE_WIN: "syzygy-win", MoveClass.CURSED_WIN: "cursed-win",
                     MoveClass.DRAW: "draw", MoveClass.BLESSED_LOSS: "blessed-loss",
                     MoveClass.MAYBE_LOSS: "syzygy-loss", MoveClass.LOSS: "loss"}
OTHER_SIDE = {"win": "loss", "syzygy-win": "syzygy-loss", "cursed-win": "blessed-loss", "draw": "draw",
              "blessed-loss": "cursed-win", "syzygy-loss": "syzygy-win", "loss": "win"}
POSITION_FIELDS = {"checkmate", "stalemate", "variant_win", "variant_loss", "insufficient_material", "dtz",
                   "precise_dtz", "dtm", "dtw", "dtc", "category"}


def get(url: str) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of a GET, 4xx and 5xx included."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def get_json(url: str) -> tuple[int, object]:
    status, headers, body = get(url)
    assert headers["Content-Type"].startswith("application/json"), (url, headers)
    return status, json.loads(body)


def q(fen: str) -> str:
    return urllib.parse.quote(fen)


@pytest.fixture(scope="module")
def server(prober: Prober) -> str:
    with serving(prober) as url:
        yield url


def lila_category(dtz: int, halfmoves: int) -> str:
    """lila-tablebase's category of a position with DTZ ``dtz`` and halfmove clock ``halfmoves``, taking every
    DTZ as possibly rounded (shakmaty-syzygy's ``AmbiguousWdl::from_dtz_and_halfmoves``), without its
    inference from the root's category. An independent reference for the chooser's classes."""
    n = dtz + halfmoves if dtz > 0 else dtz - halfmoves if dtz < 0 else 0
    if halfmoves and abs(n) == 100:
        return "syzygy-win" if n > 0 else "syzygy-loss"
    if n < -100:
        return "blessed-loss"
    if n < 0:
        return "loss"
    if n == 0:
        return "draw"
    return "win" if n <= 100 else "cursed-win"


def sample(prober: Prober, per_material: int, seed: int) -> list[chess.Board]:
    """Random positions of every shared material (both tables present), clocks 0..99."""
    rng = random.Random(seed)
    boards = []
    for material in sorted(prober.files.wdl):
        if material not in prober.files.dtz:
            continue
        for _ in range(per_material):
            board = random_position(material, rng)
            board.halfmove_clock = rng.randrange(100)
            boards.append(board)
    return boards


async def _fetch_all(urls: list[str], parallel: int) -> list[tuple[int, object, float]]:
    """(status, JSON, seconds) of every URL, ``parallel`` at a time."""
    limit = asyncio.Semaphore(parallel)

    async def one(session: aiohttp.ClientSession, url: str) -> tuple[int, object, float]:
        async with limit:
            start = time.perf_counter()
            async with session.get(url) as response:
                data = await response.json()
                return response.status, data, time.perf_counter() - start

    connector = aiohttp.TCPConnector(limit=parallel)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=120)) as session:
        return await asyncio.gather(*(one(session, url) for url in urls))


@pytest.mark.slow
def test_standard_agrees_with_the_chooser_on_random_positions(server: str, prober: Prober,
                                                              syzygy_path: str) -> None:
    boards = sample(prober, 9, seed=14)
    answers = asyncio.run(_fetch_all([f"{server}/standard?fen={q(b.fen())}" for b in boards], 8))
    raw = chess.syzygy.open_tablebase(prober.files.directories[0])
    checked = moves_checked = 0
    categories: set[str] = set()
    for board, (status, data, _) in zip(boards, answers, strict=True):
        choice = choose(board, prober, full=True)
        if not isinstance(choice, Choice):
            assert status == 404 and "error" in data, (board.fen(), status, data)
            continue
        assert status == 200, (board.fen(), data)
        assert set(data) == POSITION_FIELDS | {"moves"}
        assert data["category"] == EXPECTED_CATEGORY[choice.result], board.fen()
        assert data["dtz"] == raw.probe_dtz(board) and data["dtm"] is None
        assert [m["uci"] for m in data["moves"]] == [m.uci for m in choice.moves], board.fen()
        if data["moves"]:
            assert data["category"] == OTHER_SIDE[data["moves"][0]["category"]]
        for entry, move in zip(choice.moves, data["moves"], strict=True):
            assert set(move) == POSITION_FIELDS | {"uci", "san", "zeroing", "conversion"}
            assert move["category"] == OTHER_SIDE[EXPECTED_CATEGORY[entry.cls]], (board.fen(), move)
            assert move["san"] == board.san(entry.move) and move["zeroing"] == board.is_zeroing(entry.move)
            board.push(entry.move)
            # python-chess itself, without the project's prober, for the best and the worst move
            child_dtz = raw.probe_dtz(board) if move in (data["moves"][0], data["moves"][-1]) \
                else prober.probe_dtz(board)
            halfmoves = board.halfmove_clock
            assert move["dtz"] == child_dtz, (board.fen(), move)
            assert move["checkmate"] == board.is_checkmate() and move["stalemate"] == board.is_stalemate()
            board.pop()
            if move["checkmate"]:
                assert move["category"] == "loss"
            elif not (halfmoves == 100 and not entry.zeroing):  # the chooser: the 50-move draw can be claimed
                assert move["category"] == lila_category(child_dtz, halfmoves), (board.fen(), move)
            else:
                assert move["category"] == "draw"
            categories.add(move["category"])
            moves_checked += 1
        checked += 1
    assert checked >= 0.9 * len(boards), checked  # a few random positions have no legal move
    assert {"win", "loss", "draw", "cursed-win", "blessed-loss"} <= categories, categories
    print(f"{checked} positions, {moves_checked} moves agree; categories seen: {sorted(categories)}")


def test_standard_matches_the_lichess_example(server: str) -> None:
    status, data = get_json(f"{server}/standard?fen=4k3/6KP/8/8/8/8/7p/8_w_-_-_0_1")
    assert status == 200 and data["category"] == "win" and data["dtz"] == 1
    first = data["moves"][0]
    assert first["uci"] == "h7h8q" and first["san"] == "h8=Q+" and first["category"] == "loss"
    assert first["dtz"] == -2 and first["zeroing"] and first["conversion"]


def test_mainline(server: str) -> None:
    status, data = get_json(f"{server}/standard/mainline?fen=4k3/6KP/8/8/8/8/7p/8_w_-_-_0_1")
    assert status == 200 and data["dtz"] == 1 and data["winner"] == "w"
    line = [step["uci"] for step in data["mainline"]]
    assert line[:3] == ["h7h8q", "e8d7", "h8h2"]
    board = chess.Board("4k3/6KP/8/8/8/8/7p/8 w - - 0 1")
    for step in data["mainline"]:
        board.push_uci(step["uci"])
    assert board.is_checkmate()
    status, data = get_json(f"{server}/standard/mainline?fen=8/8/8/4k3/8/8/8/4KR2_b_-_-_0_1")
    assert status == 200 and data["winner"] == "w" and data["dtz"] < 0  # Black loses: the line goes on to mate
    status, data = get_json(f"{server}/standard/mainline?fen=8/8/8/4k3/8/8/4K3/4R3_w_-_-_99_80")
    assert status == 200 and len(data["mainline"]) == 1 and data["winner"] is None  # the 50-move rule ends it
    # At clock 99 the move is one that would still win without the rule (Kd7 left the rook to be taken).
    status, data = get_json(f"{server}/standard/mainline?fen=4K3/8/7k/6R1/8/8/8/8_w_-_-_99_1")
    assert status == 200 and data["mainline"][0]["dtz"] < 0, data  # Black, to move after it, would lose
    status, data = get_json(f"{server}/standard/mainline?fen={q('8/5k1r/8/8/6K1/8/8/R7 w - - 0 1')}")
    assert status == 200 and data == {"dtz": 0, "precise_dtz": 0, "mainline": [], "winner": None}


@pytest.mark.parametrize(("query", "status", "words"), [
    ("", 400, "missing fen"),
    ("?fen=", 400, "missing fen"),
    ("?fen=banana", 400, "invalid FEN"),
    ("?fen=" + q("8/8/8/8/8/8/8/8 w - - 0 1"), 400, "illegal position"),
    ("?fen=" + q("4k3/8/8/8/8/8/4R3/4K3 w - - 0 1"), 400, "the side not to move is in check"),
    ("?fen=" + "8/" * 200, 400, "fen too long"),
    ("?fen=" + q(chess.STARTING_FEN), 404, "32 pieces on the board"),
    ("?fen=" + q("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1"), 404, "castling rights"),
    ("?fen=" + q("<script>alert(1)</script>"), 400, "invalid FEN"),
    ("?fen=4k3/8/8/8/8/8/8/4KQ2_w_-_-_99999999999999999999_1", 400, "halfmove clock is above 2147483647"),
    ("?fen=" + q("8/8/8/4k3/8/8/8/rQK5 w - e6 0 80"), 400, "the en passant square is impossible"),
])
@pytest.mark.parametrize("path", ["/standard", "/standard/mainline", "/api/position"])
def test_bad_requests_get_json_errors(server: str, path: str, query: str, status: int, words: str) -> None:
    if path == "/api/position" and status == 404:
        status, words = 200, "not_covered"  # the explorer shows such positions, with the search
    got, headers, body = get(server + path + query)
    assert got == status, body
    assert headers["Content-Type"].startswith("application/json")
    data = json.loads(body)
    if status == 200:
        assert not data["tablebase"] and data["not_covered"], data
        return
    assert set(data) == {"error"} and words in data["error"], data


def test_missing_tables_are_404(server: str, prober: Prober) -> None:
    missing = next(name for name in chess.syzygy.tablenames(piece_count=5) if name not in prober.files.wdl)
    board = random_position(missing, random.Random(1))
    status, data = get_json(f"{server}/standard?fen={q(board.fen())}")
    assert status == 404 and "reach" in data["error"] or "missing" in data["error"], data


def test_other_paths_methods_and_sizes_are_4xx_never_500(server: str) -> None:
    for path in ["/nope", "/static/", "/static/app.py", "/static/..%2fapp.py", "/static/%2e%2e/api.py",
                 "/static/../../tablebase.py", "/standard/", "/static/index.html"]:
        status, headers, body = get(server + path)
        assert status == 404, (path, status)
        assert json.loads(body)["error"]
    request = urllib.request.Request(f"{server}/standard?fen=x", method="POST", data=b"{}")
    try:
        urllib.request.urlopen(request, timeout=10)
    except urllib.error.HTTPError as exc:
        assert exc.code == 405 and json.loads(exc.read())["error"] == "method not allowed"
    status, _, _ = get(f"{server}/standard?fen={'x' * 10000}")
    assert 400 <= status < 500  # the request line is longer than the server reads


#: Requests aiohttp's own parser refuses before any handler: the status the RFCs give, and words of the error.
OVERSIZE = [
    (b"GET /standard?fen=" + b"8" * 20000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, "request line is over"),
    (b"GET /standard?fen=8/8 HTTP/1.1\r\nHost: x\r\nX-Big: " + b"y" * 10240 + b"\r\n\r\n", 431,
     "header is over"),
    (b"GET /health HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(100)) + b"\r\n",
     431, "request headers"),
    (b"\x16\x03\x01\x02\x00 not http at all\r\n\r\n", 400, "malformed HTTP request"),
    (b"GET /health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", 400, "malformed HTTP request"),
]


def _raw(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` as bytes; the status, headers and body of the answer."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body


def test_requests_the_http_parser_refuses_get_json_and_one_log_line(syzygy_path: str) -> None:
    """Over-long request lines and headers, too many headers, bytes that are not HTTP: a 4xx with the API's
    JSON error (never the request echoed), and one line each in the server's log, no traceback."""
    proc = subprocess.Popen([EXECUTABLE, "serve", "--port", "0", "--syzygy-path", syzygy_path],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.stdout.readline()
        port = int(proc.stdout.readline().split("explorer: ")[1].split()[0].rstrip("/").rsplit(":", 1)[1])
        for request, status, words in OVERSIZE:
            got, headers, body = _raw(port, request)
            assert got == status, (request[:40], got, body[:200])
            assert headers["content-type"].startswith("application/json")
            data = json.loads(body)
            assert set(data) == {"error"} and words in data["error"], data
            assert b"8888" not in body and b"yyyy" not in body
        assert get_json(f"http://127.0.0.1:{port}/health")[1]["errors"] >= len(OVERSIZE)
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert "Traceback" not in err, err
    bad = [line for line in err.splitlines() if line.startswith("bad request from 127.0.0.1: ")]
    assert len(bad) == len(OVERSIZE), err
    assert all(len(line) < 120 for line in bad)


def test_health(server: str, prober: Prober) -> None:
    status, data = get_json(f"{server}/health")
    assert status == 200 and data["status"] == "ok"
    assert data["tables"]["wdl"] == len(prober.files.wdl) and data["tables"]["max_pieces"] == prober.max_pieces
    assert get_json(f"{server}/monitor")[1]["status"] == "ok"


def test_explorer_page_is_static_and_escapes(server: str) -> None:
    status, headers, body = get(server + "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert "script-src 'self'" in headers["Content-Security-Policy"] and headers["X-Frame-Options"] == "DENY"
    page = body.decode()
    assert '<meta name="viewport"' in page and "/static/explorer.js" in page
    script = get(server + "/static/explorer.js")[2].decode()
    assert script == (STATIC / "explorer.js").read_text()
    # Text from the server or the address bar goes into the page as text, never as HTML or code.
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert sink not in script, sink
    assert get(server + "/static/explorer.css")[0] == 200


def test_explorer_position_and_board(server: str) -> None:
    status, data = get_json(f"{server}/api/position?fen={q('8/6k1/4K3/6B1/8/8/5N2/8 w - - 79 1')}")
    assert status == 200 and data["tablebase"] and data["verdict"]["category"] == "win"
    assert data["verdict"]["dtz"] == 20
    winning = {m["san"] for m in data["moves"] if m["class"] == "WIN"}
    assert winning == {"Kf5", "Be7", "Bf6+", "Ne4", "Nh3", "Nd3"}
    first = data["moves"][0]
    after = chess.Board(data["fen"])
    after.push_uci(first["uci"])
    assert first["fen"] == after.fen()
    status, data = get_json(f"{server}/api/position?fen={q(chess.STARTING_FEN)}")
    assert status == 200 and not data["tablebase"] and "32 pieces" in data["not_covered"]
    assert len(data["moves"]) == 20 and all("fen" in m and "class" not in m for m in data["moves"])
    status, data = get_json(f"{server}/api/position?fen={q('7k/5Q2/6K1/8/8/8/8/8 b - - 0 1')}")
    assert data["status"] == "stalemate" and data["moves"] == []
    status, headers, body = get(f"{server}/board.svg?fen={q(chess.STARTING_FEN)}&orientation=black&lastmove=e2e4"
                                "&selected=e2")
    assert status == 200 and headers["Content-Type"].startswith("image/svg+xml") and body.startswith(b"<svg")
    for query in ["orientation=up", "lastmove=zz", "selected=k9"]:
        status, _, _ = get(f"{server}/board.svg?fen={q(chess.STARTING_FEN)}&{query}")
        assert status == 400, query


def test_search_beyond_the_tables(server: str) -> None:
    fen = "8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1"
    status, data = get_json(f"{server}/api/search?fen={q(fen)}&movetime=300")
    assert status == 200 and data["source"] == "search" and chess.Move.from_uci(data["move"])
    assert data["score"] is not None and data["pv"] and data["pv"][0]["uci"] == data["move"]
    assert data["time_ms"] < 3000 and "8 pieces" in data["not_covered"]
    for movetime in ["0", "999999", "abc", q("\u00b2")]:  # ² is a digit to str.isdigit, not to int()
        status, data = get_json(f"{server}/api/search?fen={q(fen)}&movetime={movetime}")
        assert status == 400 and "movetime" in data["error"]
    status, data = get_json(f"{server}/api/search?fen={q('7k/6Q1/6K1/8/8/8/8/8 b - - 0 1')}")
    assert status == 400 and "checkmate" in data["error"]


def test_a_search_blocks_no_one_and_searches_are_bounded(prober: Prober) -> None:
    config = ServeConfig(max_searches=1, queue_timeout=0.5, max_search_ms=5000)
    fen = q("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    with serving(prober, config) as url:
        results: dict[str, tuple] = {}
        thread = threading.Thread(target=lambda: results.update(first=get_json(f"{url}/api/search?fen={fen}"
                                                                                "&movetime=2500")))
        thread.start()
        time.sleep(0.4)
        start = time.monotonic()
        assert get_json(f"{url}/health")[1]["searches"]["running"] == 1
        status, data = get_json(f"{url}/standard?fen={q('8/6k1/4K3/6B1/8/8/5N2/8 w - - 0 1')}")
        assert status == 200 and time.monotonic() - start < 1.0  # probes go on while the search runs
        status, data = get_json(f"{url}/api/search?fen={fen}&movetime=100")
        assert status == 503 and "busy" in data["error"]
        thread.join(30)
        assert results["first"][0] == 200


@pytest.mark.slow
def test_200_concurrent_requests_are_all_correct(server: str, prober: Prober, syzygy_path: str) -> None:
    """A load of 200 requests at once on positions the server has not seen; the latencies are printed
    (a benchmark, not a timed test)."""
    boards = sample(prober, 4, seed=200)[:200]
    start = time.perf_counter()
    answers = asyncio.run(_fetch_all([f"{server}/standard?fen={q(b.fen())}" for b in boards], 200))
    wall = time.perf_counter() - start
    expected = {}
    with Prober(syzygy_path) as own:  # the server's prober has the answers cached now
        for board in boards:
            choice = choose(board, own, full=True)
            expected[board.fen()] = (EXPECTED_CATEGORY[choice.result], [m.uci for m in choice.moves]) \
                if isinstance(choice, Choice) else None
    for board, (status, data, _) in zip(boards, answers, strict=True):
        want = expected[board.fen()]
        if want is None:
            assert status == 404
        else:
            assert status == 200 and (data["category"], [m["uci"] for m in data["moves"]]) == want
    latencies = [seconds for _, _, seconds in answers]
    p50, p99 = percentile(latencies, 50), percentile(latencies, 99)
    print(f"200 concurrent /standard: p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, "
          f"{len(boards) / wall:.0f} requests/s")


def test_serve_command_starts_answers_and_stops(syzygy_path: str) -> None:
    proc = subprocess.Popen([EXECUTABLE, "serve", "--port", "0", "--syzygy-path", syzygy_path],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        second = proc.stdout.readline()
        assert "tablebase files" in first, first
        url = second.split("explorer: ")[1].split()[0]
        assert url.startswith("http://127.0.0.1:")
        status, data = get_json(url + "health")
        assert status == 200 and data["status"] == "ok"
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "stopped" in err and "Traceback" not in err


def test_serve_command_refuses_no_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only an install without its embedded tables (and no other tables) has nothing to serve."""
    from click.testing import CliRunner

    from chess_endgame.tablebase import paths
    from chess_endgame_cli.main import cli

    monkeypatch.setattr(paths, "embedded_directory", lambda: str(tmp_path))
    monkeypatch.setenv("SYZYGY_PATH", str(tmp_path))
    result = CliRunner().invoke(cli, ["serve", "--port", "0"])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("chess-endgame: error: no Syzygy tables found") and result.stderr.count("\n") == 1
