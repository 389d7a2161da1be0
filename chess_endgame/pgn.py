"""Reading PGN files, the one reader: every game of a file with its number and line, the ones that cannot be
replayed (a parse error, an illegal move, a bad FEN, a variant) kept aside with the line of their first
error. python-chess parses; nothing is logged."""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass

import chess
import chess.pgn

from chess_endgame.board import clock_problem, illegal_because


class PgnError(ValueError):
    """The file cannot be read as PGN at all (missing, binary, no game in it)."""


@dataclass(frozen=True)
class PgnGame:
    """One game of a database, as text (python-chess's export of what was read)."""

    number: int                 # 1-based position in the file
    line: int                   # line of the file where it starts
    text: str


@dataclass(frozen=True)
class Skipped:
    """A game that could not be reviewed, and why."""

    number: int
    line: int
    error: str


class _Builder(chess.pgn.GameBuilder):
    """python-chess's game builder that keeps errors in ``game.errors`` without logging them, and where in
    ``handle`` (if given) the reader was at the first one: python-chess reads a line at a time, so that is
    the end of the line with the error."""

    def __init__(self, handle: io.StringIO | None = None) -> None:
        super().__init__()
        self._handle = handle

    def begin_game(self) -> None:
        super().begin_game()
        self.seen = False  # a tag or a move: something PGN-like
        self.error_offset: int | None = None

    def visit_header(self, tagname: str, tagvalue: str) -> None:
        self.seen = True
        super().visit_header(tagname, tagvalue)

    def visit_move(self, board: chess.Board, move: chess.Move) -> None:
        self.seen = True
        super().visit_move(board, move)

    def handle_error(self, error: Exception) -> None:
        self.game.errors.append(error)
        if self.error_offset is None and self._handle is not None:
            self.error_offset = self._handle.tell()

    def result(self) -> chess.pgn.Game:
        game = super().result()
        game.seen = self.seen  # type: ignore[attr-defined]
        game.error_offset = self.error_offset  # type: ignore[attr-defined]
        return game


def parse_game(text: str) -> chess.pgn.Game | None:
    """The first game of ``text`` (errors in ``game.errors``, nothing logged)."""
    return chess.pgn.read_game(io.StringIO(text), Visitor=_Builder)


def read_games(path: str) -> tuple[list[PgnGame], list[Skipped]]:
    """Every game of the PGN file ``path`` (``-``: standard input): the good ones and the skipped ones.

    :raises PgnError: when the file cannot be read, is binary, or holds no game at all.
    """
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except OSError as exc:
        raise PgnError(f"cannot read {path}: {exc.strerror or exc}") from None
    if b"\0" in data:
        raise PgnError(f"{path} is not a PGN file (binary data)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")  # old databases often are: their names kept, not replaced by U+FFFD
    handle = io.StringIO(text)
    line, counted = 1, 0  # line number at character offset ``counted``
    games: list[PgnGame] = []
    skipped: list[Skipped] = []
    number = 0
    while True:
        offset = handle.tell()
        game = chess.pgn.read_game(handle, Visitor=lambda: _Builder(handle))
        if game is None:
            break
        start = _skip_blanks(text, offset)
        line, counted = line + text.count("\n", counted, start), start
        if not game.seen and not game.errors:  # type: ignore[attr-defined]
            if text[offset:handle.tell()].strip():
                number += 1
                skipped.append(Skipped(number, line, "not a PGN game (no tags, no moves)"))
            continue
        number += 1
        problem = game_problem(game)
        if problem is not None:
            at = game.error_offset  # type: ignore[attr-defined]
            # The line of the error itself (an illegal move), else of the game's start.
            skipped.append(Skipped(number, line if at is None else text.count("\n", 0, max(at - 1, 0)) + 1, problem))
        else:
            games.append(PgnGame(number, line, str(game)))
    if not games and not skipped:
        raise PgnError(f"{path} holds no PGN game")
    if not games and all(s.error.startswith("not a PGN game") for s in skipped):
        raise PgnError(f"{path} is not a PGN file (no tags, no moves)")
    return games, skipped


def _skip_blanks(text: str, offset: int) -> int:
    """The offset of the first non-blank character at or after ``offset`` (where a game's text starts)."""
    while offset < len(text) and text[offset].isspace():
        offset += 1
    return offset


def game_problem(game: chess.pgn.Game) -> str | None:
    """Why ``game`` cannot be reviewed (a parse error, a bad FEN, a variant, an illegal start), or None."""
    if game.errors:
        return str(game.errors[0])
    try:
        board = game.board()
    except ValueError as exc:
        return f"bad FEN: {exc}"
    problem = clock_problem(board)
    if problem:
        return f"bad FEN: {problem}"
    if board.uci_variant != "chess":  # type: ignore[attr-defined]
        return f"variant {game.headers.get('Variant', board.uci_variant)!r} is not supported"
    if board.chess960 and board.castling_rights:
        return "a Chess960 game with castling rights: the searcher plays standard chess only"
    problem = illegal_because(board)
    if problem:
        return f"illegal start position {game.headers.get('FEN', board.fen())!r}: {problem}"
    return None
