"""``bench convert``: won positions played out against the tablebase defender."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

import chess.engine
import chess.syzygy

from chess_endgame.bench.common import present, won_positions
from chess_endgame.engine.player import Player, PlayerOptions
from chess_endgame.play.engines import PlayerEngine
from chess_endgame.play.game import TablebaseAgent, play_game
from chess_endgame.tablebase.prober import Prober

CONVERT_MATERIALS = ("KQPvK", "KRPvK", "KPPvK", "KQvK", "KRvK", "KBNvK", "KQvKR", "KRPvKR", "KQPvKQ", "KBPvKB")


@dataclass
class ConvertRun:
    mode: str
    wins: int = 0
    plies: list[int] = field(default_factory=list)
    #: (start FEN, result, termination) of every game that was not won
    failures: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def mean_plies(self) -> float:
        return statistics.mean(self.plies) if self.plies else float("nan")


@dataclass
class ConvertBench:
    positions: int
    materials: list[str]  # those of the positions played, in CONVERT_MATERIALS' order
    runs: list[ConvertRun]


def bench_convert(path: str, *, count: int = 12, seed: int = 1, mate_nodes: int = 20000,
                  on_game: Callable[[], None] | None = None,
                  on_run: Callable[[ConvertRun], None] | None = None) -> ConvertBench:
    """Play ``count`` seeded won positions against the tablebase defender, pure DTZ and faster-mate.

    ``on_game`` is called after each game, ``on_run`` with each mode's results when they are complete.
    """
    prober = Prober(path)
    materials = present(prober, CONVERT_MATERIALS)
    if not materials:
        raise ValueError(f"bench convert needs some of the tables {', '.join(CONVERT_MATERIALS)} in {path}")
    boards = won_positions(prober, materials, count, seed)
    runs = []
    for mode, faster in (("pure DTZ", False), ("faster mate", True)):
        player = Player(prober, options=PlayerOptions(faster_mate=faster, faster_mate_nodes=mate_nodes))
        ours = PlayerEngine(player, chess.engine.Limit(nodes=mate_nodes))
        defender = TablebaseAgent(prober)
        run = ConvertRun(mode)
        for board in boards:
            white, black = (ours, defender) if board.turn else (defender, ours)
            record = play_game(board, white, black, max_plies=400)
            winner = "1-0" if board.turn else "0-1"
            if record.result == winner:
                run.wins += 1
                run.plies.append(record.plies)
            else:
                run.failures.append((board.fen(), record.result, record.termination))
            if on_game:
                on_game()
        runs.append(run)
        if on_run:
            on_run(run)
    prober.close()
    played = {chess.syzygy.normalize_tablename(chess.syzygy.calc_key(board)) for board in boards}
    return ConvertBench(len(boards), [m for m in materials if m in played], runs)
