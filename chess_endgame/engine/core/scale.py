"""Endgame scale factors and drawish material: the fixed rules (not weights) that say when the side ahead
rarely wins, and the game phase the evaluation blends its middlegame and endgame weights by."""

from __future__ import annotations

from chess_endgame.engine.core.bits import DARK_SQUARES, FILES, SQUARE, ZERO, popcount
from chess_endgame.engine.core.jit import njit

A1, H1, A8, H8 = 0, 7, 56, 63
QUEENSIDE = FILES[0] | FILES[1] | FILES[2] | FILES[3]
KINGSIDE = FILES[4] | FILES[5] | FILES[6] | FILES[7]


#: The drawish material patterns :func:`drawish_pattern` tells apart (0: none).
OPPOSITE_BISHOPS, LESS_THAN_A_ROOK, KNIGHTS_ONLY, WRONG_BISHOP = 1, 2, 3, 4


@njit
def drawish_pattern(bb, w_mat, b_mat):
    """Which material pattern the side ahead usually cannot win with, 0 for none (and with equal material):
    ``OPPOSITE_BISHOPS`` (one bishop each of opposite colours and pawns, any count), ``LESS_THAN_A_ROOK`` (the
    side ahead has no pawns and its pieces outweigh the other side's by less than a rook: KRvKB, KBvKN, KRBvKR,
    KRvKBP; not KRvKPP), ``KNIGHTS_ONLY`` (no pawns, knights alone: KNNvK) or ``WRONG_BISHOP`` (a bishop and
    rook pawns of the wrong colour against a bare king). ``w_mat``/``b_mat`` from :func:`side_material`."""
    if w_mat == b_mat:
        return 0
    knights, bishops, rooks, queens = bb[2] | bb[10], bb[3] | bb[11], bb[4] | bb[12], bb[5] | bb[13]
    if (knights | rooks | queens) == ZERO and popcount(bb[3]) == 1 and popcount(bb[11]) == 1 and \
            (bb[3] & DARK_SQUARES != ZERO) != (bb[11] & DARK_SQUARES != ZERO):
        return OPPOSITE_BISHOPS
    white_ahead = w_mat > b_mat
    strong, weak = (1, 0) if white_ahead else (0, 1)
    strong_pawns = bb[8 * strong + 1]
    strong_occ, weak_occ = bb[8 * strong], bb[8 * weak]
    kings = bb[6] | bb[14]
    if strong_pawns == ZERO and abs(w_mat - popcount(bb[9]) - b_mat + popcount(bb[1])) < 4.0:
        return LESS_THAN_A_ROOK
    if strong_pawns == ZERO and strong_occ & ~kings == strong_occ & knights:
        return KNIGHTS_ONLY
    if weak_occ & ~kings == ZERO and (knights | rooks | queens) == ZERO and popcount(bishops & strong_occ) == 1 \
            and strong_pawns != ZERO and wrong_bishop(bishops & strong_occ, strong_pawns, white_ahead):
        return WRONG_BISHOP
    return 0


@njit
def is_drawish(bb, w_mat, b_mat):
    """Whether the side ahead usually cannot win: a :func:`drawish_pattern`, opposite-coloured bishops only
    when at most two pawns up."""
    pattern = drawish_pattern(bb, w_mat, b_mat)
    if pattern == OPPOSITE_BISHOPS:
        return abs(w_mat - b_mat) <= 2.5
    return pattern != 0


@njit
def wrong_bishop(bishop, pawns, white):
    """Rook pawns all on one rook file whose promotion square is not of the bishop's colour."""
    dark_bishop = bishop & DARK_SQUARES != ZERO
    if pawns & ~FILES[0] == ZERO:
        promo = A8 if white else A1
        return dark_bishop != (SQUARE[promo] & DARK_SQUARES != ZERO)
    if pawns & ~FILES[7] == ZERO:
        promo = H8 if white else H1
        return dark_bishop != (SQUARE[promo] & DARK_SQUARES != ZERO)
    return False


@njit
def side_material(bb, color):
    """Material of ``color`` in pawns (fixed values: the scale factors and the mop-up must not depend on the
    weights)."""
    base = 8 * color
    return (popcount(bb[base + 1]) + 3.2 * popcount(bb[base + 2]) + 3.3 * popcount(bb[base + 3])
            + 5.0 * popcount(bb[base + 4]) + 9.5 * popcount(bb[base + 5]))


@njit
def phase_and_scale(bb):
    """(``mg``, the endgame scale factor) of a position: ``mg`` from the minor and major pieces (1 with all of
    them, 0 with none); the scale 1, or less in endings the side ahead in material rarely wins:

    - opposite-coloured bishops and pawns only: 1/2;
    - the side ahead has no pawns and its pieces outweigh the other side's by less than a rook (KRvKB, KRBvKR,
      KRvKBP; not KRvKPP or KQvKRPP, where pawns make up the other side's material): 1/4;
    - a bishop and rook pawns of the wrong colour against a bare king: 0.

    (A rook ending a pawn up with every pawn on one wing at 3/4 lost an SPRT: the side ahead wins those more often
    than the evaluation said; docs/architecture.md.)
    """
    knights, bishops, rooks, queens = bb[2] | bb[10], bb[3] | bb[11], bb[4] | bb[12], bb[5] | bb[13]
    count = popcount(knights) + popcount(bishops) + 2 * popcount(rooks) + 4 * popcount(queens)
    mg = min(24, count) / 24.0
    w_mat, b_mat = side_material(bb, 1), side_material(bb, 0)
    pattern = drawish_pattern(bb, w_mat, b_mat)
    if pattern == OPPOSITE_BISHOPS:
        return mg, 0.5
    if pattern == LESS_THAN_A_ROOK or pattern == KNIGHTS_ONLY:
        return mg, 0.25
    if pattern == WRONG_BISHOP:
        return mg, 0.0
    return mg, 1.0
