"""Linear evaluation ``h(s) = w0 + sum_i w_i * f_i(s)`` with endgame features.

Features are computed from python-chess bitboards, from White's view (White's
term minus Black's); :func:`evaluate` negates them for Black to move and adds
the tempo weight ``w0`` for the side to move, so scores are centipawns from
the side to move. Weights live in one named numpy vector read from
``data/weights.json`` (rewritten by ``chess-endgame tune``).

Phase ``mg`` runs from 1 (all minor and major pieces on the board) to 0 (bare
kings and pawns); ``eg = 1 - mg``. Features named ``*_eg`` / ``*_mg`` are
scaled by it, so the evaluation stays linear in its weights.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from operator import mul
from typing import TextIO

import chess
import numpy as np

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
    "king_center_eg",      # king centralisation (0 edge .. 3 centre), x eg
    "king_shelter_mg",     # own pawns in front of the king, x mg
    "mobility_knight", "mobility_bishop", "mobility_rook", "mobility_queen",
    "rook_open_file",      # 1 per rook on an open file, 0.5 on a half-open one
    "rook_seventh",
    "knight_center",       # knight centralisation (0 edge .. 3 centre)
    "mop_edge",            # lone defender: its king's Manhattan distance from the centre (0..6)
    "mop_kings",           # lone defender: 14 - Manhattan distance between the kings
    "kbn_corner",          # KBNvK: 7 - distance of the lone king to a corner of the bishop's colour
    "drawish",             # material balance (pawns) when the material is drawish (weight < 0 scales it down)
)
INDEX = {name: i for i, name in enumerate(FEATURES)}
_N = len(FEATURES)

WEIGHTS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "weights.json")

# -- square tables ---------------------------------------------------------------

_FILE = [sq & 7 for sq in range(64)]
_RANK = [sq >> 3 for sq in range(64)]
#: 0 on the edge .. 3 in the four centre squares (Chebyshev).
CENTRALITY = [3 - max(abs(2 * f - 7), abs(2 * r - 7)) // 2 for r in range(8) for f in range(8)]
#: Manhattan distance from the centre, 0..6.
CENTER_MANHATTAN = [(max(3 - f, f - 4)) + (max(3 - r, r - 4)) for r in range(8) for f in range(8)]
_FILE_MASKS = [chess.BB_FILES[f] for f in range(8)]
_ADJACENT_FILES = [(_FILE_MASKS[f - 1] if f > 0 else 0) | (_FILE_MASKS[f + 1] if f < 7 else 0) for f in range(8)]


def _forward_ranks(rank: int, color: chess.Color) -> int:
    mask = 0
    for r in (range(rank + 1, 8) if color == chess.WHITE else range(rank)):
        mask |= chess.BB_RANKS[r]
    return mask


#: Squares a pawn of ``color`` on ``sq`` must pass (own and adjacent files ahead): empty of enemy pawns = passed.
PASSED_MASK = [[(_FILE_MASKS[_FILE[sq]] | _ADJACENT_FILES[_FILE[sq]]) & _forward_ranks(_RANK[sq], c)
                for sq in range(64)] for c in (chess.BLACK, chess.WHITE)]
#: Squares ahead of a pawn on its own file.
FRONT_SPAN = [[_FILE_MASKS[_FILE[sq]] & _forward_ranks(_RANK[sq], c) for sq in range(64)]
              for c in (chess.BLACK, chess.WHITE)]
#: Adjacent-file squares level with or behind a pawn (where its supporters stand).
SUPPORT_SPAN = [[_ADJACENT_FILES[_FILE[sq]] & ~_forward_ranks(_RANK[sq], c) for sq in range(64)]
                for c in (chess.BLACK, chess.WHITE)]
DISTANCE = [[chess.square_distance(a, b) for b in range(64)] for a in range(64)]
MANHATTAN = [[chess.square_manhattan_distance(a, b) for b in range(64)] for a in range(64)]


def _shelter_mask(king: int, color: chess.Color) -> int:
    """The two ranks in front of the king on its own and the adjacent files."""
    ahead = 0
    for dr in (1, 2):
        rr = _RANK[king] + dr if color else _RANK[king] - dr
        if 0 <= rr < 8:
            ahead |= chess.BB_RANKS[rr]
    return (_FILE_MASKS[_FILE[king]] | _ADJACENT_FILES[_FILE[king]]) & ahead


SHELTER = [[_shelter_mask(sq, c) for sq in range(64)] for c in (chess.BLACK, chess.WHITE)]
_KNIGHT = chess.BB_KNIGHT_ATTACKS
_DIAG, _DIAG_MASK = chess.BB_DIAG_ATTACKS, chess.BB_DIAG_MASKS
_FILE_ATT, _FILE_MASK = chess.BB_FILE_ATTACKS, chess.BB_FILE_MASKS
_RANK_ATT, _RANK_MASK = chess.BB_RANK_ATTACKS, chess.BB_RANK_MASKS
_DARK_CORNERS = (chess.A1, chess.H8)
_LIGHT_CORNERS = (chess.A8, chess.H1)

_NOMINAL = {chess.PAWN: 1.0, chess.KNIGHT: 3.2, chess.BISHOP: 3.3, chess.ROOK: 5.0, chess.QUEEN: 9.5}


# -- weights ------------------------------------------------------------------------


class WeightsError(ValueError):
    """A weight file that does not match :data:`FEATURES`."""


@dataclass(frozen=True)
class Weights:
    """The weight vector, indexed like :data:`FEATURES`."""

    vector: np.ndarray
    source: str = "hand"

    def __getitem__(self, name: str) -> float:
        return float(self.vector[INDEX[name]])

    def as_dict(self) -> dict[str, float]:
        return {name: float(v) for name, v in zip(FEATURES, self.vector, strict=True)}


def load_weights(path: str = WEIGHTS_FILE) -> Weights:
    """Read a weight file; :exc:`WeightsError` names any missing or extra feature."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as exc:  # ValueError: not UTF-8 (UnicodeDecodeError), not JSON
        raise WeightsError(f"cannot read weight file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    weights = data.get("weights") if isinstance(data, dict) else None
    if not isinstance(weights, dict):
        raise WeightsError(f"{path}: expected an object with a 'weights' mapping")
    missing = [n for n in FEATURES if n not in weights]
    extra = [n for n in weights if n not in INDEX]
    if missing or extra:
        parts = ([f"missing {', '.join(missing)}"] if missing else []) + \
                ([f"unknown {', '.join(extra)}"] if extra else [])
        raise WeightsError(f"{path}: weight names do not match the features: {'; '.join(parts)}")
    values = [weights[n] for n in FEATURES]
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
        raise WeightsError(f"{path}: every weight must be a finite number")
    return Weights(np.array(values, dtype=np.float64), str(data.get("source", "unknown")))


def save_weights(weights: Weights, out: str | TextIO = WEIGHTS_FILE, *, comment: str = "") -> None:
    """Write a weight file to the path (or open text file) ``out``."""
    data = {"comment": comment or "Weights of the linear evaluation (chess_endgame/evaluation.py).",
            "source": weights.source,
            "weights": {n: round(float(v), 3) for n, v in zip(FEATURES, weights.vector, strict=True)}}
    if not isinstance(out, str):
        json.dump(data, out, indent=2)
        out.write("\n")
        return
    with open(out, "w", encoding="utf-8") as f:
        save_weights(weights, f, comment=comment)


# -- features -----------------------------------------------------------------------


def _pawn_terms(wp: int, bp: int) -> tuple[list[float], int, int]:
    """Pawn-structure features that depend on pawns only, and the passed pawn sets."""
    terms = [0.0] * 6  # advance, passed, passed_rank, doubled, isolated, backward
    passed = [0, 0]
    for color, own, their, sign in ((chess.WHITE, wp, bp, 1), (chess.BLACK, bp, wp, -1)):
        pm, fs, ss = PASSED_MASK[color], FRONT_SPAN[color], SUPPORT_SPAN[color]
        their_attacks = _pawn_attacks(their, not color)
        for sq in chess.scan_forward(own):
            advanced = _RANK[sq] - 1 if color else 6 - _RANK[sq]
            terms[0] += sign * advanced
            f = _FILE[sq]
            if not own & _ADJACENT_FILES[f]:
                terms[4] += sign
            elif not own & ss[sq]:
                stop = sq + 8 if color else sq - 8
                if 0 <= stop < 64 and (their_attacks >> stop) & 1:
                    terms[5] += sign
            if own & fs[sq]:
                terms[3] += sign
            if not their & pm[sq] and not own & fs[sq]:
                passed[color] |= 1 << sq
                terms[1] += sign
                terms[2] += sign * advanced * advanced
    return terms, passed[chess.WHITE], passed[chess.BLACK]


def _pawn_attacks(pawns: int, color: chess.Color) -> int:
    if color == chess.WHITE:
        return ((pawns & ~chess.BB_FILE_A) << 7 | (pawns & ~chess.BB_FILE_H) << 9) & chess.BB_ALL
    return (pawns & ~chess.BB_FILE_A) >> 9 | (pawns & ~chess.BB_FILE_H) >> 7


_pawn_cache: dict[tuple[int, int], tuple[list[float], int, int]] = {}


def features(board: chess.Board) -> list[float]:
    """The feature vector of ``board`` (White's view; ``tempo`` is 1), ordered like :data:`FEATURES`."""
    f = [0.0] * _N
    f[0] = 1.0
    occ_b, occ_w = board.occupied_co
    occupied = board.occupied
    pawns, knights, bishops, rooks, queens, kings = (board.pawns, board.knights, board.bishops,
                                                     board.rooks, board.queens, board.kings)
    wp, bp = pawns & occ_w, pawns & occ_b
    wn, bn = (knights & occ_w).bit_count(), (knights & occ_b).bit_count()
    wb, bb = (bishops & occ_w).bit_count(), (bishops & occ_b).bit_count()
    wr, br = (rooks & occ_w).bit_count(), (rooks & occ_b).bit_count()
    wq, bq = (queens & occ_w).bit_count(), (queens & occ_b).bit_count()
    wpc, bpc = wp.bit_count(), bp.bit_count()
    f[1], f[2], f[3], f[4], f[5] = wpc - bpc, wn - bn, wb - bb, wr - br, wq - bq
    f[6] = (wb >= 2) - (bb >= 2)
    mg = min(24, wn + bn + wb + bb + 2 * (wr + br) + 4 * (wq + bq)) / 24.0
    eg = 1.0 - mg
    wk, bk = (kings & occ_w).bit_length() - 1, (kings & occ_b).bit_length() - 1

    # Pawn structure (cached by pawn placement).
    if pawns:
        key = (wp, bp)
        cached = _pawn_cache.get(key)
        if cached is None:
            if len(_pawn_cache) > 50000:
                _pawn_cache.clear()
            cached = _pawn_cache[key] = _pawn_terms(wp, bp)
        terms, w_passed, b_passed = cached
        f[7] = terms[0] * eg
        f[8] = terms[1]
        f[9] = terms[2] * eg
        f[14], f[15], f[16] = terms[3], terms[4], terms[5]
        if w_passed or b_passed:
            _passer_terms(f, board, w_passed, b_passed, wk, bk, eg, occupied)

    # Kings.
    f[17] = (CENTRALITY[wk] - CENTRALITY[bk]) * eg
    if mg and pawns:
        f[18] = ((wp & SHELTER[1][wk]).bit_count() - (bp & SHELTER[0][bk]).bit_count()) * mg

    # Pieces: mobility, open files, seventh rank, knight centralisation.
    pieces = knights | bishops | rooks | queens
    if pieces:
        mob_n = mob_b = mob_r = mob_q = centre = seventh_rank = 0
        open_files = 0.0
        for own, sign, own_pawns, their_pawns, seventh in ((occ_w, 1, wp, bp, 6), (occ_b, -1, bp, wp, 1)):
            free = ~own
            n = b = r = q = c = sev = 0
            opened = 0.0
            bits = pieces & own
            while bits:
                low = bits & -bits
                bits ^= low
                sq = low.bit_length() - 1
                if low & knights:
                    n += (_KNIGHT[sq] & free).bit_count()
                    c += CENTRALITY[sq]
                elif low & bishops:
                    b += (_DIAG[sq][_DIAG_MASK[sq] & occupied] & free).bit_count()
                elif low & rooks:
                    r += ((_FILE_ATT[sq][_FILE_MASK[sq] & occupied]
                           | _RANK_ATT[sq][_RANK_MASK[sq] & occupied]) & free).bit_count()
                    file_bb = _FILE_MASKS[sq & 7]
                    if not own_pawns & file_bb:
                        opened += 0.5 if their_pawns & file_bb else 1.0
                    if sq >> 3 == seventh:
                        sev += 1
                else:
                    q += ((_DIAG[sq][_DIAG_MASK[sq] & occupied] | _FILE_ATT[sq][_FILE_MASK[sq] & occupied]
                           | _RANK_ATT[sq][_RANK_MASK[sq] & occupied]) & free).bit_count()
            if sign > 0:
                mob_n, mob_b, mob_r, mob_q, centre, seventh_rank, open_files = n, b, r, q, c, sev, opened
            else:
                mob_n -= n
                mob_b -= b
                mob_r -= r
                mob_q -= q
                centre -= c
                seventh_rank -= sev
                open_files -= opened
        f[19], f[20], f[21], f[22] = mob_n, mob_b, mob_r, mob_q
        f[23], f[24], f[25] = open_files, seventh_rank, centre

    # Mop-up (a bare king) and drawish material; both need the material picture.
    black_bare = occ_b == kings & occ_b
    white_bare = occ_w == kings & occ_w
    if black_bare or white_bare or not (knights | rooks | queens) or not wp or not bp:
        w_mat = wpc + 3.2 * wn + 3.3 * wb + 5 * wr + 9.5 * wq
        b_mat = bpc + 3.2 * bn + 3.3 * bb + 5 * br + 9.5 * bq
        if black_bare and w_mat >= 5 or white_bare and b_mat >= 5:
            sign = 1 if black_bare else -1
            loser, winner = (bk, wk) if black_bare else (wk, bk)
            f[26] = sign * CENTER_MANHATTAN[loser]
            f[27] = sign * (14 - MANHATTAN[loser][winner])
            strong = occ_w if black_bare else occ_b
            if (not (pawns | rooks | queens) and (bishops & strong).bit_count() == 1
                    and (knights & strong).bit_count() == 1):
                dark = bool(bishops & strong & chess.BB_DARK_SQUARES)
                corners = _DARK_CORNERS if dark else _LIGHT_CORNERS
                f[28] = sign * (7 - min(DISTANCE[loser][c] for c in corners))
        # Every drawish pattern has no knight, rook and queen, or a strong side without pawns.
        if (not (knights | rooks | queens) or not (wp if w_mat > b_mat else bp)) and \
                _drawish(board, wp, bp, w_mat, b_mat):
            f[29] = w_mat - b_mat
    return f


def _passer_terms(f: list[float], board: chess.Board, w_passed: int, b_passed: int, wk: int, bk: int,
                  eg: float, occupied: int) -> None:
    occ_b, occ_w = board.occupied_co
    rooks = board.rooks
    for color, passed, sign, own_king, their_king in ((chess.WHITE, w_passed, 1, wk, bk),
                                                      (chess.BLACK, b_passed, -1, bk, wk)):
        their_pieces = (occ_b if color else occ_w) & ~board.pawns & ~board.kings
        for sq in chess.scan_forward(passed):
            advanced = _RANK[sq] - 1 if color else 6 - _RANK[sq]
            promo = (sq | 56) if color else (sq & 7)
            if not FRONT_SPAN[color][sq] & occupied:
                f[10] += sign * advanced
            f[12] += sign * (DISTANCE[their_king][promo] - DISTANCE[own_king][promo]) * eg
            # Square rule: the defending king (moving next if it is its turn) cannot catch the pawn.
            if not their_pieces:
                to_go = 7 - _RANK[sq] if color else _RANK[sq]
                to_go = min(to_go, 5)  # a pawn on its first move advances two squares
                tempo = 0 if board.turn == color else 1
                if DISTANCE[their_king][promo] - tempo > to_go and not FRONT_SPAN[color][sq] & occupied:
                    f[11] += sign
            behind = FRONT_SPAN[not color][sq] & rooks & (occ_w if color else occ_b)
            if behind:
                f[13] += sign


def _drawish(board: chess.Board, wp: int, bp: int, w_mat: float, b_mat: float) -> bool:
    """Material configurations where the side ahead usually cannot win."""
    bishops, (occ_b, occ_w) = board.bishops, board.occupied_co
    minors_majors = board.knights | board.rooks | board.queens
    if (not minors_majors and (bishops & occ_w).bit_count() == 1 and (bishops & occ_b).bit_count() == 1
            and bool(bishops & occ_w & chess.BB_DARK_SQUARES) != bool(bishops & occ_b & chess.BB_DARK_SQUARES)):
        return abs(w_mat - b_mat) <= 2.5  # opposite-coloured bishops, at most two pawns up
    strong_pawns = wp if w_mat > b_mat else bp
    if not strong_pawns and abs(w_mat - b_mat) < 4.0:
        return True  # no pawns and less than a rook up: KRvKB, KBvKN, KRBvKR, ...
    strong_all = occ_w if w_mat > b_mat else occ_b
    if not strong_pawns and strong_all & ~board.kings == strong_all & board.knights:
        return True  # knights alone cannot force mate: KNNvK
    # Bishop and rook pawn(s) of the wrong colour against a lone king.
    strong = occ_w if w_mat > b_mat else occ_b
    weak = occ_b if w_mat > b_mat else occ_w
    if (weak & ~board.kings == 0 and not minors_majors and (bishops & strong).bit_count() == 1
            and strong_pawns):
        for file_mask, promo_w, promo_b in ((chess.BB_FILE_A, chess.A8, chess.A1),
                                            (chess.BB_FILE_H, chess.H8, chess.H1)):
            if strong_pawns & ~file_mask == 0:
                promo = promo_w if strong == occ_w else promo_b
                dark_bishop = bool(bishops & strong & chess.BB_DARK_SQUARES)
                return dark_bishop != bool(chess.BB_SQUARES[promo] & chess.BB_DARK_SQUARES)
    return False


# -- evaluation ----------------------------------------------------------------------


class Evaluator:
    """Scores positions with a weight vector: centipawns from the side to move."""

    def __init__(self, weights: Weights | None = None) -> None:
        self.weights = weights or load_weights()
        self._tempo = float(self.weights.vector[0])
        # White's score leaves the tempo out (weight 0 here), so a colour-flipped position scores
        # exactly the negation: the sum of negated terms is the negated sum.
        self._w = [0.0] + [float(v) for v in self.weights.vector[1:]]

    def evaluate(self, board: chess.Board) -> int:
        score = sum(map(mul, self._w, features(board)))
        return round(self._tempo + (score if board.turn else -score))

    def contributions(self, board: chess.Board) -> list[tuple[str, float, float, float]]:
        """(name, feature value from the side to move, weight, contribution) for every feature."""
        f = features(board)
        sign = 1 if board.turn else -1
        rows = []
        for i, name in enumerate(FEATURES):
            value = f[i] if i == 0 else sign * f[i]
            rows.append((name, value + 0.0, float(self.weights.vector[i]), value * float(self.weights.vector[i]) + 0.0))
        return rows


def feature_matrix(boards: Sequence[chess.Board]) -> np.ndarray:
    """Features of many positions from the side to move's view: an (N, len(FEATURES)) array."""
    rows = np.array([features(b) for b in boards], dtype=np.float64).reshape(len(boards), len(FEATURES))
    turns = np.array([1.0 if b.turn else -1.0 for b in boards])
    rows[:, 1:] *= turns[:, None]
    return rows
