"""Building a board from user input (FEN + moves), with clear errors.

Every front end (CLI, UCI, suite runner) goes through :func:`parse_position`,
so the same input is accepted or refused with the same words everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable

import chess

_STATUS_TEXT = {
    chess.STATUS_NO_WHITE_KING: "White has no king",
    chess.STATUS_NO_BLACK_KING: "Black has no king",
    chess.STATUS_TOO_MANY_KINGS: "too many kings",
    chess.STATUS_TOO_MANY_WHITE_PAWNS: "White has more than 8 pawns",
    chess.STATUS_TOO_MANY_BLACK_PAWNS: "Black has more than 8 pawns",
    chess.STATUS_PAWNS_ON_BACKRANK: "pawns on the first or last rank",
    chess.STATUS_TOO_MANY_WHITE_PIECES: "White has more than 16 pieces",
    chess.STATUS_TOO_MANY_BLACK_PIECES: "Black has more than 16 pieces",
    chess.STATUS_INVALID_EP_SQUARE: "the en passant square is impossible",
    chess.STATUS_OPPOSITE_CHECK: "the side not to move is in check",
    chess.STATUS_EMPTY: "the board is empty",
    chess.STATUS_TOO_MANY_CHECKERS: "more than two pieces give check",
}

#: Irregularities that are normalised rather than refused: castling rights
#: without the king or rook in place are dropped (python-chess prints them
#: cleaned too), and checks that could not arise in a game are still playable.
_TOLERATED = chess.STATUS_BAD_CASTLING_RIGHTS | chess.STATUS_IMPOSSIBLE_CHECK


class PositionError(ValueError):
    """Input that does not describe a legal position; the message says what is wrong."""


def parse_fen(fen: str) -> chess.Board:
    """A legal board from a FEN (the clocks may be omitted); :exc:`PositionError` otherwise."""
    text = " ".join(fen.split())
    if not text:
        raise PositionError("empty FEN")
    try:
        board = chess.Board(text)
    except ValueError as exc:
        raise PositionError(f"invalid FEN {text!r}: {exc}") from None
    status = board.status() & ~_TOLERATED
    if status:
        reasons = [words for flag, words in _STATUS_TEXT.items() if status & flag]
        raise PositionError(f"illegal position {text!r}: {', '.join(reasons) or status!r}")
    return board


def apply_moves(board: chess.Board, moves: Iterable[str]) -> chess.Board:
    """Play UCI moves on ``board`` (in place; returned for chaining); :exc:`PositionError` naming a bad one."""
    for ply, text in enumerate(moves, 1):
        try:
            move = chess.Move.from_uci(text)
        except ValueError:
            raise PositionError(f"move {ply} {text!r} is not a UCI move (like e2e4 or e7e8q)") from None
        if not board.is_legal(move):
            raise PositionError(f"move {ply} {text!r} is illegal in {board.fen()}")
        board.push(move)
    return board


def parse_position(fen: str, moves: Iterable[str] = ()) -> chess.Board:
    """The board after ``moves`` (UCI) from ``fen``: game history kept for repetitions."""
    return apply_moves(parse_fen(fen), moves)
