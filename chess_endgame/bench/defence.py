"""``bench defence``: how often a weak attacker fails to win against the tough defence and against the plain one.

The attacker is this project's search at a small node budget without tables; the defender answers from the
tables, either with :func:`~chess_endgame.train.defence.tough_move` (the drills' defence) or with the usual
longest-DTZ move (:func:`~chess_endgame.train.defence.plain_move`). Both play the same seeded quiet 4-5-piece
wins. The attacker fails when the game is drawn (:func:`chess_endgame.board.outcome`: the 50-move rule at a
clock of 100 and a threefold repetition at the third occurrence, not a move early as python-chess's claims,
which a winning side would never make; stalemate, insufficient material) or when its move leaves a position
the tables call a draw (it can no longer win).
"""

from __future__ import annotations

import concurrent.futures
import random
from collections.abc import Callable
from dataclasses import dataclass

import chess

from chess_endgame.bench.common import present, won_positions
from chess_endgame.board import outcome
from chess_endgame.engine.result import Limits
from chess_endgame.engine.search import Searcher
from chess_endgame.tablebase.prober import Prober
from chess_endgame.train.defence import plain_move, tough_move

#: The wins played: 4 and 5 pieces, where a weak attacker has something to get wrong.
MATERIALS = ("KRvKN", "KRvKB", "KQvKR", "KBBvK", "KBNvK", "KQvKP", "KRvKP", "KRPvKR", "KQPvKQ", "KBPvKB",
             "KRBvKR", "KQRvKQ", "KNNvKP")
#: Plies after which an unfinished game counts as the attacker's failure.
MAX_PLIES = 300


@dataclass
class Game:
    start: str
    defence: str
    failed: bool
    plies: int
    why: str


def play(start: str, defence: str, prober: Prober, nodes: int, seed: int) -> Game:
    """The attacker (to move in ``start``) against ``defence`` ("tough" or "plain")."""
    board = chess.Board(start)
    attacker = board.turn
    searcher = Searcher(prober=None, hash_mb=4)
    rng = random.Random(seed)
    for ply in range(MAX_PLIES):
        end = outcome(board)
        if end is not None:
            return Game(start, defence, end.winner != attacker, ply, end.termination.name.lower())
        if board.turn == attacker:
            move = searcher.search(board, Limits(nodes=nodes)).best_move
            assert move is not None
            board.push(move)
            if not board.is_game_over() and prober.probe_wdl(board) >= 0:
                return Game(start, defence, True, ply + 1, "tablebase draw")
        else:
            board.push(tough_move(board, prober, rng) if defence == "tough" else plain_move(board, prober))
    return Game(start, defence, True, MAX_PLIES, "not won in time")


def _worker(args: tuple[str, str, str, int, int]) -> Game:
    path, start, defence, nodes, seed = args
    with Prober(path) as prober:
        return play(start, defence, prober, nodes, seed)


def starts(path: str, count: int, seed: int) -> list[str]:
    """``count`` seeded quiet wins (the attacker to move) of the 4-5-piece :data:`MATERIALS` present."""
    prober = Prober(path)
    materials = present(prober, MATERIALS)
    if not materials:
        raise ValueError(f"bench defence needs some of the tables {', '.join(MATERIALS)} in {path}")
    boards = won_positions(prober, materials, count, seed)
    prober.close()
    return [b.fen() for b in boards]


def bench_defence(path: str, *, positions: int = 300, nodes: int = 2000, seed: int = 1, jobs: int = 1,
                  on_game: Callable[[Game], None] | None = None) -> list[Game]:
    """Every start played by the attacker against both defences (``jobs`` processes)."""
    work = [(path, fen, defence, nodes, seed + i) for i, fen in enumerate(starts(path, positions, seed))
            for defence in ("plain", "tough")]
    games = []
    with concurrent.futures.ProcessPoolExecutor(jobs) as pool:
        for game in pool.map(_worker, work):
            games.append(game)
            if on_game:
                on_game(game)
    return games
