"""The UCI engine (``chess-endgame-uci``): the protocol over the one Player service. UCI text is formatted here and
nowhere else; the search never prints."""

from chess_endgame.uci.engine import UciEngine
from chess_endgame.uci.process import main

__all__ = ["UciEngine", "main"]
