"""``bench serve``: requests per second of ``chess-endgame serve``'s ``/standard`` under concurrent clients.

Each prober back end gets a server of its own (``chess-endgame serve --port 0 --prober ...``, a process), and
the same seeded random positions, every one distinct (so that neither the server's caches nor the prober's
answer from memory), sent by ``clients`` concurrent clients; each answer must be a JSON 200 or the 404 of a
position the tables do not cover. The clients run in this process, beside the server, as a load generator on
the same machine does.
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import chess

from chess_endgame.bench.common import percentile
from chess_endgame.board import random_position
from chess_endgame.tablebase.prober import Prober


@dataclass
class ServeRun:
    """One back end's load: requests, wall seconds, each request's latency, and failures (status or error)."""

    backend: str
    requests: int
    seconds: float
    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def per_second(self) -> float:
        return self.requests / self.seconds if self.seconds > 0 else float("nan")

    def ms(self, q: float) -> float:
        return 1000 * percentile(self.latencies, q)


def serve_command() -> list[str]:
    """``chess-endgame`` beside this interpreter, else the same entry point through ``-m``."""
    script = Path(sys.executable).parent / "chess-endgame"
    return [str(script)] if script.exists() else [sys.executable, "-m", "chess_endgame"]


def sample_positions(path: str, count: int, seed: int) -> list[chess.Board]:
    """``count`` distinct seeded random positions of the 3-5-piece tables in ``path`` (round robin)."""
    prober = Prober(path)
    tables = sorted(n for n in set(prober.files.wdl) & set(prober.files.dtz) if 3 <= len(n) - 1 <= 5)
    prober.close()
    if not tables:
        raise ValueError(f"no 3-5-piece tables (WDL and DTZ) in {path}")
    rng = random.Random(seed)
    boards: dict[str, chess.Board] = {}
    i = 0
    while len(boards) < count:
        board = random_position(tables[i % len(tables)], rng)
        boards.setdefault(board.epd(), board)
        i += 1
    return list(boards.values())


async def _load(url: str, boards: list[chess.Board], clients: int, run: ServeRun) -> None:
    import aiohttp

    queue: asyncio.Queue[chess.Board] = asyncio.Queue()
    for board in boards:
        queue.put_nowait(board)

    async def client(session: aiohttp.ClientSession) -> None:
        while not queue.empty():
            board = queue.get_nowait()
            started = time.perf_counter()
            try:
                async with session.get(f"{url}standard?fen={quote(board.fen().replace(' ', '_'))}") as response:
                    await response.json()
                    if response.status not in (200, 404):
                        run.failures.append(f"HTTP {response.status}")
            except (aiohttp.ClientError, asyncio.TimeoutError, ValueError) as exc:
                run.failures.append(type(exc).__name__)
            run.latencies.append(time.perf_counter() - started)

    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(timeout=timeout, connector=aiohttp.TCPConnector(limit=clients)) as session:
        await asyncio.gather(*(client(session) for _ in range(clients)))


def bench_serve(path: str, backends: list[str], *, requests: int = 400, clients: int = 16, seed: int = 1,
                on_run: Callable[[ServeRun], None] | None = None) -> list[ServeRun]:
    """For each back end: start a server on ``path``, send it ``requests`` distinct positions from ``clients``
    concurrent clients (a first 20 not counted: they start its threads and page in the tables), stop it."""
    warm_up = sample_positions(path, 20, seed + 1)
    boards = sample_positions(path, requests, seed)
    runs = []
    for backend in backends:
        server = subprocess.Popen([*serve_command(), "serve", "--port", "0", "--syzygy-path", path, "--prober",
                                   backend], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            server.stdout.readline()
            line = server.stdout.readline()
            if "explorer: " not in line:
                raise RuntimeError(f"the server did not start: {line.strip() or server.stderr.read()}")
            url = line.split("explorer: ")[1].split()[0]
            asyncio.run(_load(url, warm_up, clients, ServeRun(backend, 0, 0.0)))
            run = ServeRun(backend, len(boards), 0.0)
            started = time.perf_counter()
            asyncio.run(_load(url, boards, clients, run))
            run.seconds = time.perf_counter() - started
        finally:
            server.terminate()
            server.communicate(timeout=30)
        runs.append(run)
        if on_run:
            on_run(run)
    return runs
