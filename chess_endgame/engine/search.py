"""Alpha-beta searcher: PVS, iterative deepening, aspiration windows, quiescence, TT, TB probes.

Scores are centipawns from the side to move. A mate in ``n`` plies scores
``MATE - n``; a tablebase win found ``p`` plies from the root scores
``TB_WIN - p`` (Stockfish's convention, reported as ``cp 20000-p``). The search
never prints: it reports through the ``on_info`` callback and returns a
:class:`SearchResult`.

Draws: a position that repeats one earlier in the search path, or twice in
the game history, as in Stockfish; the 50-move rule at a halfmove clock of 100
unless the side to move is mated; insufficient material.

This module is the Python face of the compiled core (:mod:`.core.tree`, in the arrays of
:mod:`.core.treestate`): it turns the root :class:`chess.Board` into arrays, drives the iterations
(aspiration windows, MultiPV, limits, info) and turns the moves that come back into
:class:`chess.Move`. The tree itself runs compiled and without the GIL; it calls
back into Python for tablebase probes (through the :class:`~chess_endgame.tablebase.prober.Prober`)
and, every quarter millisecond or so, to ask whether to stop.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable

import chess
import chess.engine
import numpy as np

from chess_endgame.engine.core import treestate as core
from chess_endgame.engine.core.history import new_history
from chess_endgame.engine.core.jit import cycles_per_second
from chess_endgame.engine.core.pawns import new_pawn_table
from chess_endgame.engine.core.position import EP, HALFMOVE, TURN, Position
from chess_endgame.engine.core.transposition import EXACT, LOWER, UPPER
from chess_endgame.engine.core.tree import root
from chess_endgame.engine.core.treestate import INF, MATE, MATE_BOUND, MAX_PLY, TB_BOUND, TB_WIN, from_tt, to_tt
from chess_endgame.engine.evaluation import Evaluator
from chess_endgame.engine.interrupt import sigint_deferred
from chess_endgame.engine.result import Info, Limits, SearchResult, decode, encode, score_of
from chess_endgame.engine.smp import Helper, NodeBudget, usable_cores
from chess_endgame.engine.timeman import Stretch
from chess_endgame.engine.tt import TranspositionTable
from chess_endgame.tablebase.prober import NotCoveredError, Prober

__all__ = ["EXACT", "INF", "LOWER", "MATE", "MATE_BOUND", "MAX_PLY", "TB_BOUND", "TB_WIN", "UPPER", "Searcher",
           "from_tt", "load_compiled", "to_tt"]


#: A small endgame whose depth-1 search loads every compiled function of the tree (:func:`load_compiled`).
_LOAD_FEN = "8/5k2/8/3p4/3P4/2K5/8/4R3 w - - 0 1"
_load_lock = threading.Lock()
_loaded = False


def load_compiled() -> None:
    """Load the compiled search (numba's cache, or a compile on an empty cache) once per process.

    The first search of a process would otherwise count this set-up (about 0.3 s from the cache, tens
    of seconds cold) inside its first iteration and its limits: ``best --movetime 100`` played a depth-1
    move in 300 ms. :meth:`Searcher.search` calls this before its clock starts; a throwaway depth-1
    search (its own 1 MB table, no prober) runs every compiled function the tree calls.
    """
    global _loaded
    if _loaded:
        return
    with _load_lock:
        if _loaded:
            return
        _loaded = True  # first: the search below comes back here
        Searcher(hash_mb=1).search(chess.Board(_LOAD_FEN), Limits(depth=1))


class _Stop(Exception):
    """Raised inside the tree when a limit is reached."""


class Searcher:
    """Negamax alpha-beta with PVS, run by the compiled core (see the module docstring).

    ``prober`` enables WDL probes inside the tree after zeroing moves
    (``probe_depth``: the least remaining depth to probe at, Stockfish's
    SyzygyProbeDepth; ``rule50``: cursed wins and blessed losses score as
    draws). ``hash_mb`` sizes the transposition table; ``multipv`` the number of
    lines reported. ``contempt`` (centipawns, Stockfish's Contempt) is what the
    side to move at the root gives up by a draw in the tree: repetitions, the
    50-move rule, stalemate, dead positions and tablebase draws score
    ``-contempt`` for it and ``+contempt`` for its opponent, so against a weaker
    opponent it plays on rather than trade into a dead draw. ``threads`` (Stockfish's Threads) above 1
    adds ``threads - 1`` helper threads that search the same root and share the TT (:mod:`.smp`).
    """

    def __init__(self, evaluator: Evaluator | None = None, *, prober: Prober | None = None,
                 hash_mb: int = 16, probe_depth: int = 1, rule50: bool = True, multipv: int = 1,
                 contempt: int = 0, threads: int = 1) -> None:
        self.evaluator = evaluator or Evaluator()
        self.prober = prober
        self.tt = TranspositionTable(hash_mb)
        self.probe_depth = probe_depth
        self.rule50 = rule50
        self.multipv = multipv
        self.contempt = contempt
        self.threads = threads
        self._helpers: list[Helper] = []
        self._active: list[Helper] = []  # the helpers of the current (or last) search
        self._budget: NodeBudget | None = None
        #: The draw score for White of the last search (the TT holds scores made with it).
        self._draw_white = 0
        self._history = new_history()
        self._pawn_table = new_pawn_table()
        self._wdl_cache = self._new_wdl_cache()
        self._wdl_identity: tuple = ()
        #: The board of the search and the tree's arrays, kept from one search to the next (rebuilt
        #: when the TT, the weights or a cache is replaced).
        self.position = Position()
        self.nodes = self.tbhits = self.seldepth = 0
        #: Calls from the trees (every thread's) into the prober through Python in the last search (the others
        #: hit the WDL cache or the compiled prober), and the seconds they took.
        self.probe_calls = 0
        self.probe_seconds = 0.0
        #: Probes of the compiled prober made in the trees in the last search, and the seconds they took.
        self.compiled_probes = 0
        self.compiled_probe_seconds = 0.0
        #: Built at the first search: building it runs compiled code, which a UCI engine on a cold
        #: cache must not wait for before ``uciok``.
        self._tree: core.Tree | None = None
        self._tree_shares: tuple = ()  # the shared arrays the tree was built with

    def clear(self) -> None:
        """Forget everything learnt (UCI ``ucinewgame``)."""
        self.tt.clear()
        # Emptied in place, so the tree that shares them is kept.
        for array in (self._history, *self._pawn_table, *self._wdl_cache[:2]):
            array[:] = 0
        if self._tree is not None:
            self._tree.eval_keys[:] = 0
        for helper in self._helpers:
            helper.clear()

    # -- public --------------------------------------------------------------

    def search(self, board: chess.Board, limits: Limits | None = None,
               on_info: Callable[[Info], None] | None = None) -> SearchResult:
        """Search ``board`` (left untouched; its move stack is the game history) within ``limits``."""
        limits = limits or Limits()
        load_compiled()  # before the clock starts: set-up is not search time
        self._compiled_tables()  # so is reading the compiled prober's table headers (once)
        self.limits = limits
        self.start = time.monotonic()
        self.nodes = self.tbhits = self.seldepth = 0
        self.probe_calls, self.probe_seconds = 0, 0.0
        self._raised: BaseException | None = None  # raised inside a callback, raised again after it
        self._check_every = 1
        self._searched = False  # depth 1 complete: the deadlines apply from now on
        self._stretch = Stretch()
        draw_white = -self.contempt if board.turn == chess.WHITE else self.contempt
        if draw_white != self._draw_white:
            self.tt.clear()  # its scores counted draws for the other side (or with another contempt)
            self._draw_white = draw_white
        self.tt.new_search()
        self.position.load(board)
        tb_pieces = self.prober.max_pieces if self.prober and self.prober.available else 0
        # Cached WDL results hold for one prober with one probe limit.
        identity = (id(self.prober), getattr(self.prober, "probe_limit", None), tb_pieces)
        if identity != self._wdl_identity:
            self._wdl_cache, self._wdl_identity = self._new_wdl_cache(), identity
        tree = self._new_search_tree()
        counters = tree.counters
        counters[core.NEXT_CHECK] = 1
        counters[core.AGE] = self.tt.age
        counters[core.PROBE_DEPTH] = self.probe_depth
        counters[core.RULE50] = int(self.rule50)
        counters[core.TB_PIECES] = tb_pieces
        counters[core.DRAW_WHITE] = draw_white
        # The callbacks live as long as the search (ctypes frees what nobody holds).
        self._probe_callback = core.PROBE_FUNCTION(self._probe)
        self._check_callback = core.CHECK_FUNCTION(self._check)

        root_moves = [encode(m) for m in board.legal_moves]
        if limits.searchmoves:
            wanted = {encode(m) for m in limits.searchmoves}
            root_moves = [m for m in root_moves if m in wanted] or root_moves
        result = SearchResult(None, None, None, [], 0, 0, 0, 0, 0)
        if not root_moves:
            result.score = chess.engine.Mate(0) if board.is_check() else chess.engine.Cp(0)
            return result
        result.best_move = decode(root_moves[0])
        self._root_scores = dict.fromkeys(root_moves, 0)
        previous = 0
        self._start_helpers(board, root_moves)
        with self._ctrl_c_as_stop():
            try:
                for depth in range(1, min(limits.depth or MAX_PLY, MAX_PLY) + 1):
                    lines = []
                    excluded: set[int] = set()
                    for line in range(min(self.multipv, len(root_moves))):
                        counters[core.MULTIPV_LINE] = line
                        moves = [m for m in root_moves if m not in excluded]
                        score, moves = self._aspiration(depth, previous if line == 0 else None, moves, on_info,
                                                        line + 1)
                        pv_codes = self._pv() or moves[:1]
                        pv = [decode(c) for c in pv_codes]
                        lines.append((score_of(score), pv))
                        excluded.add(pv_codes[0])
                        if line == 0:
                            previous = score
                            result.best_move, result.score, result.pv = pv[0], score_of(score), pv
                            result.ponder_move = pv[1] if len(pv) > 1 else None
                        if on_info:
                            on_info(self._info(depth, score, pv, line + 1))
                    result.depth, result.lines = depth, lines
                    self._searched = True
                    if self._done_after_iteration(depth, previous, len(root_moves), result.best_move):
                        break
            except _Stop:
                if counters[core.PARTIAL_MOVE]:
                    # The unfinished iteration already proved a move at least as good: play it.
                    partial = tree.partial_pv  # the PV, ended by a 0
                    length = int(np.flatnonzero(partial == 0)[0])
                    completed = result.best_move if result.depth else None
                    result.best_move = decode(counters[core.PARTIAL_MOVE])
                    result.pv = [decode(c) for c in partial[:length]] or [result.best_move]
                    result.ponder_move = result.pv[1] if len(result.pv) > 1 else None
                    if result.best_move != completed:
                        # No iteration complete, or a new best move: the score that move proved, as a bound (the
                        # last iteration's score belongs to another move and its PV).
                        result.score = score_of(int(counters[core.PARTIAL_SCORE]))
                        result.bound = "lowerbound"
            finally:
                self._stop_helpers()
        if self._raised is not None:  # Ctrl-C between two compiled calls
            raise self._raised
        self._sync()
        result.seldepth = self.seldepth
        result.nodes, result.tbhits = self.nodes, self.tbhits
        result.time_ms = int((time.monotonic() - self.start) * 1000)
        return result

    def _new_wdl_cache(self) -> tuple[np.ndarray, ...]:
        """An empty WDL cache for the tree, with the materials of the prober's local WDL tables (a
        remote prober does not list its tables: the tree then asks it about every material)."""
        files = getattr(self.prober, "files", None)
        return core.new_wdl_cache(tables=files.wdl if files is not None else None)

    def _shared_arrays(self) -> tuple[object, ...]:
        """The arrays the tree shares with the searcher: the TT, the history, the weights, the pawn
        table, the WDL cache and the compiled prober's tables (None without them)."""
        return (self.tt.table, self._history, self.evaluator.matrix, *self._pawn_table,
                *self._wdl_cache, self._compiled_tables())

    def _compiled_tables(self) -> object | None:
        """The compiled prober's tables (read at the first call), None with another prober or none."""
        return getattr(self.prober, "compiled_tables", None) if self.prober is not None else None

    def _build_tree(self) -> core.Tree:
        self._tree_shares = self._shared_arrays()
        return core.new_tree(self.position.arrays(), self.tt.table, self._history,
                             self.evaluator.matrix, self._pawn_table, self._wdl_cache, self._tree_shares[-1])

    def _new_search_tree(self) -> core.Tree:
        """The tree, ready for a new search: built once, again only when an array it shares was replaced
        (Hash resized, another prober's WDL cache, new weights). Its evaluation cache is kept (it
        holds for the same weights); new weights also empty the TT, whose entries keep static evaluations."""
        tree = self._tree
        if tree is None or any(a is not b for a, b in zip(self._shared_arrays(), self._tree_shares, strict=True)):
            if self._tree_shares and self._tree_shares[2] is not self.evaluator.matrix:
                self.tt.clear()
            tree = self._tree = self._build_tree()
        for array in (tree.counters, tree.killers, tree.pv_length, tree.partial_pv):
            array[:] = 0
        return tree

    # -- callbacks from the compiled tree -------------------------------------------

    def _check(self, nodes: int) -> int:
        """Nodes until the next call, or -1: stop now.

        An exception cannot cross compiled code: one raised here (Ctrl-C's KeyboardInterrupt among
        them) stops the search and is raised again when the compiled call has returned."""
        if self._raised is not None:
            return -1
        try:
            limits = self.limits
            if limits.stop.is_set():
                return -1
            if limits.nodes is not None and self._budget is None and nodes >= limits.nodes:
                return -1
            now = time.monotonic()
            if limits.clock_deadline is not None and now >= limits.clock_deadline:
                return -1
            if self._searched:
                if limits.deadline is not None and now >= limits.deadline:
                    return -1
                if limits.movetime is not None and (now - self.start) * 1000 >= limits.movetime:
                    return -1
            # The next check about a quarter of a millisecond from now, at the speed measured so far.
            elapsed = now - self.start
            if elapsed > 0.001:
                self._check_every = max(1, min(4096, int(nodes / elapsed / 4000)))
            wait = self._check_every
            if self._budget is not None:
                return self._budget.take(wait) or -1
            if limits.nodes is not None:
                wait = min(wait, limits.nodes - nodes)
            return wait
        except BaseException as exc:  # noqa: BLE001 - kept and raised again after the compiled call
            self._raised = exc
            return -1

    def _probe(self, bb_address: int, state_address: int) -> int:
        """WDL + 2 of the tree's current position (0 = loss .. 4 = win), -1 when no table has it, -2 when
        the probe raised (kept for the caller of the compiled search)."""
        try:
            return self._probe_position(self.position)
        except BaseException as exc:  # noqa: BLE001 - the next check stops the search and raises it again
            self._raised = exc
            return -2

    def _probe_position(self, position: Position) -> int:
        """WDL + 2 of the position in ``position``'s arrays (any thread's tree), -1 when no table has it."""
        started = time.perf_counter()
        bb = [int(b) for b in position.bb]
        board = chess.Board(None)
        board.pawns, board.knights, board.bishops = bb[1] | bb[9], bb[2] | bb[10], bb[3] | bb[11]
        board.rooks, board.queens, board.kings = bb[4] | bb[12], bb[5] | bb[13], bb[6] | bb[14]
        board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK] = bb[8], bb[0]
        board.occupied = bb[0] | bb[8]
        state = position.state
        board.turn = bool(state[TURN])
        ep = int(state[EP])
        board.ep_square = ep if ep >= 0 else None
        board.halfmove_clock = int(state[HALFMOVE])
        try:
            return self.prober.probe_wdl(board) + 2  # type: ignore[union-attr]
        except NotCoveredError:
            return -1
        finally:
            self.probe_calls += 1
            self.probe_seconds += time.perf_counter() - started

    # -- helper threads (Threads > 1) --------------------------------------------------

    @property
    def helper_probe_calls(self) -> int:
        """Of :attr:`probe_calls`, those the helper threads made in the last search."""
        return sum(helper.probe_calls for helper in self._active)

    def _start_helpers(self, board: chess.Board, root_moves: list[int]) -> None:
        """Start ``threads - 1`` helpers on this root, at most one a core beside the main thread (each helper is a
        Python thread that takes the GIL to check its clock: past the cores, 64 threads made a 100 ms search
        take 5 s and its ``stop`` seconds); none for a single move, or for a node limit under 1000 nodes a
        thread. With a node limit, all threads draw from one budget."""
        limits = self.limits
        self._budget = None
        self._active = []
        threads = min(self.threads, usable_cores())
        count = threads - 1
        if count < 1 or len(root_moves) < 2 or (limits.nodes is not None and limits.nodes < 1000 * threads):
            return
        while len(self._helpers) < count:
            self._helpers.append(Helper(len(self._helpers) + 1, self._probe_position))
        del self._helpers[count:]
        if limits.nodes is not None:
            self._budget = NodeBudget(limits.nodes, threads)
        self._active = self._helpers
        for helper in self._active:
            helper.start(board, self._tree, root_moves, self._budget)

    def _stop_helpers(self) -> None:
        """Stop the helpers of this search, wait for them, and count their nodes."""
        for helper in self._active:
            helper.stop()
        for helper in self._active:
            helper.join()
        self._sync()
        for helper in self._active:
            if helper.raised is not None and self._raised is None:
                self._raised = helper.raised

    # -- iterations ------------------------------------------------------------------

    def _sync(self) -> None:
        """Take the search's progress from the trees: nodes and tbhits of every thread, the main thread's
        seldepth."""
        counters = self._tree.counters
        trees = [self._tree] + [helper.tree for helper in self._active]
        self.nodes = sum(int(tree.counters[core.NODES]) for tree in trees)
        self.tbhits = sum(int(tree.counters[core.TBHITS]) for tree in trees)
        self.compiled_probes = sum(int(tree.counters[core.TB_CALLS]) for tree in trees)
        cycles = sum(int(tree.counters[core.TB_CYCLES]) for tree in trees)
        self.compiled_probe_seconds = cycles / cycles_per_second() if cycles else 0.0
        self.seldepth = int(counters[core.SELDEPTH])

    def _pv(self) -> list[int]:
        return [int(c) for c in self._tree.pv[0, :self._tree.pv_length[0]]]

    def _root(self, depth: int, alpha: int, beta: int, moves: np.ndarray, scores: np.ndarray) -> int:
        """One pass over the root moves (compiled, without the GIL); raises :exc:`_Stop` when stopped."""
        value = root(self._tree, depth, alpha, beta, moves, scores, len(moves), self._probe_callback,
                     self._check_callback)
        if self._raised is not None:
            raised, self._raised = self._raised, None
            raise raised
        for move, score in zip(moves.tolist(), scores.tolist(), strict=True):
            self._root_scores[move] = score
        self._sync()
        if self._tree.counters[core.STOPPED]:
            raise _Stop
        return int(value)

    def _ctrl_c_as_stop(self) -> contextlib.AbstractContextManager[bool]:
        """In the main thread, Ctrl-C (SIGINT with Python's default handler) during the search stops it
        and raises KeyboardInterrupt once the compiled call has returned (between two calls, the next
        call stops at its first check and raises it, or the search does before it returns).
        Python's handler itself would raise inside a callback, where ctypes reports the exception and
        drops it."""

        def on_signal() -> None:
            self._raised = self._raised or KeyboardInterrupt()

        return sigint_deferred(on_signal)

    def _aspiration(self, depth: int, previous: int | None, moves: list[int],
                    on_info: Callable[[Info], None] | None, multipv: int) -> tuple[int, list[int]]:
        """The root's score at ``depth``, and the moves in the order they were last searched."""
        codes = np.array(moves, dtype=np.int32)
        scores = np.array([self._root_scores[m] for m in moves], dtype=np.int64)
        if previous is None or depth < 4 or abs(previous) >= TB_BOUND:
            return self._root(depth, -INF, INF, codes, scores), codes.tolist()
        delta = 30
        alpha, beta = previous - delta, previous + delta
        while True:
            score = self._root(depth, alpha, beta, codes, scores)
            if alpha < score < beta:
                return score, codes.tolist()
            bound = "upperbound" if score <= alpha else "lowerbound"
            if score <= alpha:
                alpha = max(score - delta, -INF)
            else:
                beta = min(score + delta, INF)
            if on_info and time.monotonic() - self.start > 1.0:
                pv = [decode(c) for c in self._pv() or codes[:1]]
                on_info(self._info(depth, score, pv, multipv, bound))
            delta *= 2

    def _done_after_iteration(self, depth: int, score: int, root_count: int, best: chess.Move | None) -> bool:
        limits = self.limits
        if abs(score) >= MATE_BOUND and depth >= MATE - abs(score) + 2:
            return True  # a mate proven with plies to spare: deeper iterations only repeat it
        if limits.infinite:
            return False
        if limits.mate is not None and score >= MATE_BOUND and (MATE - score + 1) // 2 <= limits.mate:
            return True
        if limits.soft_deadline is not None:
            # The next iteration takes longer than all before it: start it only in the first half of the soft
            # budget, stretched by how the iterations went (never past the hard stop).
            stretch = self._stretch.after_iteration(depth, best, score, abs(score) >= TB_BOUND)
            span = (limits.soft_deadline - self.start) * stretch
            if limits.deadline is not None:
                span = min(span, limits.deadline - self.start)
            if time.monotonic() - self.start >= span / 2:
                return True
        return root_count == 1 and (limits.soft_deadline is not None or limits.deadline is not None)

    def _info(self, depth: int, score: int, pv: list[chess.Move], multipv: int, bound: str | None = None) -> Info:
        elapsed = time.monotonic() - self.start
        return Info(depth, self.seldepth, score_of(score), self.nodes,
                    int(self.nodes / elapsed) if elapsed > 0 else 0, self.tbhits, self.tt.hashfull(),
                    int(elapsed * 1000), pv, multipv, bound)
