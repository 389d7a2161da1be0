"""Bitboards (``np.uint64``, bit ``i`` = square ``i``, a1 = 0) and the attack tables built at import.

Sliding attacks are classical ray attacks: the ray from a square in a direction, cut behind its first
blocker, which a bit beyond the ray's far end lets the bit scan find without a branch. Bits are found and
counted by the processor's instructions (LLVM's ``cttz``, ``ctlz`` and ``ctpop``; plain Python's ``int``
methods without numba). Every table is a numpy array that the compiled functions read as a constant.
"""

from __future__ import annotations

import chess
import numpy as np

from chess_endgame.engine.core.jit import COMPILED, njit

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

#: Squares a bishop (``BISHOP_LINES``) or rook (``ROOK_LINES``) on a square attacks on an empty board: a slider off
#: these lines cannot attack the square, whatever stands between.
BISHOP_LINES = RAYS[1] | RAYS[3] | RAYS[5] | RAYS[7]
ROOK_LINES = RAYS[0] | RAYS[2] | RAYS[4] | RAYS[6]


if COMPILED:
    from llvmlite import ir
    from numba.core import types
    from numba.extending import intrinsic

    @intrinsic
    def _count_trailing_zeros(typingctx, b):
        """LLVM's ``cttz`` (one ``tzcnt`` or ``bsf``); undefined for 0."""
        def codegen(context, builder, signature, args):
            return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))

        return types.int64(types.uint64), codegen

    @intrinsic
    def _count_leading_zeros(typingctx, b):
        """LLVM's ``ctlz`` (one ``lzcnt`` or ``bsr``); undefined for 0."""
        def codegen(context, builder, signature, args):
            return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 1))

        return types.int64(types.uint64), codegen

    @intrinsic
    def _count_ones(typingctx, b):
        """LLVM's ``ctpop`` (one ``popcnt`` where the processor has it)."""
        def codegen(context, builder, signature, args):
            return builder.ctpop(args[0])

        return types.int64(types.uint64), codegen

    @njit
    def lsb(b):
        """Index of the lowest set bit of a non-empty bitboard."""
        return _count_trailing_zeros(b)

    @njit
    def msb(b):
        """Index of the highest set bit of a non-empty bitboard."""
        return 63 - _count_leading_zeros(b)

    @njit
    def popcount(b):
        """Number of set bits."""
        return _count_ones(b)
else:
    def lsb(b):
        """Index of the lowest set bit of a non-empty bitboard."""
        b = int(b)
        return np.int64((b & -b).bit_length() - 1)

    def msb(b):
        """Index of the highest set bit of a non-empty bitboard."""
        return np.int64(int(b).bit_length() - 1)

    def popcount(b):
        """Number of set bits."""
        return np.int64(int(b).bit_count())


#: A bit beyond every ray that goes up the board (no such ray leaves h8) and one below every ray that goes down
#: (none leaves a1): :func:`_up` and :func:`_down` find a ray's first blocker without a branch.
_TOP = U64(1 << 63)
_BOTTOM = ONE


@njit
def _up(direction, square, occupied):
    """The ray up the board from ``square`` cut behind its first blocker (the lowest bit)."""
    attacks = RAYS[direction, square]
    return attacks ^ RAYS[direction, lsb((attacks & occupied) | _TOP)]


@njit
def _down(direction, square, occupied):
    """The ray down the board from ``square`` cut behind its first blocker (the highest bit)."""
    attacks = RAYS[direction, square]
    return attacks ^ RAYS[direction, msb((attacks & occupied) | _BOTTOM)]


@njit
def rook_attacks(square, occupied):
    """Squares a rook on ``square`` attacks (up to and including the first blocker each way)."""
    return _up(0, square, occupied) | _up(2, square, occupied) | _down(4, square, occupied) | \
        _down(6, square, occupied)


@njit
def bishop_attacks(square, occupied):
    """Squares a bishop on ``square`` attacks."""
    return _up(1, square, occupied) | _up(3, square, occupied) | _down(5, square, occupied) | \
        _down(7, square, occupied)


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

