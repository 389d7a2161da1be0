"""The suite runner: EPD and puzzle suites, tablebase verification, engines, jobs, failures."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from chess_endgame.suite import load_files
from chess_endgame.tablebase.paths import scan

from .conftest import CRASHING_ENGINE, run
from .interrupting import interrupt, progress_shows

DATA = Path(__file__).parent / "data"
STOCKFISH = "/usr/games/stockfish"


def positions(path: Path) -> dict[str, dict]:
    return {p["id"]: p for p in json.loads(path.read_text())["positions"]}


def test_loading_is_lenient() -> None:
    loaded = load_files([str(DATA / "tablebase.epd"), str(DATA / "puzzles.csv")])
    assert len(loaded.items) == 7 + 7
    lines = {(Path(f).name, line) for f, line, _ in loaded.skipped}
    assert lines == {("tablebase.epd", 7), ("puzzles.csv", 8), ("puzzles.csv", 9)}
    puzzle = next(i for i in loaded.items if i.id == "twoMatesA")
    board = puzzle.board()
    assert board.move_stack and board.fen().startswith("7k/5ppp")  # the setup move is played
    assert [i.id for i in load_files([str(DATA / "puzzles.csv")], theme="middlegame").items] == ["middlegame"]


def test_bom_and_full_fens_in_epd(tmp_path: Path) -> None:
    suite = tmp_path / "bom.epd"
    suite.write_text('8/8/8/4k3/8/8/4K3/4R3 w - - bm Ra1; id "four fields";\n'
                     '8/2K5/4B3/3N4/8/8/4k3/8 b - - 48 1 bm Kd3; id "full FEN";\n'
                     '8/8/8/4k3/8/8/4K3/4R3 w - - 3 40\n', encoding="utf-8-sig")
    loaded = load_files([str(suite)])
    assert loaded.skipped == [] and [i.line for i in loaded.items] == [1, 2, 3]
    assert [i.id for i in loaded.items][:2] == ["four fields", "full FEN"]
    assert loaded.items[1].ops["bm"] == ["e2d3"] and loaded.items[1].board().halfmove_clock == 48
    assert loaded.items[2].fen == "8/8/8/4k3/8/8/4K3/4R3 w - - 3 40"


def test_bom_in_puzzle_csv(tmp_path: Path) -> None:
    suite = tmp_path / "bom.csv"
    suite.write_bytes(b"\xef\xbb\xbf" + (DATA / "puzzles.csv").read_bytes())
    plain = load_files([str(DATA / "puzzles.csv")])
    loaded = load_files([str(suite)])
    assert loaded.errors == [] and len(loaded.items) == len(plain.items) == 7
    assert [i.id for i in loaded.items] == [i.id for i in plain.items]


def test_tablebase_suite_and_outputs(syzygy_path: str, tmp_path: Path) -> None:
    out_json, out_csv = tmp_path / "r.json", tmp_path / "r.csv"
    code, out, err = run("suite", str(DATA / "tablebase.epd"), "--depth", "4", "--output", str(out_json),
                         "--csv", str(out_csv))
    assert code == 0, err
    assert "tablebase.epd:7" in err  # the malformed line, reported with its number
    assert "tablebase.epd" in out and "by operation:" in out and "TB-verified" in out
    results = positions(out_json)
    assert len(results) == 7
    # The key lists one slow move; the tables say the engine's faster win is just as correct.
    wrong_key = results["KBNvK: wrong key, Bd8 is slower"]
    assert wrong_key["checks"] == {"bm": False} and wrong_key["tb_correct"] is True
    assert results["KBNvK: six fastest wins"]["solved"] is True
    assert results["KBNvK defence at clock 48"]["moves"] == ["e2d3"]
    assert results["KBNvK defence at clock 48"]["tb_best_class"] == "BLESSED_LOSS"
    assert results["only en passant wins"]["moves"] == ["d5e6"]
    assert results["KRvK with expected tables values"]["checks"] == {"wdl": True, "dtz": True}
    assert results["mate, not stalemate"]["checks"] == {"am": True, "dm": True}
    # Without 5-piece tables the KBBvKN position is searched, not verified.
    verified = scan(syzygy_path).max_pieces >= 5
    assert all(r["tb_correct"] for key, r in results.items() if verified or key != "only Nxg6 draws")
    header = out_csv.read_text().splitlines()[0].split(",")
    assert header[:5] == ["index", "file", "line", "id", "kind"] and "tb_correct" in header
    assert len(out_csv.read_text().splitlines()) == 8


def test_puzzles_and_the_any_mate_rule(syzygy_path: str, tmp_path: Path) -> None:
    out_json = tmp_path / "p.json"
    code, out, _ = run("suite", str(DATA / "puzzles.csv"), "--theme", "endgame", "--depth", "4",
                       "--output", str(out_json))
    assert code == 0
    results = positions(out_json)
    assert set(results) == {"00EXM", "00Yfr", "00AEM", "00Bot", "twoMatesA", "twoMatesB"}
    # Both keys name one of two mates; the engine plays one of them and both count as solved.
    assert results["twoMatesA"]["solved"] and results["twoMatesB"]["solved"]
    assert results["twoMatesA"]["moves"] == results["twoMatesB"]["moves"]
    assert results["00EXM"]["moves"] == ["d7d8", "d8e8"] and results["00EXM"]["solved"]
    assert results["00EXM"]["expected"] == {"line": ["d7d8", "e3e8", "d8e8"]}  # after the setup move


def test_play_checks_the_expected_result(syzygy_path: str, tmp_path: Path) -> None:
    suite = tmp_path / "play.epd"
    suite.write_text('8/6k1/4K3/6B1/8/8/5N2/8 w - - id "kbnk";\n'
                     '7b/8/6b1/8/5Nk1/4K3/8/8 w - - c0 "1/2-1/2"; id "draw";\n')
    out_json = tmp_path / "play.json"
    code, out, _ = run("suite", str(suite), "--nodes", "2000", "--play", "--output", str(out_json))
    assert code == 0 and "play 2/2" in out
    results = positions(out_json)
    assert results["kbnk"]["play"]["result"] == "1-0" and results["kbnk"]["play"]["expected"] == "1-0"
    assert results["draw"]["expected"] == {"result": "1/2-1/2"} and results["kbnk"]["expected"] == {}
    assert results["draw"]["play"]["expected"] == "1/2-1/2" and results["draw"]["play"]["ok"]


def test_jobs_give_the_same_results(syzygy_path: str, tmp_path: Path) -> None:
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    args = ["suite", str(DATA / "tactics.epd"), str(DATA / "tablebase.epd"), "--depth", "4"]
    assert run(*args, "--output", str(one))[0] == 0
    assert run(*args, "--jobs", "2", "--output", str(two))[0] == 0
    a, b = json.loads(one.read_text())["positions"], json.loads(two.read_text())["positions"]
    keep = ("id", "moves", "checks", "tb_correct", "score", "depth", "nodes")
    assert [{k: p[k] for k in keep} for p in a] == [{k: p[k] for k in keep} for p in b]
    assert json.loads(two.read_text())["meta"]["jobs"] == 2
    lone = tmp_path / "lone.epd"  # one position: one engine, whatever --jobs says
    lone.write_text((DATA / "tactics.epd").read_text().splitlines()[0] + "\n")
    assert run("suite", str(lone), "--depth", "2", "--jobs", "2", "--output", str(two))[0] == 0
    assert json.loads(two.read_text())["meta"]["jobs"] == 1


def test_bad_files_and_options(syzygy_path: str, tmp_path: Path) -> None:
    code, _, err = run("suite", str(tmp_path / "missing.epd"))
    assert code == 2 and err == f"chess-endgame: error: cannot read suite {tmp_path / 'missing.epd'}: " \
        "No such file or directory\n"  # one line, the reason
    code, _, err = run("suite", str(tmp_path / "missing.epd"), str(tmp_path / "missing2.epd"))
    assert code == 2 and len(err.splitlines()) == 1 and "missing2.epd" in err
    code, out, err = run("suite", str(tmp_path / "missing.epd"), str(DATA / "mates.epd"), "--depth", "2",
                         "--limit", "3")
    assert code == 1 and "cannot read suite" in err and "mates.epd" in out  # the others still run
    code, _, err = run("suite", str(DATA / "mates.epd"), "--option", "Hash=16")
    assert code == 2 and "--option" in err
    code, _, err = run("suite", str(DATA / "mates.epd"), "--depth", "2", "--nodes", "5")
    assert code == 2 and "one of" in err
    code, _, err = run("suite", str(DATA / "mates.epd"), "--engine", "/nonexistent/engine")
    assert code == 2 and "cannot start the UCI engine" in err
    quote = tmp_path / "quote.csv"  # a stray quote on a line of its own, and nothing else: nothing to run
    quote.write_text('PuzzleId,FEN,Moves,Themes\na1,"8/8/8/8/8/8/8/8 w - - 0 1,e2e4 e7e5,x\n')
    code, _, err = run("suite", str(quote))
    assert code == 2 and "quote.csv:2: invalid FEN" in err and err.endswith("no positions to run\n"), err


@pytest.mark.skipif(not os.path.exists(STOCKFISH), reason="Debian's stockfish is not installed")
def test_any_uci_engine(tmp_path: Path) -> None:
    out_json = tmp_path / "sf.json"
    code, out, err = run("suite", str(DATA / "mates.epd"), "--limit", "6", "--engine", STOCKFISH,
                         "--option", "Threads=1", "--option", "Hash=16", "--nodes", "20000",
                         "--output", str(out_json))
    assert code == 0, err
    assert json.loads(out_json.read_text())["meta"]["engine"] == STOCKFISH
    assert all(p["solved"] for p in json.loads(out_json.read_text())["positions"])
    code, _, err = run("suite", str(DATA / "mates.epd"), "--engine", STOCKFISH, "--option", "NoSuchThing=1")
    assert code == 2 and "has no option NoSuchThing" in err
    # Values python-chess's configure() refuses, and a check value it would read as true (anything but "false").
    for option, words in (("Hash=abc", "expected integer"), ("Hash=999999999", "at most"),
                          ("UCI_ShowWDL=yes", "takes true or false")):
        code, _, err = run("suite", str(DATA / "mates.epd"), "--engine", STOCKFISH, "--option", option)
        assert code == 2 and len(err.splitlines()) == 1 and words in err, (option, err)


def test_engine_crash_mid_suite(tmp_path: Path) -> None:
    script = tmp_path / "crasher.py"
    script.write_text(CRASHING_ENGINE)
    out_json = tmp_path / "crash.json"
    code, out, err = run("suite", str(DATA / "mates.epd"), "--limit", "6", "--engine",
                         f"{sys.executable} {script}", "--movetime", "10", "--output", str(out_json))
    assert code == 0, err
    run_ = json.loads(out_json.read_text())
    results = run_["positions"]
    # It dies at its third position; each time it is restarted and that position is run again on the new engine.
    assert len(results) == 6 and not any(p["error"] for p in results)
    assert [r["index"] for r in run_["meta"]["retried"]] == [2, 4]
    assert "died" in run_["meta"]["retried"][0]["why"]
    assert err.count("chess-endgame: retried ") == 2


def test_engine_that_dies_twice_on_a_position(tmp_path: Path) -> None:
    out_json = tmp_path / "dies.json"
    engine = f"{sys.executable} {Path(__file__).parent / 'fake_engine.py'} crash:1"
    code, out, err = run("suite", str(DATA / "mates.epd"), "--limit", "6", "--engine", engine, "--movetime", "10",
                         "--output", str(out_json))
    assert code == 1
    results = json.loads(out_json.read_text())["positions"]
    # Every position is retried once on a restarted engine, then given up; three such end the run.
    assert len(results) == 3 and all("retried once" in p["error"] for p in results)
    assert "engine error" in err and "not run: 3 of 6" in out
    assert "the run stopped after 3 failed positions; 3 not run" in err, err
    code, out, err = run("suite", str(DATA / "mates.epd"), "--limit", "6", "--engine", engine, "--movetime", "10",
                         "--jobs", "2", "--output", str(out_json))
    run_ = json.loads(out_json.read_text())
    done = {p["index"] for p in run_["positions"]}
    assert code == 1 and {r["index"] for r in run_["meta"]["retried"]} <= done  # only positions with a result


@pytest.mark.slow
def test_ctrl_c_keeps_partial_results(syzygy_path: str, tmp_path: Path) -> None:
    out_json = tmp_path / "partial.json"
    code, out, err = interrupt(["suite", str(DATA / "tactics.epd"), str(DATA / "mates.epd"), "--movetime", "400",
                                "--output", str(out_json)], progress_shows("suite", 1), terminal=True)
    assert code == 130, err
    assert "interrupted" in err and "not run:" in out
    done = json.loads(out_json.read_text())
    assert done["meta"]["interrupted"] and 0 < len(done["positions"]) < 43


def test_the_text_report_lists_the_failed_positions(syzygy_path: str) -> None:
    code, out, err = run("suite", str(DATA / "tablebase.epd"), str(DATA / "puzzles.csv"), "--depth", "2")
    assert code == 0, err
    failed = out.split("\nfailed (")[1].splitlines()
    count = int(failed[0].split(")")[0])
    assert count == len(failed) - 1 >= 1
    # The wrong key: the engine's move, the key's move in SAN, and the tables' verdict on it.
    assert "  tablebase.epd:3 KBNvK: wrong key, Bd8 is slower: played " in out
    assert "expected bm Bd8; the tables: WIN, best WIN" in out
    assert all(line.startswith("  ") and ": played " in line and ", expected " in line for line in failed[1:])
    # Every other position of the report is solved: none of them is listed.
    assert "KBNvK: six fastest wins" not in out.split("\nfailed (")[1]


def test_a_stray_quote_in_a_puzzle_csv_costs_its_own_line_only(tmp_path: Path) -> None:
    rows = (DATA / "puzzles.csv").read_text().splitlines()
    header, good = rows[0], rows[1:4]
    broken = good[0].replace(",", ',"', 1)  # a quote that never closes
    suite = tmp_path / "quote.csv"
    suite.write_text("\n".join([header, good[0], broken, "", good[1], "", good[2]]) + "\n")
    loaded = load_files([str(suite)])
    assert [i.line for i in loaded.items] == [2, 5, 7]  # the file's own line numbers, blank lines counted
    assert [(line, len(message) < 3 * len(broken)) for _, line, message in loaded.skipped] == [(3, True)]


def test_a_theme_no_puzzle_has_is_said_so(tmp_path: Path) -> None:
    code, out, err = run("suite", str(DATA / "puzzles.csv"), "--theme", "nosuch", "--nodes", "1")
    assert code == 2 and err.strip() == "chess-endgame: error: no positions to run with theme 'nosuch'", err


def test_operations_that_cannot_be_met_and_finished_games_are_skipped(tmp_path: Path) -> None:
    suite = tmp_path / "ops.epd"
    suite.write_text('7k/8/6K1/8/8/8/8/5Q2 w - - dm 0; id "dm0";\n'
                     '7k/8/6K1/8/8/8/8/5Q2 w - - dm 3.5; id "dm3.5";\n'
                     '7k/8/6K1/8/8/8/8/5Q2 w - - wdl 7; id "wdl7";\n'
                     '7k/8/6K1/8/8/8/8/5Q2 w - - bm; id "nobm";\n'
                     '5Q1k/8/6K1/8/8/8/8/8 b - - dm 1; id "mated";\n'
                     '7k/5Q2/6K1/8/8/8/8/8 b - - id "stalemate";\n'
                     '7k/8/6K1/8/8/8/8/5QP1 w - - dm 1; id "backrank";\n'
                     '7k/8/6K1/8/8/8/8/5Q2 w - - dm 1; id "fine";\n')
    loaded = load_files([str(suite)])
    assert [i.id for i in loaded.items] == ["fine"]
    messages = [message for _, _, message in loaded.skipped]
    assert messages == ["operation dm needs a positive number of moves, got 0",
                        "operation dm needs an integer, got 3.5", "operation wdl is -2 to 2, got 7",
                        "operation bm names no move",
                        "no legal move: checkmate", "no legal move: stalemate",
                        "illegal position: pawns on the first or last rank"], messages  # in words, not a flag


def test_the_summary_rounds_down_and_names_a_failed_play_out(syzygy_path: str, tmp_path: Path) -> None:
    from chess_endgame_cli.suite import _percent

    assert _percent(199, 200) == " 99%" and _percent(200, 200) == " 100%" and _percent(0, 0) == ""
    suite = tmp_path / "play.epd"
    suite.write_text('8/8/8/4k3/8/8/4K3/4R3 w - - c0 "0-1"; id "wrong result";\n')
    code, out, err = run("suite", str(suite), "--nodes", "500", "--play")
    assert code == 0 and "play 0/1" in out
    assert "wrong result: played out to 1-0 (" in out and "expected 0-1" in out, out
