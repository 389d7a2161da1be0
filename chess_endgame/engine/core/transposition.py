"""The transposition table's entries, compiled: two a bucket, each one 64-bit word of data, lockless.

The table is a ``uint64[buckets, 4]`` array: a bucket holds two entries, each as two words, the key XOR the
data, then the data (Hyatt and Mann's lockless hashing). Threads of one search read and write it without a
lock: a reader copies both words and takes the entry only when they give back its key, so an entry that
another thread was writing half-way reads as a miss, never as another position's result.

The data word packs, from bit 0: the move (15 bits, ``from | to << 6 | promotion << 12``), the score and the
static evaluation (16 bits each, centipawns from the side to move, offset by 2**15), the depth (8 bits, plies
plus :data:`DEPTH_OFFSET`: quiescence stores 0 and -1), the bound (2 bits) and the search's age (7 bits). A
word of 0 is an empty entry (every stored depth is at least 1 after the offset).
"""

from __future__ import annotations

import numpy as np

from chess_endgame.engine.core.bits import U64, ZERO
from chess_endgame.engine.core.jit import COMPILED, njit

#: Words a bucket: two entries of (key ^ data, data).
BUCKET_WORDS = 4
#: Stored depth = depth + DEPTH_OFFSET, so that quiescence's 0 and -1 fit an unsigned field above 0.
DEPTH_OFFSET = 2
#: The static evaluation of a node in check (it has none), as stored.
NO_STATIC = -32768
EXACT, LOWER, UPPER = 0, 1, 2
_SCORE_SHIFT, _STATIC_SHIFT, _DEPTH_SHIFT, _BOUND_SHIFT, AGE_SHIFT = 15, 31, 47, 55, 57
AGE_MASK = 127
_BIAS = 32768


@njit
def pack(depth, bound, score, move, static, age):
    """The data word of an entry (``score`` and ``static`` within +-32767, ``depth`` within -2..253)."""
    return (U64(move & 0x7FFF)
            | U64((score + _BIAS) & 0xFFFF) << U64(_SCORE_SHIFT)
            | U64((static + _BIAS) & 0xFFFF) << U64(_STATIC_SHIFT)
            | U64((depth + DEPTH_OFFSET) & 0xFF) << U64(_DEPTH_SHIFT)
            | U64(bound & 3) << U64(_BOUND_SHIFT)
            | U64(age & AGE_MASK) << U64(AGE_SHIFT))


@njit
def move_of(data):
    return np.int64(data & U64(0x7FFF))


@njit
def score_of(data):
    return np.int64((data >> U64(_SCORE_SHIFT)) & U64(0xFFFF)) - _BIAS


@njit
def static_of(data):
    return np.int64((data >> U64(_STATIC_SHIFT)) & U64(0xFFFF)) - _BIAS


@njit
def depth_of(data):
    return np.int64((data >> U64(_DEPTH_SHIFT)) & U64(0xFF)) - DEPTH_OFFSET


@njit
def bound_of(data):
    return np.int64((data >> U64(_BOUND_SHIFT)) & U64(3))


@njit
def age_of(data):
    return np.int64(data >> U64(AGE_SHIFT))


if COMPILED:
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    @intrinsic
    def _prefetch_address(typingctx, address):
        """LLVM's ``prefetch`` of the cache line at ``address`` (a read, kept in every cache level)."""
        def codegen(context, builder, signature, args):
            pointer_type = ir.IntType(8).as_pointer()
            i32 = ir.IntType(32)
            function = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [pointer_type, i32, i32, i32]), "llvm.prefetch.p0")
            builder.call(function, [builder.inttoptr(args[0], pointer_type), ir.Constant(i32, 0),
                                    ir.Constant(i32, 3), ir.Constant(i32, 1)])
            return context.get_dummy_value()

        return types.none(types.intp), codegen

    @njit
    def prefetch(table, key):
        """Ask the processor to bring ``key``'s bucket into the cache, so that its probe a little later (the
        child node's, after a move is made) does not wait for memory."""
        row = np.intp(key & U64(table.shape[0] - 1))
        _prefetch_address(table.ctypes.data + row * np.intp(BUCKET_WORDS * 8))

    @njit
    def prefetch_word(array, index):
        """Ask the processor to bring the cache line of ``array[index]`` (a one-dimensional array of 8-byte
        words) into the cache."""
        _prefetch_address(array.ctypes.data + np.intp(index) * np.intp(8))
else:
    def prefetch(table, key):
        """A no-op without numba (plain Python has no use for a cache hint)."""

    def prefetch_word(array, index):
        """A no-op without numba."""


@njit
def probe(table, key):
    """The data word stored for ``key`` (a copy, consistent with the key), or 0."""
    index = key & U64(table.shape[0] - 1)
    for i in range(0, BUCKET_WORDS, 2):
        data = table[index, i + 1]
        if data and table[index, i] ^ data == key:
            return data
    return ZERO


@njit
def store(table, key, age, depth, bound, score, move, static):
    """Store an entry for ``key``. Its own older entry is replaced unless that one is deeper by more than 3
    plies of the same search and the new one is not exact; a store without a move (or without a static
    evaluation: :data:`NO_STATIC`) keeps the old one's. Else the entry worth less goes: an empty one, or the
    shallower, each search of age counting 8 plies."""
    index = key & U64(table.shape[0] - 1)
    victim = 0
    worth = 1 << 30
    for i in range(0, BUCKET_WORDS, 2):
        data = table[index, i + 1]
        if data and table[index, i] ^ data == key:
            if bound != EXACT and age_of(data) == age & AGE_MASK and depth_of(data) > depth + 3:
                return
            if not move:
                move = move_of(data)
            if static == NO_STATIC:
                static = static_of(data)
            victim = i
            break
        value = -(1 << 20) if not data else depth_of(data) - 8 * ((age - age_of(data)) & AGE_MASK)
        if value < worth:
            victim, worth = i, value
    data = pack(depth, bound, score, move, static, age)
    table[index, victim] = key ^ data
    table[index, victim + 1] = data


def new_table(buckets: int) -> np.ndarray:
    """An empty table of ``buckets`` buckets (a power of two)."""
    return np.zeros((buckets, BUCKET_WORDS), dtype=np.uint64)
