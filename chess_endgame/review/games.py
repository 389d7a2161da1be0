"""Reading a PGN database and reviewing its games in parallel through the batch runner.

A game that cannot be replayed (a bad FEN, an illegal move, a variant) is a
:class:`Skipped` with its number and line; the others are reviewed. Workers
build their own probers from :attr:`ReviewSpec.make_prober` and
:attr:`ReviewSpec.make_remote` (picklable callables), so ``review`` takes
whatever probers the front end chose.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from chess_endgame.batch.local import LocalProcesses
from chess_endgame.batch.protocol import Backend, BatchResult
from chess_endgame.batch.runner import run_batch
from chess_endgame.pgn import PgnGame, Skipped, parse_game
from chess_endgame.review.reviewer import GameReview, Reviewer, ReviewOptions
from chess_endgame.tablebase.prober import Prober
from chess_endgame.tablebase.remote import RemoteProber


@dataclass(frozen=True)
class ReviewSpec:
    """What a worker needs (picklable): how to build its probers, and the review options."""

    make_prober: Callable[[], Prober]
    options: ReviewOptions = ReviewOptions()
    #: Builds the remote prober asked where the local tables do not reach (None: local tables only).
    make_remote: Callable[[], RemoteProber] | None = None


class ReviewWorker:
    """Reviews games in one process (a worker of :mod:`chess_endgame.batch`)."""

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
