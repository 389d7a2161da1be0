"""The options the UCI engine declares (Stockfish's names) as python-chess's :class:`chess.engine.Option`, the
lines that declare them, and the values ``setoption`` may give them."""

from __future__ import annotations

import chess
import chess.engine

from chess_endgame.engine.core.treestate import TB_BOUND
from chess_endgame.tablebase.paths import scan, user_path


def declaration(option: chess.engine.Option) -> str:
    """The ``option name ... type ...`` line that ``uci`` sends for ``option``."""
    text = f"option name {option.name} type {option.type}"
    if option.type == "check":
        return f"{text} default {'true' if option.default else 'false'}"
    if option.type == "spin":
        return f"{text} default {option.default} min {option.min} max {option.max}"
    if option.type == "string":
        return f"{text} default {option.default if option.default != '' else '<empty>'}"
    return text


def parse_value(option: chess.engine.Option, value: str | None) -> object:
    """The typed value of ``setoption`` for ``option``, or :exc:`ValueError` saying what is acceptable
    (stricter than :meth:`chess.engine.Option.parse`: a check takes only true or false)."""
    if option.type == "button":
        return True
    if value is None:
        if option.type == "string":
            return ""
        raise ValueError(f"option {option.name} needs a value")
    if option.type == "spin":
        try:
            number = int(value)
        except ValueError:
            raise ValueError(f"option {option.name} takes an integer from {option.min} to {option.max}, "
                             f"not {value!r}") from None
        if not option.min <= number <= option.max:
            raise ValueError(f"option {option.name} takes an integer from {option.min} to {option.max}, "
                             f"not {number}")
        return number
    if option.type == "check":
        if value.lower() not in ("true", "false"):
            raise ValueError(f"option {option.name} takes true or false, not {value!r}")
        return value.lower() == "true"
    return "" if value == "<empty>" else value


def _default_syzygy_path() -> str:
    """SyzygyPath's default: ``$SYZYGY_PATH``, else the per-user directory when it holds tables, else
    empty (the embedded 3-4-piece set lies beneath whatever SyzygyPath says, empty included)."""
    path = user_path(None)
    return path if scan(path).wdl else ""


def options() -> list[chess.engine.Option]:
    """The options ``uci`` declares, with Stockfish's names, as python-chess's :class:`chess.engine.Option`."""
    def option(name: str, kind: str, default: object, low: int | None = None, high: int | None = None) -> (
            chess.engine.Option):
        return chess.engine.Option(name, kind, default, low, high, [])

    return [
        option("Threads", "spin", 1, 1, 64),
        option("Hash", "spin", 16, 1, 1024),
        option("Clear Hash", "button", None),
        option("Ponder", "check", False),
        option("MultiPV", "spin", 1, 1, 500),
        option("Move Overhead", "spin", 10, 0, 5000),
        option("SyzygyPath", "string", _default_syzygy_path()),
        option("SyzygyProbeDepth", "spin", 1, 1, 100),
        option("Syzygy50MoveRule", "check", True),
        option("SyzygyProbeLimit", "spin", 7, 0, 7),
        option("UCI_ShowWDL", "check", False),
        option("SyzygyRemote", "string", ""),
        option("Contempt", "spin", 0, -100, 100),
    ]


#: The win/draw/loss model of ``UCI_ShowWDL`` for a searched score: python-chess's Stockfish model
#: (:meth:`chess.engine.Cp.wdl`), which depends on the game ply and gives draws their share.
WDL_MODEL = "sf"


def wdl(score: chess.engine.Score, ply: int) -> chess.engine.Wdl:
    """``UCI_ShowWDL``'s permille from the side to move: a mate or a tablebase result found in the tree
    (beyond :data:`~chess_endgame.engine.core.treestate.TB_BOUND`) is certain; any other score goes through
    :data:`WDL_MODEL` at game ``ply``."""
    if score.is_mate() or abs(score.score() or 0) >= TB_BOUND:
        return chess.engine.Wdl(1000, 0, 0) if score > chess.engine.Cp(0) else chess.engine.Wdl(0, 0, 1000)
    return score.wdl(model=WDL_MODEL, ply=ply)
