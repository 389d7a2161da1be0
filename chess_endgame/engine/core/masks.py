"""Square tables the evaluation reads: distances, centrality, and the masks of pawn structure and king safety.

Masks indexed ``[color, square]`` use 0 = Black, 1 = White (the board arrays' order).
"""

from __future__ import annotations

import chess
import numpy as np

#: 0 on the edge .. 3 in the four centre squares (Chebyshev).
CENTRALITY = np.array([3 - max(abs(2 * f - 7), abs(2 * r - 7)) // 2 for r in range(8) for f in range(8)],
                      dtype=np.int64)
#: Manhattan distance from the centre, 0..6.
CENTER_MANHATTAN = np.array([max(3 - f, f - 4) + max(3 - r, r - 4) for r in range(8) for f in range(8)],
                            dtype=np.int64)
DISTANCE = np.array([[chess.square_distance(a, b) for b in range(64)] for a in range(64)], dtype=np.int64)
MANHATTAN = np.array([[chess.square_manhattan_distance(a, b) for b in range(64)] for a in range(64)],
                     dtype=np.int64)
_ADJACENT = [(chess.BB_FILES[f - 1] if f > 0 else 0) | (chess.BB_FILES[f + 1] if f < 7 else 0) for f in range(8)]
#: Files next to a file.
ADJACENT_FILES = np.array(_ADJACENT, dtype=np.uint64)


def _forward_ranks(rank: int, color: int) -> int:
    mask = 0
    for r in (range(rank + 1, 8) if color else range(rank)):
        mask |= chess.BB_RANKS[r]
    return mask


def _shelter(king: int, color: int) -> int:
    ahead = 0
    for dr in (1, 2):
        rr = (king >> 3) + dr if color else (king >> 3) - dr
        if 0 <= rr < 8:
            ahead |= chess.BB_RANKS[rr]
    return (chess.BB_FILES[king & 7] | _ADJACENT[king & 7]) & ahead


def _storm(king: int, color: int) -> int:
    """Where enemy pawns storm a king of ``color``: its and the next files, up to three ranks in front."""
    ahead = 0
    for dr in (1, 2, 3):
        rr = (king >> 3) + dr if color else (king >> 3) - dr
        if 0 <= rr < 8:
            ahead |= chess.BB_RANKS[rr]
    return (chess.BB_FILES[king & 7] | _ADJACENT[king & 7]) & ahead


def _table(mask) -> np.ndarray:
    return np.array([[mask(sq, c) for sq in range(64)] for c in (0, 1)], dtype=np.uint64)


#: Squares a pawn of ``color`` on ``sq`` must pass (own and adjacent files ahead): empty of enemy pawns = passed.
PASSED_MASK = _table(lambda sq, c: (chess.BB_FILES[sq & 7] | _ADJACENT[sq & 7]) & _forward_ranks(sq >> 3, c))
#: Squares ahead of a pawn on its own file.
FRONT_SPAN = _table(lambda sq, c: chess.BB_FILES[sq & 7] & _forward_ranks(sq >> 3, c))
#: Squares ahead on the adjacent files: where enemy pawns that could ever attack a piece of ``color`` on ``sq``
#: stand (none there: an outpost that no pawn can chase).
ATTACK_SPAN = _table(lambda sq, c: _ADJACENT[sq & 7] & _forward_ranks(sq >> 3, c))
#: Adjacent-file squares level with or behind a pawn (where its supporters stand).
SUPPORT_SPAN = _table(lambda sq, c: _ADJACENT[sq & 7] & ~_forward_ranks(sq >> 3, c) & chess.BB_ALL)
#: The two ranks in front of a king of ``color`` on its own and the adjacent files.
SHELTER = _table(lambda sq, c: _shelter(sq, c))
#: The three ranks in front of a king of ``color`` on its own and the adjacent files.
STORM = _table(lambda sq, c: _storm(sq, c))
#: The king's square and the squares next to it.
KING_ZONE = np.array([chess.BB_KING_ATTACKS[sq] | chess.BB_SQUARES[sq] for sq in range(64)], dtype=np.uint64)
#: The enemy half of the board, seen from ``color`` (ranks 5-8 for White), where outposts count.
ENEMY_HALF = np.array([0xFFFF_FFFF << 32, 0xFFFF_FFFF], dtype=np.uint64)[::-1].copy()


def _key_squares(sq: int, color: int) -> int:
    """Where the own king wins a lone pawn's race against the defending king (the key squares): two
    ranks ahead of a pawn on its second to fourth rank, one and two ranks ahead from the fifth on, on
    the pawn's and the next files; for a rook pawn, the next file's squares on the last two ranks."""
    file, rank = sq & 7, sq >> 3
    relative = rank if color else 7 - rank
    if relative in (0, 7):
        return 0
    forward = 1 if color else -1
    if file in (0, 7):
        neighbour = 1 if file == 0 else 6
        return chess.BB_SQUARES[chess.square(neighbour, 6 if color else 1)] | \
            chess.BB_SQUARES[chess.square(neighbour, 7 if color else 0)]
    steps = (2,) if relative <= 3 else (1, 2)
    mask = 0
    for step in steps:
        r = rank + forward * step
        if 0 <= r < 8:
            for f in (file - 1, file, file + 1):
                mask |= chess.BB_SQUARES[chess.square(f, r)]
    return mask


#: The key squares of a pawn of ``color`` on ``sq`` (:func:`_key_squares`).
KEY_SQUARES = _table(lambda sq, c: _key_squares(sq, c))


def _psqt_index(sq: int, color: int) -> int:
    """A square seen from ``color``'s side, files e-h mirrored onto d-a: 0..31 (rank * 4 + file)."""
    rank = sq >> 3 if color else 7 - (sq >> 3)
    file = sq & 7
    return rank * 4 + (file if file < 4 else 7 - file)


#: The piece-square table slot (0..31) of a piece of ``color`` on ``sq``.
PSQT_INDEX = np.array([[_psqt_index(sq, c) for sq in range(64)] for c in (0, 1)], dtype=np.int64)
