"""What the search learns as it goes, in one array by side to move (:func:`new_history`): the quiet moves'
history by from-to square, the correction histories of the static evaluation and the continuation history,
each in its own range of columns. A history moves with "gravity" (:func:`history_add`); a correction is a
mean error in 1/CORRECTION_GRAIN centipawns, added to the static evaluation by :func:`corrected`.
"""

from __future__ import annotations

import numpy as np

from chess_endgame.engine.core.bits import U64, popcount
from chess_endgame.engine.core.jit import njit
from chess_endgame.engine.core.position import HALFMOVE, PAWN_T, TURN
from chess_endgame.engine.core.transposition import prefetch_word
from chess_endgame.engine.core.treestate import TB_BOUND

#: A quiet move's history (and each continuation history) stays within +-HISTORY_MAX (:func:`history_add`); a
#: cutoff moves it by :func:`history_bonus`, at most HISTORY_BONUS_MAX. At Stockfish's scale a deep cutoff moves an
#: entry by a tenth of its range, so the tables follow what the search finds now rather than sum a game's searches.
#: Before cc84a81 they held +-500,000 and a cutoff moved an entry by depth^2; this scale's SPRTs against that:
#: +8.7 +- 8.8 Elo in 1000 games (inconclusive at the cap), then +25.9 +- 16.0 (passed).
HISTORY_MAX = 16_384
HISTORY_BONUS_MAX = 1600
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
def prefetch_corrections(t):
    """Ask for the cache lines of the current position's three corrections (the side to move's), which
    :func:`corrected` reads once the node has its static evaluation."""
    row = t.history[t.state[TURN]]
    prefetch_word(row, _correction_slot(t.bb))
    prefetch_word(row, _non_pawn_slot(t.bb, 1))
    prefetch_word(row, _non_pawn_slot(t.bb, 0))


@njit
def corrected(t, static):
    """``static`` (the side to move's evaluation, cp) plus the correction history's mean error there, damped
    linearly as the 50-move counter runs (Stockfish's classical rule: by (100 - halfmoves) / 100), so that of two
    lines the one that makes progress (a capture or a pawn move) scores better."""
    value = static + _correction(t) // CORRECTION_GRAIN
    value = value * (100 - min(t.state[HALFMOVE], 100)) // 100
    return max(-TB_BOUND + 1, min(TB_BOUND - 1, value))


@njit
def learn_correction(t, static, best, depth):
    """Move the correction of the current position towards ``best - static`` (what a search of ``depth`` found
    against the static evaluation), weighing deeper searches more."""
    row = t.history[t.state[TURN]]
    target = max(-CORRECTION_MAX, min(CORRECTION_MAX, (best - static) * CORRECTION_GRAIN))
    weight = min(depth + 1, CORRECTION_WEIGHT)
    for slot in (_correction_slot(t.bb), _non_pawn_slot(t.bb, 1), _non_pawn_slot(t.bb, 0)):
        row[slot] = (row[slot] * (256 - weight) + target * weight) // 256


@njit
def piece_to(piece, to):
    """The continuation tables' index of a move: the moving piece's type (a mailbox value, colour bits
    ignored) and its target square, ``type * 64 + to`` below PIECE_TO."""
    return (piece & 7) * 64 + to


@njit
def continuations(t, ply):
    """The history array's columns of the continuation tables for a node at ``ply``: after the move one ply
    back and after the side's own move two plies back (-1 where there is none: before the root, a null move)."""
    back1 = back2 = -1
    if ply >= 1 and t.played[ply - 1] >= 0:
        back1 = CONTINUATION + t.played[ply - 1] * PIECE_TO
    if ply >= 2 and t.played[ply - 2] >= 0:
        back2 = CONTINUATION + CONTINUATION_SIZE + t.played[ply - 2] * PIECE_TO
    return back1, back2


@njit
def history_update(t, us, move, bonus, back1, back2):
    """Move a quiet move's history by ``bonus``, and its continuation histories where ``back1``/``back2``
    (see :func:`continuations`) are set."""
    history = t.history
    history_add(history, us, move & 4095, bonus)
    to = (move >> 6) & 63
    target = piece_to(t.mailbox[move & 63], to)
    if back1 >= 0:
        history_add(history, us, back1 + target, bonus)
    if back2 >= 0:
        history_add(history, us, back2 + target, bonus)


@njit
def history_bonus(depth):
    """How far a cutoff at ``depth`` plies moves a history entry: 16 d^2 + 32 d, at most HISTORY_BONUS_MAX."""
    return min(16 * depth * depth + 32 * depth, HISTORY_BONUS_MAX)


@njit
def history_add(history, us, index, bonus):
    """Move ``history[us, index]`` by ``bonus``, less the more it already leans that way ("gravity"):
    it stays within +-HISTORY_MAX and follows what the search finds now, across a game's searches."""
    value = history[us, index]
    history[us, index] = value + bonus - value * abs(bonus) // HISTORY_MAX


def new_history() -> np.ndarray:
    """Empty history tables, by side to move: the quiet moves' (by from-to square), the correction history's,
    the continuation history's and the non-pawn correction history's."""
    return np.zeros((2, NON_PAWN + (2 << CORRECTION_BITS)), dtype=np.int64)
