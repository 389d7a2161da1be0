"""``bench probe``: WDL and DTZ probes per second, the project's prober against raw python-chess."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import chess
import chess.syzygy

from chess_endgame.bench.common import best_times, positions, present
from chess_endgame.board import random_position
from chess_endgame.engine.player import Player, PlayerOptions
from chess_endgame.play.engines import PlayerEngine
from chess_endgame.play.game import TablebaseAgent, play_game
from chess_endgame.tablebase.paths import split_path
from chess_endgame.tablebase.prober import Prober

PROBE_MATERIALS = ("KQvKR", "KRPvK", "KRPvKR")
#: The replayed game starts from a won position of this material.
REPLAY_MATERIAL = "KRPvKR"
#: Replaying the game's probes this many times models reviewing it in an analysis GUI, stepping
#: back and forth through the moves with the engine running.
REVIEW_PASSES = 5
#: Rows of the benchmark: WDL and DTZ on distinct positions, the game as played, and replayed.
WORKLOADS = 6


@dataclass
class Rate:
    """Throughput of one probing method on one workload."""

    probes: int
    seconds: float

    @property
    def per_second(self) -> float:
        return self.probes / self.seconds if self.seconds > 0 else float("inf")


@dataclass
class ProbeBench:
    positions: int
    replay_plies: int
    #: cache hit rates of the game's probes as played, and replayed REVIEW_PASSES times
    replay_hit_rates: list[float]
    #: (workload, raw python-chess rate, prober rate, the prober's batch rate or None)
    rows: list[tuple[str, Rate, Rate, Rate | None]]


def raw_tablebase(path: str) -> chess.syzygy.Tablebase:
    """A plain python-chess tablebase on every directory of ``path``."""
    tb = chess.syzygy.Tablebase()
    for directory in split_path(path):
        tb.add_directory(directory)
    return tb


def record_game(path: str, seed: int, plies: int = 120, nodes: int = 2000) -> tuple[list, list, int]:
    """Every successful WDL and DTZ request made while ``chess-endgame play`` plays a seeded game.

    The player (tables at the root, with its short mate search and its PV
    extension) plays a won KRPvKR position against the tablebase defender,
    both on one prober, as the ``play`` command does. Returns the WDL
    requests, the DTZ requests (fresh boards, in order) and the plies played.
    """
    prober = Prober(path, cache_size=0)
    wdl_requests: list[chess.Board] = []
    dtz_requests: list[chess.Board] = []

    def recording(method: Callable[[chess.Board], int], into: list) -> Callable[[chess.Board], int]:
        def probe(board: chess.Board) -> int:
            value = method(board)
            into.append(chess.Board(board.fen()))
            return value
        return probe

    rng = random.Random(seed)
    board = random_position(REPLAY_MATERIAL, rng, turn=chess.WHITE)
    while prober.probe_wdl(board) != 2 or prober.probe_dtz(board) < 20:
        board = random_position(REPLAY_MATERIAL, rng, turn=chess.WHITE)
    prober.probe_wdl = recording(prober.probe_wdl, wdl_requests)  # type: ignore[method-assign]
    prober.probe_dtz = recording(prober.probe_dtz, dtz_requests)  # type: ignore[method-assign]
    player = Player(prober, options=PlayerOptions(faster_mate_nodes=nodes))
    record = play_game(board, PlayerEngine(player, chess.engine.Limit(nodes=nodes)), TablebaseAgent(prober),
                       max_plies=plies)
    prober.close()
    return wdl_requests, dtz_requests, record.plies


def bench_probe(path: str, *, per_material: int = 300, seed: int = 1, repeat: int = 3, game_plies: int = 120,
                on_row: Callable[[str, Rate, Rate, Rate | None], None] | None = None) -> ProbeBench:
    """Probes per second through the prober and through raw python-chess.

    Distinct positions: seeded random KQvKR, KRPvK, KRPvKR positions (every
    probe misses the cache; the cache's bookkeeping is included). Game replay:
    the requests made while the player plays a seeded game against the
    tablebase defender (positions repeat: the defender looks at the position
    the player is about to reach, the PV extension at the next moves),
    replayed through a fresh cache. On distinct positions the prober's batch
    (:meth:`Prober.probe_many`: one compiled call for all, no cache) is timed
    too. ``on_row`` sees each workload's rates as soon as they are measured
    (there are :data:`WORKLOADS`).
    """
    prober = Prober(path)
    missing = [m for m in PROBE_MATERIALS if m not in present(prober, PROBE_MATERIALS)]
    if missing:
        raise ValueError(f"bench probe needs the tables {', '.join(missing)} (WDL and DTZ) in {path}")
    raw = raw_tablebase(path)
    boards = positions(PROBE_MATERIALS, per_material, seed)
    dtz_boards = boards[::3]
    wdl_replay, dtz_replay, plies = record_game(path, seed, plies=game_plies)

    def run_raw(kind: str, items: list[chess.Board]) -> Callable[[], object]:
        probe = raw.probe_wdl if kind == "wdl" else raw.probe_dtz
        return lambda: [probe(b) for b in items]

    def run_prober(kind: str, items: list[chess.Board]) -> Callable[[], object]:
        def run() -> object:
            prober.clear_cache()
            probe = prober.probe_wdl if kind == "wdl" else prober.probe_dtz
            return [probe(b) for b in items]
        return run

    rows = []
    # (label, kind, positions, whether to page their files in first: the replays' were, by the rows as played)
    for label, kind, items, page_in in (("WDL, distinct positions", "wdl", boards, True),
                                        ("DTZ, distinct positions", "dtz", dtz_boards, True),
                                        ("WDL, game as played", "wdl", wdl_replay, True),
                                        ("DTZ, game as played", "dtz", dtz_replay, True),
                                        (f"WDL, game replayed {REVIEW_PASSES}x", "wdl",
                                         wdl_replay * REVIEW_PASSES, False),
                                        (f"DTZ, game replayed {REVIEW_PASSES}x", "dtz",
                                         dtz_replay * REVIEW_PASSES, False)):
        if not items:
            continue
        runs = [run_raw(kind, items), run_prober(kind, items)]
        if label.endswith("distinct positions"):
            runs.append(lambda: prober.probe_many(items, dtz=kind == "dtz"))  # noqa: B023 - run at once
        if page_in:
            for run in runs:  # warm-up: page the files in, load the compiled code, for every contender alike
                run()
        times = best_times(runs, repeat)
        batch = Rate(len(items), times[2]) if len(times) > 2 else None
        rows.append((label, Rate(len(items), times[0]), Rate(len(items), times[1]), batch))
        if on_row:
            on_row(*rows[-1])

    hit_rates = []
    for passes in (1, REVIEW_PASSES):
        prober.clear_cache()
        prober.reset_stats()
        for _ in range(passes):
            for b in wdl_replay:
                prober.probe_wdl(b)
            for b in dtz_replay:
                prober.probe_dtz(b)
        hit_rates.append(prober.stats.cache_hits / max(1, passes * (len(wdl_replay) + len(dtz_replay))))
    raw.close()
    prober.close()
    return ProbeBench(len(boards), plies, hit_rates, rows)
