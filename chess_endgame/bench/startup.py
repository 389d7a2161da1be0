"""``bench startup``: how long the UCI engine takes to answer ``uciok`` and ``readyok``, and its first ``go``,
on an empty numba cache (cold) and on the cache that run left (warm); optionally also on another empty cache
with ``go`` sent before ``isready``.

Each run starts ``chess-endgame-uci`` (this interpreter's) with ``NUMBA_CACHE_DIR`` set to a directory
of a fresh temporary directory, so the user's own cache is neither used nor touched.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from chess_endgame.engine.core.jit import COMPILED

#: The first go: a rook endgame with more pieces than the tables hold, so the search runs.
GO_FEN = "8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1"
GO_DEPTH = 5
#: Longest wait for any answer (a cold compile on a slow machine included).
TIMEOUT = 900.0


def engine_command() -> list[str]:
    """``chess-endgame-uci`` beside this interpreter, else the same entry point through ``-c``."""
    script = Path(sys.executable).parent / "chess-endgame-uci"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from chess_endgame.uci import main; sys.exit(main())"]


@dataclass
class StartupRun:
    label: str
    #: seconds from starting the process to ``uciok``
    uciok: float
    #: seconds from starting the process to ``readyok`` (None: ``isready`` was not sent)
    readyok: float | None
    #: seconds from ``go`` to ``bestmove``
    first_go: float


class _Engine:
    def __init__(self, cache_dir: str) -> None:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
        self.start = time.perf_counter()
        self.proc = subprocess.Popen(engine_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1, env=env)
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put((time.perf_counter(), line))
        self.lines.put((time.perf_counter(), ""))

    def send(self, line: str) -> float:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return time.perf_counter()

    def expect(self, word: str) -> float:
        """The instant the line starting with ``word`` arrived."""
        end = time.perf_counter() + TIMEOUT
        while True:
            try:
                at, line = self.lines.get(timeout=max(0.0, end - time.perf_counter()))
            except queue.Empty:
                raise RuntimeError(f"the engine sent no {word} within {TIMEOUT:.0f} s") from None
            if not line:
                raise RuntimeError(f"the engine exited before {word} (exit code {self.proc.wait()})")
            if line.startswith(word):
                return at

    def close(self) -> None:
        try:
            self.send("quit")
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


def measure(label: str, cache_dir: str, isready: bool) -> StartupRun:
    engine = _Engine(cache_dir)
    try:
        engine.send("uci")
        uciok = engine.expect("uciok") - engine.start
        readyok = None
        if isready:
            engine.send("isready")
            readyok = engine.expect("readyok") - engine.start
        engine.send(f"position fen {GO_FEN}")
        sent = engine.send(f"go depth {GO_DEPTH}")
        first_go = engine.expect("bestmove") - sent
    finally:
        engine.close()
    return StartupRun(label, uciok, readyok, first_go)


def bench_startup(runs: int = 1, without_isready: bool = False,
                  on_run: Callable[[StartupRun], None] | None = None) -> list[StartupRun]:
    """Per round: cold (empty cache) with ``isready``, and warm (the cache it left) with ``isready``; with
    ``without_isready``, also cold (another empty cache) with ``go`` straight after ``uciok`` (a GUI that never
    sends ``isready``: a second compile)."""
    if not COMPILED:  # the engines started inherit this environment: nothing would compile or be cached
        raise ValueError("bench startup measures the compiled core's start-up: install numba and unset "
                         "NUMBA_DISABLE_JIT")
    results = []
    with tempfile.TemporaryDirectory(prefix="chess-endgame-startup-") as tmp:
        for i in range(runs):
            cold, cold_go = os.path.join(tmp, f"cold-{i}"), os.path.join(tmp, f"cold-go-{i}")
            starts = [("cold (empty cache)", cold, True), ("warm (that cache)", cold, True)]
            if without_isready:
                starts.append(("cold, go without isready", cold_go, False))
            for label, cache, isready in starts:
                results.append(measure(label, cache, isready))
                if on_run:
                    on_run(results[-1])
    return results
