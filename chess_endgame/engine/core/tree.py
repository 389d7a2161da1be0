"""The compiled search: PVS with a transposition table, selective pruning, extensions and TB probes.

:func:`root` searches the root moves once (one aspiration window of one iteration) and
:mod:`chess_endgame.engine.search` drives the iterations around it; :func:`search` is the tree below. They
work in the arrays of a :class:`~.treestate.Tree`; move ordering is :mod:`.ordering`, what the search learns
:mod:`.history`, the leaves :mod:`.quiescence`.
"""

from __future__ import annotations

import math

import numpy as np

from chess_endgame.engine.core.bits import ZERO, popcount
from chess_endgame.engine.core.history import corrected, learn_correction, piece_to, prefetch_corrections
from chess_endgame.engine.core.jit import njit
from chess_endgame.engine.core.masks import PASSED_MASK
from chess_endgame.engine.core.movegen import generate
from chess_endgame.engine.core.ordering import BAD_CAPTURE, KILLER, QUIET, order_moves, pick, reward, see
from chess_endgame.engine.core.position import (
    CASTLING,
    HALFMOVE,
    KING_T,
    KNIGHT_T,
    PAWN_T,
    PLY,
    QUEEN_T,
    TURN,
    checkers,
    is_repetition,
    make,
    make_null,
    unmake,
    unmake_null,
)
from chess_endgame.engine.core.quiescence import qsearch, tactical
from chess_endgame.engine.core.transposition import (
    EXACT,
    LOWER,
    NO_STATIC,
    UPPER,
    bound_of,
    depth_of,
    move_of,
    score_of,
)
from chess_endgame.engine.core.transposition import probe as tt_probe
from chess_endgame.engine.core.treestate import (
    FIRST_PLY,
    INF,
    MATE,
    MAX_MOVES,
    MAX_PLY,
    MULTIPV_LINE,
    NO,
    PARTIAL_MOVE,
    PARTIAL_SCORE,
    PROBE_DEPTH,
    ROOT_DEPTH,
    RULE50,
    STOPPED,
    TB_BOUND,
    TB_PIECES,
    TB_WIN,
    TBHITS,
    YES,
    count_node,
    draw_score,
    from_tt,
    has_table,
    insufficient_material,
    prefetch_child,
    static_eval,
    static_eval_of,
    tb_wdl,
    to_tt,
    tt_store,
)

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
HISTORY_LMR = 5000                       # a ply less (more) reduction per this much history above (below) 0
PAWN_ENDING_EXTENSION = 2                # a capture that leaves only kings and pawns
#: Singular extensions: from this depth, a TT move whose stored lower bound no other move reaches within
#: SINGULAR_MARGIN x depth (searched to half the depth) is extended a ply.
SINGULAR_DEPTH, SINGULAR_MARGIN = 7, 2
#: ProbCut: from this depth, a capture whose search PROBCUT_REDUCTION plies shallower still beats beta by
#: PROBCUT_MARGIN centipawns makes a non-PV node fail high.
PROBCUT_DEPTH, PROBCUT_MARGIN, PROBCUT_REDUCTION = 5, 200, 4


@njit
def _is_passer(t, square, color):
    """The pawn of ``color`` on ``square`` has no enemy pawn ahead on its own or adjacent files."""
    return not PASSED_MASK[color, square] & t.bb[8 * (1 - color) + PAWN_T]


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
    if count_node(t, ply, check_fn):
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
        return static_eval(t)
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
            wdl = tb_wdl(t, probe) if has_table(t) else -1
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
        raw = static_eval_of(t, entry)
        static = corrected(t, raw)
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
                prefetch_child(t, t.keys[state[PLY]])
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
            n = tactical(t, captures)
            for i in range(n):
                move = captures[i]
                if see(t, move) < probcut_beta - static:
                    continue
                make(bb, t.mailbox, state, t.keys, t.undo, move)
                prefetch_child(t, t.keys[state[PLY]])
                t.played[ply] = piece_to(t.mailbox[(move >> 6) & 63], (move >> 6) & 63)
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
    order_moves(t, ply, n, tt_move)
    moves, scores, kinds = t.moves, t.scores, t.kinds
    for i in range(n):
        pick(moves, scores, kinds, ply, i, n)
        move, kind = moves[ply, i], kinds[ply, i]
        if move == excluded:
            continue
        frm, to = move & 63, (move >> 6) & 63
        quiet = kind >= KILLER
        pawn_move = t.mailbox[frm] & 7 == PAWN_T
        if quiet and quiets >= late and best > -TB_BOUND and not pawn_move:
            continue  # late move pruning (pawn moves, passers among them, are kept)
        make(bb, t.mailbox, state, t.keys, t.undo, move)
        prefetch_child(t, t.keys[state[PLY]])  # the child probes it: let memory work while this node goes on
        prefetch_corrections(t)
        t.played[ply] = piece_to(t.mailbox[to], to)
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
                        reward(t, move, ply, depth, us, i)
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
            learn_correction(t, raw, best, depth)
    return best


@njit
def _update_pv(t, ply, move):
    pv = t.pv
    pv[ply, 0] = move
    length = t.pv_length[ply + 1]
    for i in range(length):  # a loop: the slices' copy would allocate a buffer against overlap
        pv[ply, i + 1] = pv[ply + 1, i]
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


@njit(refcounted=True)
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
        to = (move >> 6) & 63
        # A quiet piece move (no capture, promotion or pawn move), for the late move reductions below.
        quiet = not t.mailbox[to] and not move >> 12 and t.mailbox[move & 63] & 7 != PAWN_T
        make(bb, t.mailbox, state, t.keys, t.undo, move)
        t.played[0] = piece_to(t.mailbox[to], to)
        check = checkers(bb, state)
        child = depth - 1 + (_check_extension(t, move) if check and depth > 1 else 0)
        if i == 0:
            score = -search(t, child, -beta, -alpha, FIRST_PLY, YES, NO, YES, check, YES, probe, check_fn)
        else:
            # Late move reductions at the root too (Stockfish's): from the third move, a quiet piece move that gives
            # no check is searched shallower by the table's reduction less the PV node's ply, and again to full
            # depth when it beats alpha.
            reduction = 0
            if quiet and check == ZERO and depth >= 3 and i >= 2:
                reduction = max(0, min(LMR[min(depth, MAX_PLY), min(i, MAX_MOVES - 1)] - 1, child - 1))
            score = -search(t, child - reduction, -alpha - 1, -alpha, FIRST_PLY, NO, YES, YES, check, YES, probe,
                            check_fn)
            if reduction and score > alpha and not t.counters[STOPPED]:
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
    partial, pv = t.partial_pv, t.pv
    for i in range(length):
        partial[i] = pv[0, i]
    partial[length] = 0
    t.counters[PARTIAL_MOVE] = t.pv[0, 0]
    t.counters[PARTIAL_SCORE] = score
