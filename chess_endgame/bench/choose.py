"""``bench choose``: milliseconds per root choice, the chooser against the naive baseline."""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import chess

from chess_endgame.bench.common import percentile, positions, present
from chess_endgame.chooser import Choice, choose
from chess_endgame.tablebase.prober import Prober

CHOOSE_MATERIALS = ("KQvK", "KRvK", "KBNvK", "KPvK", "KQvKR", "KRvKB", "KPvKP", "KRPvKR", "KBPvKB",
                    "KQPvKQ", "KNNvKP", "KBBvKN")


@dataclass
class ChooseBench:
    positions: int
    materials: list[str]
    #: ms per choice: economical chooser, naive baseline
    chooser_ms: list[float]
    naive_ms: list[float]
    same_class: int
    chooser_dtz_probes: int
    naive_dtz_probes: int

    @property
    def ratio_median(self) -> float:
        return statistics.median(self.naive_ms) / statistics.median(self.chooser_ms)

    @property
    def ratio_p95(self) -> float:
        return percentile(self.naive_ms, 95) / percentile(self.chooser_ms, 95)


def clocked_positions(materials: list[str], per_material: int, seed: int) -> list[chess.Board]:
    """Seeded positions of ``materials`` with random halfmove clocks 0..99; those without a legal move left out."""
    boards = positions(materials, per_material, seed)
    rng = random.Random(seed)
    for board in boards:
        board.halfmove_clock = rng.randrange(100)
    return [b for b in boards if any(b.legal_moves)]


def bench_choose(path: str, *, per_material: int = 25, seed: int = 1, repeat: int = 3) -> ChooseBench:
    """Time the chooser (DTZ only where it can change the choice) and the naive baseline (WDL and
    DTZ of every child, then the same ranking) on seeded positions with random clocks 0..99, each
    from a cold probe cache. Both must give the root the same class."""
    prober = Prober(path)
    materials = present(prober, CHOOSE_MATERIALS)
    if not materials:
        raise ValueError(f"bench choose needs some of the tables {', '.join(CHOOSE_MATERIALS)} in {path}")
    boards = clocked_positions(materials, per_material, seed)
    for board in boards:  # warm-up: page the files in
        choose(board, prober, full=True)

    def timed(board: chess.Board, full: bool) -> tuple[float, Choice, int]:
        best = float("inf")
        for _ in range(repeat):
            prober.clear_cache()
            prober.reset_stats()
            start = time.perf_counter()
            choice = choose(board, prober, full=full, root_dtz=False)
            best = min(best, time.perf_counter() - start)
        assert isinstance(choice, Choice)
        return best * 1000, choice, prober.stats.dtz_probes

    chooser_ms, naive_ms = [], []
    same = chooser_dtz = naive_dtz = 0
    for board in boards:
        fast, fast_choice, fast_dtz = timed(board, False)
        slow, slow_choice, slow_dtz = timed(board, True)
        chooser_ms.append(fast)
        naive_ms.append(slow)
        chooser_dtz += fast_dtz
        naive_dtz += slow_dtz
        same += fast_choice.result == slow_choice.result and fast_choice.best.cls == slow_choice.best.cls
    prober.close()
    return ChooseBench(len(boards), materials, chooser_ms, naive_ms, same, chooser_dtz, naive_dtz)


@dataclass
class WorstCase:
    """The chooser's time per root over every material present: what the time manager reserves."""

    positions: int
    materials: int
    #: (ms, fen) per position, slowest last
    timings: list[tuple[float, str]]

    def percentile(self, q: float) -> float:
        """The q-th percentile (0..100) of the times, in ms."""
        return percentile([ms for ms, _ in self.timings], q)

    @property
    def slowest(self) -> tuple[float, str]:
        return self.timings[-1]


def bench_worst(path: str, *, per_material: int = 20, seed: int = 1,
                progress: Callable[[Iterable], Iterable] | None = None) -> WorstCase:
    """Time one cold choice (empty probe cache, as in a game) of seeded positions of every material
    whose tables are all present, each with a random halfmove clock 0..99."""
    prober = Prober(path)
    materials = present(prober, sorted(prober.files.wdl))
    if not materials:
        raise ValueError(f"bench choose needs complete WDL and DTZ tables in {path}")
    boards = clocked_positions(materials, per_material, seed)
    for board in boards[:: max(1, per_material)]:  # page every table file in once
        choose(board, prober)
    timings = []
    for board in (progress or iter)(boards):
        prober.clear_cache()
        start = time.perf_counter()
        choose(board, prober)
        timings.append(((time.perf_counter() - start) * 1000, board.fen()))
    prober.close()
    timings.sort()
    return WorstCase(len(boards), len(materials), timings)
