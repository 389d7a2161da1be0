"""Seeded random legal positions of a given material, e.g. ``"KRPvKR"``.

Used to sample table contents (``tablebases verify --deep``), benchmarks,
property tests and the tuner. The material string names White's pieces, then
``v``, then Black's, with one king each side (Syzygy table names).
"""

from __future__ import annotations

import random

import chess

_PIECE_TYPES = {"K": chess.KING, "Q": chess.QUEEN, "R": chess.ROOK, "B": chess.BISHOP,
                "N": chess.KNIGHT, "P": chess.PAWN}
_PAWN_SQUARES = [sq for sq in chess.SQUARES if 1 <= chess.square_rank(sq) <= 6]


def parse_material(material: str) -> tuple[list[chess.PieceType], list[chess.PieceType]]:
    """Piece types of White and Black in ``"KRPvKR"``; :exc:`ValueError` if malformed."""
    try:
        white, black = material.upper().split("V")
    except ValueError:
        raise ValueError(f"material {material!r} is not of the form KRPvKR") from None
    if white.count("K") != 1 or black.count("K") != 1 or any(c not in _PIECE_TYPES for c in white + black):
        raise ValueError(f"material {material!r} needs one K per side and only KQRBNP letters")
    return [_PIECE_TYPES[c] for c in white], [_PIECE_TYPES[c] for c in black]


def random_position(material: str, rng: random.Random, *, turn: chess.Color | None = None,
                    max_tries: int = 10000) -> chess.Board:
    """A random legal position (valid, no castling, no en passant) of ``material``.

    Pieces are placed uniformly on free squares (pawns on ranks 2-7); positions
    where the side not to move is in check are redrawn. ``turn`` fixes the side
    to move, else it is random too.
    """
    white, black = parse_material(material)
    for _ in range(max_tries):
        board = chess.Board(None)
        board.turn = rng.choice(chess.COLORS) if turn is None else turn
        ok = True
        for color, types in ((chess.WHITE, white), (chess.BLACK, black)):
            for piece_type in types:
                pool = _PAWN_SQUARES if piece_type == chess.PAWN else chess.SQUARES
                free = [sq for sq in pool if not board.piece_at(sq)]
                if not free:
                    ok = False
                    break
                board.set_piece_at(rng.choice(free), chess.Piece(piece_type, color))
        if ok and board.is_valid():
            return board
    raise ValueError(f"could not place a legal position of {material} in {max_tries} tries")
