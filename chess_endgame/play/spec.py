"""What a match is: its two engines, the clock or the limits of every move, the starts and the rules of adjudication."""

from __future__ import annotations

import re
import shlex
import sys
from dataclasses import dataclass, field

import chess.engine

from chess_endgame.play.game import Clock

#: The engine name that means this project's own UCI engine, run by this Python.
SELF = "self"


#: The longest base time and increment a time control may give, in seconds (a day).
MAX_SECONDS = 86400
#: Plies after which a game is adjudicated a draw.
DEFAULT_MAX_PLIES = 500


def self_command() -> str:
    """The command line of this project's UCI engine, for the Python running now."""
    return shlex.join([sys.executable, "-m", "chess_endgame", "uci"])


@dataclass(frozen=True)
class TimeControl:
    """``[MOVES/]SECONDS[+INCREMENT]``: 10+0.1 (sudden death, 0.1 s a move), 40/60 (60 s every 40 moves)."""

    base: float
    increment: float = 0.0
    moves: int | None = None

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        number = r"(\d+(?:\.\d*)?|\.\d+)"
        found = re.fullmatch(rf"(?:(\d+)/)?{number}(?:\+{number})?", text.strip())
        if not found:
            raise ValueError(f"time control {text!r} is not of the form [MOVES/]SECONDS[+INCREMENT] "
                             "(e.g. 10+0.1 or 40/60)")
        moves, base, increment = found.groups()
        tc = cls(float(base), float(increment or 0), int(moves) if moves else None)
        if tc.base <= 0 or tc.moves == 0:
            raise ValueError(f"time control {text!r} gives no time: the seconds and moves must be above 0")
        if tc.base > MAX_SECONDS or tc.increment > MAX_SECONDS or (tc.moves or 0) > 1000:
            raise ValueError(f"time control {text[:40]!r} is too long: at most {MAX_SECONDS} seconds, "
                             f"{MAX_SECONDS} seconds of increment and 1000 moves")
        return tc

    def __str__(self) -> str:
        """The PGN TimeControl tag: ``SECONDS+INCREMENT`` or ``MOVES/SECONDS``."""
        text = f"{self.moves}/{self.base:g}" if self.moves else f"{self.base:g}"
        return f"{text}+{self.increment:g}" if self.increment else text

    def clock(self, margin: float = 0.0) -> Clock:
        return Clock(self.base, self.increment, self.moves, margin)


@dataclass(frozen=True)
class EngineConfig:
    """A UCI command line (or :data:`SELF`), its options, and a name for the report (default: its ``id name``)."""

    command: str
    options: tuple[tuple[str, str], ...] = ()
    name: str | None = None

    @property
    def command_line(self) -> str:
        return self_command() if self.command == SELF else self.command


@dataclass(frozen=True)
class MatchSpec:
    engines: tuple[EngineConfig, EngineConfig]
    #: Starting FENs: game ``i`` (from 0) starts from ``starts[(i // 2) % len(starts)]``, the first engine White
    #: when ``i`` is even.
    starts: tuple[str, ...]
    games: int
    #: The clock; without it every move has ``limits`` (movetime, depth, nodes).
    tc: TimeControl | None = None
    limits: chess.engine.Limit = field(default_factory=chess.engine.Limit)
    #: Table directories for adjudication and the engines' SyzygyPath ("" when there are none).
    syzygy_path: str = ""
    tb_adjudication: bool = True
    #: Set SyzygyPath of engines that have it to ``syzygy_path`` (False: to ``<empty>``), unless given as an option.
    engine_tables: bool = True
    max_plies: int = DEFAULT_MAX_PLIES
    #: Seconds a side may overrun its clock before it loses.
    time_margin: float = 0.0
