"""``bench features``: feature rows per second, the tuner's hot spot."""

from __future__ import annotations

import time
from collections.abc import Callable

import chess

from chess_endgame.bench.common import positions
from chess_endgame.engine.evaluation import feature_matrix

MATERIALS = ("KRPvKR", "KQvKR", "KBNvK", "KPPvKP", "KRPPvKRP", "KBPPvKNPP", "KQRBNPPPPvKQRBNPPPP")


def bench_features(count: int = 100_000, seed: int = 1,
                   progress: Callable[[int], None] | None = None) -> tuple[int, float, float]:
    """(positions, seconds to build the positions' feature matrix, CPU seconds).

    Generating the positions is not timed; ``progress(n)`` follows it, n positions at a time. Neither is
    the features' one-off compilation (or loading it from numba's cache): one position is done first.
    The timed part is the whole of :func:`feature_matrix`: python-chess boards to bitboards, the features
    (pawn structures through the pawn hash table) and the side-to-move view.
    """
    boards: list[chess.Board] = positions(MATERIALS, -(-count // len(MATERIALS)), seed, progress)[:count]
    feature_matrix(boards[:1])
    wall, cpu = time.perf_counter(), time.process_time()
    matrix = feature_matrix(boards)
    assert matrix.shape[0] == len(boards)
    return len(boards), time.perf_counter() - wall, time.process_time() - cpu
