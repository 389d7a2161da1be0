"""Engines that answer suite positions: this project's player in-process, or any UCI engine."""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, field

import chess
import chess.engine

from ..game import AgentMove
from ..player import Player, PlayerOptions
from ..search import Limits
from ..tablebase import Prober


class SolverError(Exception):
    """The engine cannot be started or configured, or it died; the message says which."""


@dataclass
class Answer:
    """An engine's move for one position, with what it said about it."""

    move: str | None
    score: str | None = None
    mate: int | None = None
    depth: int = 0
    nodes: int = 0
    seconds: float = 0.0
    pv: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SearchLimits:
    movetime: int | None = None
    depth: int | None = None
    nodes: int | None = None


class OwnSolver:
    """The project's player (tables at the root, search beyond), fresh hash for every position."""

    def __init__(self, syzygy_path: str | None, limits: SearchLimits, hash_mb: int = 16) -> None:
        self.prober = Prober(syzygy_path or None)
        self.player = Player(self.prober, options=PlayerOptions(hash_mb=hash_mb))
        self.limits = limits
        self.name = "chess-endgame"

    def new_position(self) -> None:
        self.player.new_game()

    def answer(self, board: chess.Board) -> Answer:
        start = time.monotonic()
        decision = self.player.decide(board, Limits(movetime=self.limits.movetime, depth=self.limits.depth,
                                                    nodes=self.limits.nodes))
        return Answer(decision.move.uci() if decision.move else None, str(decision.score), decision.score.mate,
                      decision.depth, decision.nodes, time.monotonic() - start, [m.uci() for m in decision.pv])

    def move(self, board: chess.Board) -> AgentMove:
        """The game-agent side (``--play``)."""
        answer = self.answer(board)
        return AgentMove(chess.Move.from_uci(answer.move) if answer.move else None, answer.score or "")

    def close(self) -> None:
        self.prober.close()


class UciSolver:
    """Any UCI engine through python-chess; ``options`` are set once (unknown ones are an error)."""

    def __init__(self, command: str, options: dict[str, str], limits: SearchLimits) -> None:
        try:
            self.engine = chess.engine.SimpleEngine.popen_uci(shlex.split(command), timeout=30)
        except (OSError, ValueError, chess.engine.EngineError, chess.engine.EngineTerminatedError,
                TimeoutError) as exc:
            raise SolverError(f"cannot start the UCI engine {command!r}: {exc}") from None
        self.command = command
        try:
            unknown = [name for name in options if name not in self.engine.options]
            if unknown:
                raise SolverError(f"the engine {command!r} has no option {', '.join(unknown)} "
                                  f"(it has: {', '.join(sorted(self.engine.options))})")
            self.engine.configure({name: self._value(name, value) for name, value in options.items()})
        except (chess.engine.EngineError, ValueError) as exc:
            self.close()
            raise SolverError(f"cannot set the options of {command!r}: {exc}") from None
        except SolverError:
            self.close()
            raise
        if limits.movetime is None and limits.depth is None and limits.nodes is None:
            limits = SearchLimits(movetime=1000)
        self.limit = chess.engine.Limit(time=limits.movetime / 1000 if limits.movetime else None,
                                        depth=limits.depth, nodes=limits.nodes)
        self.name = self.engine.id.get("name", command)
        self._game = object()

    def _value(self, name: str, value: str) -> object:
        option = self.engine.options[name]
        if option.type == "spin":
            return int(value)
        if option.type == "check":
            if value.lower() not in ("true", "false"):
                raise ValueError(f"option {name} takes true or false, not {value!r}")
            return value.lower() == "true"
        return value

    def new_position(self) -> None:
        self._game = object()  # python-chess sends ucinewgame when the game object changes

    def answer(self, board: chess.Board) -> Answer:
        start = time.monotonic()
        try:
            result = self.engine.play(board, self.limit, info=chess.engine.INFO_ALL, game=self._game)
        except chess.engine.EngineTerminatedError as exc:
            raise SolverError(f"the engine {self.command!r} died: {exc}") from None
        except chess.engine.EngineError as exc:
            raise SolverError(f"the engine {self.command!r} failed: {exc}") from None
        info = result.info
        score = info.get("score")
        pov = score.pov(board.turn) if score is not None else None
        return Answer(result.move.uci() if result.move else None,
                      None if pov is None else (f"mate {pov.mate()}" if pov.is_mate() else f"cp {pov.score()}"),
                      pov.mate() if pov is not None and pov.is_mate() else None, int(info.get("depth", 0)),
                      int(info.get("nodes", 0)), time.monotonic() - start, [m.uci() for m in info.get("pv", [])])

    def move(self, board: chess.Board) -> AgentMove:
        answer = self.answer(board)
        return AgentMove(chess.Move.from_uci(answer.move) if answer.move else None, answer.score or "")

    def close(self) -> None:
        try:
            self.engine.quit()
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, OSError, TimeoutError):
            pass
