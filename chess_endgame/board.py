"""Boards: from user input (FEN + moves) with clear errors, at random for a material, and simple tests of them.

Every front end (CLI, UCI, suite runner) goes through :func:`parse_position`,
so the same input is accepted or refused with the same words everywhere.
:func:`random_position` gives seeded random legal positions of a material such
as ``"KRPvKR"`` (White's pieces, ``v``, Black's; one king each, as Syzygy table
names): for table checks (``tablebases verify --deep``), benchmarks, property
tests and the tuner.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Iterator

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
#: The largest halfmove clock and move number a FEN may give (2^31 - 1; the compiled core keeps them in int64).
MAX_CLOCK = 2**31 - 1


class PositionError(ValueError):
    """Input that does not describe a legal position; the message says what is wrong."""


def parse_fen(fen: str) -> chess.Board:
    """A legal board from a FEN (the clocks may be omitted, underscores may stand for the spaces, as in Lichess's
    and syzygy-tables.info's addresses); :exc:`PositionError` otherwise."""
    text = " ".join(fen.replace("_", " ").split())
    if not text:
        raise PositionError("empty FEN")
    try:
        board = chess.Board(text)
    except ValueError as exc:
        raise PositionError(f"invalid FEN {text!r}: {exc}") from None
    problem = clock_problem(board)
    if problem:
        raise PositionError(f"invalid FEN {text[:100]!r}: {problem}")
    problem = illegal_because(board)
    if problem:
        raise PositionError(f"illegal position {text!r}: {problem}")
    fields = text.split()
    if board.status() & chess.STATUS_BAD_CASTLING_RIGHTS and len(fields) > 2 and set(fields[2]) - set("KQkq-"):
        # Rights by the rooks' files (Shredder-FEN) that standard chess cannot keep: a Chess960 position.
        raise PositionError(f"illegal position {text!r}: castling rights {fields[2]} of Chess960; only standard "
                            "chess is played")
    return board


def illegal_because(board: chess.Board) -> str | None:
    """Why ``board`` is not a legal position, in words ("the en passant square is impossible"), or None; castling
    rights without their king or rook and checks no game could reach are tolerated, as :func:`parse_fen` does."""
    status = board.status() & ~_TOLERATED
    if not status:
        return None
    reasons = [words for flag, words in _STATUS_TEXT.items() if status & flag]
    return ", ".join(reasons) if reasons else repr(status)


def clock_problem(board: chess.Board) -> str | None:
    """What is wrong with ``board``'s halfmove clock or move number (above :data:`MAX_CLOCK`), or None."""
    for what, number in (("halfmove clock", board.halfmove_clock), ("move number", board.fullmove_number)):
        if number > MAX_CLOCK:
            return f"the {what} is above {MAX_CLOCK}"
    return None


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


def is_quiet(board: chess.Board) -> bool:
    """No check and no capture or promotion pending for the side to move: the static eval is fair."""
    if board.is_check():
        return False
    return not any(board.is_capture(m) or m.promotion for m in board.legal_moves)


_PIECE_TYPES = {"K": chess.KING, "Q": chess.QUEEN, "R": chess.ROOK, "B": chess.BISHOP,
                "N": chess.KNIGHT, "P": chess.PAWN}
_PAWN_SQUARES = [sq for sq in chess.SQUARES if 1 <= chess.square_rank(sq) <= 6]
_PAWN_SQUARE_SET = frozenset(_PAWN_SQUARES)


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
    placing = [(piece_type, color) for color, types in ((chess.WHITE, white), (chess.BLACK, black))
               for piece_type in types]
    for _ in range(max_tries):
        turn_now = rng.choice(chess.COLORS) if turn is None else turn
        # The free squares in ascending order, all and those pawns may stand on: the same draws
        # as scanning the board for empty squares before each piece, without the scans.
        free_all, free_pawn = list(chess.SQUARES), list(_PAWN_SQUARES)
        pieces: dict[chess.Square, chess.Piece] = {}
        for piece_type, color in placing:
            free = free_pawn if piece_type == chess.PAWN else free_all
            if not free:
                break
            square = rng.choice(free)
            free_all.remove(square)
            if square in _PAWN_SQUARE_SET:
                free_pawn.remove(square)
            pieces[square] = chess.Piece(piece_type, color)
        else:
            board = chess.Board(None)
            board.set_piece_map(pieces)
            board.turn = turn_now
            if board.is_valid():
                return board
    raise ValueError(f"could not place a legal position of {material} in {max_tries} tries")


#: A full FEN (with the halfmove clock and move number) where EPD has only four fields, then the
#: operations: ``8/8/... w - - 0 1 bm Kd4;``, as many suites are written.
_FEN_COUNTERS = re.compile(r"^\s*(\S+\s+\S+\s+\S+\s+\S+)\s+(\d+)\s+(\d+)(?=\s|;|$)(.*)$")


def read_epd(line: str) -> tuple[chess.Board, dict]:
    """The board and operations of an EPD line, also when it holds a full FEN with its move counters.

    The counters of a full FEN set the clocks (``hmvc``/``fmvn`` operations win
    when both are given). :exc:`ValueError` (python-chess's words) for a line that is neither.
    """
    match = _FEN_COUNTERS.match(line)
    if match is None:
        board, ops = chess.Board.from_epd(line)
    else:
        position, halfmove, fullmove, operations = match.groups()
        board, ops = chess.Board.from_epd(f"{position} {operations.strip() if operations.strip(' ;') else ''}")
        if "hmvc" not in ops:
            board.halfmove_clock = int(halfmove)
        if "fmvn" not in ops:
            board.fullmove_number = max(1, int(fullmove))
    problem = clock_problem(board)  # the counters, or the hmvc and fmvn operations
    if problem:
        raise ValueError(problem)
    return board, ops


def read_text(path: str, what: str = "EPD or FEN lines", *, kind: str = "") -> str:
    """The text of a file a user named (a byte-order mark is not part of line 1); ``kind`` names the file in
    errors ("suite": ``cannot read suite PATH``).

    :raises ValueError: in one line naming the file: it cannot be read, or it is not text (of ``what``).
    """
    name = f"{kind} {path}" if kind else path
    try:
        with open(path, encoding="utf-8-sig") as f:
            return f.read()
    except UnicodeDecodeError:
        raise ValueError(f"cannot read {name}: {_not_utf8(path, what)}") from None
    except OSError as exc:
        raise ValueError(f"cannot read {name}: {exc.strerror or exc}") from None


def _not_utf8(path: str, what: str) -> str:
    """Why a file that failed to decode is not text: binary (a NUL byte), else the first line that is not UTF-8."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        data = b"\0"
    if b"\0" in data:
        return f"not a text file of {what}"
    try:
        data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return f"line {line} is not UTF-8 text (save the file as UTF-8)"
    return f"not a text file of {what}"


def epd_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of every line of an EPD or FEN file's text but blank lines and ``#`` comments."""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            yield number, stripped


#: Points of a game result for White (python-chess's result strings).
RESULT_POINTS = {"1-0": 1.0, "1/2-1/2": 0.5, "0-1": 0.0}


#: How a game ended, in the words of every report.
TERMINATIONS = {
    chess.Termination.CHECKMATE: "checkmate", chess.Termination.STALEMATE: "stalemate",
    chess.Termination.INSUFFICIENT_MATERIAL: "insufficient material",
    chess.Termination.FIFTY_MOVES: "50-move rule", chess.Termination.THREEFOLD_REPETITION: "threefold repetition",
    chess.Termination.SEVENTYFIVE_MOVES: "75-move rule", chess.Termination.FIVEFOLD_REPETITION: "fivefold repetition",
}


def outcome(board: chess.Board) -> chess.Outcome | None:
    """:meth:`chess.Board.outcome`, with the 50-move rule and threefold repetition claimed the moment they hold.

    That is a halfmove clock of 100 and the third occurrence of the position, and
    not a move early, as ``claim_draw=True`` would (where a move *could* reach
    them): a side at halfmove clock 99 that can still zero wins. Checkmate comes
    first, as in the rules.
    """
    over = board.outcome()
    if over is None and board.halfmove_clock >= 100:
        return chess.Outcome(chess.Termination.FIFTY_MOVES, None)
    if over is None and board.is_repetition(3):
        return chess.Outcome(chess.Termination.THREEFOLD_REPETITION, None)
    return over
