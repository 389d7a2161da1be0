"""``chess-endgame uci``: run the UCI engine on stdin/stdout."""

from __future__ import annotations

import click

from chess_endgame import uci as engine


@click.command()
def uci() -> None:
    """Start the UCI engine (for GUIs: Cutechess, Arena, lichess-bot, python-chess).

    The same as the ``chess-endgame-uci`` executable. Tables: the SyzygyPath
    option, else $SYZYGY_PATH, else the checkout's tablebases/.
    """
    engine.main([])
