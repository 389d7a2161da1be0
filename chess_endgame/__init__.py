"""chess-endgame: perfect play from Syzygy tablebases, alpha-beta search beyond them."""

from .chooser import Choice, MoveClass, RankedMove, choose
from .position import PositionError, parse_fen, parse_position
from .tablebase import NotCovered, NotCoveredError, Prober, ProbeResult, Reason, open_prober

__version__ = "0.1.0"

__all__ = [
    "Choice", "MoveClass", "NotCovered", "NotCoveredError", "PositionError", "ProbeResult", "Prober",
    "RankedMove", "Reason", "choose", "open_prober", "parse_fen", "parse_position",
]
