"""The evaluation's features, compiled: the one definition behind :mod:`chess_endgame.engine.evaluation`.

Every feature of :data:`FEATURES` is computed here from the search core's bitboards
(``bb``, see :mod:`.position`), from White's view, with ``tempo`` = 1. :func:`features_into`
fills a float64 vector; :func:`evaluate` turns it into centipawns from the side to move.

Pawn-structure terms (advance, passed, passed rank, doubled, isolated, backward, outside passer) and the
passed-pawn sets depend on the pawns alone and are kept in a pawn hash table
(:func:`new_pawn_table`): two arrays indexed by slot,

- ``pawn_keys``: ``uint64[size, 4]``: white pawns, black pawns (the key, compared in full,
  so colliding structures never share terms), white passed pawns, black passed pawns;
- ``pawn_terms``: ``float64[size, 7]``: the seven pawn-structure terms, White's view.

``size`` is a power of two. An all-zero row is an empty slot: a position without pawns never
looks the table up. The table is not locked: one table per thread.
"""

from __future__ import annotations

import chess
import numpy as np

from chess_endgame.engine.core.bits import (
    DARK_SQUARES,
    FILES,
    KNIGHT,
    ONE,
    SQUARE,
    U64,
    ZERO,
    bishop_attacks,
    king_steps_all,
    lsb,
    msb,
    pawn_attacks_all,
    popcount,
    rook_attacks,
)
from chess_endgame.engine.core.jit import njit
from chess_endgame.engine.core.position import attacks_by

FEATURES: tuple[str, ...] = (
    "tempo",               # w0: +1 for the side to move (the only term not from White's view)
    "pawn", "knight", "bishop", "rook", "queen",
    "bishop_pair",
    "pawn_advance_eg",     # sum of pawn ranks advanced, x eg
    "passed",              # passed pawns
    "passed_rank_eg",      # sum over passed pawns of (ranks advanced)^2, x eg
    "passed_free",         # passed pawns whose path to promotion is empty, by ranks advanced
    "unstoppable",         # passed pawn outside the enemy king's square, enemy without pieces
    "king_passer_eg",      # king distances to passed pawns' promotion squares (theirs - ours), x eg
    "rook_behind_passer",
    "doubled", "isolated", "backward",
    "king_center_eg",      # king centralisation (0 edge .. 3 centre), x eg; 0 against a bare king
    "king_shelter_mg",     # own pawns in front of the king, x mg
    "mobility_knight", "mobility_bishop", "mobility_rook", "mobility_queen",
    "rook_open_file",      # 1 per rook on an open file, 0.5 on a half-open one
    "rook_seventh",
    "knight_center",       # knight centralisation (0 edge .. 3 centre)
    "mop_edge",            # lone defender: its king's Manhattan distance from the centre (0..6)
    "mop_kings",           # lone defender: 14 - Manhattan distance between the kings
    "kbn_corner",          # KBNvK: 7 - distance of the lone king to a corner of the bishop's colour
    "drawish",             # material balance (pawns) when the material is drawish (weight < 0 scales it down)
    # Passed pawns weighted by how far they are: w = max(0, ranks advanced - 1), 0 .. 4.
    "passer_king_them_eg",  # sum of w * the enemy king's distance (at most 5) to the stop square, x eg
    "passer_king_us_eg",    # sum of w * the own king's distance (at most 5) to the stop square, x eg
    "passer_path_eg",       # sum of w * (1 path empty and unattacked, 0.5 stop square so, else 0), x eg
    "passer_connected_eg",  # sum of w over passed pawns with a passed pawn of their own on a next file, x eg
    "king_pawns_eg",        # mean distance of the enemy king to all pawns less the own king's, x eg
    "outside_passer_eg",    # files (at most 4) from the own farthest passer to the nearest enemy pawn, x eg
    "king_key_square",      # pawn endings: passed pawns with the own king on one of their key squares
    "opposition",           # pawn endings: kings facing on a file or rank, an odd number of squares apart,
                            # the side not to move has it
)
N_FEATURES = len(FEATURES)

# -- square tables (index [color, square] with 0 = Black, 1 = White) -----------------------

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


def _table(mask) -> np.ndarray:
    return np.array([[mask(sq, c) for sq in range(64)] for c in (0, 1)], dtype=np.uint64)


#: Squares a pawn of ``color`` on ``sq`` must pass (own and adjacent files ahead): empty of enemy pawns = passed.
PASSED_MASK = _table(lambda sq, c: (chess.BB_FILES[sq & 7] | _ADJACENT[sq & 7]) & _forward_ranks(sq >> 3, c))
#: Squares ahead of a pawn on its own file.
FRONT_SPAN = _table(lambda sq, c: chess.BB_FILES[sq & 7] & _forward_ranks(sq >> 3, c))
#: Adjacent-file squares level with or behind a pawn (where its supporters stand).
SUPPORT_SPAN = _table(lambda sq, c: _ADJACENT[sq & 7] & ~_forward_ranks(sq >> 3, c) & chess.BB_ALL)
#: The two ranks in front of a king of ``color`` on its own and the adjacent files.
SHELTER = _table(lambda sq, c: _shelter(sq, c))


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

_A1, _H1, _A8, _H8 = chess.A1, chess.H1, chess.A8, chess.H8


# -- the pawn hash table -----------------------------------------------------------------------

PAWN_TABLE_SIZE = 16384
PAWN_TERMS = 7


def new_pawn_table(size: int = PAWN_TABLE_SIZE) -> tuple[np.ndarray, np.ndarray]:
    """An empty pawn hash table ``(pawn_keys, pawn_terms)`` of ``size`` slots (a power of two)."""
    if size < 1 or size & (size - 1):
        raise ValueError(f"pawn table size must be a power of two, not {size}")
    return np.zeros((size, 4), dtype=np.uint64), np.zeros((size, PAWN_TERMS), dtype=np.float64)


@njit
def pawn_slot(white_pawns, black_pawns, size):
    """The slot of a pawn structure in a table of ``size`` slots (a power of two)."""
    h = white_pawns * U64(0x9E3779B97F4A7C15) ^ black_pawns * U64(0xC2B2AE3D27D4EB4F)
    h ^= h >> U64(31)
    return np.int64(h & U64(size - 1))


@njit
def _pawn_side(own, their, color, sign, terms):
    """Adds one side's pawn-structure terms (``sign`` = +1 White, -1 Black) to ``terms``; its passed pawns."""
    their_attacks = pawn_attacks_all(their, 1 - color)
    passed = ZERO
    bits = own
    while bits:
        sq = lsb(bits)
        bits &= bits - ONE
        rank = sq >> 3
        advanced = rank - 1 if color else 6 - rank
        terms[0] += sign * advanced
        if own & ADJACENT_FILES[sq & 7] == ZERO:
            terms[4] += sign  # isolated
        elif own & SUPPORT_SPAN[color, sq] == ZERO:
            stop = sq + 8 if color else sq - 8
            if 0 <= stop < 64:
                if their_attacks & SQUARE[stop]:
                    terms[5] += sign  # backward: unsupported, and its stop square is attacked
        ahead = own & FRONT_SPAN[color, sq]
        if ahead:
            terms[3] += sign  # doubled
        if their & PASSED_MASK[color, sq] == ZERO and ahead == ZERO:
            passed |= SQUARE[sq]
            terms[1] += sign
            terms[2] += sign * advanced * advanced
    return passed


@njit
def _outside(passed, their_pawns):
    """Files (at most 4) from the passed pawn farthest from the enemy pawns to the nearest of them: the
    outside passer that draws the defending king away from the other pawns. 0 without enemy pawns."""
    if passed == ZERO or their_pawns == ZERO:
        return 0
    best = 0
    bits = passed
    while bits:
        sq = lsb(bits)
        bits &= bits - ONE
        file = sq & 7
        nearest = 4
        for g in range(8):
            if their_pawns & FILES[g] and abs(g - file) < nearest:
                nearest = abs(g - file)
        best = max(best, nearest)
    return best


@njit
def pawn_entry(white_pawns, black_pawns, pawn_keys, pawn_terms):
    """The slot holding this pawn structure's terms, computed and stored there on a miss."""
    slot = pawn_slot(white_pawns, black_pawns, pawn_keys.shape[0])
    if pawn_keys[slot, 0] != white_pawns or pawn_keys[slot, 1] != black_pawns:
        terms = pawn_terms[slot]
        for i in range(PAWN_TERMS):
            terms[i] = 0.0
        white_passed = _pawn_side(white_pawns, black_pawns, 1, 1, terms)
        black_passed = _pawn_side(black_pawns, white_pawns, 0, -1, terms)
        terms[6] = _outside(white_passed, black_pawns) - _outside(black_passed, white_pawns)
        pawn_keys[slot, 2] = white_passed
        pawn_keys[slot, 3] = black_passed
        pawn_keys[slot, 0] = white_pawns
        pawn_keys[slot, 1] = black_pawns
    return slot


# -- the other features --------------------------------------------------------------------------


@njit
def _king_steps(king, target, blocked, limit):
    """King moves from ``king`` to ``target`` around the ``blocked`` squares (``limit + 1``: more than ``limit``)."""
    reached = SQUARE[king]
    goal = SQUARE[target]
    for steps in range(1, limit + 1):
        reached |= king_steps_all(reached) & ~blocked
        if reached & goal:
            return steps
    return limit + 1


@njit
def _passers(f, passed, color, sign, own_king, their_king, their_pieces, own_rooks, occupied, their_attacks, turn, eg,
             blocked):
    """Passed-pawn terms that depend on more than the pawns (the square rule uses the side to move;
    ``blocked``: the squares the defending king may not step on, its own pawns and those our pawns attack)."""
    bits = passed
    while bits:
        sq = lsb(bits)
        bits &= bits - ONE
        rank = sq >> 3
        advanced = rank - 1 if color else 6 - rank
        promo = (sq | 56) if color else (sq & 7)
        path = FRONT_SPAN[color, sq]
        free = path & occupied == ZERO
        if free:
            f[10] += sign * advanced
        if advanced >= 2:
            # A far pawn counts more: the kings' distances and an open path decide whether it runs.
            w = (advanced - 1) * eg
            stop = sq + 8 if color else sq - 8
            f[30] += sign * w * min(DISTANCE[their_king, stop], 5)
            f[31] += sign * w * min(DISTANCE[own_king, stop], 5)
            if free and path & their_attacks == ZERO:
                f[32] += sign * w
            elif SQUARE[stop] & (occupied | their_attacks) == ZERO:
                f[32] += sign * w * 0.5
            if passed & ADJACENT_FILES[sq & 7]:
                f[33] += sign * w
        f[12] += sign * (DISTANCE[their_king, promo] - DISTANCE[own_king, promo]) * eg
        # Square rule: the defending king (moving next if it is its turn) cannot catch the pawn.
        if their_pieces == ZERO:
            to_go = min(7 - rank if color else rank, 5)  # a pawn on its first move advances two squares
            tempo = 0 if turn == color else 1
            if free and (DISTANCE[their_king, promo] - tempo > to_go or
                         _king_steps(their_king, promo, blocked & ~SQUARE[promo], to_go + tempo) - tempo > to_go):
                f[11] += sign  # also when its own pawns or ours bar the king's way into the square
        if FRONT_SPAN[1 - color, sq] & own_rooks:
            f[13] += sign


@njit
def _on_key_square(passed, color, king):
    """Passed pawns of ``color`` with the own ``king`` on one of their key squares."""
    count = 0
    bits = passed
    while bits:
        sq = lsb(bits)
        bits &= bits - ONE
        if KEY_SQUARES[color, sq] & SQUARE[king]:
            count += 1
    return count


@njit
def _pieces(f, own, pieces, sign, own_pawns, their_pawns, seventh, knights, bishops, rooks, occupied):
    """Mobility, rook files, rooks on the seventh and knight centralisation of one side, added with ``sign``."""
    free = ~own
    n = b = r = q = centre = sev = 0
    opened = 0.0
    bits = pieces & own
    while bits:
        sq = lsb(bits)
        low = SQUARE[sq]
        bits ^= low
        if low & knights:
            n += popcount(KNIGHT[sq] & free)
            centre += CENTRALITY[sq]
        elif low & bishops:
            b += popcount(bishop_attacks(sq, occupied) & free)
        elif low & rooks:
            r += popcount(rook_attacks(sq, occupied) & free)
            file_bb = FILES[sq & 7]
            if own_pawns & file_bb == ZERO:
                opened += 0.5 if their_pawns & file_bb else 1.0
            if sq >> 3 == seventh:
                sev += 1
        else:
            q += popcount((bishop_attacks(sq, occupied) | rook_attacks(sq, occupied)) & free)
    f[19] += sign * n
    f[20] += sign * b
    f[21] += sign * r
    f[22] += sign * q
    f[23] += sign * opened
    f[24] += sign * sev
    f[25] += sign * centre


@njit
def _drawish(occ_w, occ_b, wp, bp, knights, bishops, rooks, queens, kings, w_mat, b_mat):
    """Material configurations where the side ahead usually cannot win."""
    minors_majors = knights | rooks | queens
    if (minors_majors == ZERO and popcount(bishops & occ_w) == 1 and popcount(bishops & occ_b) == 1
            and (bishops & occ_w & DARK_SQUARES != ZERO) != (bishops & occ_b & DARK_SQUARES != ZERO)):
        return abs(w_mat - b_mat) <= 2.5  # opposite-coloured bishops, at most two pawns up
    strong_pawns = wp if w_mat > b_mat else bp
    if strong_pawns == ZERO and abs(w_mat - b_mat) < 4.0:
        return True  # no pawns and less than a rook up: KRvKB, KBvKN, KRBvKR, ...
    strong = occ_w if w_mat > b_mat else occ_b
    weak = occ_b if w_mat > b_mat else occ_w
    if strong_pawns == ZERO and strong & ~kings == strong & knights:
        return True  # knights alone cannot force mate: KNNvK
    # Bishop and rook pawn(s) of the wrong colour against a lone king.
    if weak & ~kings == ZERO and minors_majors == ZERO and popcount(bishops & strong) == 1 and strong_pawns != ZERO:
        dark_bishop = bishops & strong & DARK_SQUARES != ZERO
        white = strong == occ_w
        if strong_pawns & ~FILES[0] == ZERO:
            promo = _A8 if white else _A1
            return dark_bishop != (SQUARE[promo] & DARK_SQUARES != ZERO)
        if strong_pawns & ~FILES[7] == ZERO:
            promo = _H8 if white else _H1
            return dark_bishop != (SQUARE[promo] & DARK_SQUARES != ZERO)
    return False


@njit
def features_into(bb, turn, out, pawn_keys, pawn_terms):
    """Fill ``out`` (``float64[N_FEATURES]``) with the features of ``bb``, ``turn`` 1 = White to move."""
    for i in range(N_FEATURES):
        out[i] = 0.0
    f = out
    f[0] = 1.0
    occ_b, occ_w = bb[0], bb[8]
    occupied = occ_w | occ_b
    wp, bp = bb[9], bb[1]
    pawns = wp | bp
    knights, bishops, rooks, queens, kings = bb[2] | bb[10], bb[3] | bb[11], bb[4] | bb[12], bb[5] | bb[13], \
        bb[6] | bb[14]
    wn, bn = popcount(bb[10]), popcount(bb[2])
    wb, bb_ = popcount(bb[11]), popcount(bb[3])
    wr, br = popcount(bb[12]), popcount(bb[4])
    wq, bq = popcount(bb[13]), popcount(bb[5])
    wpc, bpc = popcount(wp), popcount(bp)
    f[1] = wpc - bpc
    f[2] = wn - bn
    f[3] = wb - bb_
    f[4] = wr - br
    f[5] = wq - bq
    f[6] = (1 if wb >= 2 else 0) - (1 if bb_ >= 2 else 0)
    mg = min(24, wn + bn + wb + bb_ + 2 * (wr + br) + 4 * (wq + bq)) / 24.0
    eg = 1.0 - mg
    wk = msb(bb[14]) if bb[14] else -1
    bk = msb(bb[6]) if bb[6] else -1

    # Pawn structure (from the pawn hash table), then the passed pawns' other terms.
    if pawns:
        slot = pawn_entry(wp, bp, pawn_keys, pawn_terms)
        terms = pawn_terms[slot]
        f[7] = terms[0] * eg
        f[8] = terms[1]
        f[9] = terms[2] * eg
        f[14] = terms[3]
        f[15] = terms[4]
        f[16] = terms[5]
        f[35] = terms[6] * eg
        minor_major = knights | bishops | rooks | queens
        white_passed, black_passed = pawn_keys[slot, 2], pawn_keys[slot, 3]
        if white_passed:
            _passers(f, white_passed, 1, 1, wk, bk, minor_major & occ_b, rooks & occ_w, occupied,
                     attacks_by(bb, 0, occupied), turn, eg, bp | pawn_attacks_all(wp, 1))
        if black_passed:
            _passers(f, black_passed, 0, -1, bk, wk, minor_major & occ_w, rooks & occ_b, occupied,
                     attacks_by(bb, 1, occupied), turn, eg, wp | pawn_attacks_all(bp, 0))
        if minor_major == ZERO:
            # Pawn endings: the king on a passer's key square, and the opposition.
            f[36] = _on_key_square(white_passed, 1, wk) - _on_key_square(black_passed, 0, bk)
            files, ranks = abs((wk & 7) - (bk & 7)), abs((wk >> 3) - (bk >> 3))
            if (files == 0 and ranks % 2 == 0) or (ranks == 0 and files % 2 == 0):
                f[37] = -1.0 if turn else 1.0

    # Kings. Against a bare king the mop-up terms below steer both kings instead.
    black_bare = occ_b == kings & occ_b
    white_bare = occ_w == kings & occ_w
    if not (black_bare or white_bare):
        f[17] = (CENTRALITY[wk] - CENTRALITY[bk]) * eg
    if pawns and eg:
        # In an ending the king that stands among the pawns wins them or shepherds them.
        distance = 0
        bits = pawns
        while bits:
            sq = lsb(bits)
            bits &= bits - ONE
            distance += DISTANCE[bk, sq] - DISTANCE[wk, sq]
        f[34] = distance / popcount(pawns) * eg
    if mg != 0.0 and pawns:
        f[18] = (popcount(wp & SHELTER[1, wk]) - popcount(bp & SHELTER[0, bk])) * mg

    # Pieces: mobility, open files, seventh rank, knight centralisation.
    pieces = knights | bishops | rooks | queens
    if pieces:
        _pieces(f, occ_w, pieces, 1, wp, bp, 6, knights, bishops, rooks, occupied)
        _pieces(f, occ_b, pieces, -1, bp, wp, 1, knights, bishops, rooks, occupied)

    # Mop-up (a bare king) and drawish material; both need the material picture.
    if black_bare or white_bare or (knights | rooks | queens) == ZERO or wp == ZERO or bp == ZERO:
        w_mat = wpc + 3.2 * wn + 3.3 * wb + 5 * wr + 9.5 * wq
        b_mat = bpc + 3.2 * bn + 3.3 * bb_ + 5 * br + 9.5 * bq
        if (black_bare and w_mat >= 5) or (white_bare and b_mat >= 5):
            sign = 1 if black_bare else -1
            loser = bk if black_bare else wk
            winner = wk if black_bare else bk
            f[26] = sign * CENTER_MANHATTAN[loser]
            f[27] = sign * (14 - MANHATTAN[loser, winner])
            strong = occ_w if black_bare else occ_b
            if (pawns | rooks | queens) == ZERO and popcount(bishops & strong) == 1 and \
                    popcount(knights & strong) == 1:
                if bishops & strong & DARK_SQUARES:
                    corner = min(DISTANCE[loser, _A1], DISTANCE[loser, _H8])
                else:
                    corner = min(DISTANCE[loser, _A8], DISTANCE[loser, _H1])
                f[28] = sign * (7 - corner)
        # Every drawish pattern has no knight, rook and queen, or a strong side without pawns.
        strong_pawns = wp if w_mat > b_mat else bp
        if (knights | rooks | queens) == ZERO or strong_pawns == ZERO:
            if _drawish(occ_w, occ_b, wp, bp, knights, bishops, rooks, queens, kings, w_mat, b_mat):
                f[29] = w_mat - b_mat


@njit
def score(weights, f):
    """White's score: ``sum(weights[i] * f[i] for i >= 1)`` added left to right (the tempo is left out).

    A plain left-to-right sum, not Python 3.12's compensated ``sum()``: the same float on every Python.
    """
    total = 0.0
    for i in range(1, N_FEATURES):
        total += weights[i] * f[i]
    return total


@njit
def evaluate(bb, turn, weights, scratch, pawn_keys, pawn_terms):
    """Centipawns from the side to move: ``round(weights[0] + (score if White to move else -score))``.

    Python's ``round`` (half to even); ``scratch`` is a ``float64[N_FEATURES]`` left holding the features.
    """
    features_into(bb, turn, scratch, pawn_keys, pawn_terms)
    total = score(weights, scratch)
    return np.int64(np.rint(weights[0] + (total if turn else -total)))


@njit
def feature_rows(bbs, turns, out, pawn_keys, pawn_terms):
    """``features_into`` for every row: ``bbs`` ``uint64[n, 16]``, ``turns`` ``int64[n]``, ``out`` ``float64[n, F]``."""
    for k in range(bbs.shape[0]):
        features_into(bbs[k], turns[k], out[k], pawn_keys, pawn_terms)
