"""UCI ``go``: its parameters read into the search's :class:`~chess_endgame.engine.result.Limits` and the clock's
budget (:func:`parse_go`).

A bad parameter is reported through ``warn`` (the engine sends it as an ``info string``) and ignored; the rest of
the command stands. Times are in milliseconds, as UCI gives them; deadlines in :func:`time.monotonic` seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import chess

from chess_endgame.engine.player import DEFAULT_MOVETIME_MS
from chess_endgame.engine.result import Limits
from chess_endgame.engine.search import MAX_PLY
from chess_endgame.engine.timeman import budget, moves_left

#: The parameters that take a number.
NUMBERS = frozenset({"wtime", "btime", "winc", "binc", "movestogo", "movetime", "depth", "nodes", "mate"})
#: Every parameter ``go`` knows: a bad number is never taken to be one of them.
KEYWORDS = NUMBERS | {"infinite", "ponder", "searchmoves"}
#: The largest number a parameter takes (2^31 - 1: milliseconds of almost 25 days); a larger one is taken as this.
LARGEST = 2**31 - 1


@dataclass
class Go:
    """A ``go`` command, read: the limits of its search; under the clock, the time manager's (soft, hard, clock)
    budget in milliseconds (a pondering search starts its deadlines from it at ``ponderhit``); whether it
    ponders; and a pondering search's move time in milliseconds, which runs from ``ponderhit`` as the clock does
    (not in ``limits``, whose move time runs from ``go``)."""

    limits: Limits
    budget_ms: tuple[float, float, float] | None
    ponder: bool
    ponder_movetime_ms: int | None = None
    #: The ``go`` said ``infinite`` (a pondering search's ``limits.infinite`` is set whatever it said): after
    #: ``ponderhit`` it still searches until ``stop``.
    infinite: bool = False


def parse_go(args: list[str], board: chess.Board, *, overhead: int, table_pieces: int,
             warn: Callable[[str], None]) -> Go:
    """Read the words after ``go`` for ``board`` (the position to search). ``overhead`` is the ``Move Overhead``
    option (ms), ``table_pieces`` the most pieces the tables present cover (0: none). Without any limit (and
    neither ``infinite`` nor ``ponder``) the search gets :data:`DEFAULT_MOVETIME_MS`, so that every ``go`` ends
    by itself."""
    numbers: dict[str, int] = {}
    searchmoves: list[chess.Move] = []
    ponder = infinite = False
    i = 0
    while i < len(args):
        token = args[i]
        if token in NUMBERS:
            value = args[i + 1] if i + 1 < len(args) else None
            try:
                number = int(value)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                warn(f"go {token} needs an integer, got {value!r}; ignored")
                i += 2 if value is not None and value not in KEYWORDS else 1
                continue
            if number > LARGEST:
                shown = value if len(value) <= 20 else value[:20] + "..."  # type: ignore[arg-type,index]
                warn(f"go {token} {shown}: too large; taken as {LARGEST}")
                number = LARGEST
            if number < 0 and token not in ("wtime", "btime"):
                warn(f"go {token} {number}: must not be negative; ignored")
            elif number == 0 and token in ("depth", "nodes", "mate", "movestogo"):
                warn(f"go {token} 0: must be positive; ignored")
            else:
                numbers[token] = number
            i += 2
        elif token == "infinite":
            infinite, i = True, i + 1
        elif token == "ponder":
            ponder, i = True, i + 1
        elif token == "searchmoves":
            i += 1
            while i < len(args) and args[i] not in KEYWORDS:
                try:
                    move = chess.Move.from_uci(args[i])
                except ValueError:
                    move = None
                if move is None or move not in board.legal_moves:
                    warn(f"searchmoves: {args[i]} is not a legal move here; ignored")
                else:
                    searchmoves.append(move)
                i += 1
        else:
            warn(f"go: unknown parameter {token!r}; ignored")
            i += 1
    limits = Limits(infinite=infinite, searchmoves=searchmoves or None)
    if "depth" in numbers:
        limits.depth = min(numbers["depth"], MAX_PLY)
    if "nodes" in numbers:
        limits.nodes = numbers["nodes"]
    if "mate" in numbers:
        limits.mate = numbers["mate"]
    if "movetime" in numbers:
        limits.movetime = max(1, numbers["movetime"] - overhead)
    ours, theirs = ("wtime", "btime") if board.turn == chess.WHITE else ("btime", "wtime")
    clock = numbers.get(ours)
    if clock is None and theirs in numbers:
        warn(f"go: {ours} missing for the side to move; moving at once")
        clock = 0
    budget_ms = None
    if clock is not None and not infinite:
        inc = numbers.get("winc" if board.turn == chess.WHITE else "binc", 0)
        horizon = moves_left(chess.popcount(board.occupied), table_pieces)
        b = budget(clock, inc, numbers.get("movestogo"), overhead, horizon)
        budget_ms = (b.soft, b.hard, b.clock)
        if not ponder:
            start_clock(limits, budget_ms)
    if not (infinite or ponder or budget_ms or numbers.keys() & {"depth", "nodes", "mate", "movetime"}):
        warn(f"go: no limit given; searching {DEFAULT_MOVETIME_MS} ms")
        limits.movetime = DEFAULT_MOVETIME_MS
    ponder_movetime = None
    if ponder:
        limits.infinite = True
        ponder_movetime, limits.movetime = limits.movetime, None
    return Go(limits, budget_ms, ponder, ponder_movetime, infinite)


def start_clock(limits: Limits, budget_ms: tuple[float, float, float]) -> None:
    """Set the deadlines of ``limits`` from now by a (soft, hard, clock) budget in milliseconds: at ``go``, or at
    ``ponderhit`` for a pondering search."""
    now = time.monotonic()
    soft, hard, clock = budget_ms
    limits.soft_deadline, limits.deadline = now + soft / 1000, now + hard / 1000
    limits.clock_deadline = now + clock / 1000


def start_movetime(limits: Limits, movetime_ms: int) -> None:
    """Give ``limits`` a move time of ``movetime_ms`` from now, as a deadline (like a move time, it applies once
    depth 1 is complete): at ``ponderhit`` for a pondering search."""
    due = time.monotonic() + movetime_ms / 1000
    limits.deadline = due if limits.deadline is None else min(limits.deadline, due)
