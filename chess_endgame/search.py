"""Alpha-beta searcher: PVS, iterative deepening, aspiration windows, quiescence, TT, TB probes.

Scores are centipawns from the side to move. A mate in ``n`` plies scores
``MATE - n``; a tablebase win found ``p`` plies from the root scores
``TB_WIN - p`` (Stockfish's convention, reported as ``cp 20000-p``). The search
never prints: it reports through the ``on_info`` callback and returns a
:class:`SearchResult`.

Draws: a position that repeats one earlier in the search path, or twice in
the game history, as in Stockfish; the 50-move rule at a halfmove clock of 100
unless the side to move is mated; insufficient material.

Inside the tree moves are int codes (see :mod:`.searchboard`); the board is a
:class:`~.searchboard.SearchBoard` copy of the root, never the caller's board.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import chess

from .evaluation import PASSED_MASK, Evaluator
from .searchboard import SearchBoard, decode, encode, zobrist
from .see import see
from .tablebase import NotCoveredError, Prober

MATE = 32000
MATE_BOUND = MATE - 1000     # |score| above this is a mate
TB_WIN = 20000
TB_BOUND = TB_WIN - 1000     # |score| above this (and below MATE_BOUND) is a tablebase result
INF = MATE + 1
MAX_PLY = 128

EXACT, LOWER, UPPER = 0, 1, 2
_NO_PV: list[int] = []  # shared, never mutated
_PIECE_VALUE = (0, 100, 320, 330, 500, 950, 20000)
_CAPTURE, _PROMOTION, _KILLER1, _KILLER2 = 1_000_000, 900_000, 800_000, 700_000
_BAD_CAPTURE = -1_000_000
#: What a move is, for ordering, pruning and reductions (moves from KILLER on are quiet).
GOOD_CAPTURE, PROMOTION, BAD_CAPTURE, KILLER, QUIET = range(1, 6)

# Selective search. Each piece keeps its endgame guard (see Searcher._search); the figures
# are Stockfish's ideas at this engine's scale (centipawns, plies, move counts).
RFP_DEPTH, RFP_MARGIN = 6, 90            # reverse futility: static eval - margin x depth >= beta
NULL_VERIFY_DEPTH = 8                    # null move: verify with a real search from this depth on
FUTILITY_DEPTH = 3
FUTILITY_MARGIN = (0, 150, 300, 450)     # quiet moves skipped when static eval + margin <= alpha
LMP_COUNT = (0, 5, 8, 13, 20)            # quiet moves searched at depth d before the rest are skipped
MAX_MOVES = 256
#: Late move reductions by depth and move number (searched moves so far).
LMR = [[0 if d < 3 or m < 2 else int(0.5 + math.log(d) * math.log(m) / 2.2) for m in range(MAX_MOVES)]
       for d in range(MAX_PLY + 1)]
HISTORY_GOOD = 2000                      # quiet moves above this history are reduced one ply less
PAWN_ENDING_EXTENSION = 2                # a capture that leaves only kings and pawns
_HISTORY_MAX = 500_000


class _Stop(Exception):
    """Raised inside the tree when a limit is reached."""


@dataclass
class Limits:
    """When to stop. Any combination; none at all means: until :attr:`stop` is set.

    ``movetime`` is in milliseconds; ``deadline``, ``soft_deadline`` and
    ``clock_deadline`` are ``time.monotonic()`` instants: the search starts no new
    iteration after the soft deadline and stops at the hard one or after
    ``movetime``, but only once depth 1 (with its quiescence search) is complete,
    so that the move played was searched. ``clock_deadline`` is when the game
    clock itself would run out: nothing runs past it, not even depth 1, and a
    tablebase root's ranking stops there too. ``nodes`` and ``stop`` are exact.
    Fields may change while a search runs (UCI ``ponderhit``); ``stop`` is
    thread-safe.
    """

    depth: int | None = None
    nodes: int | None = None
    movetime: int | None = None
    deadline: float | None = None
    soft_deadline: float | None = None
    clock_deadline: float | None = None
    mate: int | None = None
    searchmoves: list[chess.Move] | None = None
    infinite: bool = False
    stop: threading.Event = field(default_factory=threading.Event)


@dataclass(frozen=True)
class Score:
    """A score as UCI reports it: ``cp`` centipawns, or ``mate`` in moves (negative: getting mated)."""

    cp: int | None = None
    mate: int | None = None

    @classmethod
    def from_value(cls, value: int) -> Score:
        if value >= MATE_BOUND:
            return cls(mate=(MATE - value + 1) // 2)
        if value <= -MATE_BOUND:
            return cls(mate=-((MATE + value) // 2))
        return cls(cp=value)

    def uci(self) -> str:
        return f"mate {self.mate}" if self.mate is not None else f"cp {self.cp}"

    def __str__(self) -> str:
        return self.uci()


@dataclass
class Info:
    """Progress after an iteration (one MultiPV line of it), or a front end's final word.

    ``score`` is None when no search produced one; ``wdl`` is an exact win/draw/loss
    in permille when it is known (a tablebase verdict), else front ends estimate it.
    """

    depth: int
    seldepth: int
    score: Score | None
    nodes: int
    nps: int
    tbhits: int
    hashfull: int
    time_ms: int
    pv: list[chess.Move]
    multipv: int = 1
    bound: str | None = None  # "lowerbound" / "upperbound" after an aspiration fail
    wdl: tuple[int, int, int] | None = None


@dataclass
class SearchResult:
    """The search's answer. ``score`` is None when no search reached a score (a limit came
    before the first root move was searched); ``bound`` is "lowerbound" when the score is that
    of a move an unfinished iteration proved best so far."""

    best_move: chess.Move | None
    ponder_move: chess.Move | None
    score: Score | None
    pv: list[chess.Move]
    depth: int
    seldepth: int
    nodes: int
    tbhits: int
    time_ms: int
    #: Every MultiPV line of the last completed iteration: (score, pv).
    lines: list[tuple[Score, list[chess.Move]]] = field(default_factory=list)
    bound: str | None = None


class TranspositionTable:
    """Slots derived from a size in MB; depth-preferred replacement with ageing.

    A slot holds ``(zobrist key, depth, bound, score, move code, age)``.
    """

    #: Bytes one filled slot costs in CPython (slot pointer, tuple, key and score ints);
    #: ``tests/test_search.py`` measures it with tracemalloc.
    ENTRY_BYTES = 200

    def __init__(self, size_mb: int = 16) -> None:
        self.resize(size_mb)

    @classmethod
    def slots_for(cls, size_mb: int) -> int:
        """Slots of a table of ``size_mb`` MB (a power of two, at least 1024)."""
        slots = max(1024, size_mb * (1 << 20) // cls.ENTRY_BYTES)
        return 1 << (slots.bit_length() - 1)

    def resize(self, size_mb: int) -> None:
        self.size = self.slots_for(size_mb)
        self.mask = self.size - 1
        self.slots: list[tuple | None] = [None] * self.size
        self.age = 0

    def clear(self) -> None:
        self.slots = [None] * self.size
        self.age = 0

    def new_search(self) -> None:
        self.age = (self.age + 1) & 255

    def get(self, key: int) -> tuple | None:
        entry = self.slots[key & self.mask]
        return entry if entry is not None and entry[0] == key else None

    def put(self, key: int, depth: int, bound: int, score: int, move: int) -> None:
        index = key & self.mask
        old = self.slots[index]
        if old is None or old[0] == key or old[5] != self.age or depth >= old[1]:
            self.slots[index] = (key, depth, bound, score, move, self.age)

    def hashfull(self) -> int:
        """Permille of the first 1000 slots used by the current search (UCI ``hashfull``)."""
        sample = self.slots[:1000]
        return sum(1 for e in sample if e is not None and e[5] == self.age) * 1000 // len(sample)


def _to_tt(score: int, ply: int) -> int:
    """Mate and TB scores are stored relative to the node, not the root."""
    if score >= TB_BOUND:
        return score + ply
    if score <= -TB_BOUND:
        return score - ply
    return score


def _from_tt(score: int, ply: int, clock: int) -> int:
    """A stored score at ``ply`` with halfmove clock ``clock`` (Stockfish's ``value_from_tt``).

    A mate, or a tablebase result (reached after a zeroing move), that lies more plies
    away than the 50-move rule leaves (99 - clock) may not be reachable from here: it
    is downgraded to the largest score of the class below, never passed on as found.
    """
    if score >= TB_BOUND:
        if score >= MATE_BOUND and MATE - score > 99 - clock:
            return MATE_BOUND - 1
        if score < MATE_BOUND and TB_WIN - score > 99 - clock:
            return TB_BOUND - 1
        return score - ply
    if score <= -TB_BOUND:
        if score <= -MATE_BOUND and MATE + score > 99 - clock:
            return -MATE_BOUND + 1
        if score > -MATE_BOUND and TB_WIN + score > 99 - clock:
            return -TB_BOUND + 1
        return score + ply
    return score


class Searcher:
    """Negamax alpha-beta with PVS over a :class:`~.searchboard.SearchBoard`.

    ``prober`` enables WDL probes inside the tree after zeroing moves
    (``probe_depth``: the least remaining depth to probe at, Stockfish's
    SyzygyProbeDepth; ``rule50``: cursed wins and blessed losses score as
    draws). ``hash_mb`` sizes the transposition table; ``multipv`` the number of
    lines reported.
    """

    def __init__(self, evaluator: Evaluator | None = None, *, prober: Prober | None = None,
                 hash_mb: int = 16, probe_depth: int = 1, rule50: bool = True, multipv: int = 1) -> None:
        self.evaluator = evaluator or Evaluator()
        self.prober = prober
        self.tt = TranspositionTable(hash_mb)
        self.probe_depth = probe_depth
        self.rule50 = rule50
        self.multipv = multipv
        self._eval_cache: dict[int, int] = {}
        self._history = [[0] * 4096, [0] * 4096]
        self.nodes = self.tbhits = self.seldepth = 0

    def clear(self) -> None:
        """Forget everything learnt (UCI ``ucinewgame``)."""
        self.tt.clear()
        self._eval_cache.clear()
        self._history = [[0] * 4096, [0] * 4096]

    # -- public --------------------------------------------------------------

    def search(self, board: chess.Board, limits: Limits | None = None,
               on_info: Callable[[Info], None] | None = None) -> SearchResult:
        """Search ``board`` (left untouched; its move stack is the game history) within ``limits``."""
        limits = limits or Limits()
        self.limits = limits
        self.start = time.monotonic()
        self.nodes = self.tbhits = self.seldepth = 0
        self._next_check = 0
        self._check_every = 1
        self._searched = False  # depth 1 complete: the deadlines apply from now on
        self._partial: tuple[int, list[int], int] | None = None
        self._line = 0
        self._killers = [[0, 0] for _ in range(MAX_PLY + 2)]
        self._pv: list[list[int]] = [[] for _ in range(MAX_PLY + 2)]
        self.tt.new_search()
        if len(self._eval_cache) > 300_000:
            self._eval_cache.clear()
        self._tb_pieces = self.prober.max_pieces if self.prober and self.prober.available else 0
        self._count_history(board)
        self.board = SearchBoard.from_board(board)

        root_moves = [encode(m) for m in board.legal_moves]
        if limits.searchmoves:
            wanted = {encode(m) for m in limits.searchmoves}
            root_moves = [m for m in root_moves if m in wanted] or root_moves
        result = SearchResult(None, None, None, [], 0, 0, 0, 0, 0)
        if not root_moves:
            result.score = Score(mate=0) if board.is_check() else Score(cp=0)
            return result
        result.best_move = decode(root_moves[0])
        self._root_scores = dict.fromkeys(root_moves, 0)
        previous = 0
        try:
            for depth in range(1, min(limits.depth or MAX_PLY, MAX_PLY) + 1):
                self._root_depth = depth
                lines = []
                excluded: set[int] = set()
                for line in range(min(self.multipv, len(root_moves))):
                    self._line = line
                    moves = [m for m in root_moves if m not in excluded]
                    score = self._aspiration(depth, previous if line == 0 else None, moves, on_info, line + 1)
                    pv_codes = self._pv[0] or moves[:1]
                    pv = [decode(c) for c in pv_codes]
                    lines.append((Score.from_value(score), pv))
                    excluded.add(pv_codes[0])
                    if line == 0:
                        previous = score
                        result.best_move, result.score, result.pv = pv[0], Score.from_value(score), pv
                        result.ponder_move = pv[1] if len(pv) > 1 else None
                    if on_info:
                        on_info(self._info(depth, score, pv, line + 1))
                result.depth, result.lines = depth, lines
                self._searched = True
                if self._done_after_iteration(depth, previous, len(root_moves)):
                    break
        except _Stop:
            while self.board.ply:
                self.board.pop()
            if self._partial is not None:
                # The unfinished iteration already proved a move at least as good: play it.
                move, pv_codes, value = self._partial
                result.best_move = decode(move)
                result.pv = [decode(c) for c in pv_codes]
                result.ponder_move = result.pv[1] if len(result.pv) > 1 else None
                if not result.depth:  # no iteration complete: the partial one's score, as a bound
                    result.score, result.bound = Score.from_value(value), "lowerbound"
        result.seldepth = self.seldepth
        result.nodes, result.tbhits = self.nodes, self.tbhits
        result.time_ms = int((time.monotonic() - self.start) * 1000)
        return result

    # -- limits ------------------------------------------------------------------

    def _check(self) -> None:
        limits = self.limits
        if limits.stop.is_set():
            raise _Stop
        if limits.nodes is not None and self.nodes >= limits.nodes:
            raise _Stop
        now = time.monotonic()
        if limits.clock_deadline is not None and now >= limits.clock_deadline:
            raise _Stop
        if self._searched:
            if limits.deadline is not None and now >= limits.deadline:
                raise _Stop
            if limits.movetime is not None and (now - self.start) * 1000 >= limits.movetime:
                raise _Stop
        # The next check about a quarter of a millisecond from now, at the speed measured so far.
        elapsed = now - self.start
        if elapsed > 0.001:
            self._check_every = max(1, min(1024, int(self.nodes / elapsed / 4000)))
        self._next_check = self.nodes + self._check_every
        if limits.nodes is not None:
            self._next_check = min(self._next_check, limits.nodes)

    def _done_after_iteration(self, depth: int, score: int, root_count: int) -> bool:
        limits = self.limits
        if abs(score) >= MATE_BOUND and depth >= MATE - abs(score) + 2:
            return True  # a mate proven with plies to spare: deeper iterations only repeat it
        if limits.infinite:
            return False
        if limits.mate is not None and score >= MATE_BOUND and (MATE - score + 1) // 2 <= limits.mate:
            return True
        if limits.soft_deadline is not None:
            # The next iteration takes longer than all before it: start it only in the first half.
            now = time.monotonic()
            if now >= limits.soft_deadline or now - self.start >= (limits.soft_deadline - self.start) / 2:
                return True
        return root_count == 1 and (limits.soft_deadline is not None or limits.deadline is not None)

    def _info(self, depth: int, score: int, pv: list[chess.Move], multipv: int, bound: str | None = None) -> Info:
        elapsed = time.monotonic() - self.start
        return Info(depth, self.seldepth, Score.from_value(score), self.nodes,
                    int(self.nodes / elapsed) if elapsed > 0 else 0, self.tbhits, self.tt.hashfull(),
                    int(elapsed * 1000), pv, multipv, bound)

    def _count_history(self, board: chess.Board) -> None:
        """Count the game's positions since the last zeroing move (root included)."""
        board = board.copy()
        counts: dict[int, int] = {}
        for _ in range(min(board.halfmove_clock, len(board.move_stack)) + 1):
            key = zobrist(board)
            counts[key] = counts.get(key, 0) + 1
            if not board.move_stack:
                break
            board.pop()
        self._game_counts = counts
        self._path: set[int] = set()

    # -- iterative deepening -------------------------------------------------------

    def _aspiration(self, depth: int, previous: int | None, moves: list[int],
                    on_info: Callable[[Info], None] | None, multipv: int) -> int:
        if previous is None or depth < 4 or abs(previous) >= TB_BOUND:
            return self._root(depth, -INF, INF, moves)
        delta = 30
        alpha, beta = previous - delta, previous + delta
        while True:
            score = self._root(depth, alpha, beta, moves)
            if alpha < score < beta:
                return score
            bound = "upperbound" if score <= alpha else "lowerbound"
            if score <= alpha:
                alpha = max(score - delta, -INF)
            else:
                beta = min(score + delta, INF)
            if on_info and time.monotonic() - self.start > 1.0:
                pv = [decode(c) for c in self._pv[0] or moves[:1]]
                on_info(self._info(depth, score, pv, multipv, bound))
            delta *= 2

    def _root(self, depth: int, alpha: int, beta: int, moves: list[int]) -> int:
        board = self.board
        scores = self._root_scores
        moves.sort(key=scores.__getitem__, reverse=True)
        root_key = board.zobrist
        self._path.add(root_key)
        self._pv[0] = []
        best = -INF
        try:
            for i, move in enumerate(moves):
                board.push_code(move)
                try:
                    if i == 0:
                        score = -self._search(depth - 1, -beta, -alpha, 1, True)
                    else:
                        score = -self._search(depth - 1, -alpha - 1, -alpha, 1, False)
                        if score > alpha:
                            score = -self._search(depth - 1, -beta, -alpha, 1, True)
                finally:
                    board.pop()
                scores[move] = score if score > alpha or i == 0 else -INF
                if score > best:
                    best = score
                    if score > alpha:
                        alpha = score
                        self._pv[0] = [move] + self._pv[1]
                        if self._line == 0 and i > 0:
                            self._partial = (move, self._pv[0], score)
                        if score >= beta:
                            break
                if i == 0 and self._line == 0:
                    self._partial = (move, self._pv[0] or [move], score)
        finally:
            self._path.discard(root_key)
        return best

    # -- the tree --------------------------------------------------------------------

    def _search(self, depth: int, alpha: int, beta: int, ply: int, pv_node: bool, null_ok: bool = True,
                checkers: int = -1) -> int:
        """Negamax value of the position at ``ply`` (``checkers``: its checking pieces when the caller
        already knows them, else -1)."""
        if depth <= 0:
            self._pv[ply] = _NO_PV
            return self._qsearch(alpha, beta, ply, True, checkers)
        self.nodes += 1
        if self.nodes >= self._next_check:
            self._check()
        board = self.board
        if ply > self.seldepth:
            self.seldepth = ply
        if pv_node:
            self._pv[ply] = _NO_PV
        key = board.zobrist
        if key in self._path or self._game_counts.get(key, 0) >= 2:
            return 0
        if checkers < 0:
            checkers = board.checkers()
        if board.halfmove_clock >= 100 and (not checkers or board.moves(checkers)):
            return 0
        if not (board.pawns | board.rooks | board.queens) and board.is_insufficient_material():
            return 0
        if ply >= MAX_PLY:
            return self._evaluate()
        # Mate distance pruning.
        if alpha < -MATE + ply:
            alpha = -MATE + ply
        if beta > MATE - ply - 1:
            beta = MATE - ply - 1
        if alpha >= beta:
            return alpha
        if checkers:
            depth += 1  # check extension

        entry = self.tt.get(key)
        tt_move = 0
        if entry is not None:
            tt_move = entry[4]
            # No cutoff near the 50-move limit, where the stored line may no longer hold.
            if not pv_node and entry[1] >= depth and board.halfmove_clock < 90:
                score = _from_tt(entry[3], ply, board.halfmove_clock)
                bound = entry[2]
                if bound == EXACT or (bound == LOWER and score >= beta) or (bound == UPPER and score <= alpha):
                    return score

        max_value = INF
        best = -INF
        if self._tb_pieces and board.halfmove_clock == 0 and not board.castling_rights:
            pieces = board.occupied.bit_count()
            if pieces <= self._tb_pieces and (depth >= self.probe_depth or pieces < self._tb_pieces):
                tb = self._probe(ply)
                if tb is not None:
                    value, bound = tb
                    if bound == EXACT or (bound == LOWER and value >= beta) or (bound == UPPER and value <= alpha):
                        self.tt.put(key, min(depth + 6, MAX_PLY), bound, _to_tt(value, ply), 0)
                        return value
                    if pv_node:
                        if bound == LOWER:
                            best = value
                            alpha = max(alpha, value)
                        else:
                            max_value = value

        us = board.turn
        # Pieces other than king and pawns for the side to move: without them zugzwang is the rule.
        pieces_us = board.occupied_co[us] & ~(board.pawns | board.kings)
        static = -INF
        if not checkers:
            static = self._evaluate()
            if not pv_node and abs(beta) < TB_BOUND:
                # Reverse futility pruning (static null move): far above beta near the leaves.
                if depth <= RFP_DEPTH and pieces_us and static - RFP_MARGIN * depth >= beta:
                    return static
                # Null-move pruning: let the opponent move twice; if that still fails high, so does this.
                if null_ok and depth >= 3 and pieces_us and static >= beta:
                    reduction = 3 + depth // 4 + min(2, (static - beta) // 200)
                    board.push_null()
                    self._path.add(key)
                    try:
                        score = -self._search(depth - 1 - reduction, -beta, -beta + 1, ply + 1, False, False)
                    finally:
                        self._path.discard(key)
                        board.pop()
                    if score >= beta:
                        if score >= TB_BOUND:
                            score = beta  # a mate or TB win found by passing proves nothing
                        if depth < NULL_VERIFY_DEPTH:
                            return score
                        # Deep nodes: verify with a reduced search without null moves (zugzwang).
                        if self._search(depth - reduction, beta - 1, beta, ply, False, False) >= beta:
                            return score
        # Internal iterative reduction: without a move from the TT, a deep node is searched shallower.
        if not tt_move and depth >= 4:
            depth -= 1

        original_alpha = alpha
        best_move = 0
        leaf = depth <= 1
        searched = 0
        quiets = 0
        futile = not pv_node and not checkers and depth <= FUTILITY_DEPTH and \
            static + FUTILITY_MARGIN[depth] <= alpha and abs(alpha) < TB_BOUND
        late = LMP_COUNT[depth] if depth < len(LMP_COUNT) and not pv_node and not checkers else MAX_MOVES
        history = self._history[us]
        lmr = LMR[min(depth, MAX_PLY)]
        self._path.add(key)
        try:
            for move, kind in self._ordered(tt_move, ply, checkers):
                quiet = kind >= KILLER
                if quiet and quiets >= late and best > -TB_BOUND and not board.pawns >> (move & 63) & 1:
                    continue  # late move pruning (pawn moves, passers among them, are kept)
                board.push_code(move)
                try:
                    child_checkers = board.checkers()
                    gives_check = child_checkers != 0
                    to = move >> 6 & 63
                    passer = quiet and board.pawns >> to & 1 and \
                        not PASSED_MASK[us][to] & board.pawns & board.occupied_co[not us]
                    if quiet and futile and not gives_check and not passer and best > -TB_BOUND:
                        continue  # futility pruning: even a good quiet move cannot reach alpha
                    extension = self._extension(move, ply)
                    new_depth = depth - 1 + extension
                    if leaf and not extension:
                        self._pv[ply + 1] = _NO_PV
                        score = -self._qsearch(-beta, -alpha, ply + 1, True, child_checkers)
                    elif searched == 0:
                        score = -self._search(new_depth, -beta, -alpha, ply + 1, pv_node, True, child_checkers)
                    else:
                        reduction = 0
                        if depth >= 3 and searched >= 2 and (quiet or kind == BAD_CAPTURE) and not extension \
                                and not passer:
                            reduction = lmr[min(searched, MAX_MOVES - 1)]
                            reduction -= pv_node + gives_check + (kind == KILLER)
                            reduction -= history[move & 4095] > HISTORY_GOOD
                            reduction = max(0, min(reduction, new_depth - 1))
                        score = -self._search(new_depth - reduction, -alpha - 1, -alpha, ply + 1, False, True,
                                              child_checkers)
                        if reduction and score > alpha:
                            score = -self._search(new_depth, -alpha - 1, -alpha, ply + 1, False, True,
                                                  child_checkers)
                        if pv_node and score > alpha:  # also on a fail high: the PV must come from a PV search
                            score = -self._search(new_depth, -beta, -alpha, ply + 1, True, True, child_checkers)
                finally:
                    board.pop()
                searched += 1
                quiets += quiet
                if score > best:
                    best = score
                    best_move = move
                    if score > alpha:
                        alpha = score
                        if pv_node:
                            self._pv[ply] = [move] + self._pv[ply + 1]
                        if score >= beta:
                            if quiet:
                                self._reward(move, ply, depth)
                            break
        finally:
            self._path.discard(key)
        if not searched:
            return -MATE + ply if checkers else 0
        if best > max_value:
            best = max_value
        bound = LOWER if best >= beta else (EXACT if best > original_alpha else UPPER)
        self.tt.put(key, depth, bound, _to_tt(best, ply), best_move)
        return best

    def _extension(self, move: int, ply: int) -> int:
        """Plies added to ``move`` (already made): a passed pawn reaching the seventh rank, and a
        capture that trades the last piece into a pure pawn ending, which decides most endgames
        and is cheap to search. Checks are extended where the checked side moves."""
        if ply >= 2 * self._root_depth:
            return 0  # extensions never more than double the line
        board = self.board
        to = move >> 6 & 63
        if board.pawns >> to & 1 and not move >> 12:
            mover = not board.turn
            if (to >> 3 == 6 if mover else to >> 3 == 1) and not PASSED_MASK[mover][to] & board.pawns & \
                    board.occupied_co[board.turn]:
                return 1
        if not (board.knights | board.bishops | board.rooks | board.queens):
            before = board.last_state()
            if before[1] | before[2] | before[3] | before[4]:  # the move took the last piece
                return PAWN_ENDING_EXTENSION
        return 0

    def _reward(self, move: int, ply: int, depth: int) -> None:
        """A quiet move caused a cutoff: make it a killer and raise its history."""
        killers = self._killers[ply]
        if killers[0] != move:
            killers[1] = killers[0]
            killers[0] = move
        history = self._history[self.board.turn]
        index = move & 4095
        history[index] = min(history[index] + depth * depth, _HISTORY_MAX)

    def _probe(self, ply: int) -> tuple[int, int] | None:
        try:
            wdl = self.prober.probe_wdl(self.board)  # type: ignore[union-attr]
        except NotCoveredError:
            return None
        self.tbhits += 1
        if wdl == 2 or (wdl == 1 and not self.rule50):
            return TB_WIN - ply, LOWER
        if wdl == -2 or (wdl == -1 and not self.rule50):
            return -TB_WIN + ply, UPPER
        return wdl, EXACT  # a draw, or a cursed win / blessed loss scored as +-1

    def _ordered(self, tt_move: int, ply: int, checkers: int):
        """Yield (move, kind): the TT move, captures that win material by SEE (MVV-LVA among them),
        promotions, killers, quiet moves by history, then captures that lose material."""
        board = self.board
        if tt_move:
            # Stored for a position with this 64-bit key, so legal here unless the key
            # collided; the cheap check keeps even that case from corrupting the board.
            if board.plausible(tt_move):
                to = tt_move >> 6 & 63
                capture = board.occupied >> to & 1 or (to == board.ep_square and board.pawns >> (tt_move & 63) & 1)
                yield tt_move, (GOOD_CAPTURE if capture else PROMOTION if tt_move >> 12 else QUIET)
            else:
                tt_move = 0
        killer1, killer2 = self._killers[ply]
        history = self._history[board.turn]
        piece_type_at = board.piece_type_at
        them = board.occupied_co[not board.turn]
        ep_square = board.ep_square
        scored = []
        for move in board.moves(checkers):
            if move == tt_move:
                continue
            to = move >> 6 & 63
            if them >> to & 1:
                victim, attacker = piece_type_at(to), piece_type_at(move & 63)
                mvv_lva = 10 * _PIECE_VALUE[victim] - _PIECE_VALUE[attacker]
                if _PIECE_VALUE[victim] >= _PIECE_VALUE[attacker] or see(board, move) >= 0:
                    scored.append((_CAPTURE + mvv_lva, move, GOOD_CAPTURE))
                else:
                    scored.append((_BAD_CAPTURE + mvv_lva, move, BAD_CAPTURE))
            elif move >> 12:
                scored.append((_PROMOTION + (move >> 12), move, PROMOTION))
            elif to == ep_square and board.pawns >> (move & 63) & 1:
                scored.append((_CAPTURE + 900, move, GOOD_CAPTURE))
            elif move == killer1:
                scored.append((_KILLER1, move, KILLER))
            elif move == killer2:
                scored.append((_KILLER2, move, KILLER))
            else:
                scored.append((history[move & 4095], move, QUIET))
        scored.sort(reverse=True)
        for _, move, kind in scored:
            yield move, kind

    def _evaluate(self) -> int:
        board = self.board
        key = board.zobrist
        value = self._eval_cache.get(key)
        if value is None:
            if not (board.pawns | board.rooks | board.queens) and board.is_insufficient_material():
                value = 0
            else:
                value = self.evaluator.evaluate(board)
            self._eval_cache[key] = value
        return value

    def _qsearch(self, alpha: int, beta: int, ply: int, first: bool, checkers: int = -1) -> int:
        """Captures and queen promotions (and quiet checks at its first ply) after a stand-pat score;
        out of check, moves that lose material by SEE are skipped."""
        self.nodes += 1
        if self.nodes >= self._next_check:
            self._check()
        if ply > self.seldepth:
            self.seldepth = ply
        board = self.board
        if checkers < 0:
            checkers = board.checkers()
        if checkers:
            best = -MATE + ply
            moves = board.moves(checkers)
            if not moves:
                return best
        else:
            best = self._eval_cache.get(board.zobrist)
            if best is None:
                best = self._evaluate()
            if best >= beta or ply >= MAX_PLY:
                return best
            if best > alpha:
                alpha = best
            moves = self._tactical()
            if first:
                moves += self._quiet_checks()
            if not moves:
                return best
        piece_type_at = board.piece_type_at
        ep_square = board.ep_square
        scored = []
        for move in moves:
            to = move >> 6 & 63
            victim = piece_type_at(to) or (1 if to == ep_square and board.pawns >> (move & 63) & 1 else 0)
            gain = _PIECE_VALUE[victim] + (_PIECE_VALUE[move >> 12] - 100 if move >> 12 else 0)
            attacker = _PIECE_VALUE[piece_type_at(move & 63)]
            if not checkers:
                if victim and best + gain + 200 <= alpha:
                    continue  # delta pruning: even winning this piece cannot raise alpha
                if _PIECE_VALUE[victim] < attacker and see(board, move) < 0:
                    continue  # the exchange loses material (or a checking piece hangs)
            scored.append((gain * 10 - attacker // 100, move))
        scored.sort(reverse=True)
        for _, move in scored:
            board.push_code(move)
            try:
                score = -self._qsearch(-beta, -alpha, ply + 1, False)
            finally:
                board.pop()
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    if score >= beta:
                        break
        return best

    def _tactical(self) -> list[int]:
        """Captures and queen promotions; a cheap attack test skips generation when there are none."""
        board = self.board
        us = board.turn
        targets = board.occupied_co[not us] & ~board.kings
        promoting = board.pawns & board.occupied_co[us] & (chess.BB_RANK_7 if us else chess.BB_RANK_2)
        if board.ep_square is not None or promoting or targets & board.attacks_by(us):
            return board.moves(0, tactical=True)
        return []

    def _quiet_checks(self) -> list[int]:
        """Non-capturing, non-promoting moves that give a direct check (not in check ourselves)."""
        board = self.board
        us = board.turn
        own = board.occupied_co[us]
        pieces = own & ~board.kings
        their_king = (board.kings & board.occupied_co[not us]).bit_length() - 1
        if not pieces:
            return []
        occupied = board.occupied
        empty = ~occupied & chess.BB_ALL
        diag = chess.BB_DIAG_ATTACKS[their_king][chess.BB_DIAG_MASKS[their_king] & occupied] & empty
        straight = (chess.BB_FILE_ATTACKS[their_king][chess.BB_FILE_MASKS[their_king] & occupied]
                    | chess.BB_RANK_ATTACKS[their_king][chess.BB_RANK_MASKS[their_king] & occupied]) & empty
        knight = chess.BB_KNIGHT_ATTACKS[their_king] & empty
        pawn = chess.BB_PAWN_ATTACKS[not us][their_king] & empty & ~chess.BB_RANK_1 & ~chess.BB_RANK_8
        checks = []
        pinned = -1
        bits = pieces
        while bits:
            low = bits & -bits
            bits ^= low
            sq = low.bit_length() - 1
            if low & board.pawns:
                hits = pawn & (low << 8 if us else low >> 8)
            elif low & board.knights:
                hits = chess.BB_KNIGHT_ATTACKS[sq] & knight
            else:
                lines = (diag if low & (board.bishops | board.queens) else 0) | \
                        (straight if low & (board.rooks | board.queens) else 0)
                hits = board.attacks_mask(sq) & lines if lines else 0
            if hits:
                if pinned < 0:
                    our_king = (board.kings & own).bit_length() - 1
                    pinned = board._slider_blockers(our_king)
                if pinned & low:
                    hits &= chess.BB_RAYS[our_king][sq]
                while hits:
                    to = hits & -hits
                    hits ^= to
                    checks.append(sq | (to.bit_length() - 1) << 6)
        return checks
