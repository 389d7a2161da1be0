"""Reading a PGN database and reviewing its games in parallel through the batch runner.

A game that cannot be replayed (a bad FEN, an illegal move, a variant) is a
:class:`Skipped` with its number and line; the others are reviewed. Workers
build their own probers from :attr:`ReviewSpec.make_prober` and
:attr:`ReviewSpec.make_remote` (picklable callables), so ``review`` takes
whatever probers the front end chose.
"""

from __future__ import annotations

import functools
import io
import sys
from collections.abc import Callable
from dataclasses import dataclass

import chess
import chess.pgn

from chess_endgame.batch.local import LocalProcesses
from chess_endgame.batch.protocol import Backend, BatchResult
from chess_endgame.batch.runner import run_batch
from chess_endgame.review.reviewer import GameReview, Reviewer, ReviewOptions, game_problem
from chess_endgame.tablebase.prober import Prober
from chess_endgame.tablebase.remote import RemoteProber


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
    text = data.decode("utf-8-sig", errors="replace")  # old databases are often Latin-1: keep going
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


@dataclass(frozen=True)
class ReviewSpec:
    """What a worker needs (picklable): how to build its probers, and the review options."""

    make_prober: Callable[[], Prober]
    options: ReviewOptions = ReviewOptions()
    #: Builds the remote prober asked where the local tables do not reach (None: local tables only).
    make_remote: Callable[[], RemoteProber] | None = None


class ReviewWorker:
    """Reviews games in one process (a worker of :mod:`..batch`)."""

    def __init__(self, spec: ReviewSpec) -> None:
        self.prober = spec.make_prober()
        self.remote = spec.make_remote() if spec.make_remote is not None else None
        self.reviewer = Reviewer(self.prober, spec.options, remote=self.remote)

    def run(self, game: PgnGame) -> GameReview | Skipped:
        parsed = parse_game(game.text)
        try:
            if parsed is None:
                raise ValueError("empty game")
            return self.reviewer.review(parsed, game.number)
        except Exception as exc:  # noqa: BLE001 - one bad game must not cost the others
            message = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
            return Skipped(game.number, game.line, message)

    def close(self) -> None:
        self.prober.close()
        if self.remote is not None:
            self.remote.close()


def review_games(games: list[PgnGame], spec: ReviewSpec, *, jobs: int = 1, backend: Backend | None = None,
                 on_result: Callable[[GameReview | Skipped], None] | None = None
                 ) -> BatchResult[GameReview | Skipped]:
    """Review ``games`` in ``jobs`` processes (or on ``backend``); Ctrl-C keeps the games done.

    Results come back in the order of ``games``; a game that failed is a :class:`Skipped`, and so is one
    whose worker (a Ray actor, its node) died under it twice.
    """
    return run_batch(functools.partial(ReviewWorker, spec), games, backend=backend or LocalProcesses(jobs),
                     on_result=on_result, failed=_given_up)


def _given_up(game: PgnGame, why: str) -> Skipped:
    return Skipped(game.number, game.line, f"{why} (retried once; it died again)")
