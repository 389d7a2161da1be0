"""The program's side of a drill: perfect play that makes the user's task as hard as the tables allow.

:func:`tough_move` never gives up more than the tables allow (it plays a move of the best class under the
50-move rule, as :func:`~chess_endgame.chooser.choose` ranks them) and among those picks the one that leaves
the user the fewest replies keeping the user's result, then the one that resists longest (the longest
distance to the next zeroing move when losing, the chooser's order otherwise), then a seeded random one.
:func:`plain_move` is the usual tablebase reply (the chooser's best move: the longest DTZ when losing),
the baseline the tough defence is measured against (``chess-endgame bench defence``).
"""

from __future__ import annotations

import random

import chess

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


def keeping_replies(board: chess.Board, move: chess.Move, prober: Prober) -> int:
    """How many replies to ``move`` keep the opponent's best class (its result under the 50-move rule)."""
    board.push(move)
    try:
        if board.is_game_over(claim_draw=True):
            return 0
        choice = _choice(board, prober)
        return len(choice.best_class_moves())
    finally:
        board.pop()


def tough_move(board: chess.Board, prober: Prober, rng: random.Random | None = None) -> chess.Move:
    """The move of the best class that leaves the opponent the fewest replies keeping its result, then the
    longest resistance, then a seeded random one (see the module docstring)."""
    choice = _choice(board, prober)
    candidates = choice.best_class_moves()
    if len(candidates) == 1:
        return candidates[0].move
    rng = rng or random.Random(0)
    order = {m.move: i for i, m in enumerate(choice.moves)}
    losing = candidates[0].cls < MoveClass.DRAW

    def hardness(entry: RankedMove) -> tuple:
        resistance = -(entry.s or 0) if losing else order[entry.move]  # losing: the largest s first
        return keeping_replies(board, entry.move, prober), resistance

    scored = [(hardness(m), m.move) for m in candidates]
    hardest = min(key for key, _ in scored)
    return rng.choice(sorted((move for key, move in scored if key == hardest), key=chess.Move.uci))
