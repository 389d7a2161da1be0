"""The UCI engine through real clients: python-chess's engine module, raw pipes, Stockfish matches."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import chess
import chess.engine
import pytest

from chess_endgame.engine.player import DEFAULT_MOVETIME_MS
from chess_endgame.engine.timeman import budget, moves_left
from chess_endgame.uci.go import Go, parse_go

from .conftest import ENGINE, Pipe

BIN = Path(sys.executable).parent

STOCKFISH = "/usr/games/stockfish"


@pytest.fixture
def engine(syzygy_path: str):
    with chess.engine.SimpleEngine.popen_uci(ENGINE) as e:
        yield e


def test_identification_and_options(engine: chess.engine.SimpleEngine) -> None:
    assert engine.id["name"].startswith("chess-endgame")
    names = set(engine.options)
    assert {"Hash", "SyzygyPath", "SyzygyProbeDepth", "SyzygyProbeLimit", "Syzygy50MoveRule", "MultiPV",
            "Move Overhead", "UCI_ShowWDL", "Contempt"} <= names
    assert engine.options["Hash"].default == 16 and engine.options["MultiPV"].max == 500
    assert (engine.options["Contempt"].min, engine.options["Contempt"].max) == (-100, 100)


def test_configure_and_analyse_with_every_limit(engine: chess.engine.SimpleEngine, syzygy_path: str) -> None:
    engine.configure({"Hash": 8, "SyzygyPath": syzygy_path, "UCI_ShowWDL": True, "Move Overhead": 20})
    rook_ending = chess.Board("8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1")
    info = engine.analyse(rook_ending, chess.engine.Limit(depth=3))
    assert info["depth"] == 3 and "pv" in info and "wdl" in info and "nodes" in info and "nps" in info
    info = engine.analyse(rook_ending, chess.engine.Limit(nodes=1500))
    assert info["nodes"] == 1500
    start = time.monotonic()
    engine.analyse(rook_ending, chess.engine.Limit(time=0.3))
    assert time.monotonic() - start < 1.5
    mate = chess.Board("r1n3k1/3R1ppp/2p5/5P2/8/1P2r3/P7/5RK1 w - - 0 1")
    info = engine.analyse(mate, chess.engine.Limit(mate=2))
    assert info["score"].relative == chess.engine.Mate(2)
    only = [chess.Move.from_uci("g2h3")]
    result = engine.play(rook_ending, chess.engine.Limit(depth=3), root_moves=only)
    assert result.move == only[0]
    clocked = engine.play(rook_ending, chess.engine.Limit(white_clock=2, black_clock=2, white_inc=0.1,
                                                          black_inc=0.1))
    assert clocked.move in rook_ending.legal_moves
    with engine.analysis(rook_ending) as analysis:  # go infinite, then stop
        time.sleep(0.4)
    assert analysis.info.get("depth", 0) >= 1


def test_tablebase_scores_and_multipv(engine: chess.engine.SimpleEngine, syzygy_path: str) -> None:
    engine.configure({"SyzygyPath": syzygy_path})
    kbnk = chess.Board("8/6k1/4K3/6B1/8/8/5N2/8 w - - 0 1")
    info = engine.analyse(kbnk, chess.engine.Limit(time=0.5))
    assert info["score"].relative == chess.engine.Cp(20000) or info["score"].relative.is_mate()
    assert info["tbhits"] > 0 and len(info["pv"]) >= 2
    lines = engine.analyse(kbnk, chess.engine.Limit(depth=2), multipv=3)
    assert len(lines) == 3 and len({tuple(line["pv"][:1]) for line in lines}) == 3


def test_tablebase_hits_in_the_tree_and_cursed_wins(engine: chess.engine.SimpleEngine, five_pieces: str) -> None:
    engine.configure({"SyzygyPath": five_pieces})
    # A position searched, not in the tables, with tablebase hits in the tree.
    engine.configure({"SyzygyProbeLimit": 5})
    krppkr = chess.Board("8/8/8/4k3/R7/5PP1/6K1/r7 w - - 0 1")
    info = engine.analyse(krppkr, chess.engine.Limit(depth=5))
    assert info["tbhits"] > 0
    # A cursed win is a small score with the 50-move rule, a win without it.
    cursed = chess.Board("7b/8/6b1/8/5Nk1/4K3/8/8 b - - 0 1")
    assert abs(engine.analyse(cursed, chess.engine.Limit(depth=1))["score"].relative.score()) < 100
    engine.configure({"Syzygy50MoveRule": False})
    assert engine.analyse(cursed, chess.engine.Limit(depth=1))["score"].relative.score(mate_score=30000) >= 20000


def test_searchmoves_and_multipv_at_a_tablebase_root(engine: chess.engine.SimpleEngine, syzygy_path: str) -> None:
    engine.configure({"SyzygyPath": syzygy_path})
    board = chess.Board("k7/8/8/8/8/8/4P3/4K3 w - - 95 1")
    only = [chess.Move.from_uci("e1d2"), chess.Move.from_uci("e1f2")]
    result = engine.play(board, chess.engine.Limit(depth=3), root_moves=only)
    assert result.move == chess.Move.from_uci("e1f2")  # the one of the two that still wins at clock 95
    lines = engine.analyse(board, chess.engine.Limit(depth=1), multipv=4)
    reported = {line["pv"][0].uci(): line["score"].relative.score() for line in lines}
    # Every line carries its exact class: e3 and Kf2 win, Kd2 and Kd1/Kf1 are 50-move draws (cursed).
    assert reported["e2e3"] == 20000 and reported["e1f2"] == 20000
    assert all(score == 1 for move, score in reported.items() if move not in ("e2e3", "e1f2"))


def test_clock_edge_cases(syzygy_path: str) -> None:
    pipe = Pipe().handshake()
    try:
        # Only the opponent's clock: say so, and move at once rather than think forever.
        pipe.send("position fen 8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 b - - 0 1")
        sent = time.monotonic()
        pipe.send("go wtime 1000")
        at, _ = pipe.expect("bestmove", 5)
        assert at - sent < 1.0
        assert any("btime missing" in line for line in pipe.seen)
        # ponderhit without a clock: the search's own limit (depth) ends it.
        pipe.send("go ponder depth 3")
        time.sleep(0.3)
        assert not any(line.startswith("bestmove") for line in pipe.drain(0.1))
        pipe.send("ponderhit")
        pipe.expect("bestmove", 10)
        # An option sent during a search is set once it ends, before the next command runs.
        pipe.send("go infinite")
        time.sleep(0.2)
        pipe.send("setoption name MultiPV value 2")
        pipe.send("stop")
        pipe.expect("bestmove")
        pipe.send("go depth 2")
        pipe.expect("bestmove")
        assert any(" multipv 2 " in line for line in pipe.seen[-6:])
    finally:
        pipe.close()


def test_bad_input_keeps_the_engine_alive(syzygy_path: str) -> None:
    pipe = Pipe().handshake()
    try:
        for line in ["garbage", "", "   ", "position fen not/a/fen w - - 0 1", "position startpos moves e2e5",
                     "position", "position banana", "setoption name NoSuchOption value 3",
                     "setoption name Hash value lots", "setoption name Hash value 99999999999999999999",
                     "setoption name MultiPV value 0", "setoption name Syzygy50MoveRule value maybe",
                     "setoption name Contempt value 101",
                     "setoption Hash 3", "stop", "ponderhit", "debug on", "position startpos", "go nodes -5 depth x",
                     "go depth 99999999999999999999999"]:
            pipe.send(line)
        texts = [line for line in pipe.drain(1.0) if line.startswith("info string")]
        joined = " | ".join(texts)
        for words in ("unknown command: garbage", "invalid FEN", "illegal", "No such option: NoSuchOption",
                      "option Hash takes an integer", "option MultiPV takes an integer",
                      "option Syzygy50MoveRule takes true or false", "option Contempt takes an integer",
                      "go nodes -5", "go depth needs an integer"):
            assert words in joined, words
        pipe.send("stop")  # the huge depth is a search without end until stopped
        pipe.send("isready")
        pipe.expect("readyok")
        pipe.drain(0.3)
        assert sum(line.startswith("bestmove") for line in pipe.seen) == 2  # one per go
        pipe.send("isready")
        pipe.expect("readyok")
        # go before any valid position plays from the start position.
        pipe.send("ucinewgame")
        pipe.send("go depth 2")
        _, best = pipe.expect("bestmove")
        assert chess.Move.from_uci(best.split()[1]) in chess.Board().legal_moves
        # A position with no legal move still gets exactly one bestmove, after Stockfish's depth-0 line.
        for fen, score in (("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "cp 0"), ("k7/1Q6/1K6/8/8/8/8/8 b - - 0 1", "mate 0")):
            pipe.send(f"position fen {fen}")
            pipe.send("go depth 3")
            assert pipe.expect("info")[1].startswith(f"info depth 0 seldepth 0 score {score} nodes 0 ")
            assert pipe.expect("bestmove")[1] == "bestmove 0000"
        assert pipe.proc.poll() is None
    finally:
        assert pipe.close() == 0


def test_go_parameters_are_read_and_bad_ones_ignored_with_a_reason() -> None:
    """``parse_go`` alone: the limits each parameter sets, the clock of the side to move, and one warning per bad
    parameter while the rest of the command stands."""
    board = chess.Board("4k3/8/8/8/8/8/4P3/4K3 b - - 0 1")
    warnings: list[str] = []

    def go(words: str) -> Go:
        warnings.clear()
        return parse_go(words.split(), board, overhead=10, table_pieces=5, warn=warnings.append)

    read = go("depth 7 nodes 5000 mate 3 movetime 250 searchmoves e8d8 e8e2 zz e8f7")
    assert (read.limits.depth, read.limits.nodes, read.limits.mate, read.limits.movetime) == (7, 5000, 3, 240)
    assert read.limits.searchmoves == [chess.Move.from_uci("e8d8"), chess.Move.from_uci("e8f7")]
    assert read.budget_ms is None and not read.ponder
    assert warnings == ["searchmoves: e8e2 is not a legal move here; ignored",
                        "searchmoves: zz is not a legal move here; ignored"]
    read = go("depth x nodes -5 mate 0 frobnicate depth 4")
    assert read.limits.depth == 4 and read.limits.nodes is None and read.limits.mate is None
    assert warnings == ["go depth needs an integer, got 'x'; ignored", "go nodes -5: must not be negative; ignored",
                        "go mate 0: must be positive; ignored", "go: unknown parameter 'frobnicate'; ignored"]
    # Black to move: its clock, not White's, sets the budget and the deadlines.
    read = go("wtime 1000 btime 60000 winc 0 binc 600")
    planned = budget(60000, 600, None, 10, moves_left(3, 5))
    assert read.budget_ms == (planned.soft, planned.hard, planned.clock)
    assert read.limits.deadline is not None and read.limits.soft_deadline <= read.limits.deadline
    assert warnings == []
    read = go("wtime 1000")
    assert read.budget_ms is not None and warnings == ["go: btime missing for the side to move; moving at once"]
    read = go("btime 60000 ponder")
    assert read.ponder and read.limits.infinite and read.budget_ms is not None and read.limits.deadline is None
    read = go("")
    assert read.limits.movetime == DEFAULT_MOVETIME_MS and warnings == [f"go: no limit given; searching "
                                                                        f"{DEFAULT_MOVETIME_MS} ms"]
    assert go("infinite").limits.infinite and warnings == []


def test_a_rejected_position_is_never_searched(syzygy_path: str) -> None:
    """After a refused ``position`` the GUI's board is not ours: go answers bestmove 0000 and says why,
    until a valid position arrives (the previous board is never searched)."""
    pipe = Pipe().handshake()
    try:
        for bad in ("position fen 8/8/8/8/8/8/8/8 w - - 0 1", "position startpos moves e2e4 e7e5 e1e3",
                    "position fen 4k3/8/8/8/8/8/8/4K2R w K - 0 1 moves e1g1 e8d8 h1h9", "position banana",
                    "position"):
            pipe.send("position startpos moves e2e4")  # a valid board first: it must not be searched
            pipe.send(bad)
            pipe.send("go depth 2")
            _, best = pipe.expect("bestmove")
            assert best == "bestmove 0000", (bad, best)
            refusal = [line for line in pipe.seen if line.startswith("info string no position to search")]
            assert refusal, (bad, pipe.seen[-5:])
            assert not [line for line in pipe.seen[-4:] if line.startswith("info depth")], bad
        pipe.send("go movetime 50")  # still refused: only a valid position clears it
        assert pipe.expect("bestmove")[1] == "bestmove 0000"
        pipe.send("position startpos moves e2e4")
        pipe.send("go depth 2")
        _, best = pipe.expect("bestmove")
        board = chess.Board()
        board.push_uci("e2e4")
        assert chess.Move.from_uci(best.split()[1]) in board.legal_moves
    finally:
        assert pipe.close() == 0


def test_isready_during_search_and_stop_latency(syzygy_path: str) -> None:
    pipe = Pipe().handshake()
    try:
        pipe.send("position fen 8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1")
        pipe.send("go infinite")
        time.sleep(0.3)
        for _ in range(20):
            pipe.send("isready")
        for _ in range(20):
            pipe.expect("readyok", 5)
        time.sleep(0.5)
        latencies = []
        for _ in range(3):
            sent = time.monotonic()
            pipe.send("stop")
            at, line = pipe.expect("bestmove", 5)
            latencies.append(at - sent)
            pipe.send("go infinite")
            time.sleep(0.4)
        pipe.send("stop")
        pipe.expect("bestmove")
        pipe.send("stop")  # no search: no output
        pipe.send("isready")
        pipe.expect("readyok")
        assert not any(line.startswith("bestmove") for line in pipe.drain(0.2))
        assert max(latencies) < 0.25, latencies  # measured 3-15 ms here; generous for loaded CI
    finally:
        pipe.close()


def test_ponder_and_ponderhit(syzygy_path: str) -> None:
    pipe = Pipe().handshake()
    try:
        pipe.send("position fen 8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1")
        pipe.send("go ponder wtime 2000 btime 2000")
        time.sleep(0.5)
        assert not any(line.startswith("bestmove") for line in pipe.drain(0.1)), "no bestmove while pondering"
        sent = time.monotonic()
        pipe.send("ponderhit")
        at, _ = pipe.expect("bestmove", 5)
        assert at - sent < budget(2000).hard / 1000 + 0.3
        # A tablebase root answers at once but still waits for ponderhit.
        pipe.send(f"setoption name SyzygyPath value {syzygy_path}")
        pipe.send("position fen 8/6k1/4K3/6B1/8/8/5N2/8 w - - 0 1")
        pipe.send("go ponder wtime 2000 btime 2000")
        assert not any(line.startswith("bestmove") for line in pipe.drain(0.5))
        pipe.send("ponderhit")
        pipe.expect("bestmove", 5)
        # go ponder infinite: after ponderhit it is a go infinite, whose bestmove waits for stop (the UCI text).
        pipe.send("go ponder infinite")
        pipe.send("ponderhit")
        assert not any(line.startswith("bestmove") for line in pipe.drain(0.5)), "bestmove before stop"
        pipe.send("stop")
        pipe.expect("bestmove", 5)
    finally:
        pipe.close()


def test_eof_quits_and_the_second_executable(syzygy_path: str) -> None:
    proc = subprocess.run([str(BIN / "chess-endgame-uci")], input="uci\nisready\n", capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 0 and "uciok" in proc.stdout and "readyok" in proc.stdout
    assert all(line.split()[0] in {"id", "option", "uciok", "readyok", "info"}
               for line in proc.stdout.splitlines())


def test_time_budget_never_exceeds_the_clock() -> None:
    for left in (50, 100, 500, 2000, 60000):
        for inc in (0, 100):
            for togo in (None, 1, 2, 40):
                b = budget(left, inc, togo, overhead=10)
                assert 1 <= b.soft <= b.hard
                assert b.hard <= max(1, left - 10), (left, inc, togo, b)


def play_clocked(board: chess.Board, engines: dict[bool, chess.engine.SimpleEngine], base: float,
                 moves_per_control: int | None = None, increment: float = 0.0,
                 max_plies: int = 160) -> tuple[str, list[str]]:
    """A game with clocks kept as a GUI keeps them (seconds); returns (outcome, problems).

    ``moves_per_control`` gives repeating controls (40 moves in ``base``);
    without it the game is sudden death with ``increment`` per move.
    """
    clocks = {chess.WHITE: base, chess.BLACK: base}
    played = {chess.WHITE: 0, chess.BLACK: 0}
    problems: list[str] = []
    for _ in range(max_plies):
        outcome = board.outcome(claim_draw=True)
        if outcome:
            return outcome.result(), problems
        side = board.turn
        remaining = moves_per_control - played[side] % moves_per_control if moves_per_control else None
        limit = chess.engine.Limit(white_clock=clocks[chess.WHITE], black_clock=clocks[chess.BLACK],
                                   white_inc=increment, black_inc=increment, remaining_moves=remaining)
        start = time.monotonic()
        result = engines[side].play(board, limit)
        clocks[side] -= time.monotonic() - start
        if clocks[side] < 0:
            problems.append(f"time loss by {'white' if side else 'black'} at {board.fen()}")
            return "time", problems
        if result.move not in board.legal_moves:
            problems.append(f"illegal move {result.move} at {board.fen()}")
            return "illegal", problems
        board.push(result.move)
        played[side] += 1
        clocks[side] += increment
        if moves_per_control and played[side] % moves_per_control == 0:
            clocks[side] += base
    return "*", problems


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists(STOCKFISH) and not shutil.which("stockfish"),
                    reason="Debian's stockfish is not installed (.ci/run installs it)")
@pytest.mark.parametrize("fen", [
    "8/8/8/4k3/R7/5P2/6K1/r7 w - - 0 1",              # KRPvKR: the tables decide
    "8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1",        # 8 pieces: the search plays on the clock
])
def test_games_against_stockfish(syzygy_path: str, fen: str) -> None:
    stockfish_path = STOCKFISH if os.path.exists(STOCKFISH) else shutil.which("stockfish")
    with chess.engine.SimpleEngine.popen_uci(ENGINE) as ours, \
            chess.engine.SimpleEngine.popen_uci(stockfish_path) as stockfish:
        ours.configure({"SyzygyPath": syzygy_path})
        stockfish.configure({"Threads": 1, "Hash": 16})
        tablebase_win = chess.popcount(chess.Board(fen).occupied) <= 5  # White wins KRPvKR here
        for our_color in chess.COLORS:
            engines = {our_color: ours, not our_color: stockfish}
            outcome, problems = play_clocked(chess.Board(fen), engines, base=4.0, moves_per_control=40)
            assert not problems, problems
            if tablebase_win and our_color == chess.WHITE:
                assert outcome == "1-0"
        engines = {chess.WHITE: ours, chess.BLACK: stockfish}
        outcome, problems = play_clocked(chess.Board(fen), engines, base=3.0, increment=0.1)
        assert not problems, problems


# -- reliability: the clock, the stop race, bad limits, protocol noise ------------------------------


def _infos_before(lines: list[str], bestmove_index: int) -> list[str]:
    """The info lines (not info string) of the search that ended at ``lines[bestmove_index]``."""
    out = []
    for line in reversed(lines[:bestmove_index]):
        if line.startswith("bestmove"):
            break
        if line.startswith("info") and not line.startswith("info string"):
            out.append(line)
    return out[::-1]


def test_a_tablebase_root_on_a_short_clock_plays_the_only_win(syzygy_path: str) -> None:
    pipe = Pipe().handshake()
    try:
        pipe.send(f"setoption name SyzygyPath value {syzygy_path}")
        for clock in (200, 5000):
            pipe.send("position fen 8/8/3k4/8/8/8/4r3/K5Q1 w - - 90 60")
            pipe.send(f"go wtime {clock} btime {clock}")
            assert pipe.expect("bestmove", 10)[1].split()[1] == "g1d1", clock
    finally:
        pipe.close()


def test_a_small_clock_plays_a_searched_move(syzygy_path: str) -> None:
    pipe = Pipe().handshake()
    try:
        pipe.send("position fen 2rq1rk1/pp1bppbp/3p1np1/4n3/3NP3/1BN1BP2/PPPQ2PP/2KR3R w - - 0 12")
        for clock in (300, 150):  # room for depth 1 on a loaded CI; the hard stop is a few ms
            pipe.send("ucinewgame")
            pipe.send(f"go wtime {clock} btime {clock}")
            _, best = pipe.expect("bestmove", 5)
            infos = _infos_before(pipe.seen, len(pipe.seen) - 1)
            # No bound but on the last line, where a move an unfinished iteration found brings its lower bound.
            assert infos and all("lowerbound" not in i and "upperbound" not in i for i in infos[:-1]), infos
            assert "upperbound" not in infos[-1], infos
            assert infos[-1].startswith("info depth ") and " score " in infos[-1]
            assert best.split()[1] == infos[-1].split(" pv ")[1].split()[0]
        # A node limit inside depth 1: no made-up score.
        pipe.send("go nodes 1")
        pipe.expect("bestmove")
        infos = _infos_before(pipe.seen, len(pipe.seen) - 1)
        assert all(" score " not in i or "lowerbound" in i for i in infos), infos
    finally:
        pipe.close()


def test_back_to_back_go_and_stop_each_get_one_bestmove() -> None:
    """The stop race: go infinite / stop / go depth 1 sent back to back, many times, in one process."""
    import io

    from chess_endgame.uci import UciEngine

    out = io.StringIO()
    engine = UciEngine(out)
    engine.handle("position startpos moves e2e4")
    gos = 0
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: races show up
    try:
        for i in range(300):
            for line in ("go depth 1", "stop", "go infinite", "stop") if i % 2 else (
                    "go movetime 5", "stop", "go nodes 50", "stop", "go ponder", "ponderhit"):
                engine.handle(line)
                gos += line.startswith("go")
    finally:
        sys.setswitchinterval(interval)
    engine.handle("stop")
    engine._stop_search()
    lines = out.getvalue().splitlines()
    assert not [line for line in lines if line.startswith("info string")], lines[:5]
    assert len([line for line in lines if line.startswith("bestmove")]) == gos


@pytest.mark.slow
@pytest.mark.parametrize("go", ["go movetime -5", "go depth abc", "go", "go nodes x movetime y",
                                "go depth 0", "go mate -1", "go wtime -100 btime -100"])
def test_every_go_ends_by_itself(go: str) -> None:
    pipe = Pipe().handshake()
    try:
        pipe.send("position startpos")
        sent = time.monotonic()
        pipe.send(go)
        at, line = pipe.expect("bestmove", 5)
        assert at - sent < 2.5 and chess.Move.from_uci(line.split()[1]) in chess.Board().legal_moves
    finally:
        pipe.close()


def test_protocol_noise(syzygy_path: str) -> None:
    pipe = Pipe().handshake()
    try:
        # No info line is repeated before bestmove.
        pipe.send("position fen 8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1")
        pipe.send("go depth 4")
        pipe.expect("bestmove")
        infos = _infos_before(pipe.seen, len(pipe.seen) - 1)
        strip = [" ".join(w for k, w in enumerate(i.split()) if not (k and i.split()[k - 1] in ("time", "nps"))
                          and w not in ("time", "nps")) for i in infos]
        assert len(strip) == len(set(strip)), infos
        # A mate under go infinite: a handful of lines, not one per depth up to the maximum.
        pipe.send("position fen 6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
        pipe.send("go infinite")
        lines = pipe.drain(0.5)
        assert not any(line.startswith("bestmove") for line in lines)
        assert len([x for x in lines if x.startswith("info depth")]) <= 5, lines
        pipe.send("stop")
        assert pipe.expect("bestmove")[1] == "bestmove a1a8"
        # At a tablebase root: MultiPV ranks once each, an exact WDL, nps from the nodes.
        pipe.send(f"setoption name SyzygyPath value {syzygy_path}")
        pipe.send("setoption name UCI_ShowWDL value true")
        pipe.send("setoption name MultiPV value 3")
        pipe.send("position fen 8/8/3k4/8/8/8/4r3/K5Q1 w - - 0 60")
        pipe.send("go movetime 200")
        pipe.expect("bestmove")
        infos = _infos_before(pipe.seen, len(pipe.seen) - 1)
        ranks = [i.split("multipv ")[1].split()[0] for i in infos]
        assert sorted(ranks) == ["1", "2", "3"], infos
        assert all(" wdl 1000 0 0 " in i for i in infos)
        for info in infos:
            words = info.split()
            nodes, nps = int(words[words.index("nodes") + 1]), int(words[words.index("nps") + 1])
            assert nps > 0 or nodes == 0, info
        pipe.send("setoption name MultiPV value 1")
        pipe.send("position fen 8/8/8/3k4/8/8/r7/4K2R w - - 0 1")  # KRvKR: a tablebase draw
        pipe.send("go movetime 200")
        pipe.expect("bestmove")
        infos = _infos_before(pipe.seen, len(pipe.seen) - 1)
        assert len(infos) == 1 and " wdl 0 1000 0 " in infos[0], infos
    finally:
        pipe.close()


@pytest.mark.parametrize("args, status, text", [(["--help"], 0, "usage: chess-endgame-uci"),
                                                 (["-h"], 0, "usage: chess-endgame-uci"),
                                                 (["--version"], 0, "chess-endgame "),
                                                 (["--bogus"], 2, "unexpected argument")])
def test_the_uci_executable_answers_its_arguments(args: list[str], status: int, text: str) -> None:
    proc = subprocess.run([str(BIN / "chess-endgame-uci"), *args], input="", capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == status
    assert text in (proc.stdout if status == 0 else proc.stderr)
    assert "uciok" not in proc.stdout and len((proc.stdout + proc.stderr).splitlines()) >= 1


def test_a_stop_that_races_the_end_of_a_search_loses_nothing() -> None:
    """The race exactly: ``stop`` is read while the search is running, and the search ends (its worker
    clears its state and sends bestmove) before ``stop`` acts. The next ``go`` must still answer."""
    import io

    from chess_endgame.uci import UciEngine

    out = io.StringIO()
    engine = UciEngine(out)
    engine.handle("position fen 2rq1rk1/pp1bppbp/3p1np1/4n3/3NP3/1BN1BP2/PPPQ2PP/2KR3R w - - 0 12")
    engine.handle("go depth 3")
    code = UciEngine._stop.__code__

    def hold_after_first_line(frame, event, arg):  # a tracer for this thread only
        if frame.f_code is not code:
            return None

        def local(frame, event, arg):
            if event == "line" and frame.f_lineno > code.co_firstlineno + 1:
                end = time.monotonic() + 20
                while "bestmove" not in out.getvalue() and time.monotonic() < end:
                    time.sleep(0.001)  # the search finishes inside stop's window
            return local
        return local

    sys.settrace(hold_after_first_line)
    try:
        engine.handle("stop")
    finally:
        sys.settrace(None)
    engine.handle("go depth 1")
    engine._stop_search()
    lines = out.getvalue().splitlines()
    assert len([line for line in lines if line.startswith("bestmove")]) == 2, lines[-5:]


@pytest.mark.parametrize(("fen", "certain"), [
    ("8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1", False),   # a searched score: the Stockfish model, draws too
    ("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 40", True),      # mate in one: certain
    ("7k/8/5K2/8/8/8/8/R7 w - - 97 80", True),  # the tables' MAYBE_WIN (clock 97), but the mate in two is proved
])
def test_show_wdl_follows_python_chess_model(fen: str, certain: bool) -> None:
    """UCI_ShowWDL: every scored info line carries wdl W D L (permille, summing to 1000). A mate is certain;
    any other score is python-chess's Cp.wdl(model="sf") at the game's ply, so GUIs and the score agree."""
    import io
    import re
    import time

    from chess_endgame.uci import UciEngine

    out = io.StringIO()
    engine = UciEngine(out)
    engine.handle("setoption name UCI_ShowWDL value true")
    engine.handle(f"position fen {fen}")
    engine.handle("go depth 6")
    deadline = time.monotonic() + 60
    while "bestmove" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    engine.handle("quit")
    scored = [line for line in out.getvalue().splitlines() if line.startswith("info") and " score " in line]
    assert scored
    ply = chess.Board(fen).ply()
    for line in scored:
        found = re.search(r" score (cp|mate) (-?\d+)(?: lowerbound| upperbound)? wdl (\d+) (\d+) (\d+)", line)
        assert found, line
        kind, value, *wdl = found.groups()
        wdl = tuple(map(int, wdl))
        assert sum(wdl) == 1000 and (kind == "mate") == certain, line
        if kind == "mate":
            assert wdl == ((1000, 0, 0) if int(value) > 0 else (0, 0, 1000)), line
        else:
            assert wdl == tuple(chess.engine.Cp(int(value)).wdl(model="sf", ply=ply)), line
            assert wdl[1] > 0, line  # a draw has its share


def test_a_gui_that_closes_our_output_gets_no_traceback() -> None:
    """A GUI that quits or crashes closes the engine's output: whatever the engine then writes (readyok
    from its warm-up thread, info and bestmove from its search thread) must end quietly, without a
    traceback on stderr, and the engine must exit 0 when its input closes too."""
    proc = subprocess.Popen(ENGINE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, bufsize=1)
    proc.stdin.write("uci\n")
    while proc.stdout.readline().strip() != "uciok":
        pass
    proc.stdout.close()
    for line in ("isready", "position startpos", "go movetime 300", "isready"):
        proc.stdin.write(line + "\n")
    time.sleep(1.0)  # the search writes its info lines and bestmove into the closed pipe
    proc.stdin.write("go depth 5\n")
    proc.stdin.close()
    assert proc.wait(30) == 0
    assert proc.stderr.read() == ""
