"""The player service and the ``best``, ``play``, ``eval`` and ``bench`` commands."""

from __future__ import annotations

import json
from pathlib import Path

import chess
import chess.pgn

from chess_endgame.chooser import MoveClass
from chess_endgame.engine.player import Player, PlayerOptions
from chess_endgame.engine.result import Limits
from chess_endgame.tablebase.prober import Prober

from .conftest import run


def test_player_uses_tables_when_they_cover_the_root(prober: Prober) -> None:
    player = Player(prober)
    decision = player.decide(chess.Board("8/6k1/4K3/6B1/8/8/5N2/8 w - - 0 1"), Limits(nodes=2000))
    assert decision.source == "tablebase" and decision.cls == MoveClass.WIN and decision.distance == 20
    assert decision.score.cp == 20000 and decision.pv[0] == decision.move


def test_player_searches_beyond_the_tables(prober: Prober) -> None:
    decision = Player(prober).decide(chess.Board("8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1"), Limits(depth=3))
    assert decision.source == "search" and decision.not_covered is not None
    assert "8 pieces" in decision.not_covered.message and decision.depth == 3


def test_faster_mate_mode_finds_a_shorter_mate(prober: Prober) -> None:
    # KQPvK: pure DTZ play pushes the pawn (a winning zeroing move ranks first), which is slow; any
    # waiting move forces Kf8 and Qh8# follows: the search among the winning moves finds that mate.
    board = chess.Board("6k1/8/5K2/8/8/8/P7/7Q w - - 0 1")
    pure = Player(prober, options=PlayerOptions(faster_mate=False)).decide(board, Limits(nodes=5000))
    fast = Player(prober).decide(board, Limits(nodes=5000))
    assert pure.cls == fast.cls == MoveClass.WIN
    assert pure.move == chess.Move.from_uci("a2a3") and pure.score.cp == 20000
    assert fast.score.mate == 2


def test_best_json_from_tables(syzygy_path: str) -> None:
    code, out, _ = run("best", "8/6k1/4K3/6B1/8/8/5N2/8 w - - 0 1", "--json", "--no-faster-mate")
    assert code == 0
    data = json.loads(out)
    assert {"fen", "move", "san", "source", "class", "dtz", "wdl", "score"} <= data.keys()
    assert data["source"] == "tablebase" and data["class"] == "WIN"
    assert (data["wdl"], data["dtz"]) == (2, 20) and data["score"] == {"cp": 20000}
    assert data["san"] in {"Kf5", "Be7", "Bf6+", "Ne4", "Nh3", "Nd3"}


def test_best_from_search_and_history(syzygy_path: str) -> None:
    code, out, _ = run("best", "8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1", "--depth", "3", "--json")
    data = json.loads(out)
    assert code == 0 and data["source"] == "search" and data["class"] is None
    assert chess.Move.from_uci(data["move"]) in chess.Board(data["fen"]).legal_moves
    # With the game history a repeating move is a draw and is not chosen.
    start = "8/8/8/4k3/8/8/4K3/4R3 w - - 0 1"
    code, out, _ = run("best", start, "--json", "--moves", *(["e2d2", "e5d5", "d2e2", "d5e5"] * 2))
    assert code == 0 and json.loads(out)["move"] != "e2d2" and json.loads(out)["class"] == "WIN"


def test_best_text_and_bad_input(syzygy_path: str) -> None:
    code, out, _ = run("best", "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1")
    assert code == 0 and "best move: Qf8#" in out and "source:    tablebase" in out
    for args, words in ((["best", "xyz"], "invalid FEN"),
                        (["best", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"], "no legal move"),
                        (["best", chess.STARTING_FEN, "--depth", "0"], "--depth"),
                        (["best", chess.STARTING_FEN, "--moves", "e2e5"], "illegal")):
        code, _, err = run(*args)
        assert code == 2 and words in err and "Traceback" not in err


def test_play_writes_pgn_with_classes(syzygy_path: str, tmp_path: Path) -> None:
    pgn_path = tmp_path / "game.pgn"
    code, out, _ = run("play", "8/6k1/4K3/6B1/8/8/5N2/8 w - - 0 1", "--pgn", str(pgn_path), "--nodes", "2000")
    assert code == 0
    assert "result: 1-0 (checkmate)" in out
    game = chess.pgn.read_game(pgn_path.open())
    assert game.headers["Result"] == "1-0"
    moves = list(game.mainline())
    assert moves[-1].board().is_checkmate()
    assert all("WIN" in node.comment or "LOSS" in node.comment for node in moves)


def test_play_self_and_adjudication(syzygy_path: str) -> None:
    code, out, _ = run("play", "8/8/8/4k3/8/8/4K3/8 w - - 0 1", "--opponent", "self")
    assert code == 0 and "result: 1/2-1/2 (insufficient material)" in out
    code, out, _ = run("play", "8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1", "--opponent", "self",
                       "--max-plies", "4", "--depth", "2")
    assert code == 0 and "(max plies) after 4 plies" in out


def test_play_with_a_bad_engine_command(syzygy_path: str) -> None:
    code, _, err = run("play", "8/6k1/4K3/6B1/8/8/5N2/8 w - - 0 1", "--opponent", "/nonexistent/engine")
    assert code == 2 and "cannot start the UCI engine" in err


def test_eval_prints_every_feature() -> None:
    code, out, _ = run("eval", "8/2k5/8/8/3K4/8/3R4/8 w - - 0 1")
    assert code == 0
    lines = out.splitlines()
    assert lines[1].split() == ["feature", "value", "weight", "cp"]
    assert any(line.startswith("mop_edge") for line in lines) and lines[-1].startswith("total")
    data = json.loads(run("eval", "8/2k5/8/8/3K4/8/3R4/8 w - - 0 1", "--json")[1])
    assert abs(sum(f["contribution"] for f in data["features"]) - data["total"]) < 1
    code, _, err = run("eval", "8/2k5/8/8/3K4/8/3R4/8 w - - 0 1", "--weights", "/nonexistent.json")
    assert code == 2 and "cannot read weight file" in err


def test_bench_commands_print_their_figures(five_pieces: str) -> None:
    code, out, _ = run("bench", "search", "--depth", "2", "--repeat", "1")
    assert code == 0 and "signature:" in out and "nodes/cpu-s" in out
    code, out, _ = run("bench", "choose", "--positions", "1", "--repeat", "1", "--worst-positions", "1")
    assert code == 0 and "speed-up: median" in out and "same best class" in out
    assert "worst case, one cold choice each" in out and "p99.9" in out and "reserved by the time manager" in out
    code, out, _ = run("bench", "probe", "--positions", "10", "--repeat", "1", "--game-plies", "6")
    assert code == 0 and "WDL, distinct positions" in out and "game replay" in out


def test_bench_search_prints_only_what_it_measured() -> None:
    code, out, err = run("bench", "search", "--depth", "2", "--repeat", "1")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["position", "depth", "EBF", "nodes"]
    rows = [line for line in lines[1:] if line[34:40].strip().isdigit()]
    assert len(rows) == 13
    for row in rows:  # nodes/cpu-s is this run's nodes over this run's CPU seconds
        nodes, cpu, nps = int(row[46:56]), float(row[56:64]), float(row[64:77].replace(",", ""))
        assert abs(nodes / nps - cpu) <= 0.0051  # the CPU seconds are printed rounded to 0.01
    total = next(line for line in lines if line.startswith("total"))
    assert int(total[46:56]) == sum(int(row[46:56]) for row in rows)
    assert not any(word in out for word in ("sunfish", "peer", "python-chess engine", "reference"))


def test_the_first_search_of_a_process_gets_its_whole_movetime() -> None:
    """Loading the compiled core is set-up, done before the clock starts: a fresh ``best --movetime 100``
    searches past depth 1 (it used to spend its 100 ms, and more, loading the code inside depth 1)."""
    import subprocess
    import sys

    exe = Path(sys.executable).parent / "chess-endgame"
    out = subprocess.run([str(exe), "best", "8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1", "--movetime", "100"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("search:"))
    depth = int(line.split("depth ")[1].split(",")[0])
    assert depth >= 4, line
