"""Helpers shared by the benchmarks: timing and seeded tablebase positions."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence

import chess
import chess.syzygy

from chess_endgame.board import random_position
from chess_endgame.tablebase.prober import Prober


def best_times(funcs: Sequence[Callable[[], object]], repeat: int) -> list[float]:
    """Best wall time of each function over ``repeat`` rounds, run interleaved (fair under noise)."""
    best = [float("inf")] * len(funcs)
    for _ in range(repeat):
        for i, func in enumerate(funcs):
            start = time.perf_counter()
            func()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (any q from 0 to 100: p99.9 too) with linear interpolation between the closest
    ranks (numpy's default); NaN for no values."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    if not 0 <= q <= 100:
        raise ValueError(f"a percentile is from 0 to 100, not {q}")
    rank = q / 100 * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def present(prober: Prober, materials: Sequence[str]) -> list[str]:
    """The materials whose WDL and DTZ tables (and every table they reach) are present."""
    found = []
    for material in materials:
        name = chess.syzygy.normalize_tablename(material)
        needed = [name, *chess.syzygy.dependencies(name)]
        if all(n in prober.files.wdl and n in prober.files.dtz for n in needed):
            found.append(material)
    return found


def positions(materials: Sequence[str], per_material: int, seed: int,
              progress: Callable[[int], None] | None = None) -> list[chess.Board]:
    """``per_material`` seeded random positions of each material; ``progress(n)`` after each material."""
    rng = random.Random(seed)
    boards = []
    for material in materials:
        boards += [random_position(material, rng) for _ in range(per_material)]
        if progress:
            progress(per_material)
    return boards


def won_positions(prober: Prober, materials: Sequence[str], count: int, seed: int) -> list[chess.Board]:
    """``count`` seeded positions (round-robin over ``materials``) that the side to move wins (WDL 2)."""
    rng = random.Random(seed)
    found: list[chess.Board] = []
    i = 0
    while len(found) < count:
        material = materials[i % len(materials)]
        board = random_position(material, rng)
        if (prober.probe_wdl(board) == 2 and not board.is_check()
                and not any(board.is_capture(m) for m in board.legal_moves)):
            found.append(board)  # quiet wins: no immediate capture deciding the game
            i += 1
    return found
