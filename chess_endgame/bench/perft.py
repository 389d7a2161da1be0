"""``bench perft``: leaf nodes per second of the compiled move generator against python-chess's own perft.

Two ways of counting, each measured for both move generators, so every ratio compares like with like:

- *bulk*: the moves at the last ply are counted, not made (the core's :func:`~..core.movegen.perft`;
  python-chess: ``legal_moves.count()`` at the last ply);
- *full*: every leaf is made and unmade (:func:`perft_full` here; python-chess: ``push``/``pop``).

Every count is checked: the compiled counts against python-chess's at python-chess's depth, and
against the published counts (Chess Programming Wiki, "Perft Results") at the compiled depth.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import chess
import numpy as np

from chess_endgame.engine.core import position as core
from chess_endgame.engine.core.jit import COMPILED, njit
from chess_endgame.engine.core.movegen import generate, perft


@dataclass(frozen=True)
class PerftPosition:
    name: str
    fen: str
    #: depth of the compiled perft
    depth: int
    #: depth of python-chess's perft (smaller: it is about 100 times slower)
    python_depth: int
    #: the published leaf counts at depths 1, 2, ...
    counts: tuple[int, ...]


#: The standard perft positions (https://www.chessprogramming.org/Perft_Results).
POSITIONS = (
    PerftPosition("start", chess.STARTING_FEN, 5, 4,
                  (20, 400, 8902, 197281, 4865609, 119060324)),
    PerftPosition("Kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 4, 3,
                  (48, 2039, 97862, 4085603, 193690690)),
    PerftPosition("position 3", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 6, 4,
                  (14, 191, 2812, 43238, 674624, 11030083)),
    PerftPosition("position 4", "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 5, 4,
                  (6, 264, 9467, 422333, 15833292)),
    PerftPosition("position 5", "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 4, 3,
                  (44, 1486, 62379, 2103487, 89941194)),
    PerftPosition("position 6", "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", 4, 3,
                  (46, 2079, 89890, 3894594, 164075551)),
)


@njit
def perft_full(bb, mailbox, state, keys, undo, depth, buffer):
    """Leaf nodes ``depth`` plies down, every leaf made and unmade (as python-chess's push/pop perft)."""
    if depth == 0:
        return 1
    start = state[core.PLY] * 256
    end = generate(bb, mailbox, state, core.checkers(bb, state), buffer, start, False)
    total = 0
    for i in range(start, end):
        move = buffer[i]
        core.make(bb, mailbox, state, keys, undo, move)
        total += perft_full(bb, mailbox, state, keys, undo, depth - 1, buffer)
        core.unmake(bb, mailbox, state, keys, undo, move)
    return total


def python_perft(board: chess.Board, depth: int, bulk: bool = True) -> int:
    """python-chess's perft: with ``bulk`` the moves at the last ply are counted
    (``legal_moves.count()``), without it every leaf is pushed and popped."""
    if depth == 0:
        return 1
    if bulk and depth == 1:
        return board.legal_moves.count()
    total = 0
    for move in board.legal_moves:
        board.push(move)
        total += python_perft(board, depth - 1, bulk)
        board.pop()
    return total


@dataclass
class Count:
    """One perft run: its leaf count and wall time."""

    nodes: int
    seconds: float

    @property
    def per_second(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else float("inf")


@dataclass
class PerftRow:
    position: PerftPosition
    bulk: Count
    full: Count
    python_bulk: Count
    python_full: Count
    #: what did not match (empty when every count agreed)
    mismatches: list[str]


def _timed(func: Callable[[], int], repeat: int) -> Count:
    """The count and the best wall time of ``repeat`` runs."""
    best, nodes = float("inf"), 0
    for _ in range(repeat):
        start = time.perf_counter()
        nodes = func()
        best = min(best, time.perf_counter() - start)
    return Count(nodes, best)


def _compiled(fen: str, func, depth: int, repeat: int) -> Count:
    position = core.Position(chess.Board(fen))
    buffer = np.zeros(core.STACK * 256, dtype=np.int64)
    return _timed(lambda: int(func(*position.arrays(), depth, buffer)), repeat)


def warm_up() -> float:
    """Compile (or load from numba's cache) both compiled perfts; the seconds it took."""
    start = time.perf_counter()
    for func in (perft, perft_full):
        _compiled(chess.STARTING_FEN, func, 1, 1)
    return time.perf_counter() - start


def bench_perft(repeat: int = 3, on_row: Callable[[PerftRow], None] | None = None) -> list[PerftRow]:
    """Measure every position of :data:`POSITIONS`; call ``on_row`` after each. Call :func:`warm_up` first
    so that compile time is not measured."""
    if not COMPILED:
        raise ValueError("bench perft measures the compiled core: install numba and unset NUMBA_DISABLE_JIT")
    rows = []
    for p in POSITIONS:
        row = PerftRow(p, _compiled(p.fen, perft, p.depth, repeat),
                       _compiled(p.fen, perft_full, p.depth, repeat),
                       _timed(lambda: python_perft(chess.Board(p.fen), p.python_depth), 1),  # noqa: B023
                       _timed(lambda: python_perft(chess.Board(p.fen), p.python_depth, bulk=False), 1), [])  # noqa: B023
        expected, python_expected = p.counts[p.depth - 1], p.counts[p.python_depth - 1]
        checks = [("compiled bulk", row.bulk.nodes, expected), ("compiled full", row.full.nodes, expected),
                  ("python-chess bulk", row.python_bulk.nodes, python_expected),
                  ("python-chess full", row.python_full.nodes, python_expected)]
        small = _compiled(p.fen, perft, p.python_depth, 1).nodes
        checks.append((f"compiled bulk at depth {p.python_depth}", small, row.python_full.nodes))
        row.mismatches = [f"{what}: {got} leaves, expected {want}" for what, got, want in checks if got != want]
        rows.append(row)
        if on_row:
            on_row(row)
    return rows
