"""Write a PGN of seeded endgame games with mistakes in them, to try and time ``chess-endgame review``.

Each game starts from a seeded random position (won tablebase endings, and
6-piece endings beyond the tables that reach them by a capture) and is played by
the project's game runner between two fallible players: each move is, with
probability ``--error-rate``, a random legal move, else the chooser's best move
within the tables and a short search beyond them.

    python scripts/make_review_games.py --games 100 --seed 1 > games.pgn
"""

from __future__ import annotations

import argparse
import random
import sys

import chess

from chess_endgame.board import random_position
from chess_endgame.chooser import Choice, choose
from chess_endgame.engine.player import Player, PlayerOptions
from chess_endgame.engine.result import Limits
from chess_endgame.play.game import AgentMove, play_game
from chess_endgame.tablebase.prober import open_prober

#: Won endings within the tables (the side to move wins), and endings of 6 pieces beyond them.
WITHIN = ["KQvKR", "KRvKB", "KBNvK", "KPvK", "KRPvKR", "KQPvKQ", "KBPvKB", "KRvK", "KQvKP", "KNNvKP"]
BEYOND = ["KRPPvKR", "KBPPvKB", "KRPvKRP"]


class Fallible:
    """Plays the chooser's best move (the searcher's beyond the tables), or now and then a random move."""

    def __init__(self, name: str, player: Player, rng: random.Random, error_rate: float, nodes: int) -> None:
        self.name, self.player, self.rng, self.error_rate, self.nodes = name, player, rng, error_rate, nodes

    def move(self, board: chess.Board) -> AgentMove:
        if self.rng.random() < self.error_rate:
            return AgentMove(self.rng.choice(sorted(board.legal_moves, key=chess.Move.uci)))
        choice = choose(board, self.player.prober)
        if isinstance(choice, Choice) and choice.best is not None:
            return AgentMove(choice.best.move)
        return AgentMove(self.player.decide(board, Limits(nodes=self.nodes)).move)

    def close(self) -> None:
        pass


def start_position(rng: random.Random, prober, beyond_share: float) -> tuple[chess.Board, str]:
    """A random won position within the tables, or a 6-piece position beyond them."""
    if rng.random() < beyond_share:
        material = rng.choice(BEYOND)
        return random_position(material, rng), material
    material = rng.choice(WITHIN)
    while True:
        board = random_position(material, rng, turn=chess.WHITE)
        if not board.is_check() and prober.probe_wdl(board) == 2:
            return board, material


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--error-rate", type=float, default=0.05, help="share of random moves")
    parser.add_argument("--beyond", type=float, default=0.3, help="share of games starting beyond the tables")
    parser.add_argument("--max-plies", type=int, default=100)
    parser.add_argument("--nodes", type=int, default=2000, help="search nodes per move beyond the tables")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    player = Player(open_prober(), options=PlayerOptions(faster_mate=False))
    for number in range(1, args.games + 1):
        board, material = start_position(rng, player.prober, args.beyond)
        white = Fallible("fallible A", player, rng, args.error_rate, args.nodes)
        black = Fallible("fallible B", player, rng, args.error_rate, args.nodes)
        record = play_game(board, white, black, max_plies=args.max_plies)
        sys.stdout.write(record.pgn(event=f"review sample {number}: {material}") + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
