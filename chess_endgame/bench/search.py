"""``bench search``: a fixed list of positions searched to fixed depths (or for a fixed time);
depth, effective branching factor and nodes per CPU-second.

Like Stockfish's ``bench``, the total node count at the fixed depths is a
signature: any change of search behaviour changes it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import chess

from chess_endgame.engine.result import Info, Limits, uci_words
from chess_endgame.engine.search import Searcher, load_compiled

#: (name, FEN, default depth)
POSITIONS: tuple[tuple[str, str, int], ...] = (
    ("opening: start position", chess.STARTING_FEN, 5),
    ("opening: Queen's Gambit Declined", "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N2N2/PP2BPPP/R2QKB1R w KQ - 0 8", 4),
    ("middlegame: Kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 4),
    ("middlegame: Italian", "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", 4),
    ("endgame 12: knights", "8/4k3/3np3/3p1p2/3P1P2/2N1P3/4K3/8 w - - 0 1", 7),
    ("endgame 10: Fine 70", "8/k7/3p4/p2P1p2/P2P1P2/8/8/K7 w - - 0 1", 20),
    ("endgame 10: bishops", "8/5k2/4p3/3pPp2/3P1P2/4B3/3K3b/8 w - - 0 1", 8),
    ("endgame 8: rook ending", "8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1", 7),
    ("endgame 8: queen ending", "6k1/5p2/6p1/8/3q4/6P1/5PK1/5Q2 w - - 0 1", 5),
    ("endgame 7: rook and pawns", "8/8/1p6/1k6/8/1PK5/1R6/5r2 w - - 0 1", 7),
    ("endgame 6: KRPPvKR", "8/8/8/4k3/R7/5PP1/6K1/r7 w - - 0 1", 7),
    ("endgame 6: KQPvKQ", "8/6k1/8/5q2/8/3P4/2QK4/8 w - - 0 1", 5),
    ("endgame 3: KRvK", "8/2k5/8/8/3K4/8/3R4/8 w - - 0 1", 8),
)

@dataclass
class SearchRow:
    name: str
    fen: str
    depth: int
    nodes: int
    cpu_seconds: float
    best_move: str
    score: str
    #: Effective branching factor: the growth of the node count per iteration over the last two
    #: completed iterations (nodes at depth d / nodes at depth d - 2, square root).
    ebf: float = float("nan")

    @property
    def nps(self) -> float:
        return self.nodes / self.cpu_seconds if self.cpu_seconds > 0 else float("inf")


def per_depth_recorder(nodes_by_depth: dict[int, int]) -> Callable[[Info], None]:
    """An ``on_info`` callback that keeps the node count at each completed depth."""
    return lambda info: nodes_by_depth.__setitem__(info.depth, info.nodes)


def effective_branching(nodes_by_depth: dict[int, int], depth: int) -> float:
    """sqrt(nodes(d) / nodes(d - 2)) over the last completed iterations (NaN below depth 3)."""
    if depth < 3 or depth - 2 not in nodes_by_depth or depth not in nodes_by_depth:
        return float("nan")
    return (nodes_by_depth[depth] / max(1, nodes_by_depth[depth - 2])) ** 0.5


def bench_search(*, depth: int | None = None, movetime: int | None = None, repeat: int = 3,
                 hash_mb: int = 16, on_row: Callable[[SearchRow], None] | None = None) -> list[SearchRow]:
    """Search every position (no tables: pure search speed) ``repeat`` times from a fresh searcher.

    Fixed depth (each position's own, or ``depth``) keeps node counts exact, so
    the best CPU time of the repeats gives the speed; with ``movetime`` the run
    with the most nodes per CPU-second is kept. ``on_row`` sees each position's
    row as soon as it is measured.
    """
    load_compiled()  # the compiled search loaded before the clock starts, not inside the first position's time
    rows = []
    for name, fen, own_depth in POSITIONS:
        best: SearchRow | None = None
        for _ in range(repeat):
            searcher = Searcher(hash_mb=hash_mb)
            limits = Limits(movetime=movetime) if movetime else Limits(depth=depth or own_depth)
            per_depth: dict[int, int] = {}
            start = time.process_time()
            result = searcher.search(chess.Board(fen), limits, on_info=per_depth_recorder(per_depth))
            cpu = time.process_time() - start
            score = uci_words(result.score) if result.score is not None else "-"
            row = SearchRow(name, fen, result.depth, result.nodes, cpu,
                            result.best_move.uci() if result.best_move else "0000", score,
                            effective_branching(per_depth, result.depth))
            if best is None or row.nps > best.nps:
                best = row
        assert best is not None
        rows.append(best)
        if on_row:
            on_row(best)
    return rows


@dataclass
class TreeProbeRun:
    """Tablebase probes made from inside the compiled tree: how many, and what they cost."""

    positions: int
    nodes: int
    probes: int        # tablebase hits in the tree
    calls: int         # of them, calls into Python (the rest from the WDL cache or the compiled prober)
    cpu_seconds: float
    probe_seconds: float  # wall time spent in the Python probe callback (board built from arrays + prober)
    compiled: int = 0  # probes of the compiled prober, in the tree
    compiled_seconds: float = 0.0  # their time (the processor's cycle counter)

    @property
    def us_per_call(self) -> float:
        return 1e6 * self.probe_seconds / self.calls if self.calls else float("nan")

    @property
    def us_per_compiled(self) -> float:
        return 1e6 * self.compiled_seconds / self.compiled if self.compiled else float("nan")

    @property
    def share(self) -> float:
        """The share of the search's time spent probing."""
        return (self.probe_seconds + self.compiled_seconds) / self.cpu_seconds if self.cpu_seconds else float("nan")


#: Six-piece materials whose captures fall into the shared five-piece tables.
TREE_PROBE_MATERIALS = ("KRPPvKR", "KQPvKQ", "KRPvKBP", "KBPPvKB")


def bench_tree_probes(prober, *, positions: int = 20, depth: int = 8, seed: int = 1,
                      on_position: Callable[[], None] | None = None,
                      run: TreeProbeRun | None = None) -> TreeProbeRun:
    """Search random six-piece positions to ``depth`` with WDL probes inside the tree (the player's
    settings: probes after zeroing moves) and time the probe callback from compiled code. A first
    search, not counted, compiles the code (or loads numba's cache). The figures add up in ``run`` (a new
    one by default) position by position, so that a caller stopped by Ctrl-C keeps those measured."""
    import random

    from chess_endgame.board import random_position

    rng = random.Random(seed)
    Searcher(prober=prober).search(chess.Board("8/8/8/4k3/R7/5PP1/6K1/r7 w - - 0 1"), Limits(depth=2))  # compiles
    run = run if run is not None else TreeProbeRun(0, 0, 0, 0, 0.0, 0.0)
    for i in range(positions):
        board = random_position(TREE_PROBE_MATERIALS[i % len(TREE_PROBE_MATERIALS)], rng)
        searcher = Searcher(prober=prober)
        start = time.process_time()
        result = searcher.search(board, Limits(depth=depth))
        run.cpu_seconds += time.process_time() - start
        run.positions += 1
        run.nodes += result.nodes
        run.probes += result.tbhits
        run.calls += searcher.probe_calls
        run.probe_seconds += searcher.probe_seconds
        run.compiled += searcher.compiled_probes
        run.compiled_seconds += searcher.compiled_probe_seconds
        if on_position:
            on_position()
    return run
