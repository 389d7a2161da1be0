"""Legal moves on the board arrays of :mod:`.position` (moves are ints: ``from | to << 6 | promotion << 12``),
and perft, the count of the leaves a number of plies down that checks the generator against python-chess."""

from __future__ import annotations

from chess_endgame.engine.core.bits import (
    BETWEEN,
    KING,
    KNIGHT,
    LINE,
    PAWN,
    SQUARE,
    U64,
    ZERO,
    bishop_attacks,
    lsb,
    rook_attacks,
)
from chess_endgame.engine.core.jit import njit
from chess_endgame.engine.core.position import (
    BISHOP_T,
    CASTLING,
    EP,
    KING_T,
    KNIGHT_T,
    PAWN_T,
    PLY,
    QUEEN_T,
    ROOK_T,
    TURN,
    attackers,
    checkers,
    make,
    pinned,
    unmake,
)


@njit
def _add(out, n, frm, to):
    out[n] = frm | to << 6
    return n + 1


@njit
def _add_pawn(out, n, frm, to, tactical):
    if to >= 56 or to < 8:
        out[n] = frm | to << 6 | QUEEN_T << 12
        n += 1
        if not tactical:
            for promotion in (ROOK_T, BISHOP_T, KNIGHT_T):
                out[n] = frm | to << 6 | promotion << 12
                n += 1
        return n
    out[n] = frm | to << 6
    return n + 1


@njit
def generate(bb, mailbox, state, check, out, n, tactical):
    """Append the legal moves to ``out`` from index ``n``; return the new end. ``check`` are the
    checkers (:func:`checkers`). ``tactical``: only captures and queen promotions (and en passant),
    unless in check, where every evasion is generated."""
    check = U64(check)
    us = state[TURN]
    them = 1 - us
    own, their = bb[8 * us], bb[8 * them]
    occupied = own | their
    king = lsb(bb[8 * us + KING_T])
    if check:
        tactical = False
    target = their if tactical else ~own
    # King moves: the king leaves its square, so sliders see through it.
    without_king = occupied ^ SQUARE[king]
    bits = KING[king] & target
    while bits:
        to = lsb(bits)
        bits &= bits - U64(1)
        if not attackers(bb, to, them, without_king):
            n = _add(out, n, king, to)
    if check:
        if check & (check - U64(1)):
            return n  # double check: only the king moves
        target = BETWEEN[king, lsb(check)] | check
    elif not tactical and state[CASTLING]:
        n = _castling(bb, state, us, occupied, out, n)
    pins = pinned(bb, us, king, occupied)
    base = 8 * us
    bits = bb[base + KNIGHT_T] & ~pins
    while bits:
        frm = lsb(bits)
        bits &= bits - U64(1)
        moves = KNIGHT[frm] & target
        while moves:
            n = _add(out, n, frm, lsb(moves))
            moves &= moves - U64(1)
    queens = bb[base + QUEEN_T]
    for diagonal in (True, False):
        bits = (bb[base + BISHOP_T] if diagonal else bb[base + ROOK_T]) | queens
        while bits:
            frm = lsb(bits)
            bits &= bits - U64(1)
            moves = (bishop_attacks(frm, occupied) if diagonal else rook_attacks(frm, occupied)) & target
            if pins & SQUARE[frm]:
                moves &= LINE[king, frm]
            while moves:
                n = _add(out, n, frm, lsb(moves))
                moves &= moves - U64(1)
    bits = bb[base + PAWN_T]
    empty = ~occupied
    forward = 8 if us else -8
    start_rank = 1 if us else 6
    while bits:
        frm = lsb(bits)
        bits &= bits - U64(1)
        line = LINE[king, frm] if pins & SQUARE[frm] else ~ZERO
        moves = PAWN[us, frm] & their & target & line
        while moves:
            n = _add_pawn(out, n, frm, lsb(moves), tactical)
            moves &= moves - U64(1)
        to = frm + forward
        if empty & SQUARE[to]:
            # A push: every one, or in tactical mode a promotion (a quiet queen promotion is tactical too).
            if to >= 56 or to < 8 or not tactical:
                if SQUARE[to] & line and (tactical or SQUARE[to] & target):
                    n = _add_pawn(out, n, frm, to, tactical)
            if not tactical and frm >> 3 == start_rank and empty & SQUARE[to + forward] & target & line:
                n = _add(out, n, frm, to + forward)
    ep = state[EP]
    if ep >= 0:
        bits = PAWN[them, ep] & bb[base + PAWN_T]
        while bits:
            frm = lsb(bits)
            bits &= bits - U64(1)
            if _ep_legal(bb, us, king, frm, ep, occupied):
                n = _add(out, n, frm, ep)
    return n


@njit
def _ep_legal(bb, us, king, frm, ep, occupied):
    """An en passant capture leaves our king safe (checks through both vacated squares included)."""
    them = 8 * (1 - us)
    victim = SQUARE[ep - 8 if us else ep + 8]
    after = (occupied ^ SQUARE[frm] ^ victim) | SQUARE[ep]
    queens = bb[them + QUEEN_T]
    return not (bishop_attacks(king, after) & (bb[them + BISHOP_T] | queens)
                or rook_attacks(king, after) & (bb[them + ROOK_T] | queens)
                or KNIGHT[king] & bb[them + KNIGHT_T]
                or PAWN[us, king] & bb[them + PAWN_T] & ~victim)


@njit
def _castling(bb, state, us, occupied, out, n):
    rights = state[CASTLING] >> (0 if us else 2)
    king = 4 if us else 60
    them = 1 - us
    if rights & 1 and not occupied & (SQUARE[king + 1] | SQUARE[king + 2]) and \
            not attackers(bb, king + 1, them, occupied) and not attackers(bb, king + 2, them, occupied):
        n = _add(out, n, king, king + 2)
    if rights & 2 and not occupied & (SQUARE[king - 1] | SQUARE[king - 2] | SQUARE[king - 3]) and \
            not attackers(bb, king - 1, them, occupied) and not attackers(bb, king - 2, them, occupied):
        n = _add(out, n, king, king - 2)
    return n


@njit
def perft(bb, mailbox, state, keys, undo, depth, buffer):
    """Leaf nodes ``depth`` plies down (moves at the last ply counted, not made)."""
    start = state[PLY] * 256
    end = generate(bb, mailbox, state, checkers(bb, state), buffer, start, False)
    if depth <= 1:
        return end - start
    total = 0
    for i in range(start, end):
        move = buffer[i]
        make(bb, mailbox, state, keys, undo, move)
        total += perft(bb, mailbox, state, keys, undo, depth - 1, buffer)
        unmake(bb, mailbox, state, keys, undo, move)
    return total
