"""The commands of docs/commands.md: ``probe`` (output, JSON keys, every bad-input path), ``best``, ``play``
and ``eval``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import chess
import chess.pgn
import pytest

import chess_endgame.play.engines as engines

from .conftest import run

FAKE = f"{sys.executable} {Path(__file__).parent / 'fake_engine.py'}"

KQK_MATE = "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1"


def test_probe_text(syzygy_path: str) -> None:
    code, out, _ = run("probe", KQK_MATE)
    assert code == 0
    lines = out.splitlines()
    assert lines[1].startswith("White to move: win (WDL 2, DTZ 1)")
    first = lines[3].split()
    assert first[1:4] == ["Qf8#", "f1f8", "WIN"] and first[-1] == "checkmate"
    stalemates = {line.split()[1] for line in lines if line.endswith("stalemate")}
    assert stalemates == {"Qf7", "Qc4"}


def test_probe_json_keys(syzygy_path: str) -> None:
    code, out, _ = run("probe", KQK_MATE, "--json")
    assert code == 0
    data = json.loads(out)
    assert {"fen", "wdl", "dtz", "category", "moves"} <= data.keys()
    assert (data["wdl"], data["dtz"], data["category"]) == (2, 1, "win")
    move = data["moves"][0]
    assert {"uci", "san", "wdl", "dtz", "category", "zeroing", "checkmate", "stalemate"} <= move.keys()
    assert move["uci"] == "f1f8" and move["checkmate"] is True
    assert len(data["moves"]) == chess.Board(KQK_MATE).legal_moves.count()  # every legal move
    stale = [m for m in data["moves"] if m["stalemate"]]
    assert {m["san"] for m in stale} == {"Qf7", "Qc4"} and all(m["wdl"] == 0 for m in stale)


def test_probe_drawn_rook_ending(syzygy_path: str) -> None:
    data = json.loads(run("probe", "8/5k1r/8/8/6K1/8/8/R7 w - - 0 1", "--json")[1])
    assert data["wdl"] == 0
    losing = {m["san"] for m in data["moves"] if m["wdl"] < 0}
    assert losing == {"Rg1", "Rh1"}
    assert data["moves"][-1]["category"] == "loss"


def test_probe_syzygy_path_option(tmp_path: Path, syzygy_path: str) -> None:
    # An empty directory: the embedded 3-4-piece set beneath it still answers,
    code, out, _ = run("probe", KQK_MATE, "--syzygy-path", str(tmp_path), "--json")
    assert code == 0 and json.loads(out)["wdl"] == 2
    # and a 5-piece position says that the tables reach 4 pieces, and how to get more.
    code, _, err = run("probe", "8/8/4k3/8/R7/5P2/6K1/r7 w - - 0 1", "--syzygy-path", str(tmp_path))
    assert code == 2
    assert "5 pieces on the board, the tables present reach 4" in err and "tablebases download" in err
    assert len(err.strip().splitlines()) == 1


def test_dead_position_needs_no_tables(tmp_path: Path) -> None:
    code, out, _ = run("probe", "8/8/8/4k3/8/8/8/4K3 w - - 0 1", "--syzygy-path", str(tmp_path), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["wdl"] == 0 and all(m["class"] == "DRAW" for m in data["moves"])


def test_bad_inputs_exit_2_with_one_line(syzygy_path: str) -> None:
    cases = {
        "not a fen": "invalid FEN",
        "8/8/8/8/8/8/8/8 w - - 0 1": "illegal position",
        "4k3/8/8/8/8/8/8/4K2P w - - 0 1": "pawns on the first or last rank",
        "4k3/8/8/8/8/8/8/R3K3 w Q - 0 1": "castling rights",
        "8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1": "8 pieces on the board",
    }
    for fen, words in cases.items():
        code, out, err = run("probe", fen)
        assert code == 2, fen
        assert words in err and "Traceback" not in err, err
        assert len(err.strip().splitlines()) == 1 and out == ""


def test_bad_moves(syzygy_path: str) -> None:
    code, _, err = run("probe", KQK_MATE, "--moves", "f1f8", "h8h7")
    assert code == 2 and "move 2 'h8h7' is illegal" in err
    code, _, err = run("probe", KQK_MATE, "--moves", "xyz")
    assert code == 2 and "not a UCI move" in err
    code, _, err = run("probe", KQK_MATE, "e2e4")
    assert code == 2 and "unexpected argument" in err


def test_moves_give_the_history(syzygy_path: str) -> None:
    start = "8/8/8/4k3/8/8/4K3/4R3 w - - 0 1"
    shuffle = ["e2d2", "e5d5", "d2e2", "d5e5"] * 2
    data = json.loads(run("probe", start, "--moves", *shuffle, "--json")[1])
    # e2d2 now repeats the position a third time: a claimable draw, not a win.
    repeat = next(m for m in data["moves"] if m["uci"] == "e2d2")
    assert repeat["class"] == "DRAW" and repeat["wdl"] == 2
    assert data["moves"][0]["class"] == "WIN"


def test_console_script_and_module(syzygy_path: str) -> None:
    for command in (["chess-endgame"], [sys.executable, "-m", "chess_endgame"]):
        if command[0] == "chess-endgame":
            command = [str(Path(sys.executable).parent / "chess-endgame")]
        proc = subprocess.run(command + ["probe", KQK_MATE, "--json"], capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["moves"][0]["san"] == "Qf8#"
        proc = subprocess.run(command + ["probe", "garbage"], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and proc.stderr.startswith("chess-endgame: error: invalid FEN")


def test_moves_before_or_after_the_fen(syzygy_path: str) -> None:
    start = "8/8/8/4k3/8/8/4K3/4R3 w - - 0 1"
    after = run("probe", start, "--moves", "e2d2", "e5d5", "--json")
    before = run("probe", "--moves", "e2d2", "e5d5", start, "--json")
    assert after[0] == before[0] == 0, before[2]
    assert json.loads(after[1]) == json.loads(before[1])
    assert json.loads(before[1])["fen"].startswith("8/8/8/3k4/8/8/3K4/4R3 w - - 2 2")
    for extra in (["best", "--depth", "1"], ["eval"]):
        code, out, err = run(*extra, "--moves", "e2d2", "e5d5", start, "--json")
        assert code == 0 and json.loads(out)["fen"].startswith("8/8/8/3k4/8/8/3K4/4R3"), err
    code, _, err = run("probe", "--moves", "e2d2")
    assert code == 2 and "no FEN" in err
    code, _, err = run("probe", *start.split(), "--moves", "e2d2")
    assert code == 2 and "quote the FEN" in err


def test_moves_help_says_uci() -> None:
    for command in ("probe", "best", "eval"):
        code, out, _ = run(command, "--help")
        assert code == 0
        moves_help = " ".join(out.split("\n  --moves ", 1)[1].split("\n  --", 1)[0].split())
        assert "UCI moves" in moves_help and "before or after" in moves_help, moves_help


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
    # What the text report says of the search is in the JSON too: depth, nodes, time, why not the tables.
    assert data["depth"] == 3 and data["nodes"] > 0 and data["time_ms"] >= 0 and "pieces" in data["tables"], data
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


@pytest.mark.parametrize("mode, forfeit", [("illegal", "illegal uci"), ("crash:1", "died"), ("hang", "no bestmove")])
def test_play_an_engine_that_breaks_down_loses_by_forfeit(syzygy_path: str, tmp_path: Path, mode: str, forfeit: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """An illegal move, a crash, a hang: the engine loses the game, which keeps its moves (it was "*" with exit 2,
    and a hang died with a traceback), as cutechess-cli scores it."""
    monkeypatch.setattr(engines, "COMMAND_TIMEOUT", 1.0)
    pgn_path = tmp_path / "game.pgn"
    code, out, err = run("play", "8/8/4k3/8/8/8/4P3/4K3 w - - 0 1", "--opponent", f"{FAKE} {mode}", "--movetime", "100",
                         "--pgn", str(pgn_path))
    assert code == 0 and "Traceback" not in err, (out, err)
    assert "result: 1-0 (forfeit by fake " in out and forfeit in out, out
    game = chess.pgn.read_game(pgn_path.open())
    assert game.headers["Result"] == "1-0" and len(list(game.mainline_moves())) == 1


def test_play_names_where_the_pgn_really_is(syzygy_path: str) -> None:
    code, out, err = run("play", "6k1/8/5K2/8/8/8/P7/7Q w - - 0 1", "--pgn", "/dev/full", "--nodes", "2000")
    assert code == 1 and "cannot write /dev/full" in err and "PGN written" not in err + out, (out, err)


def test_eval_notes_a_position_in_check_or_over() -> None:
    code, out, _ = run("eval", "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1")
    assert code == 0 and out.splitlines()[-1].startswith("note: the game is over (checkmate)"), out
    code, out, _ = run("eval", "7k/8/6K1/8/8/8/8/7Q b - - 0 1")
    assert code == 0 and out.splitlines()[-1].startswith("note: Black is in check"), out
    code, out, _ = run("eval", "8/2k5/8/8/3K4/8/3R4/8 w - - 0 1", "--json")
    data = json.loads(out)
    assert data["in_check"] is False and data["game_over"] is None


def test_eval_refuses_weights_that_overflow_and_chess960_castling(tmp_path: Path) -> None:
    weights = json.loads((Path(__file__).parent / "data" / "weights-fixed.json").read_text())
    weights["weights"]["rook"] = [1e308, 1e308]
    (tmp_path / "huge.json").write_text(json.dumps(weights))
    code, out, err = run("eval", "8/2k5/8/8/3K4/8/3R4/8 w - - 0 1", "--weights", str(tmp_path / "huge.json"))
    assert code == 2 and "at most 1,000,000 centipawns" in err and out == "", err
    code, out, err = run("eval", "1r4kr/8/8/8/8/8/8/1R4KR w HBhb - 0 1")
    assert code == 2 and "castling rights HBhb of Chess960" in err, err


def test_eval_explains_by_family_and_term() -> None:
    code, out, _ = run("eval", "8/2k5/8/8/3K4/8/3R4/8 w - - 0 1")
    assert code == 0
    lines = out.splitlines()
    assert lines[1].startswith("phase: mg ") and lines[2].split() == ["family", "mg", "part", "eg", "part", "total"]
    assert any(line.startswith("mopup") for line in lines) and lines[-1].startswith("total")
    assert not any(line.strip().startswith("mop_edge") for line in lines)  # terms only with --terms
    code, out, _ = run("eval", "8/2k5/8/8/3K4/8/3R4/8 w - - 0 1", "--terms")
    assert code == 0 and any(line.strip().startswith("mop_edge") for line in out.splitlines())
    data = json.loads(run("eval", "8/2k5/8/8/3K4/8/3R4/8 w - - 0 1", "--json")[1])
    assert abs(data["tempo"] + sum(f["total"] for f in data["families"]) - data["total"]) < 1
    assert data["total"] > 500  # KRvK: a rook up, from the side to move (White)
    code, _, err = run("eval", "8/2k5/8/8/3K4/8/3R4/8 w - - 0 1", "--weights", "/nonexistent.json")
    assert code == 2 and "cannot read weight file" in err


#: Run in a fresh process: ``best`` with the player's clock watched. Each read of the clock reports whether the
#: compiled search tree was loaded by then (numba's dispatcher holds a signature once it is).
_CLOCK_SPY = """
import json, sys, time
import chess_endgame.engine.player as player
from chess_endgame.engine.core.tree import root
from chess_endgame_cli.launch import main
reads = []
class Clock:
    def __getattr__(self, name):
        return getattr(time, name)
    def monotonic(self):
        reads.append(bool(root.signatures))
        return time.monotonic()
player.time = Clock()
sys.argv = ["chess-endgame", "best", sys.argv[1], "--movetime", "100"]
try:
    main()
except SystemExit as exc:
    if exc.code:
        raise
print("reads:", json.dumps(reads))
"""


def test_the_first_search_of_a_process_gets_its_whole_movetime() -> None:
    """Loading the compiled core is set-up, done before the clock starts: in a fresh process, the player
    starts its clock for ``best --movetime 100`` with the compiled tree already loaded (it used to spend
    its 100 ms, and more, loading the code inside depth 1)."""
    out = subprocess.run([sys.executable, "-c", _CLOCK_SPY, "8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert any(line.startswith("search:") for line in out.splitlines()), out
    reads = json.loads(next(x for x in out.splitlines() if x.startswith("reads:"))[len("reads:"):])
    assert reads and reads[0], reads  # the first read is the start of the clock
