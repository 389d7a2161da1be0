"""chess-endgame: perfect play from Syzygy tablebases, alpha-beta search beyond them."""

from chess_endgame.board import PositionError, parse_fen, parse_position
from chess_endgame.chooser import Choice, MoveClass, RankedMove, choose
from chess_endgame.tablebase.prober import NotCovered, NotCoveredError, Prober, ProbeResult, Reason, open_prober
from chess_endgame.version import __version__

__all__ = [
    "Choice", "MoveClass", "NotCovered", "NotCoveredError", "PositionError", "ProbeResult", "Prober",
    "RankedMove", "Reason", "__version__", "choose", "open_prober", "parse_fen", "parse_position",
]
