"""Benchmarks behind ``chess-endgame bench``: fixed, seeded workloads that print figures.

Each function returns plain data; the CLI formats it. Timings use
``time.perf_counter`` (probing is I/O and CPU bound on mmap'd files) after one
warm-up pass, and keep the best of ``repeat`` runs to damp noise.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import chess
import chess.syzygy

from .sampling import random_position
from .tablebase import Prober, split_path

PROBE_MATERIALS = ("KQvKR", "KRPvK", "KRPvKR")


@dataclass
class Rate:
    """Throughput of one probing method on one workload."""

    label: str
    probes: int
    seconds: float

    @property
    def per_second(self) -> float:
        return self.probes / self.seconds if self.seconds > 0 else float("inf")


def best_times(funcs: Sequence[Callable[[], object]], repeat: int) -> list[float]:
    """Best wall time of each function over ``repeat`` rounds, run interleaved (fair under noise)."""
    best = [float("inf")] * len(funcs)
    for _ in range(repeat):
        for i, func in enumerate(funcs):
            start = time.perf_counter()
            func()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def raw_tablebase(path: str) -> chess.syzygy.Tablebase:
    """A plain python-chess tablebase on every directory of ``path``."""
    tb = chess.syzygy.Tablebase()
    for directory in split_path(path):
        tb.add_directory(directory)
    return tb


def probe_positions(materials: Sequence[str], per_material: int, seed: int) -> list[chess.Board]:
    rng = random.Random(seed)
    return [random_position(m, rng) for m in materials for _ in range(per_material)]


def _missing_tables(prober: Prober, materials: Sequence[str]) -> list[str]:
    return [m for m in materials
            if chess.syzygy.normalize_tablename(m) not in prober.files.wdl
            or chess.syzygy.normalize_tablename(m) not in prober.files.dtz]


@dataclass
class ProbeBench:
    positions: int
    replay_probes: int
    replay_hit_rate: float
    #: (workload, raw rate, prober rate)
    rows: list[tuple[str, Rate, Rate]]


def replay_workload(prober: Prober, seed: int, plies: int = 80, passes: int = 3) -> list[chess.Board]:
    """Positions probed while stepping through a game: each position and all its children.

    The game is tablebase play (the move chooser) from a seeded won KRPvKR
    position; the sequence is replayed ``passes`` times, as when a user steps
    back and forth through a game in an analysis tool.
    """
    from .chooser import choose  # local: bench depends on the chooser only here

    rng = random.Random(seed)
    while True:
        board = random_position("KRPvKR", rng, turn=chess.WHITE)
        if prober.probe_wdl(board) == 2:
            break
    requests: list[chess.Board] = []
    for _ in range(plies):
        if board.is_game_over(claim_draw=True):
            break
        requests.append(board.copy(stack=False))
        for move in board.legal_moves:
            board.push(move)
            requests.append(board.copy(stack=False))
            board.pop()
        choice = choose(board, prober)
        board.push(choice.best.move)  # type: ignore[union-attr]
    return requests * passes


def bench_probe(path: str, *, per_material: int = 300, seed: int = 1, repeat: int = 5) -> ProbeBench:
    """WDL and DTZ probes per second: the project's prober against raw python-chess.

    Uncached: distinct random positions (every probe misses the cache; its
    bookkeeping is included). Replay: positions of a game, with repeats,
    through a fresh cache.
    """
    prober = Prober(path)
    missing = _missing_tables(prober, PROBE_MATERIALS)
    if missing:
        raise ValueError(f"bench probe needs the tables {', '.join(missing)} (WDL and DTZ) in {path}")
    raw = raw_tablebase(path)
    boards = probe_positions(PROBE_MATERIALS, per_material, seed)
    dtz_boards = boards[:: 3]
    replay = replay_workload(prober, seed)

    def run_raw(kind: str, items: list[chess.Board]) -> Callable[[], object]:
        probe = raw.probe_wdl if kind == "wdl" else raw.probe_dtz
        return lambda: [probe(b) for b in items]

    def run_prober(kind: str, items: list[chess.Board]) -> Callable[[], object]:
        def run() -> object:
            prober.clear_cache()
            probe = prober.probe_wdl if kind == "wdl" else prober.probe_dtz
            return [probe(b) for b in items]
        return run

    rows = []
    for label, kind, items in (("WDL, distinct positions", "wdl", boards),
                               ("DTZ, distinct positions", "dtz", dtz_boards),
                               ("WDL, game replay", "wdl", replay),
                               ("DTZ, game replay", "dtz", replay)):
        run_raw(kind, items)()  # warm-up: page the files in
        raw_time, prober_time = best_times([run_raw(kind, items), run_prober(kind, items)], repeat)
        rows.append((label, Rate("python-chess", len(items), raw_time), Rate("prober", len(items), prober_time)))

    prober.clear_cache()
    prober.reset_stats()
    for b in replay:
        prober.probe_wdl(b)
    hit_rate = prober.stats.cache_hits / len(replay)
    raw.close()
    prober.close()
    return ProbeBench(len(boards), len(replay), hit_rate, rows)
