"""An engine as a match seats it: a UCI process on the clock, stopped when it hangs, restarted when it dies, and the
judge that scores candidate starts, with the match's tables."""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
import threading
import time
from dataclasses import dataclass

import chess
import chess.engine

from chess_endgame.play.engines import EngineError, ExternalEngine
from chess_endgame.play.game import AgentMove, Clock
from chess_endgame.play.spec import EngineConfig, MatchSpec


@dataclass
class SideStats:
    """What one engine did in one game (or a whole match, summed)."""

    moves: int = 0
    seconds: float = 0.0
    depth_total: int = 0
    depth_moves: int = 0
    nodes_total: int = 0
    nodes_moves: int = 0

    def add(self, other: SideStats) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


#: Seconds past the end of its clock (and the margin) after which a side that has not answered is stopped.
HUNG_GRACE = 1.0
_ILLEGAL_UCI = re.compile(r"illegal uci: '([^']*)'")


def share_tables(engine: ExternalEngine, config: EngineConfig, spec: MatchSpec) -> bool:
    """Set ``engine``'s SyzygyPath to the match's tables as ``spec`` says, unless ``config`` gives it; True when
    the engine then has tables.

    :raises EngineError: in one line when the engine refuses the path (the engine is closed).
    """
    if "syzygypath" in {name.lower() for name, _ in config.options}:
        return True
    if "SyzygyPath" not in engine.engine.options:
        return False
    value = spec.syzygy_path if spec.engine_tables and spec.syzygy_path else "<empty>"
    try:
        engine.engine.configure({"SyzygyPath": value})
    except chess.engine.EngineError as exc:
        engine.close()
        raise EngineError(f"cannot set SyzygyPath of {engine.command!r}: {exc}") from None
    return value != "<empty>"


#: A judge of the starts that has not answered after this many seconds, plus one per :data:`JUDGE_NPS_FLOOR`
#: nodes of its limit, is stopped as hung.
JUDGE_STALL_SECONDS = 30.0


JUDGE_NPS_FLOOR = 10_000


def open_judge(config: EngineConfig, spec: MatchSpec, nodes: int) -> ExternalEngine:
    """A UCI engine that judges the balance of the starts (:func:`.match.balanced_starts`) at ``nodes`` nodes
    a position, with the match's tables as :func:`share_tables` gives them; a search that takes longer than
    :data:`JUDGE_STALL_SECONDS` plus a second per :data:`JUDGE_NPS_FLOOR` nodes raises :class:`EngineError`.

    :raises EngineError: in one line when it cannot be started or configured.
    """
    judge = ExternalEngine(config.command_line, dict(config.options), chess.engine.Limit(nodes=nodes),
                           stall_seconds=JUDGE_STALL_SECONDS + nodes / JUDGE_NPS_FLOOR)
    share_tables(judge, config, spec)
    return judge


class MatchEngine(ExternalEngine):
    """One side of a match: a UCI engine that plays on the game's clock or at fixed limits."""

    def __init__(self, config: EngineConfig, spec: MatchSpec) -> None:
        super().__init__(config.command_line, dict(config.options), spec.limits)
        self.config = config
        self.fixed_limit = self.limit if spec.tc is None else None
        self.tables = share_tables(self, config, spec)
        self.clock: Clock | None = None
        self.stats = SideStats()
        self.alive = True
        self.killed = False

    def new_game(self, clock: Clock | None) -> None:
        self.new_position()  # ucinewgame before the first move
        self.clock = clock
        self.stats = SideStats()

    def _limit(self, turn: chess.Color) -> chess.engine.Limit:
        if self.clock is None:
            assert self.fixed_limit is not None
            return self.fixed_limit
        clock = self.clock
        return chess.engine.Limit(white_clock=max(0.0, clock.remaining[chess.WHITE]),
                                  black_clock=max(0.0, clock.remaining[chess.BLACK]),
                                  white_inc=clock.increment, black_inc=clock.increment,
                                  remaining_moves=clock.moves_to_go(turn))

    def kill(self) -> None:
        """Stop the engine process at once (from any thread); a move it is thinking on ends as a forfeit."""
        self.alive = False
        self.killed = True
        self.engine.close()

    def move(self, board: chess.Board) -> AgentMove:
        watchdog = None
        if self.clock is not None:
            left = max(0.0, self.clock.remaining[board.turn]) + self.clock.margin + HUNG_GRACE
            watchdog = threading.Timer(left, self.kill)
            watchdog.daemon = True
            watchdog.start()
        start = time.monotonic()
        try:
            result = self.engine.play(board, self._limit(board.turn), info=chess.engine.INFO_ALL, game=self._game)
        except chess.engine.EngineTerminatedError:
            self.alive = False
            return AgentMove(None, "stopped: no move long after its clock ran out" if self.killed else
                             "the engine process died", forfeit="engine")
        except (TimeoutError, asyncio.TimeoutError, concurrent.futures.TimeoutError):
            self.kill()
            return AgentMove(None, "no move within the time limit", forfeit="engine")
        except chess.engine.EngineError as exc:  # python-chess refused the bestmove
            found = _ILLEGAL_UCI.search(str(exc))
            try:
                return AgentMove(chess.Move.from_uci(found.group(1)) if found else None, str(exc))
            except ValueError:
                return AgentMove(None, str(exc))
        finally:
            if watchdog is not None:
                watchdog.cancel()
        seconds = time.monotonic() - start
        info = result.info
        stats = self.stats
        stats.moves += 1
        stats.seconds += seconds
        depth, nodes = info.get("depth"), info.get("nodes")
        if depth is not None:
            stats.depth_total += int(depth)
            stats.depth_moves += 1
        if nodes is not None:
            stats.nodes_total += int(nodes)
            stats.nodes_moves += 1
        return AgentMove(result.move, _comment(info, board.turn, seconds))


def _comment(info: chess.engine.InfoDict, turn: chess.Color, seconds: float) -> str:
    """``+0.35/12 5000n 0.51s``: the mover's score (pawns, or #N mate) / depth, nodes, time (cutechess's style)."""
    score = info.get("score")
    text = ""
    if score is not None:
        pov = score.pov(turn)
        text = f"#{pov.mate()}" if pov.is_mate() else f"{(pov.score() or 0) / 100:+.2f}"
    if "depth" in info:
        text += f"/{info['depth']}"
    if "nodes" in info:
        text += f" {info['nodes']}n"
    return f"{text} {seconds:.2f}s".strip()
