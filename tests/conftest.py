"""Shared fixtures: the Syzygy tables the tests probe, and the data they read.

The tables: ``$SYZYGY_PATH`` when it is set, else ``../shared/syzygy`` beside the checkout when it is
there, else the embedded 3-4-piece set that ships with the package, so that a fresh clone runs the
tests with no download. A test that needs 5-piece tables asks for them (:func:`five_pieces`,
:func:`require_tables`): without them it skips, naming the missing tables and how to get them, except
under ``CI=true``, where it fails (CI must never pass by skipping). A path that is set but holds no
tables always fails.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import chess
import pytest
from click.testing import CliRunner

from chess_endgame.tablebase.paths import embedded_directory, scan
from chess_endgame.tablebase.prober import Prober
from chess_endgame_cli.main import cli


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked ``long`` (minutes each: a cold compile of the core, a benchmark) go first. pytest-xdist
    hands tests out in this order; one of them started near the end left the other process idle for minutes."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)  # stable: the rest keep their order


ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
#: Data the tests read, kept in the repository (copies of ../shared/fixtures that a fresh clone lacks).
DATA = Path(__file__).resolve().parent / "data"
#: How a developer gets what a skipped test needs.
HOW_TO_GET_FIVE = ("get them with `chess-endgame tablebases download` (the 5-piece set, about 935 MB) and set "
                   "SYZYGY_PATH to their directory, or put the project's ../shared/syzygy beside the checkout")


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def missing_tables(reason: str) -> None:
    """Skip a test whose tables are absent (fail in CI)."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: nothing may skip)")
    pytest.skip(reason)


@pytest.fixture(scope="session", autouse=True)
def _tables_for_subprocesses(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Commands the tests run as processes look for tables as users' do; when the test tables come from
    ../shared/syzygy (SYZYGY_PATH unset), they get them through SYZYGY_PATH too. The per-user data
    directory is an empty one of the session's: the tests neither read the developer's own tables nor
    download into them."""
    if not os.environ.get("SYZYGY_PATH") and (SHARED / "syzygy").is_dir():
        os.environ["SYZYGY_PATH"] = str(SHARED / "syzygy")
    os.environ["XDG_DATA_HOME"] = str(tmp_path_factory.mktemp("data-home"))
    # A test runner started in the background of a shell inherits Ctrl-C ignored, and so would every
    # command the tests start: the Ctrl-C tests then see nothing. They get Ctrl-C as a terminal gives it.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def syzygy_path() -> str:
    path = os.environ.get("SYZYGY_PATH")
    if not path:
        if (SHARED / "syzygy").is_dir():
            path = str(SHARED / "syzygy")
        elif in_ci():
            pytest.fail(f"CI=true but SYZYGY_PATH is unset and {SHARED / 'syzygy'} is missing")
        else:
            path = embedded_directory()
    found = scan(path)
    if not found.wdl or not found.dtz:
        pytest.fail(f"SYZYGY_PATH={path} is set but holds no Syzygy tables "
                    f"({found.bad_directories or 'no .rtbw/.rtbz files'})")
    return path


@pytest.fixture(scope="session")
def syzygy_dir(syzygy_path: str) -> Path:
    """The first directory of the test tables (tests copy single files from it)."""
    return Path(scan(syzygy_path).directories[0])


@pytest.fixture(scope="session")
def prober(syzygy_path: str) -> Prober:
    return Prober(syzygy_path)


@pytest.fixture(scope="session")
def five_pieces(syzygy_path: str) -> str:
    """The test tables, when they hold 5-piece tables (the shared set: KRPvKR, KBPvKB, KQPvKQ, KNNvKP,
    KBBvKN and what they reach); else the test skips (fails in CI)."""
    if scan(syzygy_path).max_pieces < 5:
        missing_tables(f"needs 5-piece Syzygy tables, and {syzygy_path} holds only 3-4-piece ones; {HOW_TO_GET_FIVE}")
    return syzygy_path


def require_pieces(prober: Prober, board: chess.Board) -> None:
    """Skip (fail in CI) when ``board`` has more pieces than the test tables hold."""
    pieces = chess.popcount(board.occupied)
    if pieces > prober.files.max_pieces:
        missing_tables(f"needs {pieces}-piece Syzygy tables ({board.fen()}); {HOW_TO_GET_FIVE}")


def require_tables(prober: Prober, *names: str) -> None:
    """Skip (fail in CI) when a table a test relies on is absent from the test tables."""
    missing = [n for n in names if n not in prober.files.wdl or n not in prober.files.dtz]
    if missing:
        missing_tables(f"needs the Syzygy tables {', '.join(missing)}; {HOW_TO_GET_FIVE}")


@contextlib.contextmanager
def ray_lock() -> Iterator[None]:
    """Hold the machine-wide lock of the tests that start a Ray instance (the cluster tests, the documentation's
    Ray examples): the test processes (pytest-xdist, two) run them one at a time, as each keeps to the 2 CPUs and
    the actor-killing test kills the first engine slot it finds on the machine. POSIX only; elsewhere no lock."""
    try:
        import fcntl
    except ImportError:  # Windows: the cluster tests need a POSIX machine anyway (pty, termios)
        yield
        return
    with open(Path(tempfile.gettempdir()) / "chess-endgame-tests-ray.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# -- helpers the test files share ----------------------------------------------------------------------------

def run(*args: str) -> tuple[int, str, str]:
    """``chess-endgame ARGS`` in this process (click's runner): exit code, stdout, stderr."""
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


#: The console script of the venv that runs the tests, and its UCI engine.
EXECUTABLE = str(Path(sys.executable).parent / "chess-endgame")
ENGINE = [EXECUTABLE, "uci"]


class Pipe:
    """The engine on raw pipes, its output lines collected with arrival times."""

    def __init__(self, command: list[str] | None = None, env: dict | None = None, cwd: Path | None = None) -> None:
        self.proc = subprocess.Popen(command or ENGINE, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1, env=env, cwd=cwd)
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put((time.monotonic(), line.rstrip("\n")))

    def handshake(self) -> Pipe:
        """uci, then isready as GUIs send it: readyok comes once the compiled search core is loaded."""
        self.send("uci")
        self.expect("uciok")
        self.send("isready")
        self.expect("readyok", 120)
        return self

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def expect(self, prefix: str, timeout: float = 20) -> tuple[float, str]:
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no line starting with {prefix!r}; saw {self.seen[-10:]}")
            try:
                at, line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append(line)
            if line.startswith(prefix):
                return at, line

    def drain(self, wait: float = 0.3) -> list[str]:
        time.sleep(wait)
        out = []
        while not self.lines.empty():
            out.append(self.lines.get()[1])
        self.seen += out
        return out

    def close(self) -> int:
        if self.proc.poll() is None:
            try:
                self.send("quit")
            except (OSError, ValueError):  # ValueError: stdin already closed
                pass
        try:
            return self.proc.wait(timeout=10)
        finally:
            self.proc.kill()

    def stderr(self) -> str:
        """What the engine wrote on stderr (read once it has exited)."""
        assert self.proc.stderr is not None
        return self.proc.stderr.read()


#: A UCI engine (a Python script) that dies on its third ``go``.
CRASHING_ENGINE = textwrap.dedent("""
    import sys, chess
    board, games = chess.Board(), 0
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "uci":
            print("id name crasher"); print("uciok", flush=True)
        elif cmd[0] == "isready":
            print("readyok", flush=True)
        elif cmd[0] == "position":
            board = chess.Board(" ".join(cmd[2:8])) if cmd[1] == "fen" else chess.Board()
        elif cmd[0] == "go":
            games += 1
            if games == 3:
                sys.exit(1)
            print("bestmove " + next(iter(board.legal_moves)).uci(), flush=True)
        elif cmd[0] == "quit":
            break
""")
