"""Move ordering: the static exchange evaluation (:func:`see`), the moves' scores and kinds
(:func:`order_moves`: the TT move, winning captures, promotions, killers, quiet moves by their histories,
losing captures), the next move to try (:func:`pick`), and the reward of a quiet move that caused a cutoff
(:func:`reward`: a killer, and its histories raised, those of the quiet moves tried before it lowered).
"""

from __future__ import annotations

import numpy as np

from chess_endgame.engine.core.bits import SQUARE, U64
from chess_endgame.engine.core.history import continuations, history_bonus, history_update, piece_to
from chess_endgame.engine.core.jit import njit
from chess_endgame.engine.core.position import EP, KING_T, PAWN_T, TURN, attackers

#: What a move is, for ordering, pruning and reductions (moves from KILLER on are quiet).
GOOD_CAPTURE, PROMOTION, BAD_CAPTURE, KILLER, QUIET = range(1, 6)
PIECE_VALUE = np.array([0, 100, 320, 330, 500, 950, 20000], dtype=np.int64)
_CAPTURE, _PROMOTION, _KILLER1, _KILLER2, _BAD_CAPTURE, _TT_MOVE = \
    1_000_000, 900_000, 800_000, 700_000, -1_000_000, 10_000_000
#: A quiet move's ordering score (its three histories' sum) stays between the bad captures' and the killers'.
QUIET_MAX, QUIET_MIN = 690_000, -990_000


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
def order_moves(t, ply, n, tt_move):
    """Score and classify the ``n`` moves at ``t.moves[ply]``: the TT move, captures that win material
    by SEE (MVV-LVA among them), promotions, killers, quiet moves by history, losing captures."""
    moves, scores, kinds = t.moves[ply], t.scores[ply], t.kinds[ply]
    mailbox = t.mailbox
    us = t.state[TURN]
    ep = t.state[EP]
    killer1, killer2 = t.killers[ply, 0], t.killers[ply, 1]
    back1, back2 = continuations(t, ply)
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
            target = piece_to(mailbox[frm], to)
            score = history[us, move & 4095]
            if back1 >= 0:
                score += history[us, back1 + target]
            if back2 >= 0:
                score += history[us, back2 + target]
            scores[i], kinds[i] = max(QUIET_MIN, min(score, QUIET_MAX)), QUIET


@njit
def pick(moves, scores, kinds, ply, i, n):
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


@njit
def reward(t, move, ply, depth, us, tried):
    """The quiet move at index ``tried`` of ``t.moves[ply]`` caused a cutoff: make it a killer, raise
    its history and lower that of the quiet moves ordered before it (searched, or pruned by late move
    or futility pruning: both ranked above a move that turned out better), each also after the moves one and
    two plies back (continuation history)."""
    if t.killers[ply, 0] != move:
        t.killers[ply, 1] = t.killers[ply, 0]
        t.killers[ply, 0] = move
    bonus = history_bonus(depth)
    back1, back2 = continuations(t, ply)
    history_update(t, us, move, bonus, back1, back2)
    for j in range(tried):
        if t.kinds[ply, j] >= KILLER:
            history_update(t, us, t.moves[ply, j], -bonus, back1, back2)
