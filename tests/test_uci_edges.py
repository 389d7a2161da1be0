"""The UCI engine at the edges of the protocol: bytes its input cannot decode, characters its output cannot
encode, unknown words before a command, numbers too large for a clock, a refused position under ``go infinite``
or ``go ponder``, and ``searchmoves`` with MultiPV at a tablebase root."""

from __future__ import annotations

import io
import os
import subprocess
import time

import chess
import chess.engine

from chess_endgame.uci import UciEngine
from chess_endgame.uci.go import LARGEST, parse_go

from .conftest import ENGINE, Pipe


def test_an_undecodable_byte_is_replaced_not_fatal() -> None:
    """A Latin-1 byte from a UTF-8 GUI (strict decoding, as a desktop locale gives) and unknown words before a
    command: the engine answers every isready, says what it skipped and exits 0 without a traceback."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    commands = b"uci\nisready\nsetoption name SyzygyPath value /tmp/\xe9checs\nisready\njoho isready\n"
    proc = subprocess.run(ENGINE, input=commands, capture_output=True, env=env, timeout=120)
    out = proc.stdout.decode("utf-8")  # strict: the engine's own output is valid UTF-8
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")
    assert out.splitlines().count("readyok") == 3
    assert "info string ignoring 'joho' before isready" in out


def test_a_character_the_output_cannot_encode_loses_no_line() -> None:
    """On a code page without the character (a Windows pipe), the line goes out with ``?`` and the engine goes on
    answering; only a closed output silences it."""
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="cp1252", write_through=True)
    engine = UciEngine(out)
    engine.info_string("SyzygyPath C:\\Users\\\u0141ukasz\\syzygy")
    engine.handle("isready")
    assert not engine.output_closed
    assert raw.getvalue().decode("cp1252").splitlines() == ["info string SyzygyPath C:\\Users\\?ukasz\\syzygy",
                                                            "readyok"]


def test_unknown_words_before_a_command_are_skipped() -> None:
    out = io.StringIO()
    engine = UciEngine(out)
    assert engine.handle("joho debug on") and engine.debug
    assert engine.handle("foo bar") and not engine.handle("xyzzy quit")
    assert out.getvalue().splitlines() == ["info string ignoring 'joho' before debug",
                                           "info string unknown command: foo bar",
                                           "info string ignoring 'xyzzy' before quit"]


def test_a_bad_number_does_not_swallow_a_keyword_and_huge_numbers_are_capped() -> None:
    board = chess.Board()
    warnings: list[str] = []

    def go(words: str):
        warnings.clear()
        return parse_go(words.split(), board, overhead=10, table_pieces=5, warn=warnings.append)

    read = go("depth infinite")
    assert read.limits.infinite and warnings == ["go depth needs an integer, got 'infinite'; ignored"]
    read = go("nodes ponder")
    assert read.ponder and read.limits.infinite
    read = go("movetime searchmoves e2e4 searchmoves d2d4 depth 3")
    assert read.limits.movetime is None and read.limits.depth == 3
    assert read.limits.searchmoves == [chess.Move.from_uci("e2e4"), chess.Move.from_uci("d2d4")]
    assert warnings == ["go movetime needs an integer, got 'searchmoves'; ignored"]
    read = go("wtime 1000 winc 1" + "0" * 400)
    assert warnings == [f"go winc 1{'0' * 19}...: too large; taken as {LARGEST}"]
    assert read.budget_ms is not None and read.budget_ms[1] <= 1000  # never more than the clock
    read = go("wtime 99999999999 btime 5")
    assert warnings == [f"go wtime 99999999999: too large; taken as {LARGEST}"] and read.budget_ms is not None


def test_a_huge_clock_still_gets_its_bestmove() -> None:
    pipe = Pipe().handshake()
    try:
        pipe.send("position startpos")
        sent = time.monotonic()
        pipe.send("go wtime 1000 winc 1" + "0" * 400)
        at, line = pipe.expect("bestmove", 10)
        assert at - sent < 2 and chess.Move.from_uci(line.split()[1]) in chess.Board().legal_moves
    finally:
        assert pipe.close() == 0


def test_a_refused_position_keeps_an_infinite_or_pondering_bestmove_until_told() -> None:
    pipe = Pipe().handshake()
    try:
        pipe.send("position startpos moves e2e5")
        for go, release in (("go infinite", "stop"), ("go ponder wtime 1000 btime 1000", "ponderhit")):
            pipe.send(go)
            assert not [line for line in pipe.drain(0.5) if line.startswith("bestmove")], go
            pipe.send(release)
            assert pipe.expect("bestmove", 5)[1] == "bestmove 0000"
        pipe.send("go infinite")
        pipe.send("isready")  # answered while the bestmove waits
        pipe.expect("readyok")
        pipe.send("stop")
        assert pipe.expect("bestmove", 5)[1] == "bestmove 0000"
        pipe.drain(0.3)
        assert sum(line.startswith("bestmove") for line in pipe.seen) == 3
    finally:
        assert pipe.close() == 0


def test_searchmoves_with_multipv_at_a_tablebase_root(syzygy_path: str) -> None:
    """Only the searchmoves are reported, the move played first."""
    with chess.engine.SimpleEngine.popen_uci(ENGINE) as engine:
        engine.configure({"SyzygyPath": syzygy_path})
        board = chess.Board("k7/8/8/8/8/8/4P3/4K3 w - - 95 1")
        only = [chess.Move.from_uci("e1d2"), chess.Move.from_uci("e1d1")]
        lines = engine.analyse(board, chess.engine.Limit(depth=1), multipv=3, root_moves=only)
        played = engine.play(board, chess.engine.Limit(depth=1), root_moves=only).move
        assert [line["pv"][0] for line in lines][:1] == [played]
        assert {line["pv"][0] for line in lines} == set(only)


def test_a_pondering_move_time_runs_from_ponderhit() -> None:
    """``go ponder movetime N``: the move time counts from ``ponderhit`` (as a clock does), so a search that
    pondered longer than N still thinks about N after the hit instead of answering at once."""
    pipe = Pipe().handshake()
    try:
        pipe.send("setoption name Move Overhead value 0")
        pipe.send("position fen 8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1")
        pipe.send("go ponder movetime 400")
        time.sleep(0.8)  # twice the move time
        assert not any(line.startswith("bestmove") for line in pipe.drain(0.1)), "no bestmove while pondering"
        sent = time.monotonic()
        pipe.send("ponderhit")
        at, _ = pipe.expect("bestmove", 10)
        assert at - sent >= 0.3, at - sent  # the move time from the hit (it had answered within milliseconds)
    finally:
        pipe.close()


def test_a_failure_reading_the_tables_headers_at_start_is_one_info_string(monkeypatch) -> None:
    """The thread that reads the tables' headers once the warm-up is over: a failure (numba's errors run over
    several lines) is one info string, and readyok still comes."""
    import threading

    from chess_endgame.tablebase.prober import Prober

    def failing(self: Prober) -> None:
        raise RuntimeError("Failed in nopython mode pipeline\nUnknown attribute 'x'")

    monkeypatch.setattr(Prober, "compiled_tables", property(failing))
    out, warmed = io.StringIO(), threading.Event()
    engine = UciEngine(out, warmed=warmed)
    warmed.set()
    engine.handle("isready")
    deadline = time.monotonic() + 5
    while "readyok" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert out.getvalue().splitlines() == ["info string reading the tables' headers failed: RuntimeError: Failed in "
                                           "nopython mode pipeline Unknown attribute 'x'", "readyok"]
