"""Pawn structure, computed from the pawns alone and kept in a pawn hash table.

The table is two arrays indexed by slot (:func:`new_pawn_table`):

- ``pawn_keys``: ``uint64[size, 4]``: white pawns, black pawns (the key, compared in full, so colliding
  structures never share terms), white passed pawns, black passed pawns;
- ``pawn_terms``: ``float64[size, PAWN_TERMS]``: the terms below, White's view (White's minus Black's).

``size`` is a power of two. An all-zero row is an empty slot: a position without pawns never looks the table
up. The table is not locked: one table per thread.
"""

from __future__ import annotations

import numpy as np

from chess_endgame.engine.core.bits import FILES, ONE, SQUARE, U64, ZERO, lsb, pawn_attacks_all, popcount
from chess_endgame.engine.core.jit import njit
from chess_endgame.engine.core.masks import ADJACENT_FILES, ATTACK_SPAN, FRONT_SPAN, PASSED_MASK, SUPPORT_SPAN

#: The pawn terms, in their slots of ``pawn_terms``.
PAWN_TERM_NAMES = (
    "pawn_advance",      # ranks advanced, summed
    "passed",            # passed pawns
    "passed_rank_sq",    # (ranks advanced)^2 of the passed pawns, summed
    "doubled",           # pawns with an own pawn in front on their file
    "isolated",          # pawns without own pawns on the next files
    "backward",          # unsupported pawns whose stop square an enemy pawn attacks
    "outside_passer",    # files (at most 4) from the own farthest passer to the nearest enemy pawn
    "phalanx",           # pawns with an own pawn beside them on the same rank
    "supported",         # pawns an own pawn defends
    "candidate",         # not passed, the file ahead free, at least as many helpers as enemy sentries
    "passed_adv_0", "passed_adv_1", "passed_adv_2",   # passed pawns by ranks advanced (0: on its 2nd rank)
    "passed_adv_3", "passed_adv_4", "passed_adv_5",
)
PAWN_TERMS = len(PAWN_TERM_NAMES)
PAWN_TABLE_SIZE = 16384


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
    own_attacks = pawn_attacks_all(own, color)
    passed = ZERO
    bits = own
    while bits:
        sq = lsb(bits)
        bits &= bits - ONE
        rank = sq >> 3
        advanced = rank - 1 if color else 6 - rank
        terms[0] += sign * advanced
        neighbours = own & ADJACENT_FILES[sq & 7]
        if neighbours == ZERO:
            terms[4] += sign  # isolated
        elif own & SUPPORT_SPAN[color, sq] == ZERO:
            stop = sq + 8 if color else sq - 8
            if 0 <= stop < 64:
                if their_attacks & SQUARE[stop]:
                    terms[5] += sign  # backward: unsupported, and its stop square is attacked
        if neighbours & (U64(0xFF) << U64(rank * 8)):
            terms[7] += sign  # phalanx
        if own_attacks & SQUARE[sq]:
            terms[8] += sign  # supported
        ahead = own & FRONT_SPAN[color, sq]
        if ahead:
            terms[3] += sign  # doubled
        if their & PASSED_MASK[color, sq] == ZERO and ahead == ZERO:
            passed |= SQUARE[sq]
            terms[1] += sign
            terms[2] += sign * advanced * advanced
            terms[10 + advanced] += sign
        elif ahead == ZERO and their & FRONT_SPAN[color, sq] == ZERO:
            sentries = popcount(their & ATTACK_SPAN[color, sq])
            helpers = popcount(own & SUPPORT_SPAN[color, sq])
            if helpers >= sentries:
                terms[9] += sign  # candidate passer
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
