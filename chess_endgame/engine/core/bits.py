"""Bitboards (``np.uint64``, bit ``i`` = square ``i``, a1 = 0) and the attack tables built at import.

Sliding attacks are classical ray attacks: the ray from a square in a direction,
cut behind its first blocker (found with a de Bruijn bit scan). Every table is a
numpy array that the compiled functions read as a constant.
"""

from __future__ import annotations

import chess
import numpy as np

from chess_endgame.engine.core.jit import njit

U64 = np.uint64
ZERO = U64(0)
ONE = U64(1)
ALL = U64(0xFFFF_FFFF_FFFF_FFFF)
FILE_A = U64(chess.BB_FILE_A)
FILE_H = U64(chess.BB_FILE_H)
RANK_1_8 = U64(chess.BB_RANK_1 | chess.BB_RANK_8)
DARK_SQUARES = U64(chess.BB_DARK_SQUARES)
LIGHT_SQUARES = U64(chess.BB_LIGHT_SQUARES)

#: ``1 << square``.
SQUARE = np.array([1 << s for s in range(64)], dtype=np.uint64)
FILES = np.array(chess.BB_FILES, dtype=np.uint64)
RANKS = np.array(chess.BB_RANKS, dtype=np.uint64)

_DEBRUIJN = U64(0x03F79D71B4CB0A89)
_SCAN_FORWARD = np.zeros(64, dtype=np.int64)   # index: (isolated lowest bit * debruijn) >> 58
_SCAN_REVERSE = np.zeros(64, dtype=np.int64)   # index: (bits up to the highest, all set * debruijn) >> 58
for _i in range(64):
    _SCAN_FORWARD[((1 << _i) * 0x03F79D71B4CB0A89 & (2**64 - 1)) >> 58] = _i
    _SCAN_REVERSE[(((2 << _i) - 1) * 0x03F79D71B4CB0A89 & (2**64 - 1)) >> 58] = _i
assert sorted(_SCAN_FORWARD) == list(range(64)) and sorted(_SCAN_REVERSE) == list(range(64))

KNIGHT = np.array(chess.BB_KNIGHT_ATTACKS, dtype=np.uint64)
KING = np.array(chess.BB_KING_ATTACKS, dtype=np.uint64)
#: ``PAWN[color, square]``: squares a pawn of ``color`` on ``square`` attacks (0 = Black, 1 = White).
PAWN = np.array(chess.BB_PAWN_ATTACKS, dtype=np.uint64)
#: Squares strictly between two squares on a line (0 otherwise).
BETWEEN = np.array([[chess.between(a, b) for b in range(64)] for a in range(64)], dtype=np.uint64)
#: The whole line through two squares (0 when they share none).
LINE = np.array([[chess.ray(a, b) for b in range(64)] for a in range(64)], dtype=np.uint64)

#: Ray directions (file step, rank step): the first four go up the board (their first blocker is the
#: lowest bit), the last four go down (the highest bit).
_DIRECTIONS = ((0, 1), (1, 1), (1, 0), (-1, 1), (0, -1), (-1, -1), (-1, 0), (1, -1))
RAYS = np.zeros((8, 64), dtype=np.uint64)
for _d, (_df, _dr) in enumerate(_DIRECTIONS):
    for _s in range(64):
        _f, _r, _bb = _s & 7, _s >> 3, 0
        while 0 <= _f + _df < 8 and 0 <= _r + _dr < 8:
            _f, _r = _f + _df, _r + _dr
            _bb |= 1 << (_r * 8 + _f)
        RAYS[_d, _s] = _bb


@njit
def lsb(b):
    """Index of the lowest set bit of a non-empty bitboard."""
    return _SCAN_FORWARD[((b & (~b + ONE)) * _DEBRUIJN) >> U64(58)]


@njit
def msb(b):
    """Index of the highest set bit of a non-empty bitboard."""
    b |= b >> U64(1)
    b |= b >> U64(2)
    b |= b >> U64(4)
    b |= b >> U64(8)
    b |= b >> U64(16)
    b |= b >> U64(32)
    return _SCAN_REVERSE[(b * _DEBRUIJN) >> U64(58)]


@njit
def popcount(b):
    """Number of set bits."""
    b = b - ((b >> U64(1)) & U64(0x5555555555555555))
    b = (b & U64(0x3333333333333333)) + ((b >> U64(2)) & U64(0x3333333333333333))
    b = (b + (b >> U64(4))) & U64(0x0F0F0F0F0F0F0F0F)
    return np.int64((b * U64(0x0101010101010101)) >> U64(56))


@njit
def _ray(direction, square, occupied):
    attacks = RAYS[direction, square]
    blockers = attacks & occupied
    if blockers:
        blocker = lsb(blockers) if direction < 4 else msb(blockers)
        attacks ^= RAYS[direction, blocker]
    return attacks


@njit
def rook_attacks(square, occupied):
    """Squares a rook on ``square`` attacks (up to and including the first blocker each way)."""
    return _ray(0, square, occupied) | _ray(2, square, occupied) | _ray(4, square, occupied) | \
        _ray(6, square, occupied)


@njit
def bishop_attacks(square, occupied):
    """Squares a bishop on ``square`` attacks."""
    return _ray(1, square, occupied) | _ray(3, square, occupied) | _ray(5, square, occupied) | \
        _ray(7, square, occupied)


@njit
def pawn_attacks_all(pawns, color):
    """Every square the pawns of ``color`` attack (1 = White)."""
    if color:
        return ((pawns & ~FILE_A) << U64(7)) | ((pawns & ~FILE_H) << U64(9))
    return ((pawns & ~FILE_A) >> U64(9)) | ((pawns & ~FILE_H) >> U64(7))


@njit
def king_steps_all(squares):
    """Every square one king step from ``squares`` (the squares themselves not included unless reached)."""
    sideways = squares | ((squares & ~FILE_A) >> U64(1)) | ((squares & ~FILE_H) << U64(1))
    return (sideways | (sideways << U64(8)) | (sideways >> U64(8))) & ~squares

