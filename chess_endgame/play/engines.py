"""Engines behind one interface: this project's player in-process, or any UCI engine.

Both answer a position (:meth:`answer`: the move and what the engine said
about it) and play as game agents (:meth:`move`), so ``play``, the suite
runner and the benchmarks drive them alike.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
import threading
import time
from dataclasses import dataclass, field

import chess
import chess.engine

from chess_endgame.engine.player import DEFAULT_MOVETIME_MS, Decision, Player
from chess_endgame.engine.result import Limits, uci_words
from chess_endgame.play.game import AgentMove

#: Seconds a UCI engine has to answer ``uci`` with ``uciok``. A program that exits fails at once;
#: one that keeps running without answering (``/bin/cat`` echoes ``uci`` back) fails after this.
HANDSHAKE_TIMEOUT = 5.0
#: Seconds an engine has, beyond a move's time limit, to answer any later command.
COMMAND_TIMEOUT = 30.0
#: Seconds an engine has to answer ``isready`` once started and configured: what it loads or compiles then
#: (this project's compiled core, a large network, tablebases) is not charged to a game's clock, as in Cutechess.
READY_TIMEOUT = 300.0


class EngineError(Exception):
    """The engine cannot be started or configured, or it died; the message says which."""


class _ClosedLoopNotice(logging.Filter):
    """Drop asyncio's notice that the loop of a killed engine process is closed (no news to the user)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "that handles pid" not in str(record.msg)


_CLOSED_LOOP_NOTICE = _ClosedLoopNotice()


@dataclass
class Answer:
    """An engine's move (UCI) for one position, with what it said about it: ``score`` from the side to move."""

    move: str | None
    score: chess.engine.Score | None = None
    depth: int = 0
    nodes: int = 0
    seconds: float = 0.0
    pv: list[str] = field(default_factory=list)

    @property
    def mate(self) -> int | None:
        """Moves to mate (negative: getting mated), or None."""
        return None if self.score is None else self.score.mate()

    def score_text(self) -> str | None:
        """The score in UCI's words: ``cp 12``, ``mate -3``."""
        return None if self.score is None else uci_words(self.score)


def limit(movetime: int | None = None, depth: int | None = None, nodes: int | None = None) -> chess.engine.Limit:
    """python-chess's :class:`chess.engine.Limit` from the command line's words: ``movetime`` in milliseconds."""
    return chess.engine.Limit(time=None if movetime is None else movetime / 1000, depth=depth, nodes=nodes)


def is_unlimited(limits: chess.engine.Limit) -> bool:
    """No time, depth, nodes or mate limit: the search would not end by itself."""
    return limits.time is None and limits.depth is None and limits.nodes is None and limits.mate is None


#: :meth:`PlayerEngine.warm`'s positions: one beyond the tables, one within the embedded 3-4-piece set.
WARM_POSITIONS = ("8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1", "8/8/8/4k3/8/8/8/4KQ2 w - - 0 1")


class PlayerEngine:
    """The project's player with fixed limits per move."""

    def __init__(self, player: Player, limits: chess.engine.Limit, name: str = "chess-endgame") -> None:
        self.player = player
        self.limits = limits
        self.name = name

    def new_position(self) -> None:
        """A new, unrelated position: forget the hash (results do not depend on what came before)."""
        self.player.new_game()

    def warm(self) -> None:
        """Load what the first answer would otherwise pay for inside its time (the compiled search, the tables'
        headers, the chooser): a one-node search and a tablebase root, then the hash forgotten."""
        for fen in WARM_POSITIONS:
            self.player.decide(chess.Board(fen), Limits(nodes=1))
        self.player.new_game()

    def _decide(self, board: chess.Board) -> Decision:
        return self.player.decide(board, Limits.of(self.limits))

    def answer(self, board: chess.Board) -> Answer:
        start = time.monotonic()
        decision = self._decide(board)
        score = decision.score
        return Answer(decision.move.uci() if decision.move else None, score,
                      decision.depth, decision.nodes, time.monotonic() - start, [m.uci() for m in decision.pv])

    def evaluate(self, board: chess.Board) -> chess.engine.Score | None:
        """The search's score of ``board`` from the side to move (None when no iteration finished)."""
        return self._decide(board).score

    def move(self, board: chess.Board) -> AgentMove:
        """A game move, commented with its tablebase class or the search's verdict."""
        decision = self._decide(board)
        if decision.source == "tablebase":
            note = f"tablebase {decision.cls.name} D={decision.distance}"  # type: ignore[union-attr]
            if decision.score is not None and decision.score.is_mate():
                note += f" mate {decision.score.mate()}"
        else:
            said = uci_words(decision.score) if decision.score is not None else "no score"
            note = f"search {said} depth {decision.depth}"
        return AgentMove(decision.move, note)

    def close(self) -> None:
        pass


class ExternalEngine:
    """Any UCI engine through python-chess; ``options`` are set once (unknown ones are an error).

    ``stall_seconds``: a search that has not answered after that many seconds is
    stopped (the process is closed) and raises :class:`EngineError`; without it
    a search at a depth or node limit may take as long as the engine takes.
    """

    def __init__(self, command: str, options: dict[str, str], limits: chess.engine.Limit,
                 stall_seconds: float | None = None) -> None:
        self.engine = start_uci(command)
        self.command = command
        self.stall_seconds = stall_seconds
        try:
            unknown = [name for name in options if name not in self.engine.options]
            if unknown:
                raise EngineError(f"the engine {command!r} has no option {', '.join(unknown)} "
                                  f"(it has: {', '.join(sorted(self.engine.options))})")
            self.engine.configure({name: self._value(name, value) for name, value in options.items()})
        except (chess.engine.EngineError, ValueError) as exc:
            self.close()
            raise EngineError(f"cannot set the options of {command!r}: {exc}") from None
        except EngineError:
            self.close()
            raise
        self._wait_ready()
        self.limit = limit(DEFAULT_MOVETIME_MS) if is_unlimited(limits) else limits
        self.name = self.engine.id.get("name", command)
        self._game = object()

    def _wait_ready(self) -> None:
        """Wait for ``readyok`` (at most :data:`READY_TIMEOUT` seconds), so that no clock runs while the engine
        is still starting up."""
        self.engine.timeout = READY_TIMEOUT
        try:
            self.engine.ping()
        except (TimeoutError, asyncio.TimeoutError):
            self.close()
            raise EngineError(f"the engine {self.command!r} sent no readyok within {READY_TIMEOUT:g} s") from None
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError) as exc:
            self.close()
            raise EngineError(f"the engine {self.command!r} died while starting up: {exc}") from None
        finally:
            self.engine.timeout = COMMAND_TIMEOUT

    def _value(self, name: str, value: str) -> object:
        """``value`` as ``configure()`` takes it: python-chess parses and range-checks spins, combos and
        strings itself, but reads any check value but ``false`` as true (``False`` too): a check takes
        true or false here."""
        if self.engine.options[name].type == "check":
            if value.lower() not in ("true", "false"):
                raise ValueError(f"option {name} takes true or false, not {value!r}")
            return value.lower() == "true"
        return value

    def new_position(self) -> None:
        self._game = object()  # python-chess sends ucinewgame when the game object changes

    def _play(self, board: chess.Board) -> chess.engine.PlayResult:
        watchdog = None
        if self.stall_seconds is not None:
            watchdog = threading.Timer(self.stall_seconds, self.engine.close)
            watchdog.daemon = True
            watchdog.start()
        try:
            return self.engine.play(board, self.limit, info=chess.engine.INFO_ALL, game=self._game)
        except chess.engine.EngineTerminatedError as exc:
            if watchdog is not None and watchdog.finished.is_set():
                raise EngineError(f"the engine {self.command!r} did not answer within {self.stall_seconds:g} s; "
                                  "it was stopped") from None
            raise EngineError(f"the engine {self.command!r} died: {exc}") from None
        except chess.engine.EngineError as exc:
            raise EngineError(f"the engine {self.command!r} failed: {exc}") from None
        except (TimeoutError, asyncio.TimeoutError):
            raise EngineError(f"the engine {self.command!r} sent no bestmove within {self.engine.timeout:g} s "
                              "after its time was up") from None
        finally:
            if watchdog is not None:
                watchdog.cancel()

    def evaluate(self, board: chess.Board) -> chess.engine.Score | None:
        """The engine's last reported score of ``board`` from the side to move (None when it sent none)."""
        score = self._play(board).info.get("score")
        return None if score is None else score.pov(board.turn)

    def answer(self, board: chess.Board) -> Answer:
        start = time.monotonic()
        result = self._play(board)
        info = result.info
        score = info.get("score")
        pov = score.pov(board.turn) if score is not None else None
        return Answer(result.move.uci() if result.move else None, pov, int(info.get("depth", 0)),
                      int(info.get("nodes", 0)), time.monotonic() - start, [m.uci() for m in info.get("pv", [])])

    def move(self, board: chess.Board) -> AgentMove:
        """The engine's move; an engine that dies, hangs or sends an illegal move loses the game by forfeit, as
        cutechess-cli scores it."""
        try:
            answer = self.answer(board)
        except EngineError as exc:
            return AgentMove(None, str(exc), forfeit="illegal" if "illegal uci" in str(exc) else "engine")
        return AgentMove(chess.Move.from_uci(answer.move) if answer.move else None, answer.score_text() or "")

    def close(self) -> None:
        """Quit the engine; one that does not quit within a few seconds is killed."""
        self.engine.timeout = HANDSHAKE_TIMEOUT
        try:
            self.engine.quit()
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, OSError, TimeoutError,
                asyncio.TimeoutError):
            pass
        finally:
            self.engine.close()


def start_uci(command: str) -> chess.engine.SimpleEngine:
    """Start ``command`` (a shell-style command line) as a UCI engine, in its own process group.

    Its own process group keeps a Ctrl-C of the terminal away from it: the
    caller ends the game, reports, then quits the engine.

    :raises EngineError: in one line when the command is empty, cannot be run,
        exits before ``uciok`` or does not send ``uciok`` within
        :data:`HANDSHAKE_TIMEOUT` seconds.
    """
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise EngineError(f"cannot parse the engine command {command!r}: {exc}") from None
    if not argv:
        raise EngineError("the UCI engine command is empty")
    logging.getLogger("asyncio").addFilter(_CLOSED_LOOP_NOTICE)
    try:
        engine = chess.engine.SimpleEngine.popen_uci(argv, timeout=HANDSHAKE_TIMEOUT, setpgrp=True)
    except (TimeoutError, asyncio.TimeoutError):
        raise EngineError(f"{command} is not a UCI engine (no uciok within {HANDSHAKE_TIMEOUT:g} s)") from None
    except chess.engine.EngineTerminatedError:
        raise EngineError(f"{command} is not a UCI engine (it exited without sending uciok)") from None
    except OSError as exc:
        raise EngineError(f"cannot start the UCI engine {command!r}: {exc.strerror or exc}") from None
    except chess.engine.EngineError as exc:
        raise EngineError(f"cannot start the UCI engine {command!r}: {exc}") from None
    engine.timeout = COMMAND_TIMEOUT
    return engine
