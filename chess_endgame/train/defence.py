"""The program's side of a drill: perfect play that makes the user's task as hard as the tables allow.

:func:`tough_move` never gives up more than the tables allow (it plays a move of the best class under the
50-move rule, as :func:`~chess_endgame.chooser.choose` ranks them). Among those it keeps the longest
resistance (the longest distance to the next zeroing move under the 50-move rule when losing; every draw alike
when drawing; the chooser's order when winning), and among the moves that resist as long it leaves the user the
fewest replies that keep the user's result, a move after which one of them captures or promotes counting as the
easiest of all (any search, and most players, find a winning capture at once); then a seeded random one.

The order is measured (``chess-endgame bench defence``: 300 seeded 4-5-piece wins, a weak attacker of this
project's search at 2000 nodes without tables; a repetition or the 50-move rule draws when it holds, not a move
early): the attacker failed in 55.3% of the games against this defence and in 51.3% against the plain one (1.08x;
52.7% and 48.3%, 1.09x, on the starts of seed 2). Resistance comes first because every order that gives some of it
up did worse on the same starts. With the search of an earlier version as the attacker (the plain defence: 47.3%):
the fewest keeping replies first, 28.0% (captures counted as the easiest, 31.3%); the fewest keeping replies among
moves within 4 plies of the longest resistance, 31.7%; a move after which a quick search (300 nodes) throws the
win away or makes the least progress, 40.0%; a check first when it gives up at most 4, 10 or 20 plies of
resistance, 47.7%, 47.7% and 46.3% against the plain defence's 46.7% in the same run. With today's (plain: 51.3%):
the longest mean resistance after a random one of the user's keeping replies, 49.3%. Other tie-breaks after the
resistance (moves back to a repeated position, a check among equally resisting moves, the fewest replies that make
the fastest progress, the smallest share of keeping replies) gave 1.02-1.12x; the longest mean resistance after a
keeping reply, as a tie-break or added to the resistance, 57.3% and 57.0% (1.12x, 1.11x) but 51.7% and 51.3% on
seed 2, below this order's 52.7%: the attacker's failures are conversions it cannot finish within the 50-move rule
and slips into a tablebase draw, which the longest resistance provokes. A move after which a quick search (300
nodes, no tables) throws the win away, first, after the resistance or first within 4 or 10 plies of it: 55.3%,
55.3%, 55.7%, 55.7% (this order 55.3%). These orders were played by a copy of the bench's loop, kept out of the
package.
:func:`plain_move` is the usual tablebase reply (the chooser's best move: the longest DTZ when losing),
the baseline the tough defence is measured against (``chess-endgame bench defence``).
"""

from __future__ import annotations

import random

import chess

from chess_endgame.board import outcome
from chess_endgame.chooser import Choice, MoveClass, RankedMove, choose
from chess_endgame.tablebase.prober import NotCovered, Prober


class NoTablebaseMove(Exception):
    """The tables cannot answer the position (the message says why), or it has no legal move."""


def _choice(board: chess.Board, prober: Prober) -> Choice:
    choice = choose(board, prober, full=True)
    if isinstance(choice, NotCovered):
        raise NoTablebaseMove(choice.message)
    if not choice.moves:
        raise NoTablebaseMove(f"no legal move in {board.fen()}")
    return choice


def plain_move(board: chess.Board, prober: Prober) -> chess.Move:
    """The chooser's best move."""
    best = _choice(board, prober).best
    assert best is not None
    return best.move


def keeping_replies(board: chess.Board, move: chess.Move, prober: Prober) -> tuple[int, int]:
    """The replies to ``move`` that keep the opponent's best class (its result under the 50-move rule): how many
    of them capture or promote (a search finds those at once), and how many there are."""
    board.push(move)
    try:
        if outcome(board) is not None:
            return 0, 0
        keeping = _choice(board, prober).best_class_moves()
        return sum(1 for m in keeping if board.is_capture(m.move) or m.move.promotion), len(keeping)
    finally:
        board.pop()


def tough_move(board: chess.Board, prober: Prober, rng: random.Random | None = None) -> chess.Move:
    """The move of the best class that resists longest, then leaves the opponent the fewest replies keeping its
    result (a capture or a promotion among them counting as the easiest of all), then a seeded random one (see
    the module docstring)."""
    choice = _choice(board, prober)
    candidates = choice.best_class_moves()
    if len(candidates) == 1:
        return candidates[0].move
    rng = rng or random.Random(0)
    order = {m.move: i for i, m in enumerate(choice.moves)}
    cls = candidates[0].cls

    def hardness(entry: RankedMove) -> tuple:
        if cls < MoveClass.DRAW:
            resistance = -(entry.s or 0)  # the largest s first
        elif cls == MoveClass.DRAW:
            resistance = 0  # a draw is a draw: the user's keeping replies decide
        else:
            resistance = order[entry.move]
        obvious, keeping = keeping_replies(board, entry.move, prober)
        return resistance, obvious > 0, keeping

    scored = [(hardness(m), m.move) for m in candidates]
    hardest = min(key for key, _ in scored)
    return rng.choice(sorted((move for key, move in scored if key == hardest), key=chess.Move.uci))
