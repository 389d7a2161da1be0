"""Engine-against-engine matches: two UCI engines, real clocks, balanced endgame starts, Elo.

Both sides run as UCI subprocesses (this project's engine too: ``self``), so
each side's time is its own process's, measured as a GUI measures it: from
``go`` to ``bestmove``. The clocks work as cutechess keeps them: ``go wtime
btime winc binc [movestogo]``, the thinking time taken off the mover's clock,
then the increment added; a side whose clock runs out loses (draws when the
other side cannot mate). A side that hangs is stopped once its clock has run
out and restarted for the next game; a side whose process dies loses the game
and is restarted too.

Every start is played twice, the first engine White in the odd-numbered
games. The tables adjudicate as soon as they cover a position (their verdict,
50-move rule included), besides checkmate, stalemate, insufficient material,
threefold repetition, the 50-move rule and a ply limit (a draw).

Games run in ``jobs`` threads, each with its own pair of engine processes
(the threads only wait on pipes, so they do not share a core); Ctrl-C stops
the match and keeps the games that finished.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import chess
import chess.engine

from chess_endgame.board import RESULT_POINTS
from chess_endgame.engine.interrupt import sigint_deferred
from chess_endgame.play import elo
from chess_endgame.play.contestant import MatchEngine, SideStats
from chess_endgame.play.engines import EngineError
from chess_endgame.play.game import GameRecord, play_game
from chess_endgame.play.spec import MatchSpec
from chess_endgame.play.sprt import Sprt
from chess_endgame.play.starts import tablebase_adjudicator
from chess_endgame.tablebase.prober import Prober

#: Restarts of one engine (a crash, a hang) after which the match stops.
MAX_RESTARTS = 10


@dataclass
class GameResult:
    #: Game number, from 1.
    round: int
    first_white: bool
    record: GameRecord
    #: What the first and the second engine did.
    stats: tuple[SideStats, SideStats]

    @property
    def points(self) -> float:
        """The first engine's points (1, 1/2, 0)."""
        white = RESULT_POINTS.get(self.record.result, 0.5)
        return white if self.first_white else 1.0 - white

    @property
    def offender(self) -> int | None:
        """The engine (0 first, 1 second) that forfeited (time, illegal move, crash), else None."""
        if not self.record.forfeit:
            return None
        return 0 if (self.record.final_turn == chess.WHITE) == self.first_white else 1

    def pgn(self, time_control: str) -> str:
        return self.record.pgn("chess-endgame match", {"Date": time.strftime("%Y.%m.%d"), "Round": str(self.round),
                                                       "TimeControl": time_control})


@dataclass
class MatchOutcome:
    spec: MatchSpec
    #: The engines' names in the report and the PGN.
    names: tuple[str, str]
    #: Whether each engine was given tables (SyzygyPath).
    tables: tuple[bool, bool] = (False, False)
    games: list[GameResult] = field(default_factory=list)
    interrupted: bool = False
    errors: list[str] = field(default_factory=list)
    #: The sequential test, when the match ran one: it decided, or the cap on games came first.
    sprt: Sprt | None = None

    @property
    def time_control(self) -> str:
        spec = self.spec
        if spec.tc is not None:
            return str(spec.tc)
        limits = spec.limits
        return (f"movetime {round(limits.time * 1000)} ms" if limits.time else f"depth {limits.depth}" if limits.depth
                else f"nodes {limits.nodes}" if limits.nodes else "-")

    def summary(self) -> dict:
        """The figures of the report: W/D/L (first engine's view), score, Elo, forfeits, engine statistics."""
        wins = sum(g.points == 1.0 for g in self.games)
        losses = sum(g.points == 0.0 for g in self.games)
        draws = len(self.games) - wins - losses
        by_round = {g.round: g for g in self.games}
        pairs = [by_round[r].points + by_round[r + 1].points for r in by_round if r % 2 == 1 and r + 1 in by_round]
        estimate = elo.estimate(wins, draws, losses, pairs)
        colours = {}
        for colour, first_white in (("white", True), ("black", False)):
            games = [g for g in self.games if g.first_white == first_white]
            colours[colour] = [sum(g.points == p for g in games) for p in (1.0, 0.5, 0.0)]
        engines = []
        for index, name in enumerate(self.names):
            total = SideStats()
            for game in self.games:
                total.add(game.stats[index])
            forfeits = Counter(g.record.forfeit for g in self.games if g.offender == index)
            engines.append({
                "name": name, "command": self.spec.engines[index].command_line, "tables": self.tables[index],
                "moves": total.moves,
                "avg_depth": round(total.depth_total / total.depth_moves, 2) if total.depth_moves else None,
                "avg_nodes": round(total.nodes_total / total.nodes_moves) if total.nodes_moves else None,
                "avg_seconds": round(total.seconds / total.moves, 4) if total.moves else None,
                "time_losses": forfeits["time"], "illegal_moves": forfeits["illegal"],
                "crashes": forfeits["engine"]})
        return {
            "games": len(self.games), "wins": wins, "draws": draws, "losses": losses,
            "score": _finite(estimate.score), "elo": _finite(estimate.elo), "elo_margin": _finite(estimate.margin),
            "pairs": estimate.pairs, "elo_margin_pentanomial": _finite(estimate.pair_margin),
            "los": _finite(estimate.los),
            "first_engine_as": {c: dict(zip(("wins", "draws", "losses"), v, strict=True)) for c, v in colours.items()},
            "terminations": dict(Counter(_termination_kind(g.record) for g in self.games).most_common()),
            "time_losses": sum(e["time_losses"] for e in engines),
            "illegal_moves": sum(e["illegal_moves"] for e in engines),
            "engines": engines,
            "sprt": None if self.sprt is None else sprt_summary(self.sprt),
        }


def sprt_summary(sprt: Sprt) -> dict:
    """The test's figures for the report and ``--json``: bounds, LLR, pairs, pentanomial, Elo, the verdict."""
    state = sprt.state()
    bounds = sprt.bounds
    return {
        "elo0": bounds.elo0, "elo1": bounds.elo1, "alpha": bounds.alpha, "beta": bounds.beta, "model": bounds.model,
        "llr": round(state.llr, 4), "lower": round(state.lower, 4), "upper": round(state.upper, 4),
        "pairs": state.pairs, "pentanomial": list(state.counts),
        "elo": _finite(state.elo), "elo_margin": _finite(state.elo_margin),
        "nelo": _finite(state.nelo), "nelo_margin": _finite(state.nelo_margin),
        "decision": state.decision, "verdict": verdict(state.decision),
    }


def verdict(decision: str | None) -> str:
    """H1 accepted: passed; H0 accepted: failed; neither (the cap came first, or Ctrl-C): inconclusive."""
    return {"H1": "passed", "H0": "failed"}.get(decision or "", "inconclusive")


def _finite(value: float | None) -> float | None:
    """``value`` rounded for the report; None for nan and +-inf (not JSON)."""
    return None if value is None or not math.isfinite(value) else round(value, 4)


def _termination_kind(record: GameRecord) -> str:
    if record.forfeit:
        return {"time": "time forfeit", "illegal": "illegal move", "engine": "engine failure"}[record.forfeit]
    return record.termination


def open_engines(spec: MatchSpec, jobs: int = 1) -> list[list[MatchEngine]]:
    """The engine pairs of ``jobs`` parallel games, started and configured (the starts play no part).

    :raises EngineError: in one line when an engine cannot be started or configured.
    """
    pairs: list[list[MatchEngine]] = []
    try:
        for _ in range(max(1, min(jobs, spec.games))):
            pair: list[MatchEngine] = []
            pairs.append(pair)
            for config in spec.engines:
                pair.append(MatchEngine(config, spec))
    except BaseException:
        close_engines(pairs)
        raise
    return pairs


@contextlib.contextmanager
def _ctrl_c_deferred() -> Iterator[None]:
    """In the main thread, Ctrl-C (SIGINT with Python's default handler) inside the block raises
    KeyboardInterrupt only when the block is done, so that a finished game is never half handed over
    (counted but not written, or written in part)."""
    caught: list[bool] = []
    with sigint_deferred(lambda: caught.append(True)):
        yield
    if caught:
        raise KeyboardInterrupt


def run_match(spec: MatchSpec, *, jobs: int = 1, on_game: Callable[[GameResult], None] | None = None,
              pairs: list[list[MatchEngine]] | None = None, sprt: Sprt | None = None) -> MatchOutcome:
    """Play the match; ``on_game`` sees every finished game as it arrives (in the calling thread).

    With ``sprt``, every game pair (one start with both colours) is added to the test as soon as both of its
    games are in, and once the test decides no new game starts: the games in play are finished and counted
    (they do not change the decision). ``spec.games`` is then the cap; reaching it leaves the test undecided.

    ``pairs``: engines from :func:`open_engines` (one game in parallel per pair),
    else ``jobs`` pairs are started here. They are closed at the end. Ctrl-C
    stops the match: the engines are stopped, unfinished games dropped, and the
    outcome holds the finished ones (``interrupted``).

    :raises EngineError: when an engine cannot be started or configured (before any game).
    """
    if not spec.starts:
        raise ValueError("a match needs at least one start")
    pairs = pairs or open_engines(spec, jobs)
    names = _names(spec, pairs[0])
    for pair in pairs:
        for agent, name in zip(pair, names, strict=True):
            agent.name = name
    outcome = MatchOutcome(spec, names, (pairs[0][0].tables, pairs[0][1].tables), sprt=sprt)
    halves: dict[int, float] = {}  # the first engine's points in games whose pair is not complete yet
    results: queue.Queue = queue.Queue()
    counter = itertools.count()
    lock = threading.Lock()
    stop = threading.Event()
    aborted = threading.Event()
    restarts = [0, 0]

    def next_game() -> int | None:
        with lock:
            index = next(counter)
        return index if index < spec.games and not stop.is_set() else None

    def restart(pair: list[MatchEngine], index: int) -> None:
        pair[index].close()
        with lock:
            restarts[index] += 1
            if restarts[index] > MAX_RESTARTS:
                raise EngineError(f"{names[index]} failed {restarts[index]} times; the match stops")
        agent = MatchEngine(spec.engines[index], spec)
        agent.name = names[index]
        pair[index] = agent

    def worker(pair: list[MatchEngine]) -> None:
        prober = Prober(spec.syzygy_path) if spec.tb_adjudication and spec.syzygy_path else None
        adjudicator = tablebase_adjudicator(prober) if prober is not None and prober.available else None
        seen = threading.Event()  # set once the calling thread has counted the result (and stopped a decided test)
        try:
            while (index := next_game()) is not None:
                result = _play(spec, index, pair, adjudicator)
                if aborted.is_set():
                    break
                seen.clear()
                results.put((result, seen))
                while not seen.wait(0.2):  # so that no game starts after the pair that decided the test
                    if stop.is_set():
                        return
                for side in (0, 1):
                    if not pair[side].alive:
                        restart(pair, side)
        except EngineError as exc:
            stop.set()
            results.put(str(exc))
        except Exception as exc:  # noqa: BLE001 - the caller reports it with the games done
            stop.set()
            results.put(f"the match stopped: {type(exc).__name__}: {exc}")
        finally:
            results.put(None)

    threads = [threading.Thread(target=worker, args=(pair,), name=f"match-{i}", daemon=True)
               for i, pair in enumerate(pairs)]
    try:
        for thread in threads:
            thread.start()
        running = len(threads)
        while running:
            try:
                item = results.get(timeout=0.2)
            except queue.Empty:
                continue
            if item is None:
                running -= 1
            elif isinstance(item, str):
                outcome.errors.append(item)
            else:
                item, seen = item
                with _ctrl_c_deferred():  # the outcome and on_game (the PGN) see the same games
                    outcome.games.append(item)
                    if sprt is not None:
                        partner = item.round + 1 if item.round % 2 else item.round - 1
                        if partner in halves:
                            sprt.add_pair(item.points + halves.pop(partner))
                            if sprt.done:
                                stop.set()  # no new game; those in play finish
                        else:
                            halves[item.round] = item.points
                    if on_game:
                        on_game(item)
                    seen.set()
    except KeyboardInterrupt:
        outcome.interrupted = True
        aborted.set()
        stop.set()
        for pair in pairs:
            for agent in pair:
                agent.kill()  # the games in progress end at once; they are dropped
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
        close_engines(pairs)
    outcome.games.sort(key=lambda g: g.round)
    return outcome


def _play(spec: MatchSpec, index: int, pair: list[MatchEngine],
          adjudicator: Callable[[chess.Board], tuple[str, str] | None] | None) -> GameResult:
    board = chess.Board(spec.starts[(index // 2) % len(spec.starts)])
    first_white = index % 2 == 0
    clock = spec.tc.clock(spec.time_margin) if spec.tc is not None else None
    for agent in pair:
        agent.new_game(clock)
    white, black = (pair[0], pair[1]) if first_white else (pair[1], pair[0])
    record = play_game(board, white, black, max_plies=spec.max_plies, adjudicator=adjudicator, clock=clock)
    if record.result == "*":
        record.result, record.termination = "1/2-1/2", f"adjudicated draw after {spec.max_plies} plies"
    return GameResult(index + 1, first_white, record, (pair[0].stats, pair[1].stats))


def _names(spec: MatchSpec, pair: list[MatchEngine]) -> tuple[str, str]:
    """The configured names, else the engines' own; the same name twice gets #1 and #2."""
    first, second = (config.name or agent.name for config, agent in zip(spec.engines, pair, strict=True))
    if first == second:
        return f"{first} #1", f"{second} #2"
    return first, second


def close_engines(pairs: list[list[MatchEngine]]) -> None:
    for pair in pairs:
        for agent in pair:
            agent.close()
