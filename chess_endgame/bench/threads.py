"""``bench threads``: nodes per second of the search with N threads (Lazy SMP) against one thread, side by side.

Each position is searched for the same wall time with one thread, then with N, from fresh searchers (a new
transposition table each); nodes per wall-clock second, the depth reached and, with tables, the probes that
called into Python from the main thread and from the helpers (each such call takes the GIL).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

import chess

from chess_endgame.bench.search import POSITIONS, TREE_PROBE_MATERIALS
from chess_endgame.board import random_position
from chess_endgame.engine.result import Limits
from chess_endgame.engine.search import Searcher, load_compiled
from chess_endgame.tablebase.prober import Prober


@dataclass
class ThreadsRun:
    """One search: its threads, nodes, wall seconds, depth, and the probe calls into Python."""

    threads: int
    nodes: int
    seconds: float
    depth: int
    probe_calls: int
    helper_probe_calls: int

    @property
    def nps(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else float("nan")


@dataclass
class ThreadsRow:
    name: str
    fen: str
    one: ThreadsRun
    many: ThreadsRun

    @property
    def ratio(self) -> float:
        return self.many.nps / self.one.nps


def positions_for(prober: Prober | None, count: int, seed: int) -> list[tuple[str, str]]:
    """Without tables: the endgames of ``bench search``; with them, ``count`` seeded random six-piece positions
    whose captures fall into the five-piece tables (``bench tree-probes``'s materials)."""
    if prober is None:
        return [(name, fen) for name, fen, _ in POSITIONS if name.startswith("endgame") and "KRvK" not in name]
    rng = random.Random(seed)
    return [(TREE_PROBE_MATERIALS[i % len(TREE_PROBE_MATERIALS)],
             random_position(TREE_PROBE_MATERIALS[i % len(TREE_PROBE_MATERIALS)], rng).fen()) for i in range(count)]


def _run(fen: str, threads: int, movetime: int, prober: Prober | None) -> ThreadsRun:
    searcher = Searcher(prober=prober, threads=threads)
    start = time.perf_counter()
    result = searcher.search(chess.Board(fen), Limits(movetime=movetime))
    seconds = time.perf_counter() - start
    return ThreadsRun(threads, result.nodes, seconds, result.depth, searcher.probe_calls,
                      searcher.helper_probe_calls)


def bench_threads(threads: int, movetime: int, *, prober: Prober | None = None, count: int = 8, seed: int = 1,
                  on_row: Callable[[ThreadsRow], None] | None = None) -> list[ThreadsRow]:
    """Search every position for ``movetime`` ms with one thread and with ``threads`` (see the module)."""
    load_compiled()
    rows = []
    for name, fen in positions_for(prober, count, seed):
        row = ThreadsRow(name, fen, _run(fen, 1, movetime, prober), _run(fen, threads, movetime, prober))
        rows.append(row)
        if on_row:
            on_row(row)
    return rows
