"""What a search is asked and what it answers: :class:`Limits` in, :class:`Info` as it goes, one :class:`SearchResult`
out, which flows unchanged to every front end (UCI, the CLI, suite, review, serve). Scores are centipawns or
mates from the side to move, as python-chess's ``Cp``/``Mate``."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import chess
import chess.engine

from chess_endgame.engine.core.treestate import MATE, MATE_BOUND

_MOVES: dict[int, chess.Move] = {}


def encode(move: chess.Move) -> int:
    """The int code of a move: ``from | to << 6 | promotion << 12``."""
    return move.from_square | move.to_square << 6 | (move.promotion or 0) << 12


def decode(code: int) -> chess.Move:
    """The (shared, cached) :class:`chess.Move` of a code."""
    code = int(code)
    move = _MOVES.get(code)
    if move is None:
        move = _MOVES[code] = chess.Move(code & 63, code >> 6 & 63, (code >> 12) or None)
    return move


@dataclass
class Limits:
    """When to stop. Any combination; none at all means: until :attr:`stop` is set.

    ``movetime`` is in milliseconds; ``deadline``, ``soft_deadline`` and
    ``clock_deadline`` are ``time.monotonic()`` instants: the search starts no new
    iteration after the soft deadline and stops at the hard one or after
    ``movetime``, but only once depth 1 (with its quiescence search) is complete,
    so that the move played was searched. ``clock_deadline`` is when the game
    clock itself would run out: nothing runs past it, not even depth 1, and a
    tablebase root's ranking stops there too. ``nodes`` and ``stop`` are exact.
    Fields may change while a search runs (UCI ``ponderhit``); ``stop`` is
    thread-safe.
    """

    depth: int | None = None
    nodes: int | None = None
    movetime: int | None = None
    deadline: float | None = None
    soft_deadline: float | None = None
    clock_deadline: float | None = None
    mate: int | None = None
    searchmoves: list[chess.Move] | None = None
    infinite: bool = False
    stop: threading.Event = field(default_factory=threading.Event)

    @classmethod
    def of(cls, limit: chess.engine.Limit) -> Limits:
        """The search limits of a python-chess :class:`chess.engine.Limit` (its time, depth, nodes and mate;
        clock fields are the time manager's business and are not read here)."""
        return cls(depth=limit.depth, nodes=limit.nodes, mate=limit.mate,
                   movetime=None if limit.time is None else max(1, round(limit.time * 1000)))


def score_of(value: int) -> chess.engine.Score:
    """python-chess's ``Cp`` or ``Mate`` of a value of the tree (centipawns, mates as ``MATE - plies``), from the
    side to move: a mate in ``n`` moves (negative: getting mated)."""
    if value >= MATE_BOUND:
        return chess.engine.Mate((MATE - value + 1) // 2)
    if value <= -MATE_BOUND:
        return chess.engine.Mate(-((MATE + value) // 2))
    return chess.engine.Cp(value)


def uci_words(score: chess.engine.Score) -> str:
    """A score in UCI's words, from the side to move: ``cp 12``, ``mate -3`` (``mate 0``: mated)."""
    return f"mate {score.mate()}" if score.is_mate() else f"cp {score.score()}"


def score_json(score: chess.engine.Score | None) -> dict | None:
    """A score for JSON output: ``{"cp": 12}`` or ``{"mate": -3}`` (None: no score)."""
    if score is None:
        return None
    return {"mate": score.mate()} if score.is_mate() else {"cp": score.score()}


@dataclass
class Info:
    """Progress after an iteration (one MultiPV line of it), or a front end's final word.

    ``score`` is None when no search produced one; ``wdl`` is an exact win/draw/loss
    in permille when it is known (a tablebase verdict), else front ends estimate it.
    """

    depth: int
    seldepth: int
    score: chess.engine.Score | None
    nodes: int
    nps: int
    tbhits: int
    hashfull: int
    time_ms: int
    pv: list[chess.Move]
    multipv: int = 1
    bound: str | None = None  # "lowerbound" / "upperbound" after an aspiration fail
    wdl: tuple[int, int, int] | None = None


@dataclass
class SearchResult:
    """The search's answer. ``score`` is None when no search reached a score (a limit came
    before the first root move was searched); ``bound`` is "lowerbound" when the score is that
    of a move an unfinished iteration proved best so far."""

    best_move: chess.Move | None
    ponder_move: chess.Move | None
    score: chess.engine.Score | None
    pv: list[chess.Move]
    depth: int
    seldepth: int
    nodes: int
    tbhits: int
    time_ms: int
    #: Every MultiPV line of the last completed iteration: (score, pv).
    lines: list[tuple[chess.engine.Score, list[chess.Move]]] = field(default_factory=list)
    bound: str | None = None
