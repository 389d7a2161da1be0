"""Time management: a soft target and a hard stop for one move, from the clock.

All times in milliseconds. ``Move Overhead`` is kept back on every move for
the GUI's and the transport's lag, so the engine never loses on time: the hard
stop leaves the overhead and a share of the remaining time untouched.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Moves assumed left in the game when the GUI does not say (sudden death / increment).
DEFAULT_MOVES_TO_GO = 30
#: Searched moves assumed left for a position ``n`` pieces beyond the tables' reach: a few moves
#: for each piece still to be traded, after which the tables answer at once (see :func:`moves_left`).
#: In 300 games at 10+0.1 from 6- to 10-piece starts with 5-piece tables, a side had on average
#: 10.4, 17.2, 13.6, 16.4 and 17.7 moves left with 6, 7, 8, 9 and 10 pieces on the board (medians
#: 6 to 14). 8 + 3 a piece kept 40% of the clock unspent at the end of the average game, 6 + 2 still
#: 32% (3.9 s of 12.3 against Stockfish at 10+0.1), while the moves that decide these games are the
#: first few: 4 + 2 a piece (6, 8, 10, 12, 14) spends more of the clock on them.
MOVES_PER_PIECE_BEYOND_TABLES, MOVES_BEYOND_TABLES_MIN = 2, 4
#: The engine's own latency between the deadline and the bestmove reaching the GUI (Python
#: threads, the final info line), kept back on top of Move Overhead.
LATENCY_MS = 10


#: Kept for a tablebase root's move ranking (ms), beyond the hard stop when the clock allows:
#: ``chess-endgame bench choose`` measured its worst case at 32-38 ms (p99.9 30-32 ms) over 1117
#: cold roots of the 56 shared materials at clocks 0..99; about three times that, for slower machines.
RANKING_MS = 100


@dataclass(frozen=True)
class Budget:
    """Milliseconds for this move.

    No new iteration after ``soft``; stop at ``hard`` once depth 1 is complete;
    ``clock`` is when the clock itself (less the overhead) would run out: nothing
    runs past it, not even depth 1.
    """

    soft: int
    hard: int
    clock: int


def budget(time_left: int, increment: int = 0, moves_to_go: int | None = None, overhead: int = 10,
           horizon: int = DEFAULT_MOVES_TO_GO) -> Budget:
    """The budget for one move with ``time_left`` on our clock.

    ``moves_to_go`` counts the moves to the next time control (UCI
    ``movestogo``), including this one; without it a sudden-death game is
    assumed to need ``horizon`` more searched moves (:func:`moves_left`), and
    the increment is spent almost fully.
    """
    time_left = max(0, time_left)
    increment = max(0, increment)
    overhead = max(0, overhead)
    moves = min(moves_to_go, 50) if moves_to_go is not None and moves_to_go > 0 else max(1, horizon)
    # Like Stockfish, the overhead is paid on every move still to come and the increment earned on
    # each; but that reserve never takes more than half the clock, so the budget shrinks with the
    # time left instead of collapsing to nothing while seconds remain.
    reserve = min(overhead * (2 + moves), time_left / 2)
    soft = max(1.0, time_left - reserve + increment * (moves - 1)) / moves
    if moves_to_go is not None and moves_to_go > 0:
        # Never more than a third of the clock at once, half of it on the move before the control.
        hard = min(time_left / 3 if moves > 1 else time_left / 2, soft * 3)
    else:
        hard = min(time_left / 4, soft * 4)
    clock = max(1, time_left - overhead - LATENCY_MS)
    hard = max(1.0, min(hard, time_left - 2 * overhead - LATENCY_MS))
    soft = max(1.0, min(soft, hard))
    return Budget(int(soft), int(hard), int(clock))


#: How the soft budget stretches with the iterations (see :class:`Stretch`): a best move that changed adds
#: this share, halved at each later iteration; a best move kept for STABLE_DEPTHS iterations takes STABLE off;
#: a score falling by FALL_CP since FALL_BACK iterations earlier adds half the budget, rising takes a quarter off.
CHANGE, STABLE, STABLE_DEPTHS = 1.0, 0.25, 8
FALL_CP, FALL_BACK = 100, 4
STRETCH_MIN, STRETCH_MAX = 0.5, 2.5


@dataclass
class Stretch:
    """The share of the soft budget one move's search may use, from how its iterations went, as Stockfish's
    time manager: more while the best move changes or the score falls, less once the best move has stood for
    many iterations. Scores are centipawns from the side to move; moves are compared by equality."""

    changes: float = 0.0
    best: object = None
    best_since: int = 0
    scores: list[int] = field(default_factory=list)

    def after_iteration(self, depth: int, best: object, score: int, decided: bool = False) -> float:
        """The share of the soft budget (1.0: all of it, as planned) after the iteration at ``depth`` chose
        ``best`` with ``score``; ``decided``: the score is a mate or a tablebase result, for which 1.0."""
        self.changes /= 2
        if best != self.best:
            if self.best is not None:
                self.changes += CHANGE
            self.best, self.best_since = best, depth
        self.scores.append(score)
        if decided:
            return 1.0
        earlier = self.scores[max(0, len(self.scores) - 1 - FALL_BACK)]
        falling = min(1.5, max(0.75, 1 + (earlier - score) / (2 * FALL_CP)))
        stable = 1 - STABLE if depth - self.best_since >= STABLE_DEPTHS else 1.0
        return min(STRETCH_MAX, max(STRETCH_MIN, falling * (1 + self.changes) * stable))


def moves_left(pieces: int, table_pieces: int) -> int:
    """Moves still to be searched in a sudden-death game: the tables answer instantly once they cover
    the position, so with ``pieces`` on the board and tables of ``table_pieces`` (0: none) the search
    plans for :data:`MOVES_BEYOND_TABLES_MIN` plus :data:`MOVES_PER_PIECE_BEYOND_TABLES` a piece beyond
    them, never more than :data:`DEFAULT_MOVES_TO_GO`."""
    if table_pieces <= 0:
        return DEFAULT_MOVES_TO_GO
    beyond = max(0, pieces - table_pieces)
    return min(DEFAULT_MOVES_TO_GO, MOVES_BEYOND_TABLES_MIN + MOVES_PER_PIECE_BEYOND_TABLES * beyond)


def ranking_deadline(start: float, deadline: float | None, clock_deadline: float | None) -> float | None:
    """When a tablebase root's move ranking must stop (``time.monotonic()`` instants, seconds).

    :data:`RANKING_MS` is reserved for it beyond the hard ``deadline``, as far as
    the clock allows, so the move played at a tablebase root is always of the best
    class. Without a game clock (move time, depth, nodes, infinite) it always
    completes: None.
    """
    if clock_deadline is None:
        return None
    return min(clock_deadline, max(deadline if deadline is not None else start, start + RANKING_MS / 1000))
