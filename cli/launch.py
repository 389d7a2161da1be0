"""The ``chess-endgame`` console script's entry point: it loads the program, then runs it.

Loading (numpy, numba, click and every command) takes a moment; a Ctrl-C then would end in Python's
traceback. Here it ends like a Ctrl-C at work: one line on stderr and exit status 130.
"""

from __future__ import annotations

import sys


def main() -> None:
    """Import :mod:`chess_endgame_cli.main` and run its ``main``."""
    try:
        from chess_endgame_cli.main import main as run
    except KeyboardInterrupt:
        sys.stderr.write("\nchess-endgame: interrupted while starting; nothing was done\n")
        sys.exit(130)
    run()
