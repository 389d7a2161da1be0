"""Static exchange evaluation: what a capture wins once every recapture on its square is made.

:func:`see` plays the exchange on the target square with the least valuable attacker
each time (x-rays through the pieces that have moved included, pins ignored), and
either side may stop capturing when it would lose by going on. The result is in
centipawns from the view of the side making the move; moves are the search's int
codes (:mod:`.searchboard`).
"""

from __future__ import annotations

import chess

#: Centipawn values of the exchange (index: python-chess piece type; the king cannot be taken).
SEE_VALUE = (0, 100, 320, 330, 500, 950, 20000)


def _least_valuable(board: chess.Board, attackers: int) -> tuple[int, int]:
    """(square, piece type) of the least valuable piece among ``attackers``."""
    for piece_type, pieces in ((1, board.pawns), (2, board.knights), (3, board.bishops), (4, board.rooks),
                               (5, board.queens), (6, board.kings)):
        mine = attackers & pieces
        if mine:
            return (mine & -mine).bit_length() - 1, piece_type
    raise ValueError("no attacker")


def see(board: chess.Board, code: int) -> int:
    """The material the side to move wins (centipawns) by the capture or promotion ``code``.

    A quiet non-promoting move scores what it loses if the piece is taken on its
    target square (0 when the square is safe), so ``see(...) < 0`` means "hangs".
    """
    frm, to, promotion = code & 63, code >> 6 & 63, code >> 12
    us = board.turn
    piece_type = board.piece_type_at(frm) or 0
    victim = board.piece_type_at(to) or 0
    occupied = board.occupied ^ (1 << frm)
    if piece_type == chess.PAWN and to == board.ep_square and not victim:
        victim = chess.PAWN
        occupied ^= 1 << (to - 8 if us else to + 8)
    gains = [SEE_VALUE[victim] + (SEE_VALUE[promotion] - SEE_VALUE[1] if promotion else 0)]
    on_square = SEE_VALUE[promotion or piece_type]  # what the next capture takes
    side = not us
    colours = board.occupied_co
    while True:
        attackers = (board.attackers_mask(chess.WHITE, to, occupied)
                     | board.attackers_mask(chess.BLACK, to, occupied)) & occupied
        ours = attackers & colours[side]
        if not ours:
            break
        square, attacker = _least_valuable(board, ours)
        if attacker == chess.KING and attackers & colours[not side]:
            break  # the king may not capture into a defended square
        gains.append(on_square - gains[-1])
        on_square = SEE_VALUE[attacker]
        occupied ^= 1 << square
        side = not side
    for i in range(len(gains) - 1, 0, -1):
        gains[i - 1] = -max(-gains[i - 1], gains[i])
    return gains[0]
