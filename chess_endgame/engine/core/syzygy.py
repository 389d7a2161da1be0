"""The Syzygy table format, compiled: header pieces, position indices and block decompression.

A Syzygy file (``.rtbw`` WDL, ``.rtbz`` DTZ) stores, for one material, a value per position index in
Huffman-coded blocks. This module turns a position (the squares of the table's pieces, in the table's order)
into that index, and an index into its stored value; :mod:`.tbprobe` builds the full probe (captures, en
passant, the DTZ rules) on top, and :mod:`chess_endgame.tablebase.compiled` reads the headers into the arrays
this module works on. Written from the format as Ronald de Man's generator defines it (python-chess's
``chess/syzygy.py`` and Fathom describe it too).

Every read from a file is checked against the file's length: a damaged file gives :data:`CORRUPT`, never a
read outside the map.

Squares: a1 = 0 .. h8 = 63. Piece codes in a header: the python-chess piece type (1 pawn .. 6 king) plus 8
for the table's second side.
"""

from __future__ import annotations

import math

import numpy as np

from chess_endgame.engine.core.bits import U64
from chess_endgame.engine.core.jit import njit

#: What a decompression answers for a file that does not hold what its header promised.
CORRUPT = -(1 << 40)

# -- fixed tables of the format: how the first pieces' squares are folded by symmetry -----------------------
#: Which of the 10 squares of the a1-d1-d4 triangle each square folds to (the pivot piece's symmetry class).
TRIANGLE = np.array([
    6, 0, 1, 2, 2, 1, 0, 6, 0, 7, 3, 4, 4, 3, 7, 0, 1, 3, 8, 5, 5, 8, 3, 1, 2, 4, 5, 9, 9, 5, 4, 2,
    2, 4, 5, 9, 9, 5, 4, 2, 1, 3, 8, 5, 5, 8, 3, 1, 0, 7, 3, 4, 4, 3, 7, 0, 6, 0, 1, 2, 2, 1, 0, 6,
], dtype=np.int64)
#: Index of a square below the a1-h8 diagonal, rank by rank (28 of them), the same for its mirror above it,
#: and 28 + rank for the diagonal's own squares.
LOWER = np.zeros(64, dtype=np.int64)
_n = 0
for _r in range(8):
    for _f in range(_r + 1, 8):
        LOWER[8 * _r + _f] = LOWER[8 * _f + _r] = _n
        _n += 1
    LOWER[9 * _r] = 28 + _r
#: Index of a square on the a1-h8 diagonal (0..7) or, beyond 8, on the other one.
DIAG = np.zeros(64, dtype=np.int64)
for _i in range(8):
    DIAG[9 * _i] = _i
    DIAG[7 * (_i + 1)] = 8 + _i
#: The leading pawn's square: its file (a-d) and rank, 0..23.
FLAP = np.array([0] * 8 + [v for r in range(6) for v in (r, 6 + r, 12 + r, 18 + r, 18 + r, 12 + r, 6 + r, r)]
                + [0] * 8, dtype=np.int64)
#: The order pawns are counted in, from the leading pawn's corner outwards.
PTWIST = np.array([0] * 8 + [
    47, 35, 23, 11, 10, 22, 34, 46, 45, 33, 21, 9, 8, 20, 32, 44, 43, 31, 19, 7, 6, 18, 30, 42,
    41, 29, 17, 5, 4, 16, 28, 40, 39, 27, 15, 3, 2, 14, 26, 38, 37, 25, 13, 1, 0, 12, 24, 36] + [0] * 8,
    dtype=np.int64)
#: FLAP's inverse: the square of each of the 24 leading-pawn classes.
INVFLAP = np.array([8 * (r + 1) + f for f in range(4) for r in range(6)], dtype=np.int64)
FILE_TO_FILE = np.array([0, 1, 2, 3, 3, 2, 1, 0], dtype=np.int64)
#: ``BINOMIAL[n, k]``: n choose k (0 for n < k or n < 0 by index 64).
BINOMIAL = np.array([[math.comb(n, k) if n >= 0 else 0 for k in range(8)] for n in range(65)], dtype=np.int64)


def _kk_index() -> np.ndarray:
    """Index of the two kings: the first on one of the 10 triangle squares, the second anywhere legal (not
    adjacent), with the symmetry of the a1-h8 diagonal used when the first king stands on it (462 pairs)."""
    table = np.full((10, 64), -1, dtype=np.int64)
    seen = 0
    first_diagonal = []
    # The triangle's squares in the format's order: b1 c1 d1 c2 d2 d3 a1 b2 c3 d4 (TRIANGLE 0..9).
    squares = [1, 2, 3, 10, 11, 19, 0, 9, 18, 27]
    for t, k1 in enumerate(squares):
        for k2 in range(64):
            if max(abs((k1 & 7) - (k2 & 7)), abs((k1 >> 3) - (k2 >> 3))) <= 1:
                continue  # adjacent or the same square
            if t >= 6:  # k1 on the diagonal: k2 below it only, the diagonal itself after every other
                rank_minus_file = (k2 >> 3) - (k2 & 7)
                if rank_minus_file > 0:
                    continue
                if rank_minus_file == 0:
                    first_diagonal.append((t, k2))
                    continue
            table[t, k2] = seen
            seen += 1
    for t, k2 in first_diagonal:
        table[t, k2] = seen
        seen += 1
    assert seen == 462
    return table


KK_INDEX = _kk_index()


def _pawn_tables() -> tuple[np.ndarray, np.ndarray]:
    """``PAWN_INDEX[k, c]``: where leading-pawn class ``c`` (FLAP) starts among the placements of ``k + 1``
    leading pawns on its file; ``PAWN_FACTOR[k, f]``: how many placements file ``f`` (a-d) has."""
    index = np.zeros((5, 24), dtype=np.int64)
    factor = np.zeros((5, 4), dtype=np.int64)
    for k in range(5):
        for f in range(4):
            total = 0
            for c in range(6 * f, 6 * f + 6):
                index[k, c] = total
                total += 1 if k == 0 else math.comb(int(PTWIST[INVFLAP[c]]), k)
            factor[k, f] = total
    return index, factor


PAWN_INDEX, PAWN_FACTOR = _pawn_tables()
#: Pivot factors of the piece encodings: three unique pieces (0), two kings (2).
PIVOT_FACTOR = np.array([31332, 0, 462], dtype=np.int64)


# -- reading a file: little-endian header fields, big-endian code words ------------------------------------


@njit
def u16(data, at):
    return np.int64(data[at]) | np.int64(data[at + 1]) << 8


@njit
def u32(data, at):
    return np.int64(data[at]) | np.int64(data[at + 1]) << 8 | np.int64(data[at + 2]) << 16 \
        | np.int64(data[at + 3]) << 24


@njit
def _u32_be(data, at):
    return U64(data[at]) << U64(24) | U64(data[at + 1]) << U64(16) | U64(data[at + 2]) << U64(8) \
        | U64(data[at + 3])


@njit
def _u64_be(data, at):
    return _u32_be(data, at) << U64(32) | _u32_be(data, at + 4)


# -- a block's Huffman code (read once, at a table's first use) --------------------------------------------
#: ``pairs`` row fields: index bits (0: every position has one value, MIN_LEN), log2 of the block size,
#: shortest code, offsets of the index table, the block sizes, the blocks, the symbol offsets (less
#: 2 x MIN_LEN) and the symbol pairs; where its symbol lengths and code bases start in the pools; the number of
#: code lengths, of blocks and of symbols.
IDXBITS, BLOCKSIZE, MIN_LEN, INDEXTABLE, SIZETABLE, DATA, OFFSET, SYMPAT, SYMLEN_AT, BASE_AT, LENGTHS, BLOCKS, \
    SYMBOLS = range(13)
PAIRS_FIELDS = 13


@njit
def read_pairs(data, at, size, wdl):
    """The Huffman set-up of a table side at byte ``at``: its row fields (``pairs`` order; the three table
    offsets left 0), its symbol lengths and code bases, the byte after it and the sizes of its index table,
    block sizes and blocks (bytes). ``size``: positions in the table. A header that does not fit the file
    gives an empty row with ``BLOCKS`` = -1."""
    row = np.zeros(PAIRS_FIELDS, dtype=np.int64)
    sizes = np.zeros(3, dtype=np.int64)
    empty_symlen = np.zeros(0, dtype=np.int64)
    empty_base = np.zeros(0, dtype=np.uint64)
    end = data.shape[0]
    if at + 12 > end:
        row[BLOCKS] = -1
        return row, empty_symlen, empty_base, at, sizes
    flags = data[at]
    if flags & 0x80:  # one value for every position
        row[MIN_LEN] = data[at + 1] if wdl else 0
        return row, empty_symlen, empty_base, at + 2, sizes
    row[BLOCKSIZE] = data[at + 1]
    row[IDXBITS] = data[at + 2]
    real_blocks = u32(data, at + 4)
    blocks = real_blocks + data[at + 3]
    max_len, min_len = np.int64(data[at + 8]), np.int64(data[at + 9])
    lengths = max_len - min_len + 1
    if lengths < 1 or max_len > 63 or at + 12 + 2 * lengths > end:
        row[BLOCKS] = -1
        return row, empty_symlen, empty_base, at, sizes
    symbols = u16(data, at + 10 + 2 * lengths)
    sympat = at + 12 + 2 * lengths
    after = sympat + 3 * symbols + (symbols & 1)
    if after > end or row[IDXBITS] < 1 or row[IDXBITS] > 62 or row[BLOCKSIZE] > 32:
        row[BLOCKS] = -1
        return row, empty_symlen, empty_base, at, sizes
    row[MIN_LEN] = min_len
    row[OFFSET] = at + 10 - 2 * min_len
    row[SYMPAT] = sympat
    row[LENGTHS] = lengths
    row[BLOCKS] = real_blocks
    row[SYMBOLS] = symbols
    sizes[0] = 6 * ((size + (1 << row[IDXBITS]) - 1) >> row[IDXBITS])
    sizes[1] = 2 * blocks
    sizes[2] = real_blocks << row[BLOCKSIZE]
    # Symbol lengths: a symbol is a pair of two others (left, right) or a value (right = 0xfff).
    symlen = np.zeros(symbols, dtype=np.int64)
    done = np.zeros(symbols, dtype=np.bool_)
    stack = np.zeros(symbols + 1, dtype=np.int64)
    for first in range(symbols):
        if done[first]:
            continue
        top = 0
        stack[0] = first
        while top >= 0:
            s = stack[top]
            w = sympat + 3 * s
            right = (np.int64(data[w + 2]) << 4) | (np.int64(data[w + 1]) >> 4)
            if right == 0xFFF:
                symlen[s] = 0
                done[s] = True
                top -= 1
                continue
            left = ((np.int64(data[w + 1]) & 0xF) << 8) | np.int64(data[w])
            if left >= symbols or right >= symbols:
                row[BLOCKS] = -1
                return row, empty_symlen, empty_base, at, sizes
            if not done[left] and top + 1 < stack.shape[0]:
                top += 1
                stack[top] = left
            elif not done[right] and top + 1 < stack.shape[0]:
                top += 1
                stack[top] = right
            elif done[left] and done[right]:
                symlen[s] = symlen[left] + symlen[right] + 1
                done[s] = True
                top -= 1
            else:
                row[BLOCKS] = -1  # a cycle of pairs: not a Huffman table
                return row, empty_symlen, empty_base, at, sizes
    base = np.zeros(lengths, dtype=np.uint64)
    for i in range(lengths - 2, -1, -1):
        base[i] = U64((np.int64(base[i + 1]) + u16(data, at + 10 + 2 * i) - u16(data, at + 12 + 2 * i)) // 2)
    for i in range(lengths):
        base[i] = base[i] << U64(64 - (min_len + i)) if min_len + i < 64 else base[i]
    return row, symlen, base, after, sizes


@njit
def decompress(data, row, symlen, base, index, dtz):
    """The value a table side (``row``, its pools' ``symlen`` and ``base`` slices) stores at ``index``; a DTZ
    side's values have 12 bits, a WDL side's 8. :data:`CORRUPT` when the file does not hold it."""
    idxbits = row[IDXBITS]
    if not idxbits:
        return row[MIN_LEN]
    end = data.shape[0]
    main = index >> idxbits
    literal = (index & ((1 << idxbits) - 1)) - (1 << (idxbits - 1))
    entry = row[INDEXTABLE] + 6 * main
    if entry < 0 or entry + 6 > end:
        return CORRUPT
    block = u32(data, entry)
    literal += u16(data, entry + 4)
    blocks = row[BLOCKS]
    sizetable = row[SIZETABLE]
    while literal < 0:
        block -= 1
        if block < 0:
            return CORRUPT
        literal += u16(data, sizetable + 2 * block) + 1
    while block < blocks and literal > u16(data, sizetable + 2 * block):
        literal -= u16(data, sizetable + 2 * block) + 1
        block += 1
    if block >= blocks:
        return CORRUPT
    at = row[DATA] + (block << row[BLOCKSIZE])
    stop = min(end, at + (np.int64(1) << row[BLOCKSIZE]))
    if at < 0 or at + 8 > stop:
        return CORRUPT
    min_len = row[MIN_LEN]
    lengths = row[LENGTHS]
    symbols = row[SYMBOLS]
    offset = row[OFFSET]
    code = _u64_be(data, at)
    at += 8
    spent = 0  # bits of ``code`` already shifted out and not refilled
    while True:
        length = min_len
        while code < base[length - min_len]:
            length += 1
            if length - min_len >= lengths:
                return CORRUPT
        symbol = u16(data, offset + 2 * length) + np.int64((code - base[length - min_len]) >> U64(64 - length))
        if symbol >= symbols:
            return CORRUPT
        if literal < symlen[symbol] + 1:
            break
        literal -= symlen[symbol] + 1
        code = code << U64(length)
        spent += length
        if spent >= 32:
            spent -= 32
            if at + 4 <= stop:
                code |= _u32_be(data, at) << U64(spent)
            at += 4
    sympat = row[SYMPAT]
    while symlen[symbol]:
        w = sympat + 3 * symbol
        left = ((np.int64(data[w + 1]) & 0xF) << 8) | np.int64(data[w])
        if literal < symlen[left] + 1:
            symbol = left
        else:
            literal -= symlen[left] + 1
            symbol = (np.int64(data[w + 2]) << 4) | (np.int64(data[w + 1]) >> 4)
    w = sympat + 3 * symbol
    if dtz:
        return ((np.int64(data[w + 1]) & 0xF) << 8) | np.int64(data[w])
    return np.int64(data[w])


# -- position indices -------------------------------------------------------------------------------------


@njit
def _offdiag(square):
    return (square >> 3) - (square & 7)


@njit
def _flipdiag(square):
    return ((square >> 3) | (square << 3)) & 63


@njit
def _sort_group(pos, start, stop):
    for j in range(start, stop):
        for k in range(j + 1, stop):
            if pos[j] > pos[k]:
                pos[j], pos[k] = pos[k], pos[j]


@njit
def _groups(pos, i, num, norm, factor, index):
    """Add the index of the pieces from ``i`` on: each group of like pieces as a combination of the squares
    the pieces before it leave free."""
    while i < num:
        t = norm[i]
        _sort_group(pos, i, i + t)
        s = 0
        for m in range(i, i + t):
            p = pos[m]
            below = 0
            for k in range(i):
                below += p > pos[k]
            s += BINOMIAL[p - below, m - i + 1]
        index += s * factor[i]
        i += t
    return index


@njit
def encode_piece(pos, num, enc_type, norm, factor):
    """The index of a pawnless position (``pos``: squares in the table's piece order; changed in place).
    ``enc_type`` 0: three or more unique pieces lead; 2: the two kings lead."""
    if pos[0] & 4:
        for i in range(num):
            pos[i] ^= 7
    if pos[0] & 0x20:
        for i in range(num):
            pos[i] ^= 0x38
    leading = 3 if enc_type == 0 else 2
    for i in range(num):
        if _offdiag(pos[i]):
            if i < leading and _offdiag(pos[i]) > 0:
                for j in range(num):
                    pos[j] = _flipdiag(pos[j])
            break
    if enc_type == 0:
        i = np.int64(pos[1] > pos[0])
        j = np.int64(pos[2] > pos[0]) + np.int64(pos[2] > pos[1])
        if _offdiag(pos[0]):
            index = TRIANGLE[pos[0]] * 63 * 62 + (pos[1] - i) * 62 + (pos[2] - j)
        elif _offdiag(pos[1]):
            index = 6 * 63 * 62 + DIAG[pos[0]] * 28 * 62 + LOWER[pos[1]] * 62 + pos[2] - j
        elif _offdiag(pos[2]):
            index = 6 * 63 * 62 + 4 * 28 * 62 + DIAG[pos[0]] * 7 * 28 + (DIAG[pos[1]] - i) * 28 + LOWER[pos[2]]
        else:
            index = 6 * 63 * 62 + 4 * 28 * 62 + 4 * 7 * 28 + DIAG[pos[0]] * 7 * 6 + (DIAG[pos[1]] - i) * 6 \
                + (DIAG[pos[2]] - j)
        first = 3
    else:
        index = KK_INDEX[TRIANGLE[pos[0]], pos[1]]
        first = 2
    return _groups(pos, first, num, norm, factor, index * factor[0])


@njit
def pawn_file(pos, leading):
    """Bring the leading pawn nearest the board's edge (FLAP order) to ``pos[0]``; its file folded to a-d."""
    for i in range(1, leading):
        if FLAP[pos[0]] > FLAP[pos[i]]:
            pos[0], pos[i] = pos[i], pos[0]
    return FILE_TO_FILE[pos[0] & 7]


@njit
def encode_pawn(pos, num, leading, other, norm, factor):
    """The index of a position with pawns: ``leading`` pawns of one side first (the file table's), then
    ``other`` pawns of the other side, then the pieces (``pos`` changed in place)."""
    if pos[0] & 4:
        for i in range(num):
            pos[i] ^= 7
    for i in range(1, leading):
        for j in range(i + 1, leading):
            if PTWIST[pos[i]] < PTWIST[pos[j]]:
                pos[i], pos[j] = pos[j], pos[i]
    t = leading - 1
    index = PAWN_INDEX[t, FLAP[pos[0]]]
    for i in range(t, 0, -1):
        index += BINOMIAL[PTWIST[pos[i]], t - i + 1]
    index *= factor[0]
    i = leading
    stop = leading + other
    if other:
        _sort_group(pos, i, stop)
        s = 0
        for m in range(i, stop):
            p = pos[m]
            below = 0
            for k in range(i):
                below += p > pos[k]
            s += BINOMIAL[p - below - 8, m - i + 1]
        index += s * factor[i]
        i = stop
    return _groups(pos, i, num, norm, factor, index)
