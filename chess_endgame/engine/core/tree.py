"""The compiled search: PVS with a transposition table, selective pruning, quiescence and TB probes.

Scores are centipawns from the side to move: a mate in ``n`` plies scores ``MATE - n``, a
tablebase win found ``p`` plies from the root ``TB_WIN - p``. One :class:`Tree` holds every
array the search works in; :func:`root` searches the root moves once (one aspiration window of
one iteration) and :mod:`chess_endgame.engine.search` drives the iterations around it.

Two Python functions are called from compiled code, through ctypes: ``probe`` (a WDL probe of the
position in ``bb``/``state``: 0..4 for loss..win, -1 when no table covers it, -2 when the call
failed) and ``check`` (every
so many nodes: how many nodes until the next call, or -1 to stop). Everything between runs
without the GIL.
"""

from __future__ import annotations

import ctypes
import math
from collections import namedtuple
from collections.abc import Iterable

import numpy as np

from chess_endgame.engine.core.bits import KNIGHT as KNIGHT_ATTACKS
from chess_endgame.engine.core.bits import (
    LINE,
    PAWN,
    RANK_1_8,
    SQUARE,
    U64,
    ZERO,
    bishop_attacks,
    lsb,
    popcount,
    rook_attacks,
)
from chess_endgame.engine.core.features import SCRATCH_SIZE, evaluate
from chess_endgame.engine.core.jit import COMPILED, njit
from chess_endgame.engine.core.jit import cycles as _cycles
from chess_endgame.engine.core.masks import PASSED_MASK
from chess_endgame.engine.core.position import (
    BISHOP_T,
    CASTLING,
    EP,
    HALFMOVE,
    KING_T,
    KNIGHT_T,
    PAWN_T,
    PLY,
    QUEEN_T,
    ROOK_T,
    TURN,
    attackers,
    attacks_by,
    checkers,
    generate,
    is_repetition,
    make,
    make_null,
    pinned,
    unmake,
    unmake_null,
)
from chess_endgame.engine.core.tbprobe import LEVELS, MATERIAL_SHIFT, Tables, material_key, no_tables, probe_wdl
from chess_endgame.engine.core.transposition import (
    EXACT,
    LOWER,
    NO_STATIC,
    UPPER,
    bound_of,
    depth_of,
    move_of,
    score_of,
    static_of,
)
from chess_endgame.engine.core.transposition import probe as tt_probe
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
#: What a move is, for ordering, pruning and reductions (moves from KILLER on are quiet).
GOOD_CAPTURE, PROMOTION, BAD_CAPTURE, KILLER, QUIET = range(1, 6)
PIECE_VALUE = np.array([0, 100, 320, 330, 500, 950, 20000], dtype=np.int64)
_CAPTURE, _PROMOTION, _KILLER1, _KILLER2, _BAD_CAPTURE, _TT_MOVE = \
    1_000_000, 900_000, 800_000, 700_000, -1_000_000, 10_000_000

# Selective search. Each piece keeps its endgame guard (see search()); the figures are
# Stockfish's ideas at this engine's scale (centipawns, plies, move counts).
RFP_DEPTH, RFP_MARGIN = 6, 90            # reverse futility: static eval - margin x depth >= beta
NULL_VERIFY_DEPTH = 8                    # null move: verify with a real search from this depth on
FUTILITY_DEPTH = 3
FUTILITY_MARGIN = np.array([0, 150, 300, 450], dtype=np.int64)  # quiet moves skipped when eval + margin <= alpha
#: Late move pruning: at depth d, quiet moves searched, then no more: (3 + d^2) / 2, or 3 + d^2 when the position
#: is improving (by [improving, d]).
LMP_COUNT = np.array([[0] + [(3 + d * d) // (2 - i) for d in range(1, 8)] for i in (0, 1)], dtype=np.int64)
#: Late move reductions by depth and number of moves searched.
LMR = np.array([[0 if d < 3 or m < 2 else int(0.5 + math.log(d) * math.log(m) / 2.2) for m in range(MAX_MOVES)]
                for d in range(MAX_PLY + 1)], dtype=np.int64)
IIR_CUT_DEPTH = 8                        # internal iterative reduction: two plies in a cut node from this depth
CUT_NODE_LMR = 2                         # more reduction in a node expected to fail high (not for killers)
HISTORY_LMR = 1000                       # a ply less (more) reduction per this much history above (below) 0
HISTORY_MAX = 500_000
HISTORY_BONUS_MAX = 1600                 # a cutoff moves history by depth^2, at most this
PAWN_ENDING_EXTENSION = 2                # a capture that leaves only kings and pawns
#: Singular extensions: from this depth, a TT move whose stored lower bound no other move reaches within
#: SINGULAR_MARGIN x depth (searched to half the depth) is extended a ply.
SINGULAR_DEPTH, SINGULAR_MARGIN = 7, 2
#: ProbCut: from this depth, a capture whose search PROBCUT_REDUCTION plies shallower still beats beta by
#: PROBCUT_MARGIN centipawns makes a non-PV node fail high.
PROBCUT_DEPTH, PROBCUT_MARGIN, PROBCUT_REDUCTION = 5, 200, 4
#: Correction history: the searches' mean error of the static evaluation, learnt by side to move and a hash of the
#: pawns and the pieces' counts, is added to it. Kept in 1/CORRECTION_GRAIN centipawns in the history array's
#: columns from HISTORY_MOVES on; an update weighs min(depth + 1, CORRECTION_WEIGHT) in 256.
HISTORY_MOVES = 4096
CORRECTION_BITS = 14
CORRECTION_GRAIN = 64
CORRECTION_MAX = 200 * CORRECTION_GRAIN
CORRECTION_WEIGHT = 16
#: Continuation history: how well a quiet move (its piece and target square) followed the move one ply back, and
#: the side's own move two plies back (each by piece and target square), in the history array's columns from
#: CONTINUATION on: two tables of PIECE_TO x PIECE_TO, one for each distance back.
PIECE_TO = 8 * 64
CONTINUATION = HISTORY_MOVES + (1 << CORRECTION_BITS)
CONTINUATION_SIZE = PIECE_TO * PIECE_TO
#: Non-pawn correction history (Stockfish's): the same mean error by side to move and a hash of one side's
#: pieces and king where they stand, one table for each side's pieces, in the history array's columns from
#: NON_PAWN on. The correction added is the mean of the three tables, the pawn table's counted twice.
NON_PAWN = CONTINUATION + 2 * CONTINUATION_SIZE
#: A quiet move's ordering score (its three histories' sum) stays between the bad captures' and the killers'.
QUIET_MAX, QUIET_MIN = 690_000, -990_000

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
    from numba.experimental import structref

    from chess_endgame.engine.core.jit import StructProxy

    @structref.register
    class TreeType(types.StructRef):
        """numba's type of a :class:`Tree`: a reference to a struct of arrays."""

        def preprocess_fields(self, fields):
            return tuple((name, types.unliteral(typ)) for name, typ in fields)

    class Tree(StructProxy):
        """The arrays of a search, passed to compiled code by reference: a tuple of the same arrays would
        be copied, and each array reference-counted, at every call (about 100 ns, an eighth of a node).
        Python reads the same arrays through plain attributes (:func:`new_tree` sets them)."""

    structref.define_proxy(Tree, TreeType, list(TREE_FIELDS))

    @njit
    def _tree_struct(*arrays):
        return Tree(*arrays)
else:
    Tree = namedtuple("Tree", TREE_FIELDS)  # type: ignore[assignment,misc]

#: Slots of the evaluation cache (direct-mapped by Zobrist key, like the pawn table by pawns).
EVAL_CACHE_SIZE = 1 << 16

#: ctypes prototypes of the two Python callbacks.
PROBE_FUNCTION = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)
CHECK_FUNCTION = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)


# -- transposition table (entries: see .transposition) ----------------------------------------


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


# -- helpers --------------------------------------------------------------------------------


@njit
def _count(t, ply, check):
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
def _static(t):
    """The evaluation of the current position, from a small cache keyed by the Zobrist key."""
    key = t.keys[t.state[PLY]]
    slot = key & U64(EVAL_CACHE_SIZE - 1)
    if t.eval_keys[slot] == key and key:
        return np.int64(t.eval_values[slot])
    value = evaluate(t.bb, t.state[TURN], t.weights, t.features, t.pawn_keys, t.pawn_values)
    t.eval_keys[slot] = key
    t.eval_values[slot] = value
    return value


@njit
def _static_of(t, entry):
    """The static evaluation of the current position: the one its TT ``entry`` keeps, else computed."""
    if entry:
        static = static_of(entry)
        if static != NO_STATIC:
            return static
    return _static(t)


@njit
def _correction_slot(bb):
    """The history array's column of the position's correction: a hash of both sides' pawns and piece counts."""
    counts = U64(popcount(bb[8]) * 16 + popcount(bb[0]))
    h = bb[8 + PAWN_T] * U64(0x9E3779B97F4A7C15) ^ bb[PAWN_T] * U64(0xC2B2AE3D27D4EB4F) \
        ^ counts * U64(0x165667B19E3779F9)
    return HISTORY_MOVES + np.int64(h >> U64(64 - CORRECTION_BITS))


@njit
def _non_pawn_slot(bb, color):
    """The history array's column of the correction by the pieces and king of ``color`` (1 White) on their squares."""
    base = 8 * color
    h = bb[base + 2] * U64(0x9E3779B97F4A7C15) ^ bb[base + 3] * U64(0xC2B2AE3D27D4EB4F) \
        ^ bb[base + 4] * U64(0x165667B19E3779F9) ^ bb[base + 5] * U64(0xD6E8FEB86659FD93) \
        ^ bb[base + 6] * U64(0xFF51AFD7ED558CCD)
    return NON_PAWN + (np.int64(color) << CORRECTION_BITS) + np.int64(h >> U64(64 - CORRECTION_BITS))


@njit
def _correction(t):
    """The correction history's mean error of the static evaluation here (1/CORRECTION_GRAIN cp, side to move)."""
    row = t.history[t.state[TURN]]
    return (2 * row[_correction_slot(t.bb)] + row[_non_pawn_slot(t.bb, 1)] + row[_non_pawn_slot(t.bb, 0)]) // 4


@njit
def _corrected(t, static):
    """``static`` (the side to move's evaluation, cp) plus the correction history's mean error there, damped
    linearly as the 50-move counter runs (Stockfish's classical rule: by (100 - halfmoves) / 100), so that of two
    lines the one that makes progress (a capture or a pawn move) scores better."""
    value = static + _correction(t) // CORRECTION_GRAIN
    value = value * (100 - min(t.state[HALFMOVE], 100)) // 100
    return max(-TB_BOUND + 1, min(TB_BOUND - 1, value))


@njit
def _learn_correction(t, static, best, depth):
    """Move the correction of the current position towards ``best - static`` (what a search of ``depth`` found
    against the static evaluation), weighing deeper searches more."""
    row = t.history[t.state[TURN]]
    target = max(-CORRECTION_MAX, min(CORRECTION_MAX, (best - static) * CORRECTION_GRAIN))
    weight = min(depth + 1, CORRECTION_WEIGHT)
    for slot in (_correction_slot(t.bb), _non_pawn_slot(t.bb, 1), _non_pawn_slot(t.bb, 0)):
        row[slot] = (row[slot] * (256 - weight) + target * weight) // 256


@njit
def _probe_wdl(t, probe):
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
def _table_exists(t):
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


@njit
def see(t, move):
    """The material (centipawns) the side to move wins by ``move`` once every recapture on its target
    square is made, the least valuable attacker first (x-rays included, pins ignored); either side may
    stop capturing when going on would lose. A quiet move scores what it loses if taken."""
    bb, mailbox = t.bb, t.mailbox
    frm, to, promotion = move & 63, (move >> 6) & 63, move >> 12
    us = t.state[TURN]
    kind = mailbox[frm] & 7
    victim = mailbox[to] & 7
    occupied = (bb[0] | bb[8]) ^ SQUARE[frm]
    if kind == PAWN_T and to == t.state[EP] and not victim:
        victim = PAWN_T
        occupied ^= SQUARE[to - 8 if us else to + 8]
    gains = t.gains
    gains[0] = PIECE_VALUE[victim] + (PIECE_VALUE[promotion] - PIECE_VALUE[PAWN_T] if promotion else 0)
    n = 1
    on_square = PIECE_VALUE[promotion if promotion else kind]
    side = 1 - us
    while n < 34:
        both = attackers(bb, to, 0, occupied) | attackers(bb, to, 1, occupied)
        ours = both & bb[8 * side]
        if not ours:
            break
        attacker = 1
        while not ours & bb[8 * side + attacker]:
            attacker += 1
        if attacker == KING_T and both & bb[8 * (1 - side)]:
            break  # the king may not capture into a defended square
        gains[n] = on_square - gains[n - 1]
        n += 1
        on_square = PIECE_VALUE[attacker]
        mine = ours & bb[8 * side + attacker]
        occupied ^= mine & (~mine + U64(1))
        side = 1 - side
    for i in range(n - 1, 0, -1):
        gains[i - 1] = -max(-gains[i - 1], gains[i])
    return gains[0]


@njit
def _is_passer(t, square, color):
    """The pawn of ``color`` on ``square`` has no enemy pawn ahead on its own or adjacent files."""
    return not PASSED_MASK[color, square] & t.bb[8 * (1 - color) + PAWN_T]


# -- move ordering ---------------------------------------------------------------------------


@njit
def _order(t, ply, n, tt_move):
    """Score and classify the ``n`` moves at ``t.moves[ply]``: the TT move, captures that win material
    by SEE (MVV-LVA among them), promotions, killers, quiet moves by history, losing captures."""
    moves, scores, kinds = t.moves[ply], t.scores[ply], t.kinds[ply]
    mailbox = t.mailbox
    us = t.state[TURN]
    ep = t.state[EP]
    killer1, killer2 = t.killers[ply, 0], t.killers[ply, 1]
    back1, back2 = _continuations(t, ply)
    history = t.history
    for i in range(n):
        move = moves[i]
        frm, to = move & 63, (move >> 6) & 63
        victim = mailbox[to] & 7
        if move == tt_move:
            scores[i] = _TT_MOVE
            kinds[i] = GOOD_CAPTURE if victim or (to == ep and mailbox[frm] & 7 == PAWN_T) else \
                (PROMOTION if move >> 12 else QUIET)
        elif victim:
            attacker = mailbox[frm] & 7
            mvv_lva = 10 * PIECE_VALUE[victim] - PIECE_VALUE[attacker]
            if PIECE_VALUE[victim] >= PIECE_VALUE[attacker] or see(t, move) >= 0:
                scores[i], kinds[i] = _CAPTURE + mvv_lva, GOOD_CAPTURE
            else:
                scores[i], kinds[i] = _BAD_CAPTURE + mvv_lva, BAD_CAPTURE
        elif move >> 12:
            scores[i], kinds[i] = _PROMOTION + (move >> 12), PROMOTION
        elif to == ep and mailbox[frm] & 7 == PAWN_T:
            scores[i], kinds[i] = _CAPTURE + 900, GOOD_CAPTURE
        elif move == killer1:
            scores[i], kinds[i] = _KILLER1, KILLER
        elif move == killer2:
            scores[i], kinds[i] = _KILLER2, KILLER
        else:
            piece_to = _piece_to(mailbox[frm], to)
            score = history[us, move & 4095]
            if back1 >= 0:
                score += history[us, back1 + piece_to]
            if back2 >= 0:
                score += history[us, back2 + piece_to]
            scores[i], kinds[i] = max(QUIET_MIN, min(score, QUIET_MAX)), QUIET


@njit
def _piece_to(piece, to):
    """The continuation tables' index of a move: the moving piece's type (a mailbox value, colour bits
    ignored) and its target square, ``type * 64 + to`` below PIECE_TO."""
    return (piece & 7) * 64 + to


@njit
def _continuations(t, ply):
    """The history array's columns of the continuation tables for a node at ``ply``: after the move one ply
    back and after the side's own move two plies back (-1 where there is none: before the root, a null move)."""
    back1 = back2 = -1
    if ply >= 1 and t.played[ply - 1] >= 0:
        back1 = CONTINUATION + t.played[ply - 1] * PIECE_TO
    if ply >= 2 and t.played[ply - 2] >= 0:
        back2 = CONTINUATION + CONTINUATION_SIZE + t.played[ply - 2] * PIECE_TO
    return back1, back2


@njit
def _pick(moves, scores, kinds, ply, i, n):
    """Bring the best-scored of moves ``i..n-1`` at ``ply`` to index ``i`` (the first of equals stays
    first). The tables are indexed in place: a row view would cost a reference count per call."""
    best = i
    top = scores[ply, i]
    for j in range(i + 1, n):
        if scores[ply, j] > top:
            best, top = j, scores[ply, j]
    if best != i:
        moves[ply, i], moves[ply, best] = moves[ply, best], moves[ply, i]
        scores[ply, i], scores[ply, best] = top, scores[ply, i]
        kinds[ply, i], kinds[ply, best] = kinds[ply, best], kinds[ply, i]


# -- the tree --------------------------------------------------------------------------------


@njit
def search(t, depth, alpha, beta, ply, pv_node, cut_node, null_ok, check, known, probe, check_fn):
    """Negamax value of the position at ``ply`` (``check``: its checkers when ``known``), without the move
    ``t.excluded[ply]`` when that is set (the singular extension's search of the other moves).

    The flags ``pv_node``, ``cut_node``, ``null_ok`` and ``known`` are :data:`NO` or :data:`YES`. A cut node is a
    null-window node expected to fail high (a reduced late move's, and every other ply below it), as Stockfish's
    ``cutNode``: its late moves are reduced more."""
    if depth <= 0:
        t.pv_length[ply] = 0
        return qsearch(t, alpha, beta, ply, YES, check, known, check_fn)
    if _count(t, ply, check_fn):
        return 0
    bb, state = t.bb, t.state
    if pv_node:
        t.pv_length[ply] = 0
    if is_repetition(state, t.keys):
        return draw_score(t)
    if not known:
        check = checkers(bb, state)
    if state[HALFMOVE] >= 100 and (not check or generate(bb, t.mailbox, state, check, t.moves[ply], 0, False)):
        return draw_score(t)
    if not (bb[1] | bb[9] | bb[4] | bb[12] | bb[5] | bb[13]) and insufficient_material(bb):
        return draw_score(t)
    if ply >= MAX_PLY:
        return _static(t)
    # Mate distance pruning.
    alpha = max(alpha, -MATE + ply)
    beta = min(beta, MATE - ply - 1)
    if alpha >= beta:
        return alpha

    key = t.keys[state[PLY]]
    excluded = t.excluded[ply]
    entry = tt_probe(t.tt, key)
    tt_move = 0
    if entry:
        tt_move = move_of(entry)
        # No cutoff near the 50-move limit, where the stored line may no longer hold.
        if not pv_node and not excluded and depth_of(entry) >= depth and state[HALFMOVE] < 90:
            score = from_tt(score_of(entry), ply, state[HALFMOVE])
            bound = bound_of(entry)
            if bound == EXACT or (bound == LOWER and score >= beta) or (bound == UPPER and score <= alpha):
                return score

    max_value = INF
    best = -INF
    if t.counters[TB_PIECES] and state[HALFMOVE] == 0 and not state[CASTLING] and not excluded:
        pieces = popcount(bb[0] | bb[8])
        if pieces <= t.counters[TB_PIECES] and (depth >= t.counters[PROBE_DEPTH] or pieces < t.counters[TB_PIECES]):
            wdl = _probe_wdl(t, probe) if _table_exists(t) else -1
            if wdl >= 0:
                t.counters[TBHITS] += 1
                wdl -= 2
                rule50 = t.counters[RULE50] != 0
                if wdl == 2 or (wdl == 1 and not rule50):
                    value, bound = TB_WIN - ply, LOWER
                elif wdl == -2 or (wdl == -1 and not rule50):
                    value, bound = -TB_WIN + ply, UPPER
                else:
                    value, bound = draw_score(t) + wdl, EXACT  # a draw; a cursed win / blessed loss: +-1
                if bound == EXACT or (bound == LOWER and value >= beta) or (bound == UPPER and value <= alpha):
                    tt_store(t, key, min(depth + 6, MAX_PLY), bound, to_tt(value, ply), 0, NO_STATIC)
                    return value
                if pv_node:
                    if bound == LOWER:
                        best = value
                        alpha = max(alpha, value)
                    else:
                        max_value = value

    us = state[TURN]
    # Pieces other than king and pawns for the side to move: without them zugzwang is the rule.
    pieces_us = bb[8 * us] & ~(bb[8 * us + PAWN_T] | bb[8 * us + KING_T])
    static = -INF
    raw = NO_STATIC
    improving = 1
    if not check:
        raw = _static_of(t, entry)
        static = _corrected(t, raw)
        # Improving: the side to move stands better than two plies ago (or was in check then).
        if ply >= 2 and t.statics[ply - 2] > -INF:
            improving = 1 if static > t.statics[ply - 2] else 0
    t.statics[ply] = static
    if not check and not excluded:
        if not pv_node and abs(beta) < TB_BOUND:
            # Reverse futility pruning (static null move): far above beta near the leaves, sooner
            # when the position is improving.
            if depth <= RFP_DEPTH and pieces_us and static - RFP_MARGIN * (depth - improving) >= beta:
                return static
            # Null-move pruning: let the opponent move twice; if that still fails high, so does this.
            if null_ok and depth >= 3 and pieces_us and static >= beta:
                reduction = 3 + depth // 4 + min(2, (static - beta) // 200)
                t.played[ply] = -1
                make_null(bb, state, t.keys, t.undo)
                score = -search(t, depth - 1 - reduction, -beta, -beta + 1, ply + 1, NO, 1 - cut_node, NO, ZERO, NO,
                                probe, check_fn)
                unmake_null(state, t.undo)
                if t.counters[STOPPED]:
                    return 0
                if score >= beta:
                    if score >= TB_BOUND:
                        score = beta  # a mate or TB win found by passing proves nothing
                    if depth < NULL_VERIFY_DEPTH:
                        return score
                    # Deep nodes: verify with a reduced search without null moves (zugzwang).
                    verified = search(t, depth - reduction, beta - 1, beta, ply, NO, NO, NO, check, YES,
                                      probe, check_fn)
                    if t.counters[STOPPED]:
                        return 0
                    if verified >= beta:
                        return score
        # ProbCut: a capture winning enough by SEE that beats beta by a margin in a quiescence search and then
        # in a search a few plies shallower makes the node fail high; not when the TT says it will not.
        probcut_beta = beta + PROBCUT_MARGIN
        if not pv_node and depth >= PROBCUT_DEPTH and abs(beta) < TB_BOUND and not (
                entry and depth_of(entry) >= depth - 3 and bound_of(entry) != LOWER
                and from_tt(score_of(entry), ply, state[HALFMOVE]) < probcut_beta):
            captures = t.moves[ply]
            n = _tactical(t, captures)
            for i in range(n):
                move = captures[i]
                if see(t, move) < probcut_beta - static:
                    continue
                make(bb, t.mailbox, state, t.keys, t.undo, move)
                t.played[ply] = _piece_to(t.mailbox[(move >> 6) & 63], (move >> 6) & 63)
                value = -qsearch(t, -probcut_beta, -probcut_beta + 1, ply + 1, YES, ZERO, NO, check_fn)
                if value >= probcut_beta and not t.counters[STOPPED]:
                    value = -search(t, depth - PROBCUT_REDUCTION, -probcut_beta, -probcut_beta + 1, ply + 1, NO,
                                    1 - cut_node, YES, ZERO, NO, probe, check_fn)
                unmake(bb, t.mailbox, state, t.keys, t.undo, move)
                if t.counters[STOPPED]:
                    return 0
                if value >= probcut_beta:
                    tt_store(t, key, depth - PROBCUT_REDUCTION + 1, LOWER, to_tt(value, ply), move, raw)
                    return value
    # Internal iterative reduction: without a move from the TT, a deep node is searched shallower, a deep cut node
    # (expected to fail high, so cheaply) two plies shallower.
    if not tt_move and depth >= 4:
        depth -= 2 if cut_node and depth >= IIR_CUT_DEPTH else 1

    # Singular extension: the TT move, stored as at least tt_score, is extended when every other move,
    # searched to half the depth, stays below tt_score - margin; when even that bound is at or above beta,
    # several moves fail high (multi-cut: the node does); when only the TT move may, it is searched a ply less.
    singular = 0
    if depth >= SINGULAR_DEPTH and tt_move and not excluded and ply < 2 * t.counters[ROOT_DEPTH] \
            and bound_of(entry) != UPPER and depth_of(entry) >= depth - 3:
        tt_score = from_tt(score_of(entry), ply, state[HALFMOVE])
        if abs(tt_score) < TB_BOUND:
            singular_beta = tt_score - SINGULAR_MARGIN * depth
            t.excluded[ply] = tt_move
            value = search(t, (depth - 1) // 2, singular_beta - 1, singular_beta, ply, NO, cut_node, NO, check, YES,
                           probe, check_fn)
            t.excluded[ply] = 0
            if t.counters[STOPPED]:
                return 0
            if value < singular_beta:
                singular = 1
            elif singular_beta >= beta:
                return singular_beta
            elif tt_score >= beta:
                singular = -1

    original_alpha = alpha
    best_move = 0
    leaf = depth <= 1
    searched = 0
    quiets = 0
    futile = not pv_node and not check and depth <= FUTILITY_DEPTH and \
        static + FUTILITY_MARGIN[min(depth, FUTILITY_DEPTH)] <= alpha and abs(alpha) < TB_BOUND
    late = LMP_COUNT[improving, depth] if depth < LMP_COUNT.shape[1] and not pv_node and not check else MAX_MOVES
    lmr = LMR[min(depth, MAX_PLY)]
    n = generate(bb, t.mailbox, state, check, t.moves[ply], 0, False)
    _order(t, ply, n, tt_move)
    moves, scores, kinds = t.moves, t.scores, t.kinds
    for i in range(n):
        _pick(moves, scores, kinds, ply, i, n)
        move, kind = moves[ply, i], kinds[ply, i]
        if move == excluded:
            continue
        frm, to = move & 63, (move >> 6) & 63
        quiet = kind >= KILLER
        pawn_move = t.mailbox[frm] & 7 == PAWN_T
        if quiet and quiets >= late and best > -TB_BOUND and not pawn_move:
            continue  # late move pruning (pawn moves, passers among them, are kept)
        make(bb, t.mailbox, state, t.keys, t.undo, move)
        t.played[ply] = _piece_to(t.mailbox[to], to)
        child_check = checkers(bb, state)
        gives_check = child_check != ZERO
        passer = quiet and pawn_move and _is_passer(t, to, us)
        if quiet and futile and not gives_check and not passer and best > -TB_BOUND:
            unmake(bb, t.mailbox, state, t.keys, t.undo, move)
            continue  # futility pruning: even a good quiet move cannot reach alpha
        extension = _extension(t, move, ply, us)
        if gives_check and not leaf:
            extension += _check_extension(t, move)
        if singular and move == tt_move:
            extension = max(extension, 1) if singular > 0 else (extension if extension else -1)
        new_depth = depth - 1 + extension
        if leaf and not extension:
            t.pv_length[ply + 1] = 0
            score = -qsearch(t, -beta, -alpha, ply + 1, YES, child_check, YES, check_fn)
        elif searched == 0:
            score = -search(t, new_depth, -beta, -alpha, ply + 1, pv_node, NO if pv_node else 1 - cut_node, YES,
                            child_check, YES, probe, check_fn)
        else:
            reduction = 0
            if depth >= 3 and searched >= 2 and (quiet or kind == BAD_CAPTURE) and not extension and not passer:
                reduction = lmr[min(searched, MAX_MOVES - 1)]
                reduction += 1 - improving
                reduction -= pv_node + gives_check + (kind == KILLER)
                if cut_node and kind != KILLER:
                    reduction += CUT_NODE_LMR
                if kind == QUIET:
                    # Its three histories (the ordering score): a ply less for each HISTORY_LMR above 0, a ply
                    # more for each below, at most two either way.
                    stat = scores[ply, i]
                    reduction -= max(-2, min(2, stat // HISTORY_LMR if stat >= 0 else -(-stat // HISTORY_LMR)))
                reduction = max(0, min(reduction, new_depth - 1))
            # A reduced move's node is a cut node (Stockfish's); one searched to full depth is the opposite of this.
            score = -search(t, new_depth - reduction, -alpha - 1, -alpha, ply + 1, NO,
                            YES if reduction else 1 - cut_node, YES, child_check, YES, probe, check_fn)
            if reduction and score > alpha and not t.counters[STOPPED]:
                score = -search(t, new_depth, -alpha - 1, -alpha, ply + 1, NO, 1 - cut_node, YES, child_check, YES,
                                probe, check_fn)
            if pv_node and score > alpha and not t.counters[STOPPED]:
                # Also on a fail high: the PV must come from a PV search.
                score = -search(t, new_depth, -beta, -alpha, ply + 1, YES, NO, YES, child_check, YES, probe,
                                check_fn)
        unmake(bb, t.mailbox, state, t.keys, t.undo, move)
        if t.counters[STOPPED]:
            return 0
        searched += 1
        quiets += quiet
        if score > best:
            best = score
            best_move = move
            if score > alpha:
                alpha = score
                if pv_node:
                    _update_pv(t, ply, move)
                if score >= beta:
                    if quiet:
                        _reward(t, move, ply, depth, us, i)
                    break
    if not searched:
        if excluded:
            return alpha  # the excluded move was the only one: no other reaches the singular bound
        return -MATE + ply if check else draw_score(t)
    if best > max_value:
        best = max_value
    if not excluded:  # a search without one move is not this position's value
        bound = LOWER if best >= beta else (EXACT if best > original_alpha else UPPER)
        tt_store(t, key, depth, bound, to_tt(best, ply), best_move, raw)
        # The evaluation's error, where the bound says which way: not after a capture, whose gain it does not see.
        if not check and abs(best) < TB_BOUND and (not best_move or not t.mailbox[(best_move >> 6) & 63]) \
                and not (bound == LOWER and best <= static) and not (bound == UPPER and best >= static):
            _learn_correction(t, raw, best, depth)
    return best


@njit
def _update_pv(t, ply, move):
    t.pv[ply, 0] = move
    length = t.pv_length[ply + 1]
    t.pv[ply, 1:length + 1] = t.pv[ply + 1, :length]
    t.pv_length[ply] = length + 1


@njit
def _extension(t, move, ply, mover):
    """Plies added to ``move`` (already made): a passed pawn reaching the seventh rank, and a capture
    that trades the last piece into a pure pawn ending, which decides most endgames and is cheap to
    search. Safe checks are extended by :func:`_check_extension`."""
    if ply >= 2 * t.counters[ROOT_DEPTH]:
        return 0  # extensions never more than double the line
    bb = t.bb
    to = (move >> 6) & 63
    if not move >> 12 and t.mailbox[to] & 7 == PAWN_T:
        if (to >> 3 == 6 if mover else to >> 3 == 1) and _is_passer(t, to, mover):
            return 1
    pieces = bb[2] | bb[3] | bb[4] | bb[5] | bb[10] | bb[11] | bb[12] | bb[13]
    captured = t.undo[t.state[PLY] - 1, 0] & 7
    if not pieces and KNIGHT_T <= captured <= QUEEN_T:
        return PAWN_ENDING_EXTENSION  # the move took the last piece
    return 0


@njit
def _check_extension(t, move):
    """1 when ``move`` (already made) gives a check that does not lose material by SEE, else 0: a
    safe check is searched a ply deeper, a sacrificial one (mostly spite checks) is not."""
    bb, mailbox, state = t.bb, t.mailbox, t.state
    unmake(bb, mailbox, state, t.keys, t.undo, move)
    safe = see(t, move) >= 0
    make(bb, mailbox, state, t.keys, t.undo, move)
    return 1 if safe else 0


@njit
def _reward(t, move, ply, depth, us, tried):
    """The quiet move at index ``tried`` of ``t.moves[ply]`` caused a cutoff: make it a killer, raise
    its history and lower that of the quiet moves ordered before it (searched, or pruned by late move
    or futility pruning: both ranked above a move that turned out better), each also after the moves one and
    two plies back (continuation history)."""
    if t.killers[ply, 0] != move:
        t.killers[ply, 1] = t.killers[ply, 0]
        t.killers[ply, 0] = move
    bonus = min(depth * depth, HISTORY_BONUS_MAX)
    back1, back2 = _continuations(t, ply)
    _history_update(t, us, move, bonus, back1, back2)
    for j in range(tried):
        if t.kinds[ply, j] >= KILLER:
            _history_update(t, us, t.moves[ply, j], -bonus, back1, back2)


@njit
def _history_update(t, us, move, bonus, back1, back2):
    """Move a quiet move's history by ``bonus``, and its continuation histories where ``back1``/``back2``
    (see :func:`_continuations`) are set."""
    history = t.history
    history_add(history, us, move & 4095, bonus)
    to = (move >> 6) & 63
    piece_to = _piece_to(t.mailbox[move & 63], to)
    if back1 >= 0:
        history_add(history, us, back1 + piece_to, bonus)
    if back2 >= 0:
        history_add(history, us, back2 + piece_to, bonus)


@njit
def history_add(history, us, index, bonus):
    """Move ``history[us, index]`` by ``bonus``, less the more it already leans that way ("gravity"):
    it stays within +-HISTORY_MAX and follows what the search finds now, across a game's searches."""
    value = history[us, index]
    history[us, index] = value + bonus - value * abs(bonus) // HISTORY_MAX


@njit
def qsearch(t, alpha, beta, ply, first, check, known, check_fn):
    """Captures and queen promotions (and quiet checks at its first ply) after a stand-pat score;
    out of check, moves that lose material by SEE are skipped. A searched node stores its score and
    bound in the TT (depth 0 at the first ply, -1 deeper), unless the TT holds this position deeper."""
    if _count(t, ply, check_fn):
        return 0
    bb, state, mailbox = t.bb, t.state, t.mailbox
    # A stored result of the main search (depth >= 1) or of quiescence (0 at its first ply, with quiet
    # checks; -1 deeper) at least as deep as this one: its bound may settle the node.
    key = t.keys[state[PLY]]
    entry = tt_probe(t.tt, key)
    if entry and state[HALFMOVE] < 90 and (not first or depth_of(entry) >= 0):
        score = from_tt(score_of(entry), ply, state[HALFMOVE])
        bound = bound_of(entry)
        if bound == EXACT or (bound == LOWER and score >= beta) or (bound == UPPER and score <= alpha):
            return score
    if not known:
        check = checkers(bb, state)
    moves, scores = t.moves[ply], t.scores[ply]
    static = NO_STATIC
    if check:
        best = -MATE + ply
        n = generate(bb, mailbox, state, check, moves, 0, False)
        if not n:
            return best
    else:
        static = _static_of(t, entry)
        best = _corrected(t, static)
        if best >= beta or ply >= MAX_PLY:
            return best
        n = _tactical(t, moves)
        if first:
            n = _quiet_checks(t, moves, n)
        if not n:
            return best
    original_alpha = alpha
    alpha = max(alpha, best)
    ep = state[EP]
    kept = 0
    for i in range(n):
        move = moves[i]
        frm, to, promotion = move & 63, (move >> 6) & 63, move >> 12
        victim = mailbox[to] & 7
        if not victim and to == ep and mailbox[frm] & 7 == PAWN_T:
            victim = PAWN_T
        gain = PIECE_VALUE[victim] + (PIECE_VALUE[promotion] - 100 if promotion else 0)
        attacker = PIECE_VALUE[mailbox[frm] & 7]
        if not check:
            if victim and best + gain + 200 <= alpha:
                continue  # delta pruning: even winning this piece cannot raise alpha
            if PIECE_VALUE[victim] < attacker and see(t, move) < 0:
                continue  # the exchange loses material (or a checking piece hangs)
        moves[kept] = move
        scores[kept] = gain * 10 - attacker // 100
        kept += 1
    for i in range(kept):
        best_i = i
        for j in range(i + 1, kept):
            if scores[j] > scores[best_i]:
                best_i = j
        move = moves[best_i]
        moves[best_i], scores[best_i] = moves[i], scores[i]
        moves[i] = move
        make(bb, mailbox, state, t.keys, t.undo, move)
        score = -qsearch(t, -beta, -alpha, ply + 1, NO, ZERO, NO, check_fn)
        unmake(bb, mailbox, state, t.keys, t.undo, move)
        if t.counters[STOPPED]:
            return 0
        if score > best:
            best = score
            if score > alpha:
                alpha = score
                if score >= beta:
                    break
    bound = LOWER if best >= beta else (EXACT if best > original_alpha else UPPER)
    depth = 0 if first else -1
    if not entry or depth_of(entry) <= depth:  # a deeper entry of this position stays
        tt_store(t, key, depth, bound, to_tt(best, ply), 0, static)
    return best


@njit
def _tactical(t, moves):
    """Captures and queen promotions; a cheap attack test skips generation when there are none."""
    bb, state = t.bb, t.state
    us = state[TURN]
    targets = bb[8 * (1 - us)] & ~bb[8 * (1 - us) + KING_T]
    promoting = bb[8 * us + PAWN_T] & (U64(0x00FF000000000000) if us else U64(0x000000000000FF00))
    if state[EP] >= 0 or promoting or targets & attacks_by(bb, us, bb[0] | bb[8]):
        return generate(bb, t.mailbox, state, ZERO, moves, 0, True)
    return 0


@njit
def _quiet_checks(t, moves, n):
    """Append non-capturing, non-promoting moves that give a direct check (not in check ourselves)."""
    bb = t.bb
    us = t.state[TURN]
    own = bb[8 * us]
    pieces = own & ~bb[8 * us + KING_T]
    if not pieces:
        return n
    their_king = lsb(bb[8 * (1 - us) + KING_T])
    occupied = bb[0] | bb[8]
    empty = ~occupied
    diagonal = bishop_attacks(their_king, occupied) & empty
    straight = rook_attacks(their_king, occupied) & empty
    knight_squares = KNIGHT_ATTACKS[their_king] & empty
    pawn_squares = PAWN[1 - us, their_king] & empty & ~RANK_1_8
    our_king = lsb(bb[8 * us + KING_T])
    pins = pinned(bb, us, our_king, occupied)
    bits = pieces
    while bits:
        frm = lsb(bits)
        bits &= bits - U64(1)
        kind = t.mailbox[frm] & 7
        if kind == PAWN_T:
            hits = pawn_squares & (SQUARE[frm] << U64(8) if us else SQUARE[frm] >> U64(8))
        elif kind == KNIGHT_T:
            hits = KNIGHT_ATTACKS[frm] & knight_squares
        else:
            hits = ZERO
            if kind == BISHOP_T or kind == QUEEN_T:
                hits |= bishop_attacks(frm, occupied) & diagonal
            if kind == ROOK_T or kind == QUEEN_T:
                hits |= rook_attacks(frm, occupied) & straight
        if hits and pins & SQUARE[frm]:
            hits &= LINE[our_king, frm]
        while hits:
            moves[n] = frm | lsb(hits) << 6
            n += 1
            hits &= hits - U64(1)
    return n


# -- the root --------------------------------------------------------------------------------


@njit
def root(t, depth, alpha, beta, root_moves, root_scores, count, probe, check_fn):
    """Search ``count`` root moves to ``depth`` in the window (alpha, beta); moves are tried in the
    order of ``root_scores`` (the last iteration's, stable), which get this iteration's scores
    (``-INF`` for a move that failed low). The PV is left in ``t.pv[0]``; the move an unfinished
    iteration proved best so far in ``PARTIAL_MOVE``/``PARTIAL_SCORE``/``partial_pv``."""
    # Stable insertion sort, best first.
    for i in range(1, count):
        move, score = root_moves[i], root_scores[i]
        j = i - 1
        while j >= 0 and root_scores[j] < score:
            root_moves[j + 1], root_scores[j + 1] = root_moves[j], root_scores[j]
            j -= 1
        root_moves[j + 1], root_scores[j + 1] = move, score
    bb, state = t.bb, t.state
    t.counters[ROOT_DEPTH] = depth
    t.pv_length[0] = 0
    t.statics[0] = -INF  # the root has no static evaluation: its grandchildren count as improving
    best = -INF
    line_one = t.counters[MULTIPV_LINE] == 0
    for i in range(count):
        move = root_moves[i]
        make(bb, t.mailbox, state, t.keys, t.undo, move)
        to = (move >> 6) & 63
        t.played[0] = _piece_to(t.mailbox[to], to)
        check = checkers(bb, state)
        child = depth - 1 + (_check_extension(t, move) if check and depth > 1 else 0)
        if i == 0:
            score = -search(t, child, -beta, -alpha, FIRST_PLY, YES, NO, YES, check, YES, probe, check_fn)
        else:
            score = -search(t, child, -alpha - 1, -alpha, FIRST_PLY, NO, YES, YES, check, YES, probe, check_fn)
            if score > alpha and not t.counters[STOPPED]:
                score = -search(t, child, -beta, -alpha, FIRST_PLY, YES, NO, YES, check, YES, probe, check_fn)
        unmake(bb, t.mailbox, state, t.keys, t.undo, move)
        if t.counters[STOPPED]:
            break
        root_scores[i] = score if score > alpha or i == 0 else -INF
        if score > best:
            best = score
            if score > alpha:
                alpha = score
                _update_pv(t, 0, move)
                if line_one and i > 0:
                    _keep_partial(t, score)
                if score >= beta:
                    break
        if i == 0 and line_one:
            if t.pv_length[0] == 0:
                t.pv[0, 0] = move
                t.pv_length[0] = 1
            _keep_partial(t, score)
    return best


@njit
def _keep_partial(t, score):
    length = t.pv_length[0]
    t.partial_pv[:length] = t.pv[0, :length]
    t.partial_pv[length] = 0
    t.counters[PARTIAL_MOVE] = t.pv[0, 0]
    t.counters[PARTIAL_SCORE] = score


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


def new_history() -> np.ndarray:
    """Empty history tables, by side to move: the quiet moves' (by from-to square), the correction history's,
    the continuation history's and the non-pawn correction history's."""
    return np.zeros((2, NON_PAWN + (2 << CORRECTION_BITS)), dtype=np.int64)


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
