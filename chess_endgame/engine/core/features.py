"""The evaluation's features, compiled: the one definition behind :mod:`chess_endgame.engine.evaluation`.

The evaluation is tapered and linear in its weights. Each *term* of :data:`TERMS` is computed here from the
search core's bitboards (``bb``, see :mod:`.position`), from White's view (White's count minus Black's); each
has a middlegame and an endgame weight, blended by the phase ``mg`` (1 with all minor and major pieces on the
board, 0 with kings and pawns alone; ``eg = 1 - mg``), and the endgame part is multiplied by a scale factor
(:func:`scale_factor`: 1, or less in endings the stronger side rarely wins)::

    h = w_tempo + sign * sum_t (w_mg[t] * mg + w_eg[t] * eg * scale) * term_t

so the feature vector :func:`features_into` fills is ``[1, term_1 * mg, term_1 * eg * scale, term_2 * mg, ...]``
(:data:`FEATURES`), and :func:`evaluate` is its dot product with the weights: centipawns from the side to move.
The phase and the scale depend on the position only, never on the weights. The weights themselves may depend on
the number of men on the board (as an NNUE's output buckets do): :func:`evaluate` takes one row of weights for
each count of men, 0 to :data:`MAX_MEN`, and uses the row of the position's count.
"""

from __future__ import annotations

import numpy as np

from chess_endgame.engine.core.bits import (
    DARK_SQUARES,
    FILES,
    KING,
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
from chess_endgame.engine.core.masks import (
    ADJACENT_FILES,
    ATTACK_SPAN,
    CENTER_MANHATTAN,
    CENTRALITY,
    DISTANCE,
    ENEMY_HALF,
    FRONT_SPAN,
    KEY_SQUARES,
    KING_ZONE,
    MANHATTAN,
    PSQT_INDEX,
    SHELTER,
    STORM,
)
from chess_endgame.engine.core.pawns import PAWN_TERMS, new_pawn_table, pawn_entry
from chess_endgame.engine.core.scale import (
    A1,
    A8,
    H1,
    H8,
    KINGSIDE,
    QUEENSIDE,
    is_drawish,
    phase_and_scale,
    side_material,
)
from chess_endgame.engine.core.termnames import (
    FAMILIES,
    FEATURES,
    I_ATTACKERS,
    I_BAD_BISHOP,
    I_BISHOP,
    I_BISHOP_PAIR,
    I_CHECK,
    I_DRAWISH,
    I_HANGING,
    I_KBN,
    I_KEY_SQUARE,
    I_KING_CENTER,
    I_KING_PASSER,
    I_KING_PAWNS,
    I_KNIGHT,
    I_KNIGHT_CENTER,
    I_KNIGHT_OUTPOST,
    I_MINOR_THREAT,
    I_MOBILITY,
    I_MOP_EDGE,
    I_MOP_KINGS,
    I_OPEN_FILE,
    I_OPPOSITION,
    I_PASSED_FREE,
    I_PASSER_CONNECTED,
    I_PASSER_PATH,
    I_PASSER_THEM,
    I_PASSER_US,
    I_PAWN,
    I_PAWN_THREAT,
    I_PAWNS,
    I_PSQT,
    I_QUEEN,
    I_ROOK,
    I_ROOK_BEHIND,
    I_ROOK_THREAT,
    I_SEVENTH,
    I_SHELTER,
    I_STORM,
    I_UNSTOPPABLE,
    I_WIN,
    I_ZONE,
    MAPS_SIZE,
    MAX_MEN,
    MOBILITY_MAX,
    N_FEATURES,
    N_TERMS,
    NOTE_COUNT,
    SPARSE_END,
    SPARSE_FIRST,
    TERMS,
)

__all__ = ["FAMILIES", "FEATURES", "MAPS_SIZE", "MAX_MEN", "N_FEATURES", "N_TERMS", "SCRATCH_SIZE", "TERMS", "evaluate",
           "feature_rows", "features_into", "new_pawn_table", "phase_and_scale", "planar", "terms_into", "weighted_sum"]




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
def _passers(t, passed, color, sign, own_king, their_king, their_pieces, own_rooks, occupied, their_attacks, turn,
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
            t[I_PASSED_FREE] += sign * advanced
        if advanced >= 2:
            # A far pawn counts more: the kings' distances and an open path decide whether it runs.
            w = advanced - 1
            stop = sq + 8 if color else sq - 8
            t[I_PASSER_THEM] += sign * w * min(DISTANCE[their_king, stop], 5)
            t[I_PASSER_US] += sign * w * min(DISTANCE[own_king, stop], 5)
            if free and path & their_attacks == ZERO:
                t[I_PASSER_PATH] += sign * w
            elif SQUARE[stop] & (occupied | their_attacks) == ZERO:
                t[I_PASSER_PATH] += sign * w * 0.5
            if passed & ADJACENT_FILES[sq & 7]:
                t[I_PASSER_CONNECTED] += sign * w
        t[I_KING_PASSER] += sign * (DISTANCE[their_king, promo] - DISTANCE[own_king, promo])
        # Square rule: the defending king (moving next if it is its turn) cannot catch the pawn.
        if their_pieces == ZERO:
            to_go = min(7 - rank if color else rank, 5)  # a pawn on its first move advances two squares
            tempo = 0 if turn == color else 1
            if free and (DISTANCE[their_king, promo] - tempo > to_go or
                         _king_steps(their_king, promo, blocked & ~SQUARE[promo], to_go + tempo) - tempo > to_go):
                t[I_UNSTOPPABLE] += sign  # also when its own pawns or ours bar the king's way into the square
        if FRONT_SPAN[1 - color, sq] & own_rooks:
            t[I_ROOK_BEHIND] += sign


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
def _note(maps, term, color):
    """Note that the men of ``color`` add 1 (White) or -1 (Black) to ``term`` of the sparse block."""
    n = np.int64(maps[NOTE_COUNT])
    maps[NOTE_COUNT + 1 + n] = U64(2 * term + 1 - color)
    maps[NOTE_COUNT] = U64(n + 1)


@njit
def _side(t, bb, color, sign, occupied, maps):
    """One side's piece terms, added with ``sign``: piece-square tables, mobility, attacks on the enemy king's
    zone, outposts, rook files, bad bishops. Fills ``maps[6 * color + kind]`` with its attacks by piece type
    (``kind`` 0 pawns, 1 knights, 2 bishops, 3 rooks, 4 queens, 5 king)."""
    base = 8 * color
    them = 8 * (1 - color)
    own = bb[base]
    own_pawns, their_pawns = bb[base + 1], bb[them + 1]
    their_king = msb(bb[them + 6])
    pawn_guard = pawn_attacks_all(own_pawns, color)
    chased = pawn_attacks_all(their_pawns, 1 - color)
    area = ~own & ~chased
    zone = KING_ZONE[their_king]
    seventh = 6 if color else 1
    at = 6 * color
    maps[at] = pawn_guard
    maps[at + 5] = KING[msb(bb[base + 6])]
    for k in range(1, 5):
        maps[at + k] = ZERO
    bits = own_pawns
    while bits:
        sq = lsb(bits)
        bits &= bits - ONE
        _note(maps, I_PSQT + PSQT_INDEX[color, sq], color)
    king = msb(bb[base + 6])
    _note(maps, I_PSQT + 5 * 32 + PSQT_INDEX[color, king], color)
    attackers = 0
    for kind in range(1, 5):  # knights, bishops, rooks, queens
        bits = bb[base + 1 + kind]
        while bits:
            sq = lsb(bits)
            bits &= bits - ONE
            if kind == 1:
                attacks = KNIGHT[sq]
            elif kind == 2:
                attacks = bishop_attacks(sq, occupied)
            elif kind == 3:
                attacks = rook_attacks(sq, occupied)
            else:
                attacks = bishop_attacks(sq, occupied) | rook_attacks(sq, occupied)
            maps[at + kind] |= attacks
            _note(maps, I_PSQT + 32 * kind + PSQT_INDEX[color, sq], color)
            _note(maps, I_MOBILITY[kind - 1] + min(popcount(attacks & area), MOBILITY_MAX[kind - 1]), color)
            hits = attacks & zone
            if hits:
                attackers += 1
                t[I_ZONE + kind - 1] += sign * popcount(hits)
            if kind <= 2:
                if SQUARE[sq] & ENEMY_HALF[color] and SQUARE[sq] & pawn_guard and \
                        their_pawns & ATTACK_SPAN[color, sq] == ZERO:
                    t[I_KNIGHT_OUTPOST + kind - 1] += sign
                if kind == 1:
                    t[I_KNIGHT_CENTER] += sign * CENTRALITY[sq]
                else:
                    same = DARK_SQUARES if SQUARE[sq] & DARK_SQUARES else ~DARK_SQUARES
                    t[I_BAD_BISHOP] += sign * popcount(own_pawns & same)
            elif kind == 3:
                file_bb = FILES[sq & 7]
                if own_pawns & file_bb == ZERO:
                    t[I_OPEN_FILE] += sign * (0.5 if their_pawns & file_bb else 1.0)
                if sq >> 3 == seventh:
                    t[I_SEVENTH] += sign
    t[I_ATTACKERS] += sign * attackers


@njit
def _threats(t, bb, color, sign, occupied, maps):
    """Threats and safe checks of ``color`` against the other side, added with ``sign``."""
    them = 8 * (1 - color)
    their_pieces = bb[them] & ~bb[them + 1] & ~bb[them + 6]
    mine = 6 * color
    theirs = 6 * (1 - color)
    our_all = ZERO
    their_all = ZERO
    for k in range(6):
        our_all |= maps[mine + k]
        their_all |= maps[theirs + k]
    t[I_PAWN_THREAT] += sign * popcount(maps[mine] & their_pieces)
    t[I_MINOR_THREAT] += sign * popcount((maps[mine + 1] | maps[mine + 2]) & (bb[them + 4] | bb[them + 5]))
    t[I_ROOK_THREAT] += sign * popcount(maps[mine + 3] & bb[them + 5])
    t[I_HANGING] += sign * popcount(our_all & their_pieces & ~their_all)
    king = msb(bb[them + 6])
    safe = ~bb[8 * color] & ~their_all
    t[I_CHECK] += sign * popcount(KNIGHT[king] & maps[mine + 1] & safe)
    # The checking squares of the sliders are traced only for the sliders the side has.
    diagonal = bishop_attacks(king, occupied) if maps[mine + 2] | maps[mine + 4] else ZERO
    straight = rook_attacks(king, occupied) if maps[mine + 3] | maps[mine + 4] else ZERO
    t[I_CHECK + 1] += sign * popcount(diagonal & maps[mine + 2] & safe)
    t[I_CHECK + 2] += sign * popcount(straight & maps[mine + 3] & safe)
    t[I_CHECK + 3] += sign * popcount((diagonal | straight) & maps[mine + 4] & safe)


@njit
def terms_into(bb, turn, t, pawn_keys, pawn_terms, maps):
    """Fill ``t`` (``float64[N_TERMS]``) with the terms of ``bb`` (White's view), ``turn`` 1 = White to move;
    ``maps`` (``uint64[MAPS_SIZE]``) is scratch for the attack maps and the sparse block's notes."""
    _terms_and_notes(bb, turn, t, pawn_keys, pawn_terms, maps)
    for i in range(SPARSE_FIRST, SPARSE_END):
        t[i] = 0.0
    for j in range(np.int64(maps[NOTE_COUNT])):
        code = np.int64(maps[NOTE_COUNT + 1 + j])
        t[code >> 1] += 1.0 - 2.0 * (code & 1)


@njit
def _terms_and_notes(bb, turn, t, pawn_keys, pawn_terms, maps):
    """The terms of ``bb`` outside the sparse block into ``t`` (whose sparse block it leaves as it was), and the
    sparse block's as notes in ``maps`` (see :data:`MAPS_SIZE`)."""
    for i in range(SPARSE_FIRST):
        t[i] = 0.0
    for i in range(SPARSE_END, N_TERMS):
        t[i] = 0.0
    maps[NOTE_COUNT] = ZERO
    occ_b, occ_w = bb[0], bb[8]
    occupied = occ_w | occ_b
    wp, bp = bb[9], bb[1]
    pawns = wp | bp
    knights, bishops, rooks, queens, kings = bb[2] | bb[10], bb[3] | bb[11], bb[4] | bb[12], bb[5] | bb[13], \
        bb[6] | bb[14]
    wb, bb_ = popcount(bb[11]), popcount(bb[3])
    t[I_PAWN] = popcount(wp) - popcount(bp)
    t[I_KNIGHT] = popcount(bb[10]) - popcount(bb[2])
    t[I_BISHOP] = wb - bb_
    t[I_ROOK] = popcount(bb[12]) - popcount(bb[4])
    t[I_QUEEN] = popcount(bb[13]) - popcount(bb[5])
    t[I_BISHOP_PAIR] = (1 if wb >= 2 else 0) - (1 if bb_ >= 2 else 0)
    wk = msb(bb[14])
    bk = msb(bb[6])

    # Pieces first: their attack maps serve the passed pawns.
    # Pieces (piece-square tables, mobility, king attacks, outposts, files), then threats and safe checks.
    _side(t, bb, 1, 1, occupied, maps)
    _side(t, bb, 0, -1, occupied, maps)
    _threats(t, bb, 1, 1, occupied, maps)
    _threats(t, bb, 0, -1, occupied, maps)

    # Pawn structure (from the pawn hash table), then the passed pawns' other terms.
    white_passed = black_passed = ZERO
    if pawns:
        slot = pawn_entry(wp, bp, pawn_keys, pawn_terms)
        terms = pawn_terms[slot]
        for i in range(PAWN_TERMS):
            t[I_PAWNS + i] = terms[i]
        minor_major = knights | bishops | rooks | queens
        white_passed, black_passed = pawn_keys[slot, 2], pawn_keys[slot, 3]
        if white_passed:
            _passers(t, white_passed, 1, 1, wk, bk, minor_major & occ_b, rooks & occ_w, occupied,
                     _all_attacks(maps, 0), turn, bp | maps[6])
        if black_passed:
            _passers(t, black_passed, 0, -1, bk, wk, minor_major & occ_w, rooks & occ_b, occupied,
                     _all_attacks(maps, 1), turn, wp | maps[0])
        if minor_major == ZERO:
            # Pawn endings: the king on a passer's key square, and the opposition.
            t[I_KEY_SQUARE] = _on_key_square(white_passed, 1, wk) - _on_key_square(black_passed, 0, bk)
            files, ranks = abs((wk & 7) - (bk & 7)), abs((wk >> 3) - (bk >> 3))
            if (files == 0 and ranks % 2 == 0) or (ranks == 0 and files % 2 == 0):
                t[I_OPPOSITION] = -1.0 if turn else 1.0
        t[I_SHELTER] = popcount(wp & SHELTER[1, wk]) - popcount(bp & SHELTER[0, bk])
        t[I_STORM] = popcount(wp & STORM[0, bk]) - popcount(bp & STORM[1, wk])
        # In an ending the king that stands among the pawns wins them or shepherds them.
        distance = 0
        bits = pawns
        while bits:
            sq = lsb(bits)
            bits &= bits - ONE
            distance += DISTANCE[bk, sq] - DISTANCE[wk, sq]
        t[I_KING_PAWNS] = distance / popcount(pawns)

    # Kings. Against a bare king the mop-up terms below steer both kings instead.
    black_bare = occ_b == kings & occ_b
    white_bare = occ_w == kings & occ_w
    if not (black_bare or white_bare):
        t[I_KING_CENTER] = CENTRALITY[wk] - CENTRALITY[bk]

    # Mop-up (a bare king), drawish material and winnability; all need the material picture.
    w_mat, b_mat = side_material(bb, 1), side_material(bb, 0)
    if black_bare or white_bare or (knights | rooks | queens) == ZERO or wp == ZERO or bp == ZERO:
        if (black_bare and w_mat >= 5) or (white_bare and b_mat >= 5):
            sign = 1 if black_bare else -1
            loser = bk if black_bare else wk
            winner = wk if black_bare else bk
            t[I_MOP_EDGE] = sign * CENTER_MANHATTAN[loser]
            t[I_MOP_KINGS] = sign * (14 - MANHATTAN[loser, winner])
            strong = occ_w if black_bare else occ_b
            if (pawns | rooks | queens) == ZERO and popcount(bishops & strong) == 1 and \
                    popcount(knights & strong) == 1:
                if bishops & strong & DARK_SQUARES:
                    corner = min(DISTANCE[loser, A1], DISTANCE[loser, H8])
                else:
                    corner = min(DISTANCE[loser, A8], DISTANCE[loser, H1])
                t[I_KBN] = sign * (7 - corner)
        # Every drawish pattern has no knight, rook and queen, or a strong side without pawns.
        strong_pawns = wp if w_mat > b_mat else bp
        if (knights | rooks | queens) == ZERO or strong_pawns == ZERO:
            if is_drawish(bb, w_mat, b_mat):
                t[I_DRAWISH] = w_mat - b_mat

    # How winnable the lead is, for the side ahead.
    lead = w_mat - b_mat
    if abs(lead) >= 0.9:
        sign = 1.0 if lead > 0 else -1.0
        t[I_WIN] = sign * min(abs(lead), 4.0)
        t[I_WIN + 1] = sign * popcount(wp if lead > 0 else bp)
        t[I_WIN + 2] = sign * popcount(bp if lead > 0 else wp)
        t[I_WIN + 3] = sign * popcount(white_passed if lead > 0 else black_passed)
        if pawns & QUEENSIDE and pawns & KINGSIDE:
            t[I_WIN + 4] = sign
        if knights | bishops | rooks | queens == ZERO:
            t[I_WIN + 5] = sign


@njit
def _all_attacks(maps, color):
    """Every square the pieces of ``color`` attack, from the attack maps of :func:`_side`."""
    at = 6 * color
    return maps[at] | maps[at + 1] | maps[at + 2] | maps[at + 3] | maps[at + 4] | maps[at + 5]


#: The scratch :func:`evaluate` takes: the feature vector, then room for the maps scratch (:data:`MAPS_SIZE` uint64
#: words).
SCRATCH_SIZE = N_FEATURES + MAPS_SIZE


@njit
def _expand(out, mg, eg):
    """Spread the terms from out[1 + k] to out[1 + 2k] (times ``mg``) and out[2 + 2k] (times ``eg``), the last
    first (no term is overwritten before it is read), and set the tempo out[0] = 1."""
    for k in range(N_TERMS - 1, -1, -1):
        value = out[1 + k]
        out[1 + 2 * k] = value * mg
        out[2 + 2 * k] = value * eg
    out[0] = 1.0


@njit
def features_into(bb, turn, out, pawn_keys, pawn_terms, maps):
    """Fill ``out`` (``float64[N_FEATURES]``) with the feature vector of ``bb``: 1 (the tempo), then every
    term's middlegame part ``term * mg`` and endgame part ``term * eg * scale``, White's view; ``maps``
    (``uint64[MAPS_SIZE]``) is scratch."""
    terms_into(bb, turn, out[1:1 + N_TERMS], pawn_keys, pawn_terms, maps)
    mg, scale = phase_and_scale(bb)
    _expand(out, mg, (1.0 - mg) * scale)


def planar(matrix: np.ndarray) -> np.ndarray:
    """The weights by men in the feature vector's order (``float64[MAX_MEN + 1, N_FEATURES]``: the tempo, then each
    term's middlegame and endgame weight in turn) as :func:`evaluate` reads them: each row the tempo, then every
    term's middlegame weight, then every term's endgame weight (two contiguous runs, which the compiler vectorises
    better than the pairs)."""
    out = np.empty((matrix.shape[0], N_FEATURES), dtype=np.float64)
    out[:, 0] = matrix[:, 0]
    out[:, 1:1 + N_TERMS] = matrix[:, 1::2]
    out[:, 1 + N_TERMS:] = matrix[:, 2::2]
    return out


@njit(reassociate=True)
def weighted_sum(weights, raw, maps, mg, eg):
    """White's score before the tempo: ``sum(weights[1 + k] * term_k) * mg + sum(weights[1 + n + k] * term_k) * eg``
    over the ``n`` terms (White's view), with ``weights`` a row of :func:`planar` weights, the middlegame and
    endgame sums blended by ``mg`` and ``eg``; the terms are ``raw`` outside the sparse block and the notes in
    ``maps`` within it, as :func:`_terms_and_notes` leaves them.

    The dense sums are reassociated (see :func:`.jit.njit`) so that the compiler vectorises them, which is several
    times faster than a sum in order that skips the zero terms; the value equals the feature vector's dot
    product with the weights up to rounding in the last bits."""
    n = raw.shape[0]
    middle = 0.0
    end = 0.0
    for k in range(SPARSE_FIRST):
        middle += weights[1 + k] * raw[k]
        end += weights[1 + n + k] * raw[k]
    for k in range(SPARSE_END, n):
        middle += weights[1 + k] * raw[k]
        end += weights[1 + n + k] * raw[k]
    for j in range(np.int64(maps[NOTE_COUNT])):
        code = np.int64(maps[NOTE_COUNT + 1 + j])
        k = code >> 1
        sign = 1.0 - 2.0 * (code & 1)  # no branch: White's and Black's notes come mixed
        middle += sign * weights[1 + k]
        end += sign * weights[1 + n + k]
    return middle * mg + end * eg


@njit
def evaluate(bb, turn, weights, scratch, pawn_keys, pawn_terms):
    """Centipawns from the side to move: ``round(w[0] + (score if White to move else -score))``, with ``w`` the
    row of ``weights`` (:func:`planar`, ``float64[MAX_MEN + 1, N_FEATURES]``) for the number of men on the board
    and ``score`` White's :func:`weighted_sum` of the terms by ``w`` (Python's ``round``, half to even).
    ``scratch`` is ``float64[SCRATCH_SIZE]``."""
    weights = weights[popcount(bb[0] | bb[8])]
    raw = scratch[:N_TERMS]
    maps = scratch[N_FEATURES:].view(np.uint64)
    _terms_and_notes(bb, turn, raw, pawn_keys, pawn_terms, maps)
    mg, scale = phase_and_scale(bb)
    total = weighted_sum(weights, raw, maps, mg, (1.0 - mg) * scale)
    return np.int64(np.rint(weights[0] + (total if turn else -total)))


@njit(refcounted=True)
def feature_rows(bbs, turns, out, pawn_keys, pawn_terms):
    """``features_into`` for every row: ``bbs`` ``uint64[n, 16]``, ``turns`` ``int64[n]``, ``out`` ``float64[n, F]``."""
    maps = np.zeros(MAPS_SIZE, dtype=np.uint64)
    for k in range(bbs.shape[0]):
        features_into(bbs[k], turns[k], out[k], pawn_keys, pawn_terms, maps)
