"""Syzygy probes, compiled: the WDL and DTZ of a position in the search core's arrays, without the GIL.

The rules of a full probe, as python-chess's reference prober has them (:mod:`chess.syzygy`): a WDL probe
searches the captures first (a table stores a position's value as if captures were not there when one of them
is better) and then en passant; a DTZ probe adds the zeroing pawn moves, and for the side a one-sided DTZ
table does not store, a search of one ply. Values are from the side to move: WDL -2 (loss) .. 2 (win); DTZ in
plies, positive when winning (see :mod:`chess_endgame.tablebase.prober`).

The tables are a :class:`~.tbtables.Tables` of arrays that :mod:`chess_endgame.tablebase.compiled` reads from the files'
headers; the board is the core's ``bb``, ``mailbox``, ``state``, ``keys`` and ``undo`` (:mod:`.position`),
made and unmade in place and left as it was. ``moves`` is scratch: a row of moves for each level of the
probe's own search, from row ``level`` on. A probe that cannot answer returns :data:`FAILED` and says why in
``err``: ``err[0]`` one of :data:`MISSING_WDL`, :data:`MISSING_DTZ` (``err[1]`` the material's key),
:data:`CORRUPT_TABLE` (``err[1]`` the table's index) or, from :func:`probe_board`, :data:`INVALID_POSITION`
(the side not to move is in check).
"""

from __future__ import annotations

import numpy as np

from chess_endgame.engine.core.bits import U64, ZERO, lsb, popcount
from chess_endgame.engine.core.jit import njit
from chess_endgame.engine.core.movegen import generate
from chess_endgame.engine.core.position import (
    EP,
    FROM_NULL,
    HALFMOVE,
    KING_T,
    PAWN_T,
    QUEEN_T,
    TURN,
    attackers,
    checkers,
    make,
    unmake,
)
from chess_endgame.engine.core.syzygy import (
    BASE_AT,
    CORRUPT,
    LENGTHS,
    SYMBOLS,
    SYMLEN_AT,
    decompress,
    encode_pawn,
    encode_piece,
    pawn_file,
    u16,
)
from chess_endgame.engine.core.tbtables import (
    BROKEN,
    ENC_TYPE,
    HAS_PAWNS,
    IS_DTZ,
    KEY,
    LEADING,
    MAP_START,
    NUM,
    OTHER,
    SYMMETRIC,
)

#: What a probe returns when it cannot answer (see ``err``).
FAILED = -(1 << 30)
MISSING_WDL, MISSING_DTZ, CORRUPT_TABLE, INVALID_POSITION = 1, 2, 3, 4
#: Rows of probe scratch a probe may use from its ``level`` on.
LEVELS = 24
#: Where the count of a colour's pieces of a kind (pawn to queen) sits in a :func:`material_key`: four bits
#: each (colour 1 is White, as in the core's ``bb``).
MATERIAL_SHIFT = np.array([[4 * (5 * color + kind - 1) if PAWN_T <= kind <= QUEEN_T else 0 for kind in range(8)]
                           for color in range(2)], dtype=np.int64)
_WDL_TO_MAP = np.array([1, 3, 0, 2, 0], dtype=np.int64)
_PA_FLAGS = np.array([8, 0, 0, 0, 4], dtype=np.int64)
_WDL_TO_DTZ = np.array([-1, -101, 0, 101, 1], dtype=np.int64)
#: Window bounds passed to the recursive probes as numpy ints: numba types a literal 2 as its own type and
#: compiles the recursion again for it, a version its cache cannot load back (a crash in the next process).
_M2, _P1, _P2 = np.int64(-2), np.int64(1), np.int64(2)
FIRST_LEVEL = np.int64(0)


@njit
def material_key(bb):
    """The material on the board as one integer (counts placed by :data:`MATERIAL_SHIFT`)."""
    key = ZERO
    for color in range(2):
        for kind in range(PAWN_T, KING_T):
            key |= U64(popcount(bb[8 * color + kind])) << U64(MATERIAL_SHIFT[color, kind])
    return key


@njit
def find(keys, tables, key):
    """The table stored under material ``key`` in an open-addressing map, or -1."""
    size = keys.shape[0]
    if not size:
        return -1
    slot = key & U64(size - 1)
    while keys[slot]:
        if keys[slot] == key:
            return tables[slot]
        slot = (slot + U64(1)) & U64(size - 1)
    return -1


@njit
def _place(tb, t, f, side, bb, cmirror, mirror, pos, i):
    """Squares of the table's pieces from index ``i`` on (codes of file ``f``, ``side``), each XOR ``mirror``;
    ``cmirror`` 8 swaps the colours. Returns the next index."""
    num = tb.info[t, NUM]
    while i < num:
        code = tb.pieces[t, f, side, i]
        color = ((code ^ cmirror) >> 3) & 1  # 0: White in the table's terms
        bits = bb[8 * (1 - color) + (code & 7)]
        if not bits:
            return -1
        while bits and i < pos.shape[0]:
            pos[i] = lsb(bits) ^ mirror
            bits &= bits - U64(1)
            i += 1
    return i


@njit
def table_value(tb, t, bb, turn, wdl, err):
    """The value table ``t`` stores for the position: a WDL table's -2..2; a DTZ table's plies to zeroing
    for a position of WDL ``wdl`` (the map and the doubling applied), or -1 when the table does not store
    this side to move. :data:`FAILED` (``err`` set) for a damaged file."""
    info = tb.info[t]
    if info[BROKEN]:
        return _corrupt(err, t)
    white = turn == 1
    if info[SYMMETRIC]:
        cmirror, mirror, bside = (0, 0, 0) if white else (8, 0x38, 0)
    elif material_key(bb) != U64(info[KEY]):
        cmirror, mirror, bside = 8, 0x38, (1 if white else 0)
    else:
        cmirror, mirror, bside = 0, 0, (0 if white else 1)
    dtz = info[IS_DTZ]
    num = info[NUM]
    pos = np.zeros(8, dtype=np.int64)
    if not info[HAS_PAWNS]:
        f = 0
        if dtz and (tb.flags[t, 0] & 1) != bside and not info[SYMMETRIC]:
            return -1
        side = 0 if dtz else bside
        if _place(tb, t, 0, side, bb, cmirror, 0, pos, 0) != num:
            return _corrupt(err, t)
        index = encode_piece(pos, num, info[ENC_TYPE], tb.norm[t, 0, side], tb.factor[t, 0, side])
    else:
        leading = info[LEADING]
        code = tb.pieces[t, 0, 0, 0] ^ cmirror  # the leading pawns' colour decides the file table
        bits = bb[8 * (1 - ((code >> 3) & 1)) + (code & 7)]
        if popcount(bits) != leading:
            return _corrupt(err, t)
        for i in range(leading):
            pos[i] = lsb(bits) ^ mirror
            bits &= bits - U64(1)
        f = pawn_file(pos, leading)
        if dtz and (tb.flags[t, f] & 1) != bside:
            return -1
        side = 0 if dtz else bside
        if _place(tb, t, f, side, bb, cmirror, mirror, pos, leading) != num:
            return _corrupt(err, t)
        index = encode_pawn(pos, num, leading, info[OTHER], tb.norm[t, f, side], tb.factor[t, f, side])
    p = tb.pairs_of[t, f, side]
    if p < 0:
        return _corrupt(err, t)
    row = tb.pairs[p]
    data = tb.data[t]
    value = decompress(data, row, tb.symlen[row[SYMLEN_AT]:row[SYMLEN_AT] + row[SYMBOLS]],
                       tb.base[row[BASE_AT]:row[BASE_AT] + row[LENGTHS]], index, dtz)
    if value == CORRUPT:
        return _corrupt(err, t)
    if not dtz:
        return value - 2
    flags = tb.flags[t, f]
    if flags & 2:
        at = info[MAP_START]
        if flags & 16:
            at += 2 * (tb.map_at[t, f, _WDL_TO_MAP[wdl + 2]] + value)
            if at + 2 > data.shape[0]:
                return _corrupt(err, t)
            value = u16(data, at)
        else:
            at += tb.map_at[t, f, _WDL_TO_MAP[wdl + 2]] + value
            if at >= data.shape[0]:
                return _corrupt(err, t)
            value = np.int64(data[at])
    if not flags & _PA_FLAGS[wdl + 2] or wdl & 1:
        value *= 2
    return value


@njit
def _corrupt(err, t):
    err[0] = CORRUPT_TABLE
    err[1] = t
    return FAILED


@njit
def _missing(err, kind, key):
    err[0] = kind
    err[1] = np.int64(key)
    return FAILED


@njit
def wdl_table(tb, bb, turn, err):
    """The WDL table's own value for the position (no capture searched); 0 for the two kings alone."""
    if bb[0] | bb[8] == bb[6] | bb[14]:
        return 0
    key = material_key(bb)
    t = find(tb.wdl_keys, tb.wdl_tables, key)
    if t < 0:
        return _missing(err, MISSING_WDL, key)
    return table_value(tb, t, bb, turn, 0, err)


@njit
def dtz_table(tb, bb, turn, wdl, err):
    """The DTZ table's own value for a position of WDL ``wdl`` (-1: the table does not store this side)."""
    key = material_key(bb)
    t = find(tb.dtz_keys, tb.dtz_tables, key)
    if t < 0:
        return _missing(err, MISSING_DTZ, key)
    return table_value(tb, t, bb, turn, wdl, err)


@njit
def probe_ab(tb, bb, mailbox, state, keys, undo, moves, level, alpha, beta, err):
    """(value, how) of the position: the best of its captures (en passant aside) and the table's value, in
    the window (alpha, beta); ``how`` 2 when a capture decides (fails high), 1 + (alpha > 0) when a capture
    is as good as the table, else 1."""
    check = checkers(bb, state)
    n = generate(bb, mailbox, state, check, moves[level], 0, False)
    for i in range(n):
        move = moves[level, i]
        if not mailbox[(move >> 6) & 63]:
            continue
        make(bb, mailbox, state, keys, undo, move)
        value, _ = probe_ab(tb, bb, mailbox, state, keys, undo, moves, level + 1, -beta, -alpha, err)
        unmake(bb, mailbox, state, keys, undo, move)
        if err[0]:
            return FAILED, 0
        value = -value
        if value > alpha:
            if value >= beta:
                return value, 2
            alpha = value
    value = wdl_table(tb, bb, state[TURN], err)
    if err[0]:
        return FAILED, 0
    if alpha >= value:
        return alpha, 1 + (alpha > 0)
    return value, 1


@njit
def _en_passant(tb, bb, mailbox, state, keys, undo, moves, level, err):
    """(the best WDL of the legal en passant captures, -3 without one; whether any other move is legal)."""
    ep = state[EP]
    best = -3
    others = False
    n = generate(bb, mailbox, state, checkers(bb, state), moves[level], 0, False)
    for i in range(n):
        move = moves[level, i]
        if (move >> 6) & 63 != ep or mailbox[move & 63] & 7 != PAWN_T:
            others = True
            continue
        make(bb, mailbox, state, keys, undo, move)
        value, _ = probe_ab(tb, bb, mailbox, state, keys, undo, moves, level + 1, _M2, _P2, err)
        unmake(bb, mailbox, state, keys, undo, move)
        if err[0]:
            return FAILED, others
        best = max(best, -value)
    return best, others


@njit
def probe_wdl(tb, bb, mailbox, state, keys, undo, moves, level, err):
    """WDL of the side to move, -2..2, the position taken as reached by a zeroing move."""
    value, _ = probe_ab(tb, bb, mailbox, state, keys, undo, moves, level, _M2, _P2, err)
    if err[0] or state[EP] < 0:
        return value
    best, others = _en_passant(tb, bb, mailbox, state, keys, undo, moves, level, err)
    if err[0]:
        return FAILED
    if best > -3 and (best >= value or (value == 0 and not others)):
        return best
    return value


@njit
def _before_zeroing(wdl):
    return (1 if wdl > 0 else -1) * (1 if abs(wdl) == 2 else 101)


@njit
def probe_dtz(tb, bb, mailbox, state, keys, undo, moves, level, err):
    """DTZ of the side to move in plies (DTZ50'' with rounding, as python-chess's ``probe_dtz``)."""
    value = _dtz_without_ep(tb, bb, mailbox, state, keys, undo, moves, level, err)
    if err[0] or state[EP] < 0:
        return value
    best, others = _en_passant(tb, bb, mailbox, state, keys, undo, moves, level, err)
    if err[0]:
        return FAILED
    if best == -3:
        return value
    ep = _WDL_TO_DTZ[best + 2]
    if value < -100:
        return ep if ep >= 0 else value
    if value < 0:
        return ep if ep >= 0 or ep < -100 else value
    if value > 100:
        return ep if ep > 0 else value
    if value > 0:
        return ep if ep == 1 else value
    if ep >= 0:
        return ep
    return value if others else ep


@njit
def _dtz_without_ep(tb, bb, mailbox, state, keys, undo, moves, level, err):
    """DTZ as if no en passant capture were possible. Its one-ply search recurses into itself, not into
    :func:`probe_dtz`: the moves it searches neither capture nor move a pawn, so no en passant follows them
    (and numba could not cache the two functions calling each other)."""
    wdl, how = probe_ab(tb, bb, mailbox, state, keys, undo, moves, level, _M2, _P2, err)
    if err[0]:
        return FAILED
    if wdl == 0:
        return 0
    if how == 2:
        return _before_zeroing(wdl)
    ep = state[EP]
    if wdl > 0:  # a winning pawn push zeroes at once
        n = generate(bb, mailbox, state, checkers(bb, state), moves[level], 0, False)
        for i in range(n):
            move = moves[level, i]
            to = (move >> 6) & 63
            if mailbox[move & 63] & 7 != PAWN_T or mailbox[to] or to == ep:
                continue
            make(bb, mailbox, state, keys, undo, move)
            value = -probe_wdl(tb, bb, mailbox, state, keys, undo, moves, level + 1, err)
            unmake(bb, mailbox, state, keys, undo, move)
            if err[0]:
                return FAILED
            if value == wdl:
                return 1 if value == 2 else 101
    stored = dtz_table(tb, bb, state[TURN], wdl, err)
    if err[0]:
        return FAILED
    if stored >= 0:
        return _before_zeroing(wdl) + (stored if wdl > 0 else -stored)
    # The table stores the other side to move: one ply of search.
    n = generate(bb, mailbox, state, checkers(bb, state), moves[level], 0, False)
    if wdl > 0:
        best = 0xFFFF
        for i in range(n):
            move = moves[level, i]
            if mailbox[move & 63] & 7 == PAWN_T or mailbox[(move >> 6) & 63]:
                continue
            make(bb, mailbox, state, keys, undo, move)
            value = -_dtz_without_ep(tb, bb, mailbox, state, keys, undo, moves, level + 1, err)
            mated = value == 1 and _mated(bb, mailbox, state, moves, level + 1)
            unmake(bb, mailbox, state, keys, undo, move)
            if err[0]:
                return FAILED
            if mated:
                best = 1
            elif 0 < value and value + 1 < best:
                best = value + 1
        return best
    best = -1
    for i in range(n):
        move = moves[level, i]
        make(bb, mailbox, state, keys, undo, move)
        if state[HALFMOVE] == 0:
            if wdl == -2:
                value = -1
            else:
                value, _ = probe_ab(tb, bb, mailbox, state, keys, undo, moves, level + 1, _P1, _P2, err)
                value = 0 if value == 2 else -101
        else:
            value = -_dtz_without_ep(tb, bb, mailbox, state, keys, undo, moves, level + 1, err) - 1
        unmake(bb, mailbox, state, keys, undo, move)
        if err[0]:
            return FAILED
        best = min(best, value)
    return best


@njit
def _mated(bb, mailbox, state, moves, level):
    check = checkers(bb, state)
    return check != ZERO and generate(bb, mailbox, state, check, moves[level], 0, False) == 0


@njit
def probe_board(tb, bb, mailbox, state, keys, undo, moves, err, dtz):
    """:func:`probe_dtz` (``dtz``) or :func:`probe_wdl` of the position in ``bb`` and ``state``, its mailbox
    filled from ``bb`` first: one call for a board coming from Python."""
    for square in range(64):
        mailbox[square] = 0
    for code in range(1, 15):
        if code == 7 or code == 8:
            continue
        bits = bb[code]
        while bits:
            mailbox[lsb(bits)] = code
            bits &= bits - U64(1)
    err[0] = 0
    us = state[TURN]
    if attackers(bb, lsb(bb[8 * (1 - us) + KING_T]), us, bb[0] | bb[8]):
        err[0] = INVALID_POSITION
        return FAILED
    if dtz:
        return probe_dtz(tb, bb, mailbox, state, keys, undo, moves, FIRST_LEVEL, err)
    return probe_wdl(tb, bb, mailbox, state, keys, undo, moves, FIRST_LEVEL, err)


#: A position packed for :func:`probe_many`: White's and Black's pieces, then the pawns, knights, bishops,
#: rooks, queens and kings (bitboards), the side to move (1 White) and the en passant square (64: none).
PACKED_WHITE, PACKED_BLACK, PACKED_PAWNS, PACKED_TURN, PACKED_EP, PACKED_FIELDS = 0, 1, 2, 8, 9, 10


@njit
def probe_many(tb, packed, values, dtz, bb, mailbox, state, keys, undo, moves, err):
    """:func:`probe_board` of every packed position ``packed[i]`` (see :data:`PACKED_FIELDS`) into
    ``values[i]`` (:data:`FAILED` where the tables cannot answer), the halfmove clock taken as 0. Returns how
    many failed."""
    failed = 0
    for i in range(packed.shape[0]):
        row = packed[i]
        for color, side in ((1, PACKED_WHITE), (0, PACKED_BLACK)):
            bb[8 * color] = row[side]
            for kind in range(PAWN_T, KING_T + 1):
                bb[8 * color + kind] = row[PACKED_PAWNS + kind - 1] & row[side]
        state[:] = 0
        state[TURN] = np.int64(row[PACKED_TURN])
        state[EP] = -1 if row[PACKED_EP] >= U64(64) else np.int64(row[PACKED_EP])
        state[FROM_NULL] = 1000
        values[i] = probe_board(tb, bb, mailbox, state, keys, undo, moves, err, dtz)
        failed += err[0] != 0
    return failed
