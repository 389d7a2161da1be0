"""The quiescence search at the tree's leaves: captures and queen promotions after a stand-pat score, and
quiet checks at its first ply (:func:`qsearch`); :func:`tactical` generates the captures and promotions."""

from __future__ import annotations

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
    rook_attacks,
)
from chess_endgame.engine.core.history import corrected, prefetch_corrections
from chess_endgame.engine.core.jit import njit
from chess_endgame.engine.core.movegen import generate
from chess_endgame.engine.core.ordering import PIECE_VALUE, see
from chess_endgame.engine.core.position import (
    BISHOP_T,
    EP,
    HALFMOVE,
    KING_T,
    KNIGHT_T,
    PAWN_T,
    PLY,
    QUEEN_T,
    ROOK_T,
    TURN,
    attacks_by,
    checkers,
    key_hint,
    make,
    pinned,
    unmake,
)
from chess_endgame.engine.core.transposition import EXACT, LOWER, NO_STATIC, UPPER, bound_of, depth_of, score_of
from chess_endgame.engine.core.transposition import probe as tt_probe
from chess_endgame.engine.core.treestate import (
    MATE,
    MAX_PLY,
    NO,
    STOPPED,
    count_node,
    from_tt,
    prefetch_child,
    static_eval_of,
    to_tt,
    tt_store,
)


@njit
def qsearch(t, alpha, beta, ply, first, check, known, check_fn):
    """Captures and queen promotions (and quiet checks at its first ply) after a stand-pat score;
    out of check, moves that lose material by SEE are skipped. A searched node stores its score and
    bound in the TT (depth 0 at the first ply, -1 deeper), unless the TT holds this position deeper."""
    if count_node(t, ply, check_fn):
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
        static = static_eval_of(t, entry)
        best = corrected(t, static)
        if best >= beta or ply >= MAX_PLY:
            return best
        n = tactical(t, moves)
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
    for i in range(kept):  # every child probes the TT first: their buckets come from memory together
        prefetch_child(t, key_hint(mailbox, state, t.keys, moves[i]))
    for i in range(kept):
        best_i = i
        for j in range(i + 1, kept):
            if scores[j] > scores[best_i]:
                best_i = j
        move = moves[best_i]
        moves[best_i], scores[best_i] = moves[i], scores[i]
        moves[i] = move
        make(bb, mailbox, state, t.keys, t.undo, move)
        prefetch_corrections(t)
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
def tactical(t, moves):
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
