"""What every command of ``chess-endgame`` promises, checked by walking the whole click tree.

Sweeps over all commands and options, so that a new command or option cannot
bring back a bug class fixed once: click's multi-line usage errors, options
without help, tracebacks on bad files or engines.
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import time
from pathlib import Path

import chess.pgn
import click
import pytest

from chess_endgame.play.engines import HANDSHAKE_TIMEOUT
from chess_endgame_cli.common import EngineCommand, OutputFile
from chess_endgame_cli.main import cli

from .conftest import EXECUTABLE, run

DATA = Path(__file__).parent / "data"
FEN = "8/2k5/8/8/3K4/8/3R4/8 w - - 0 1"
#: Arguments that get each command past its own checks quickly; a sweep adds the option under test.
#: A sweep fails when a command it needs is missing here.
MINIMAL_ARGS: dict[str, list[str]] = {
    "best": [FEN, "--depth", "1"],
    "eval": [FEN],
    "play": [FEN, "--max-plies", "2", "--depth", "1"],
    "match": ["--engine", "self", "--games", "1", "--depth", "1"],
    "probe": [FEN],
    "suite": [str(DATA / "mates.epd"), "--limit", "1", "--depth", "1"],
    "review": [str(DATA / "review.pgn"), "--nodes", "100"],
    "tune": ["--per-material", "10"],
    "tablebases verify": [],
    "tablebases download": ["--pieces", "3", "--mirror", "http://127.0.0.1:9/", "--timeout", "1"],
}


def leaf_commands(group: click.Group = cli, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    """(name path, command) of every runnable command, e.g. (("tablebases", "download"), <Command>)."""
    found = []
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            found += leaf_commands(command, path + (name,))
        else:
            found.append((path + (name,), command))
    return found


COMMANDS = leaf_commands()


def options(command: click.Command) -> list[click.Option]:
    return [p for p in command.params if isinstance(p, click.Option) and not p.hidden]


def assert_one_line_error(code: int, out: str, err: str, *words: str) -> None:
    """Exit 2, nothing on stdout, exactly one ``chess-endgame: error:`` line on stderr naming ``words``."""
    assert code == 2, (code, out, err)
    assert out == "", out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("chess-endgame: error: "), err
    assert "Traceback" not in err and "Usage:" not in err
    for word in words:
        assert word in lines[0], (word, err)


def bad_values(option: click.Option) -> list[str]:
    """Values click itself must reject for ``option`` (wrong type, out of range, not a choice)."""
    kind = option.type
    if isinstance(kind, click.Choice):
        return ["no-such-choice"]
    values = []
    if isinstance(kind, (click.types.IntParamType, click.types.FloatParamType)):
        values.append("not-a-number")
    if isinstance(kind, click.types.FloatParamType):
        values += ["nan", "inf"]  # float() reads both; click's FloatRange lets them through
    if isinstance(kind, click.types._NumberRangeBase):
        if kind.min is not None:
            values.append(str(kind.min - 1))
        if kind.max is not None:
            values.append(str(kind.max + 1))
    return values


VALUE_CASES = [(path, option.opts[0], value) for path, command in COMMANDS for option in options(command)
               if not option.is_flag for value in bad_values(option)]


def test_the_sweep_sees_every_command() -> None:
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"probe", "best", "play", "eval", "suite", "tune", "uci", "tablebases download",
            "bench search"} <= names
    assert len(VALUE_CASES) > 30


@pytest.mark.parametrize(("path", "name", "value"), VALUE_CASES,
                         ids=[f"{' '.join(p)} {n} {v}" for p, n, v in VALUE_CASES])
def test_bad_option_values_give_one_line(path: tuple[str, ...], name: str, value: str) -> None:
    assert_one_line_error(*run(*path, name, value), name)


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=[" ".join(p) for p, _ in COMMANDS])
def test_unknown_options_give_one_line(path: tuple[str, ...]) -> None:
    assert_one_line_error(*run(*path, "--no-such-option"), "--no-such-option", " ".join(path))


@pytest.mark.parametrize("path", [p for p, c in COMMANDS if any(a.required for a in c.params
                                                                     if isinstance(a, click.Argument))],
                         ids=lambda p: " ".join(p))
def test_missing_arguments_give_one_line(path: tuple[str, ...]) -> None:
    assert_one_line_error(*run(*path), "missing argument")


def test_unknown_command_gives_one_line() -> None:
    assert_one_line_error(*run("no-such-command"), "no-such-command")
    assert_one_line_error(*run("bench", "no-such-benchmark"), "no-such-benchmark")


def minimal_args(path: tuple[str, ...]) -> list[str]:
    name = " ".join(path)
    assert name in MINIMAL_ARGS, f"add the command {name!r} to MINIMAL_ARGS"
    return MINIMAL_ARGS[name]


ENGINE_OPTIONS = [(path, option.opts[0]) for path, command in COMMANDS for option in options(command)
                  if isinstance(option.type, EngineCommand)]


def test_engine_options_are_found() -> None:
    assert {(" ".join(p), n) for p, n in ENGINE_OPTIONS} == {("play", "--opponent"), ("suite", "--engine"),
                                                             ("match", "--engine"), ("match", "--balance-engine")}


@pytest.mark.slow
@pytest.mark.parametrize(("engine", "words"), [
    ("", "the UCI engine command is empty"),
    ("'unbalanced", "cannot parse the engine command"),
    ("/nonexistent/engine", "cannot start the UCI engine '/nonexistent/engine': No such file or directory"),
    ("/bin/true", "/bin/true is not a UCI engine (it exited without sending uciok)"),
    ("/bin/cat", f"/bin/cat is not a UCI engine (no uciok within {HANDSHAKE_TIMEOUT:g} s)"),
])
@pytest.mark.parametrize(("path", "name"), ENGINE_OPTIONS, ids=[f"{' '.join(p)} {n}" for p, n in ENGINE_OPTIONS])
def test_programs_that_are_not_uci_engines_fail_fast(syzygy_path: str, path: tuple[str, ...], name: str,
                                                     engine: str, words: str) -> None:
    start = time.monotonic()
    extra = ["--engine", "self"] if name == "--balance-engine" else []  # a match's two engines, then the judge
    proc = subprocess.run([EXECUTABLE, *path, *minimal_args(path), *extra, name, engine], capture_output=True,
                          text=True, timeout=60)
    # Bounded by the handshake timeout, not the 60 s above. The slack covers the program's own start (Python,
    # and for a match or a judge the compiled core of "self"), which took 5.2 s on a loaded 2-core machine
    # (CI of 5db8505); a judge is asked only after the match's own two engines have started.
    assert time.monotonic() - start < HANDSHAKE_TIMEOUT + (20 if extra else 15)
    assert_one_line_error(proc.returncode, proc.stdout, proc.stderr, words)


def input_file_options() -> list[tuple[tuple[str, ...], str]]:
    """Every option that reads a file: a click.Path that must not be a directory."""
    return [(path, option.opts[0]) for path, command in COMMANDS for option in options(command)
            if isinstance(option.type, click.Path) and not option.type.dir_okay and option.type.readable
            and not option.type.writable]


INPUT_OPTIONS = input_file_options()


def test_input_file_options_are_found() -> None:
    assert {("eval", "--weights"), ("tune", "--weights"), ("tune", "--pgn"), ("tablebases verify", "--checksums"),
            ("tablebases download", "--checksums")} <= {(" ".join(p), n) for p, n in INPUT_OPTIONS}


@pytest.mark.parametrize("kind", ["binary", "text", "missing", "directory"])
@pytest.mark.parametrize(("path", "name"), INPUT_OPTIONS, ids=[f"{' '.join(p)} {n}" for p, n in INPUT_OPTIONS])
def test_bad_input_files_give_one_line(syzygy_path: str, tmp_path: Path, path: tuple[str, ...], name: str,
                                       kind: str) -> None:
    target = tmp_path / "input"
    if kind == "binary":
        target.write_bytes(bytes(range(256)) * 8)
    elif kind == "text":
        target.write_text("this is not what the option reads\n")
    elif kind == "directory":
        target.mkdir()
    assert_one_line_error(*run(*path, *minimal_args(path), name, str(target)), "input")


OUTPUT_OPTIONS = [(path, option.opts[0]) for path, command in COMMANDS for option in options(command)
                  if isinstance(option.type, OutputFile)]


def test_every_file_written_is_an_output_option() -> None:
    """Options that write files take OutputFile (checked before the work, ``-`` for stdout), never a bare Path."""
    assert {(" ".join(p), n) for p, n in OUTPUT_OPTIONS} == {
        ("play", "--pgn"), ("suite", "--output"), ("suite", "--csv"), ("tune", "--output"), ("tune", "--labels-out"),
        ("match", "--pgn"), ("match", "--save-starts"), ("review", "--output")}
    for path, command in COMMANDS:
        for param in command.params:
            kind = param.type
            assert not (isinstance(kind, click.Path) and kind.writable), (path, param.name)
            assert not (isinstance(kind, click.File) and "w" in kind.mode), (path, param.name)


@pytest.mark.parametrize("kind", ["missing directory", "a directory"])
@pytest.mark.parametrize(("path", "name"), OUTPUT_OPTIONS, ids=[f"{' '.join(p)} {n}" for p, n in OUTPUT_OPTIONS])
def test_bad_output_paths_fail_before_any_work(syzygy_path: str, tmp_path: Path, path: tuple[str, ...], name: str,
                                               kind: str) -> None:
    target = tmp_path / "no-such-dir" / "out" if kind == "missing directory" else tmp_path
    start = time.monotonic()
    assert_one_line_error(*run(*path, *minimal_args(path), name, str(target)), name, str(target))
    assert time.monotonic() - start < 1.0  # refused while parsing the options, before any work


def test_play_pgn_to_stdout(syzygy_path: str) -> None:
    code, out, err = run("play", "6k1/8/5K2/8/8/8/P7/7Q w - - 0 1", "--pgn", "-", "--nodes", "2000")
    assert code == 0, err
    game = chess.pgn.read_game(io.StringIO(out))
    assert game is not None and game.headers["Result"] == "1-0" and not game.errors
    assert out.lstrip().startswith("[Event ") and "result: 1-0 (checkmate)" in err


def test_suite_outputs_to_stdout(syzygy_path: str, tmp_path: Path) -> None:
    args = ["suite", str(DATA / "mates.epd"), "--limit", "3", "--depth", "5"]  # a mate in 3 is 5 plies
    code, out, err = run(*args, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert len(data["positions"]) == 3 and data["summary"]["total"]["positions"] == 3
    assert "by operation" not in out + err  # --json replaces the table
    code, out, err = run(*args, "--output", "-")
    assert code == 0 and json.loads(out)["meta"]["positions"] == 3 and "by operation:" in err
    code, out, err = run(*args, "--csv", "-", "--output", str(tmp_path / "r.json"))
    assert code == 0 and len(list(csv.reader(io.StringIO(out)))) == 4 and "by operation:" in err
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["total"]["solved"] == 3
    assert_one_line_error(*run(*args, "--json", "--csv", "-"), "standard output")


def test_tune_output_to_stdout(syzygy_path: str) -> None:
    code, out, err = run("tune", "--per-material", "10", "--output", "-")
    assert code == 0, err
    assert set(json.loads(out)["weights"][0]) >= {"pawn", "queen"} and "held-out log-loss" in err
    assert_one_line_error(*run("tune", "--output", "-", "--install", "--match-games", "100"), "--install")


#: Words that give a number its unit in a help text (a seed or a TCP port is a number without one).
UNIT_WORDS = ("ms", "milliseconds", "seconds", "MB", "plies", "nodes", "positions", "games", "runs", "processes",
              "pieces", "seed", "share", "variance", "port", "threads", "clients")
@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_option_has_help_with_its_unit(path: tuple[str, ...]) -> None:
    command = dict(COMMANDS)[path]
    assert command.help, path
    for option in options(command):
        assert option.help and len(option.help) > 10, (path, option.opts)
        if isinstance(option.type, (click.types.IntParamType, click.types.FloatParamType)):
            assert re.search(rf"\b({'|'.join(UNIT_WORDS)})\b", option.help, re.IGNORECASE), \
                f"{' '.join(path)} {option.opts[0]}: say the unit in the help ({option.help!r})"
