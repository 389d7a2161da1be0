"""The state of a compiled search: one :class:`Tree` holds every array the search works in (the board, the
TT, the move lists, the histories, the caches and the counters), and here is what every node does with it.

Scores are centipawns from the side to move: a mate in ``n`` plies scores ``MATE - n``, a tablebase win
found ``p`` plies from the root ``TB_WIN - p``; :func:`to_tt` and :func:`from_tt` store them relative to the
node. Also here: counting nodes, a draw's score, the static evaluation (cached) and the tablebases' WDL
(cached).

Two Python functions are called from compiled code, through ctypes (:data:`PROBE_FUNCTION`,
:data:`CHECK_FUNCTION`): ``probe`` (a WDL probe of the position in ``bb``/``state``: 0..4 for loss..win, -1
when no table covers it, -2 when the call failed) and ``check`` (every so many nodes: how many nodes until
the next call, or -1 to stop). Everything between runs without the GIL.
"""

from __future__ import annotations

import ctypes
from collections import namedtuple
from collections.abc import Iterable

import numpy as np

from chess_endgame.engine.core.bits import U64, popcount
from chess_endgame.engine.core.features import SCRATCH_SIZE, evaluate
from chess_endgame.engine.core.jit import COMPILED, njit
from chess_endgame.engine.core.jit import cycles as _cycles
from chess_endgame.engine.core.position import BISHOP_T, KING_T, KNIGHT_T, PAWN_T, PLY, QUEEN_T, ROOK_T, TURN
from chess_endgame.engine.core.tbprobe import LEVELS, MATERIAL_SHIFT, material_key, probe_wdl
from chess_endgame.engine.core.tbtables import Tables, no_tables
from chess_endgame.engine.core.transposition import NO_STATIC, prefetch, prefetch_word, static_of
from chess_endgame.engine.core.transposition import store as _store

MATE = 32000
MATE_BOUND = MATE - 1000     # |score| above this is a mate
TB_WIN = 20000
TB_BOUND = TB_WIN - 1000     # |score| above this (and below MATE_BOUND) is a tablebase result
INF = MATE + 1
MAX_PLY = 128
MAX_MOVES = 256

#: The flags passed to search() and qsearch(), the root's first ply and a tablebase probe's first level:
#: numpy ints, which numba types as int64, where a literal 0 or 1 would make it compile (and fail to cache)
#: one version of the recursive functions per literal.
NO, YES, FIRST_PLY, FIRST_LEVEL = np.int64(0), np.int64(1), np.int64(1), np.int64(0)

#: ``counters`` indices: nodes, next check, stopped, seldepth, tbhits, root depth, table pieces,
#: probe depth, rule50, TT age, the unfinished iteration's proved move and score, multipv line, the score of
#: a draw for White to move (:func:`draw_score`), and the compiled tablebase probes made (the WDL cache
#: did not answer) with the processor cycles they took.
NODES, NEXT_CHECK, STOPPED, SELDEPTH, TBHITS, ROOT_DEPTH, TB_PIECES, PROBE_DEPTH, RULE50, AGE, \
    PARTIAL_MOVE, PARTIAL_SCORE, MULTIPV_LINE, DRAW_WHITE, TB_CALLS, TB_CYCLES = range(16)

#: The arrays of a search (see :func:`new_tree`), in the order :class:`Tree` takes them.
TREE_FIELDS = ("bb", "mailbox", "state", "keys", "undo", "counters", "tt", "moves", "scores",
               "kinds", "killers", "history", "pv", "pv_length", "partial_pv", "weights", "features", "pawn_keys",
               "pawn_values", "eval_keys", "eval_values", "gains", "wdl_keys", "wdl_values", "tb_materials",
               "statics", "excluded", "played", "tables", "tb_moves", "tb_err")

if COMPILED:
    from numba.core import types

    from chess_endgame.engine.core import structs
    from chess_endgame.engine.core.jit import StructProxy

    @structs.register
    class TreeType(types.StructRef):
        """numba's type of a :class:`Tree`: a reference to a struct of arrays."""

        def preprocess_fields(self, fields):
            return tuple((name, types.unliteral(typ)) for name, typ in fields)

    class Tree(StructProxy):
        """The arrays of a search, passed to compiled code by reference: a tuple of the same arrays would
        be copied, and each array reference-counted, at every call (about 100 ns, an eighth of a node).
        Python reads the same arrays through plain attributes (:func:`new_tree` sets them)."""

    structs.define_proxy(Tree, TreeType, list(TREE_FIELDS))

    @njit(refcounted=True)
    def _tree_struct(*arrays):
        return Tree(*arrays)
else:
    Tree = namedtuple("Tree", TREE_FIELDS)  # type: ignore[assignment,misc]

#: Slots of the evaluation cache (direct-mapped by Zobrist key, like the pawn table by pawns).
EVAL_CACHE_SIZE = 1 << 16

#: ctypes prototypes of the two Python callbacks.
PROBE_FUNCTION = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)
CHECK_FUNCTION = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)


@njit
def tt_store(t, key, depth, bound, score, move, static):
    """Store a node's result in the TT under this search's age (``static``: its static evaluation, or
    :data:`NO_STATIC`)."""
    _store(t.tt, key, t.counters[AGE], depth, bound, score, move, static)


@njit
def to_tt(score, ply):
    """Mate and TB scores are stored relative to the node, not the root."""
    if score >= TB_BOUND:
        return score + ply
    if score <= -TB_BOUND:
        return score - ply
    return score


@njit
def from_tt(score, ply, clock):
    """A stored score at ``ply`` with halfmove clock ``clock`` (Stockfish's ``value_from_tt``).

    A mate, or a tablebase result (reached after a zeroing move), that lies more plies away than
    the 50-move rule leaves (99 - clock) may not be reachable from here: it is downgraded to the
    largest score of the class below, never passed on as found.
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


@njit
def count_node(t, ply, check):
    """Count a node; call ``check`` when it is due. True when the search must stop."""
    counters = t.counters
    counters[NODES] += 1
    if ply > counters[SELDEPTH]:
        counters[SELDEPTH] = ply
    if counters[NODES] >= counters[NEXT_CHECK]:
        wait = check(counters[NODES])
        if wait < 0:
            counters[STOPPED] = 1
        else:
            counters[NEXT_CHECK] = counters[NODES] + max(wait, 1)
    return counters[STOPPED] != 0


@njit
def draw_score(t):
    """A draw's score for the side to move: ``counters[DRAW_WHITE]`` with White to move, its negative
    with Black (0 without contempt; with contempt ``c`` the root's side scores a draw ``-c``)."""
    return t.counters[DRAW_WHITE] if t.state[TURN] else -t.counters[DRAW_WHITE]


@njit
def insufficient_material(bb):
    """Neither side can mate (python-chess's ``is_insufficient_material``)."""
    for color in (0, 1):
        base = 8 * color
        if bb[base + PAWN_T] | bb[base + ROOK_T] | bb[base + QUEEN_T]:
            return False
        if bb[base + KNIGHT_T]:
            other = 8 - base
            if popcount(bb[base]) > 2 or bb[other] & ~bb[other + KING_T] & ~bb[other + QUEEN_T]:
                return False
        elif bb[base + BISHOP_T]:
            bishops = bb[3] | bb[11]
            same_colour = not bishops & U64(0xAA55AA55AA55AA55) or not bishops & U64(0x55AA55AA55AA55AA)
            if not same_colour or bb[1] | bb[9] or bb[2] | bb[10]:
                return False
    return True


@njit
def _eval_slot(key):
    """The evaluation cache's slot for the Zobrist ``key``."""
    return key & U64(EVAL_CACHE_SIZE - 1)


@njit
def static_eval(t):
    """The evaluation of the current position, from a small cache keyed by the Zobrist key."""
    key = t.keys[t.state[PLY]]
    slot = _eval_slot(key)
    if t.eval_keys[slot] == key and key:
        return np.int64(t.eval_values[slot])
    value = evaluate(t.bb, t.state[TURN], t.weights, t.features, t.pawn_keys, t.pawn_values)
    t.eval_keys[slot] = key
    t.eval_values[slot] = value
    return value


@njit
def prefetch_child(t, key):
    """Ask for what the node of ``key`` reads first, its TT bucket and its evaluation cache slot, so that
    both loads overlap with the work left at the parent before the child probes them."""
    prefetch(t.tt, key)
    slot = _eval_slot(key)
    prefetch_word(t.eval_keys, slot)
    prefetch_word(t.eval_values, slot)


@njit
def static_eval_of(t, entry):
    """The static evaluation of the current position: the one its TT ``entry`` keeps, else computed."""
    if entry:
        static = static_of(entry)
        if static != NO_STATIC:
            return static
    return static_eval(t)


@njit
def tb_wdl(t, probe):
    """WDL + 2 of the current position (-1: not in the tables), from the cache, the compiled prober or,
    without compiled tables (python-chess, a remote server) or when they fail, the ``probe`` callback.

    The cache (direct-mapped by Zobrist key, kept across searches) spares the probe, and a call into
    Python costs about a hundred times a node. The threads of a search share it without a lock: a slot
    keeps the key XOR (value + 2), so a slot that another thread was writing half-way reads as a miss
    (both words of a slot share the key's low bits, which the value never touches)."""
    key = t.keys[t.state[PLY]]
    slot = key & U64(t.wdl_keys.shape[0] - 1)
    cached = t.wdl_values[slot]
    if key and t.wdl_keys[slot] ^ U64(cached + 2) == key:
        return cached
    wdl = -2
    if t.tables.info.shape[0]:
        err = t.tb_err
        err[0] = 0
        started = _cycles()
        value = probe_wdl(t.tables, t.bb, t.mailbox, t.state, t.keys, t.undo, t.tb_moves, FIRST_LEVEL, err)
        t.counters[TB_CYCLES] += np.int64(_cycles() - started)
        t.counters[TB_CALLS] += 1
        if not err[0]:
            wdl = value + 2
    if wdl == -2:
        wdl = probe(t.bb.ctypes.data, t.state.ctypes.data)
    if wdl < -1:
        return -1  # the call failed (the search is stopping): nothing to keep
    t.wdl_values[slot] = wdl
    t.wdl_keys[slot] = key ^ U64(wdl + 2)
    return wdl


@njit
def has_table(t):
    """Whether the prober has a WDL table for the current material (always true when it did not say
    which tables it has). A probe of missing material costs python-chess a search of the captures
    first, each probed, before the missing table is found out: many calls' worth."""
    materials = t.tb_materials
    size = materials.shape[0]
    if not size:
        return True
    key = material_key(t.bb)
    slot = key & U64(size - 1)
    while materials[slot]:
        if materials[slot] == key:
            return True
        slot = (slot + U64(1)) & U64(size - 1)
    return False


def new_wdl_cache(size: int = 1 << 16, tables: Iterable[str] | None = None) -> tuple[np.ndarray, ...]:
    """An empty cache of tablebase WDL results (keys, WDL + 2 or -1), ``size`` a power of two, and the
    materials of the WDL ``tables`` the prober has (names such as ``KRPvKR``; None: ask the prober
    about every material), as an open-addressing set of :func:`material_key` values."""
    materials = np.zeros(0, dtype=np.uint64)
    if tables is not None:
        names = list(tables)
        materials = np.zeros(max(64, 1 << (4 * len(names)).bit_length()), dtype=np.uint64)
        for name in names:
            white, black = name.upper().split("V")
            for sides in ((white, black), (black, white)):  # a table holds both colourings
                key = 0
                for color, pieces in zip((1, 0), sides, strict=True):  # bb[8] is White's, bb[0] Black's
                    for kind, letter in enumerate("PNBRQ", start=PAWN_T):
                        key |= pieces.count(letter) << int(MATERIAL_SHIFT[color, kind])
                slot = key & (materials.shape[0] - 1)
                while materials[slot] and materials[slot] != key:
                    slot = (slot + 1) & (materials.shape[0] - 1)
                materials[slot] = key
    return np.zeros(size, dtype=np.uint64), np.zeros(size, dtype=np.int64), materials


def new_tree(position_arrays: tuple, tt: np.ndarray, history: np.ndarray,
             weights: np.ndarray, pawn_table: tuple, wdl_cache: tuple, tables: Tables | None = None) -> Tree:
    """A :class:`Tree` over a position's arrays, a TT, history tables (:func:`new_history`), the evaluation's
    weights and pawn table, a WDL cache (:func:`new_wdl_cache`) and the compiled prober's tables (None: none, the tree
    asks its probe callback)."""
    bb, mailbox, state, keys, undo = position_arrays
    arrays = dict(bb=bb, mailbox=mailbox, state=state, keys=keys, undo=undo,
                  counters=np.zeros(16, dtype=np.int64), tt=tt,
                  moves=np.zeros((MAX_PLY + 2, MAX_MOVES), dtype=np.int32),
                  scores=np.zeros((MAX_PLY + 2, MAX_MOVES), dtype=np.int64),
                  kinds=np.zeros((MAX_PLY + 2, MAX_MOVES), dtype=np.int8),
                  killers=np.zeros((MAX_PLY + 2, 2), dtype=np.int32), history=history,
                  pv=np.zeros((MAX_PLY + 2, MAX_PLY + 2), dtype=np.int32),
                  pv_length=np.zeros(MAX_PLY + 2, dtype=np.int64),
                  partial_pv=np.zeros(MAX_PLY + 2, dtype=np.int32),
                  weights=weights, features=np.zeros(SCRATCH_SIZE, dtype=np.float64),
                  pawn_keys=pawn_table[0], pawn_values=pawn_table[1],
                  eval_keys=np.zeros(EVAL_CACHE_SIZE, dtype=np.uint64),
                  eval_values=np.zeros(EVAL_CACHE_SIZE, dtype=np.int64), gains=np.zeros(34, dtype=np.int64),
                  wdl_keys=wdl_cache[0], wdl_values=wdl_cache[1], tb_materials=wdl_cache[2],
                  statics=np.zeros(MAX_PLY + 2, dtype=np.int64),
                  excluded=np.zeros(MAX_PLY + 2, dtype=np.int32), played=np.zeros(MAX_PLY + 2, dtype=np.int32),
                  tables=tables if tables is not None else no_tables(),
                  tb_moves=np.zeros((LEVELS, MAX_MOVES), dtype=np.int32), tb_err=np.zeros(2, dtype=np.int64))
    if not COMPILED:
        return Tree(**arrays)
    tree = _tree_struct(*(arrays[name] for name in TREE_FIELDS))
    tree.__dict__.update(arrays)
    return tree
