"""``bench probe``: WDL and DTZ probes per second, the project's prober against raw python-chess."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import chess
import chess.syzygy

from ..player import Player, PlayerOptions
from ..sampling import random_position
from ..search import Limits
from ..tablebase import Prober, split_path
from .common import best_times, positions, present

PROBE_MATERIALS = ("KQvKR", "KRPvK", "KRPvKR")
#: A 6-piece start whose captures lead into the 5-piece tables: the replayed game.
REPLAY_MATERIAL = "KRPvKRP"


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
    replay_hit_rate: float
    #: (workload, probes, raw python-chess rate, prober rate)
    rows: list[tuple[str, Rate, Rate]]


def raw_tablebase(path: str) -> chess.syzygy.Tablebase:
    """A plain python-chess tablebase on every directory of ``path``."""
    tb = chess.syzygy.Tablebase()
    for directory in split_path(path):
        tb.add_directory(directory)
    return tb


def record_game(path: str, seed: int, plies: int = 40, nodes: int = 3000) -> tuple[list, list, int]:
    """Every successful WDL and DTZ request the player makes while playing a seeded game.

    The player (tables at the root, search with probes in the tree) plays both
    sides of a 6-piece position for up to ``plies`` plies. Returns the WDL
    requests, the DTZ requests (as fresh boards, in order) and the plies played.
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

    prober.probe_wdl = recording(prober.probe_wdl, wdl_requests)  # type: ignore[method-assign]
    prober.probe_dtz = recording(prober.probe_dtz, dtz_requests)  # type: ignore[method-assign]
    player = Player(prober, options=PlayerOptions(faster_mate_nodes=nodes))
    board = random_position(REPLAY_MATERIAL, random.Random(seed), turn=chess.WHITE)
    played = 0
    while played < plies and not board.is_game_over(claim_draw=True):
        decision = player.decide(board, Limits(nodes=nodes))
        board.push(decision.move)  # type: ignore[arg-type]
        played += 1
    prober.close()
    return wdl_requests, dtz_requests, played


def bench_probe(path: str, *, per_material: int = 300, seed: int = 1, repeat: int = 5) -> ProbeBench:
    """Probes per second through the prober and through raw python-chess.

    Distinct positions: seeded random KQvKR, KRPvK, KRPvKR positions (every
    probe misses the cache; the cache's bookkeeping is included). Game replay:
    the requests the player makes in a seeded game (search probes repeat
    constantly), replayed through a fresh cache.
    """
    prober = Prober(path)
    missing = [m for m in PROBE_MATERIALS if m not in present(prober, PROBE_MATERIALS)]
    if missing:
        raise ValueError(f"bench probe needs the tables {', '.join(missing)} (WDL and DTZ) in {path}")
    raw = raw_tablebase(path)
    boards = positions(PROBE_MATERIALS, per_material, seed)
    dtz_boards = boards[::3]
    wdl_replay, dtz_replay, plies = record_game(path, seed)

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
    for label, kind, items in (("WDL, distinct positions", "wdl", boards),
                               ("DTZ, distinct positions", "dtz", dtz_boards),
                               ("WDL, game replay", "wdl", wdl_replay),
                               ("DTZ, game replay", "dtz", dtz_replay)):
        if not items:
            continue
        run_raw(kind, items)()  # warm-up: page the files in
        raw_time, prober_time = best_times([run_raw(kind, items), run_prober(kind, items)], repeat)
        rows.append((label, Rate(len(items), raw_time), Rate(len(items), prober_time)))

    prober.clear_cache()
    prober.reset_stats()
    for b in wdl_replay:
        prober.probe_wdl(b)
    hit_rate = prober.stats.cache_hits / max(1, len(wdl_replay))
    raw.close()
    prober.close()
    return ProbeBench(len(boards), plies, hit_rate, rows)
