"""Ctrl-C: every long command stops with exit 130 and keeps what it did.

Each test starts the real executable, waits until it is at work, sends SIGINT
as a terminal's Ctrl-C would, and checks the exit code and the partial output.
"""

from __future__ import annotations

import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import chess.pgn
import click
import pytest

from chess_endgame.engine.evaluation import load_weights
from chess_endgame.tablebase import files as tables
from chess_endgame_cli.common import EXIT_INTERRUPTED, CommandGroup

from .conftest import EXECUTABLE
from .httpserver import serve
from .interrupting import Ready, after, after_output, interrupt, progress_shows

DATA = Path(__file__).parent / "data"
STOCKFISH = "/usr/games/stockfish"
#: An 8-piece rook ending: every move needs a search, so games last.
ROOK_ENDING = "8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1"


def assert_interrupted(code: int, err: str) -> None:
    assert code == 130, err
    assert "chess-endgame: interrupted" in err and "Traceback" not in err, err


def _moves(out: str) -> list[str]:
    return [line for line in out.splitlines() if line[:1].isdigit()]


def moves_played(count: int) -> Ready:
    return lambda out, err, elapsed: len(_moves(out)) >= count


#: Every long command, and a moment when it is at work. Searches are limited by wall time (--movetime),
#: so that a faster searcher cannot finish before the Ctrl-C.
LONG_COMMANDS: dict[str, tuple[list[str], Ready]] = {
    "play": (["play", ROOK_ENDING, "--opponent", "self", "--movetime", "300"], moves_played(2)),
    "suite": (["suite", str(DATA / "tactics.epd"), "--movetime", "300"], after(3)),
    "tune": (["tune", "--per-material", "10", "--match-games", "400", "--output", os.devnull], after(3)),
    "bench search": (["bench", "search", "--movetime", "1000", "--repeat", "1"], after(3)),
    "bench probe": (["bench", "probe"], after(3)),
    "bench convert": (["bench", "convert", "--positions", "60"], after(3)),
    "bench features": (["bench", "features"], after(3)),
    "bench choose": (["bench", "choose", "--positions", "500", "--worst-positions", "500"], after(3)),
    "tablebases verify": (["tablebases", "verify", "--deep", "--samples", "1000"], after(3)),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(LONG_COMMANDS))
def test_ctrl_c_exits_130(syzygy_path: str, name: str, request: pytest.FixtureRequest) -> None:
    if name == "bench probe":  # its workloads are KQvKR, KRPvK and KRPvKR positions
        request.getfixturevalue("five_pieces")
    args, ready = LONG_COMMANDS[name]
    assert_interrupted(*interrupt(args, ready)[::2])


#: A Ctrl-C while the program loads: an import hook raises KeyboardInterrupt as the commands' module is imported,
#: where a real Ctrl-C lands in the first half second.
CTRL_C_WHILE_LOADING = """
import sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "chess_endgame_cli.main":
            raise KeyboardInterrupt
sys.meta_path.insert(0, Interrupt())
sys.argv = ["chess-endgame", "--version"]
from chess_endgame_cli.launch import main
main()
"""


def test_ctrl_c_while_the_program_loads_is_one_line_and_130() -> None:
    proc = subprocess.run([sys.executable, "-c", CTRL_C_WHILE_LOADING], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 130 and proc.stdout == "", proc.stderr
    assert proc.stderr.strip() == "chess-endgame: interrupted while starting; nothing was done"
    # Without the hook the same entry point runs the program.
    proc = subprocess.run([sys.executable, "-c", CTRL_C_WHILE_LOADING.replace("sys.meta_path.insert", "print")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "chess-endgame, version" in proc.stdout, proc.stderr

#: SIGTERM after the program set Ctrl-C aside (ignored): it cannot become a Ctrl-C, so it ends the program.
SIGTERM_WITH_CTRL_C_SET_ASIDE = """
import signal
from chess_endgame_cli import launch
signal.signal(signal.SIGINT, signal.SIG_IGN)
launch._terminate(signal.SIGTERM, None)
print("still running")
"""


def test_sigterm_ends_the_program_when_ctrl_c_is_set_aside() -> None:
    proc = subprocess.run([sys.executable, "-c", SIGTERM_WITH_CTRL_C_SET_ASIDE], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == -signal.SIGTERM and proc.stdout == "", (proc.stdout, proc.stderr)


#: A library that catches everything while it loads: the Ctrl-C lands in its ``try`` and is dropped there
#: ("swallowed"), or comes out as another exception ("wrapped", as Python's RuntimeError from ``__set_name__``).
CTRL_C_CAUGHT_WHILE_LOADING = """
import signal, sys, time
class Library:
    def find_spec(self, name, path=None, target=None):
        if name == "chess_endgame_cli.main":
            try:
                signal.raise_signal(signal.SIGINT)
                time.sleep(0.2)
            except BaseException as exc:
                if WRAPPED:
                    raise RuntimeError("Error calling __set_name__") from exc
sys.meta_path.insert(0, Library())
sys.argv = ["chess-endgame", "--version"]
from chess_endgame_cli.launch import main
main()
"""


@pytest.mark.parametrize("wrapped", [False, True], ids=["swallowed", "wrapped"])
def test_ctrl_c_caught_by_a_library_while_the_program_loads_still_ends_it(wrapped: bool) -> None:
    proc = subprocess.run([sys.executable, "-c", f"WRAPPED = {wrapped}" + CTRL_C_CAUGHT_WHILE_LOADING],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 130 and proc.stdout == "", proc.stderr
    assert proc.stderr.strip() == "chess-endgame: interrupted while starting; nothing was done"


#: At work, a Ctrl-C that lands while C code calls back into Python through ctypes (numba's linker does) is
#: only reported as "Exception ignored"; the stand-in program below then sleeps, and prints what reached it.
CTRL_C_IN_A_CTYPES_CALLBACK = """
import ctypes, signal, sys, time, types
def work():
    @ctypes.CFUNCTYPE(None)
    def callback():
        signal.raise_signal(signal.SIGINT)
        for _ in range(1000):
            pass
    callback()
    try:
        time.sleep(5)
        print("ran on")
    except KeyboardInterrupt:
        print("interrupted")
sys.modules["chess_endgame_cli.main"] = types.SimpleNamespace(main=work)
from chess_endgame_cli.launch import main
main()
"""


def test_a_ctrl_c_swallowed_at_work_is_pressed_again() -> None:
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", CTRL_C_IN_A_CTYPES_CALLBACK], capture_output=True, text=True,
                          timeout=60)
    assert proc.stdout == "interrupted\n" and time.monotonic() - started < 4, proc.stderr
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    # The stand-in is faithful: run as is, the Ctrl-C is lost in the callback.
    proc = subprocess.run([sys.executable, "-c", CTRL_C_IN_A_CTYPES_CALLBACK.replace("main()", "work()")],
                          capture_output=True, text=True, timeout=60)
    assert proc.stdout == "ran on\n" and "Exception ignored on calling ctypes callback" in proc.stderr


#: Table probes in a loop, from Python to compiled code and back; each KeyboardInterrupt is acknowledged on stdout.
PROBES_UNTIL_STDIN_CLOSES = """
import signal, sys, threading
import chess
from chess_endgame.tablebase.compiled import CompiledTables
from chess_endgame.tablebase.paths import scan
files = scan(sys.argv[1])
tables = CompiledTables([*files.wdl.values(), *files.dtz.values()])
boards = [chess.Board(fen) for fen in ("8/8/8/4k3/8/8/2R5/4K3 w - - 0 1", "8/8/3k4/8/8/2Q5/4r3/4K3 w - - 0 1")]
for board in boards:  # numba loads the code of the first probes: a Ctrl-C there is another test's
    tables.probe_dtz(board)
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
acknowledge = "ready"
while not done.is_set():
    try:  # the acknowledgement is printed inside the try: the next press may come as soon as it is out
        print(acknowledge, flush=True)
        while not done.is_set():
            for board in boards * 50:
                tables.probe_dtz(board)
    except KeyboardInterrupt:
        acknowledge = "interrupted"
"""


def test_every_ctrl_c_during_compiled_probes_arrives(syzygy_path: str) -> None:
    """numba's dispatcher reads each argument's numba type from C and clears any error on the way: a Ctrl-C
    delivered inside a Python property there was lost (about 1 press in 20 over this loop)."""
    proc = subprocess.Popen([sys.executable, "-c", PROBES_UNTIL_STDIN_CLOSES, syzygy_path], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "ready\n", proc.stderr.read()
        rng = random.Random(5)
        for press in range(300):
            time.sleep(rng.uniform(0, 0.003))
            proc.send_signal(signal.SIGINT)
            ready, _, _ = select.select([proc.stdout], [], [], 5)
            assert ready, f"press {press + 1} was lost"
            assert proc.stdout.readline() == "interrupted\n", proc.stderr.read()
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()


#: A Ctrl-C in the middle of numba's compiling: a listener of numba's compile event presses it there.
CTRL_C_WHILE_NUMBA_COMPILES = """
import signal, sys, threading
import numba
from numba.core import event
from chess_endgame.engine.core.jit import hold_ctrl_c_while_compiling
if HOLD:
    hold_ctrl_c_while_compiling()
class Press(event.Listener):
    def on_start(self, ev):
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        sum(range(100000))  # Python code: the press is delivered here, inside numba's compiling
    def on_end(self, ev):
        pass
event.register("numba:compile", Press())
@numba.njit
def add_one(x):
    return x + 1
try:
    add_one(1)
    print("not interrupted")
except KeyboardInterrupt:
    print(f"interrupted; compiled: {len(add_one.overloads)}")
"""


def test_a_ctrl_c_while_numba_compiles_waits_until_it_is_done() -> None:
    """Raised in the middle, the KeyboardInterrupt left numba's and LLVM's objects half made (a segmentation fault
    or a double free on the way out, after a Ctrl-C at the program's first probes)."""
    proc = subprocess.run([sys.executable, "-c", "HOLD = True" + CTRL_C_WHILE_NUMBA_COMPILES], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout == "interrupted; compiled: 1\n", proc.stderr
    assert proc.stderr.startswith("chess-endgame: Ctrl-C noted; it stops the program once numba has finished")
    proc = subprocess.run([sys.executable, "-c", "HOLD = False" + CTRL_C_WHILE_NUMBA_COMPILES], capture_output=True,
                          text=True, timeout=120)
    assert proc.stdout == "interrupted; compiled: 0\n", proc.stderr  # without: the compiling is left half done


def test_play_keeps_the_game_so_far(syzygy_path: str, tmp_path: Path) -> None:
    pgn = tmp_path / "game.pgn"
    code, out, err = interrupt(["play", ROOK_ENDING, "--opponent", "self", "--movetime", "300", "--pgn", str(pgn)],
                               moves_played(3))
    assert_interrupted(code, err)
    assert "result: * (interrupted)" in out
    game = chess.pgn.read_game(pgn.open())
    assert game.headers["Result"] == "*" and game.headers["Termination"] == "unterminated"
    assert game.end().comment.endswith("interrupted")
    assert len(list(game.mainline_moves())) == len(_moves(out)) >= 3


@pytest.mark.skipif(not os.path.exists(STOCKFISH), reason="Debian's stockfish is not installed")
def test_play_against_an_engine_stops_it_too(syzygy_path: str) -> None:
    code, out, err = interrupt(["play", ROOK_ENDING, "--opponent", STOCKFISH, "--movetime", "300"],
                               moves_played(2))
    assert_interrupted(code, err)
    assert "result: * (interrupted)" in out


@pytest.mark.slow
def test_tune_keeps_the_weights_and_the_match_so_far(syzygy_path: str, tmp_path: Path) -> None:
    weights = tmp_path / "w.json"
    code, out, err = interrupt(["tune", "--per-material", "10", "--match-games", "400", "--match-nodes", "300",
                                "--output", str(weights)],
                               after_output("weights written", 2))
    assert_interrupted(code, err)
    assert "match stopped after" in out and "nothing was installed" in err
    assert load_weights(str(weights)).source.startswith("tuned")


@pytest.mark.slow
def test_suite_json_keeps_the_positions_done(syzygy_path: str) -> None:
    code, out, err = interrupt(["suite", str(DATA / "tactics.epd"), str(DATA / "mates.epd"), "--movetime", "300",
                                "--json"], progress_shows("suite", 2), terminal=True)
    assert_interrupted(code, err)
    data = json.loads(out)
    assert data["meta"]["interrupted"] and 0 < len(data["positions"]) < data["meta"]["positions"]


@pytest.mark.slow
def test_bench_search_keeps_the_rows_measured(syzygy_path: str) -> None:
    code, out, err = interrupt(["bench", "search", "--movetime", "500", "--repeat", "1"], progress_shows("search", 1),
                               terminal=True)
    assert_interrupted(code, err)
    rows = out.splitlines()[1:]
    assert out.startswith("position") and 1 <= len(rows) < 13 and "signature" not in out
    assert f"{len(rows)} of 13 positions measured" in err


def test_download_keeps_the_files_done(syzygy_dir: Path, tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    for name in tables.table_files(3):
        shutil.copy(syzygy_dir / name, mirror / name)
    dest = tmp_path / "dest"
    args = ["tablebases", "download", "--pieces", "3", "--dest", str(dest)]
    with serve(str(mirror), delay=0.3) as (url, _):
        code, out, err = interrupt([*args, "--mirror", url],
                                   lambda out, err, t: dest.is_dir() and len(list(dest.glob("*.rtb?"))) >= 3)
    assert_interrupted(code, err)
    # The third file in place means two were checked; one in its check at the Ctrl-C goes back to .part.
    done = int(out.split("downloaded ")[1].split()[0])
    assert 2 <= done < 10 and len(list(dest.glob("*.rtb?"))) == done
    with serve(str(mirror)) as (url, log):
        result = subprocess.run([EXECUTABLE, *args, "--mirror", url], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and f"{done} already present" in result.stdout
    assert len(log) == 10 - done


def test_an_error_a_ctrl_c_caused_ends_as_a_ctrl_c(capsys: pytest.CaptureFixture[str]) -> None:
    """C code that Python interrupted may report its own error with the KeyboardInterrupt as its cause (numba's
    dispatcher: a SystemError, "returned a result with an exception set"): that is a Ctrl-C too, not a crash."""

    @click.group(cls=CommandGroup)
    def program() -> None:
        pass

    @program.command()
    @click.option("--cause", type=click.Choice(["ctrl-c", "none"]))
    def work(cause: str) -> None:
        try:
            raise KeyboardInterrupt if cause == "ctrl-c" else ValueError("a bug")
        except BaseException as exc:
            raise SystemError("CPUDispatcher(<function f>) returned a result with an exception set") from exc

    with pytest.raises(SystemExit) as exit_:
        program.main(["work", "--cause", "ctrl-c"], prog_name="chess-endgame")
    assert exit_.value.code == EXIT_INTERRUPTED
    assert capsys.readouterr().err.strip() == "chess-endgame: interrupted; nothing was kept"
    with pytest.raises(SystemError):  # any other cause: the error itself, not hidden
        program.main(["work", "--cause", "none"], prog_name="chess-endgame")


def test_match_keeps_the_starts_judged_before_ctrl_c(syzygy_path: str, tmp_path: Path) -> None:
    """Ctrl-C while the starts are judged (an unbalanced book takes an hour): no game is played, and the starts
    judged so far go to --save-starts."""
    book = tmp_path / "book.fen"
    code, out, err = interrupt(["match", "--engine", "self", "--engine", "self", "--nodes", "100", "--games", "400",
                                "--balance-nodes", "20000", "--save-starts", str(book)],
                               progress_shows("starts", 2), terminal=True)
    assert_interrupted(code, err)
    fens = book.read_text().splitlines()
    assert len(fens) >= 2 and all(chess.Board(fen).is_valid() for fen in fens)
    assert f"no game played; {len(fens)} starts judged so far, written to {book}" in err, err
