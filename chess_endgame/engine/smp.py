"""Lazy SMP: helper threads that search the main search's root and share its transposition table.

The ``Threads`` option (Stockfish's name) runs ``Threads - 1`` helpers beside the main search. Each helper
has its own board, killers, history, pawn table and evaluation cache, and runs its own iterative deepening
of the same root moves with full windows, skipping depths in its own pattern (Stockfish's skip tables of
before 2018: helper 1 searches the even depths, helper 2 the odd ones, helpers 3 to 6 two depths in four, and
so on) so that the threads spread over depths instead of searching the same tree in step. What a helper
finds reaches the main search through the shared transposition table, whose entries are read and written
without a lock (:mod:`chess_endgame.engine.core.transposition`), and through the shared tablebase WDL cache.
The main thread reports and decides; helpers neither report nor choose a move.

The compiled tree runs without the GIL. A helper takes it for two callbacks only: its check (about every
millisecond, or at each grant of a shared node budget) and a tablebase probe the WDL cache does not answer,
counted in :attr:`Helper.probe_calls`.

Helpers beyond the machine's cores (:func:`usable_cores`) are not started: they would only take turns at the
cores and the GIL, and the main thread's clock checks and ``stop`` wait for them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

import chess
import numpy as np

from chess_endgame.engine.core import treestate as core
from chess_endgame.engine.core.history import new_history
from chess_endgame.engine.core.pawns import new_pawn_table
from chess_endgame.engine.core.position import Position
from chess_endgame.engine.core.tree import root

#: Counters a helper takes from the main search's tree (the search's settings, not its progress).
SETTINGS = (core.AGE, core.PROBE_DEPTH, core.RULE50, core.TB_PIECES, core.DRAW_WHITE)
#: Nodes between a helper's checks without a node limit: about a millisecond at this engine's speed.
CHECK_EVERY = 1024
#: Stockfish's skip tables: helper ``i`` skips depth ``d`` when ``((d + PHASE[k]) // SIZE[k]) % 2`` with
#: ``k = (i - 1) % 20``.
SKIP_SIZE = (1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4)
SKIP_PHASE = (0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7)


def skips(index: int, depth: int) -> bool:
    """Whether helper ``index`` (1, 2, ...) leaves out ``depth``."""
    k = (index - 1) % len(SKIP_SIZE)
    return (depth + SKIP_PHASE[k]) // SKIP_SIZE[k] % 2 == 1


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system says, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


class NodeBudget:
    """The nodes of ``go nodes N`` shared by the threads of one search: each takes a few at a time, and stops
    when none are left, so that the threads search exactly N nodes in all (each stops only at the end of
    what it took)."""

    def __init__(self, total: int, threads: int) -> None:
        self._lock = threading.Lock()
        self.left = total - threads  # every thread counts its first node before it first asks

    def take(self, wanted: int) -> int:
        """Up to ``wanted`` nodes for a thread (0: the budget is spent, stop)."""
        with self._lock:
            granted = max(0, min(wanted, self.left))
            self.left -= granted
            return granted


class Helper:
    """One helper thread: a tree of its own over the main search's shared arrays (see the module docstring)."""

    def __init__(self, index: int, probe_position: Callable[[Position], int]) -> None:
        self.index = index
        self.position = Position()
        self.history = new_history()
        self.pawn_table = new_pawn_table()
        self.tree: core.Tree | None = None
        self._shares: tuple = ()
        self.probe_calls = 0
        self.raised: BaseException | None = None
        self._stop = threading.Event()
        self._budget: NodeBudget | None = None
        self._thread: threading.Thread | None = None
        self._probe_position = probe_position
        # The callbacks live as long as the helper (ctypes frees what nobody holds).
        self._probe_callback = core.PROBE_FUNCTION(self._probe)
        self._check_callback = core.CHECK_FUNCTION(self._check)

    def clear(self) -> None:
        """Forget what was learnt (UCI ``ucinewgame``)."""
        for array in (self.history, *self.pawn_table):
            array[:] = 0
        if self.tree is not None:
            self.tree.eval_keys[:] = 0

    @property
    def nodes(self) -> int:
        return int(self.tree.counters[core.NODES]) if self.tree is not None else 0

    @property
    def tbhits(self) -> int:
        return int(self.tree.counters[core.TBHITS]) if self.tree is not None else 0

    def start(self, board: chess.Board, main: core.Tree, root_moves: list[int], budget: NodeBudget | None) -> None:
        """Search ``board``'s ``root_moves`` in a new thread, sharing ``main``'s TT, weights and WDL cache and
        taking its settings, until :meth:`stop` (or the ``budget`` is spent)."""
        self.position.load(board)
        shares = (main.tt, main.weights, main.wdl_keys, main.wdl_values, main.tb_materials, main.tables)
        if self.tree is None or any(a is not b for a, b in zip(shares, self._shares, strict=True)):
            self.tree = core.new_tree(self.position.arrays(), main.tt, self.history, main.weights, self.pawn_table,
                                      (main.wdl_keys, main.wdl_values, main.tb_materials), main.tables)
            self._shares = shares
        tree = self.tree
        for array in (tree.counters, tree.killers, tree.pv_length, tree.partial_pv):
            array[:] = 0
        for index in SETTINGS:
            tree.counters[index] = main.counters[index]
        tree.counters[core.NEXT_CHECK] = 1
        self.probe_calls = 0
        self.raised = None
        self._stop.clear()
        self._budget = budget
        moves = np.array(root_moves, dtype=np.int32)
        self._thread = threading.Thread(target=self._run, args=(moves,), name=f"helper {self.index}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Ask the thread to stop (it does at its next check)."""
        self._stop.set()

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self, moves: np.ndarray) -> None:
        scores = np.zeros(len(moves), dtype=np.int64)
        tree = self.tree
        try:
            for depth in range(1, core.MAX_PLY + 1):
                if skips(self.index, depth):
                    continue
                root(tree, depth, -core.INF, core.INF, moves, scores, len(moves), self._probe_callback,
                     self._check_callback)
                if tree.counters[core.STOPPED]:
                    break
        except BaseException as exc:  # noqa: BLE001 - kept for the main search, which raises it again
            self.raised = exc

    def _check(self, nodes: int) -> int:
        """Nodes until the next check, or -1: stop (called by the compiled tree, which holds no GIL)."""
        if self._stop.is_set():
            return -1
        if self._budget is not None:
            return self._budget.take(CHECK_EVERY // 4) or -1
        return CHECK_EVERY

    def _probe(self, bb_address: int, state_address: int) -> int:
        self.probe_calls += 1
        try:
            return self._probe_position(self.position)
        except BaseException as exc:  # noqa: BLE001 - the next check stops this helper
            self.raised = exc
            self._stop.set()
            return -2
