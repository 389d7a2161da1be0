"""``chess-endgame-uci`` as a process: its arguments, its exit status, and a GUI that goes away."""

from __future__ import annotations

import io
import os
import sys

from chess_endgame.engine import warm
from chess_endgame.uci.engine import ENGINE_NAME, UciEngine

USAGE = """usage: chess-endgame-uci

The chess-endgame UCI engine: it reads UCI commands on standard input and answers
on standard output, for GUIs and match managers (Cutechess, Arena, lichess-bot).
It takes no arguments; engine settings are UCI options (send "uci" to list them),
e.g. "setoption name SyzygyPath value /path/to/syzygy". Tables default to
$SYZYGY_PATH, else the per-user directory that "chess-endgame tablebases download"
fills; the embedded 3-4-piece tables answer beneath them. Type "quit" (or end the
input) to leave.

options:
  -h, --help     show this help and exit
  --version      print the version and exit
"""


def main(argv: list[str] | None = None) -> int:
    """Console entry point of ``chess-endgame-uci`` (and ``chess-endgame uci``): exit status."""
    args = sys.argv[1:] if argv is None else argv
    if args:
        if args[0] in ("-h", "--help"):
            sys.stdout.write(USAGE)
            return 0
        if args[0] == "--version":
            sys.stdout.write(f"{ENGINE_NAME}\n")
            return 0
        sys.stderr.write(f"chess-endgame-uci: error: unexpected argument {args[0]!r} (the engine takes none; "
                         "see --help)\n")
        return 2
    for stream in (sys.stdin, sys.stdout):
        # A byte the locale cannot decode (a Latin-1 path on a UTF-8 desktop) or a character the output cannot
        # encode (a Windows pipe's code page) becomes a replacement character instead of ending the engine.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="replace")
    engine = None
    try:
        engine = UciEngine(warmed=warm.start())
        engine.run()
    except KeyboardInterrupt:  # a write to a closed output is UciEngine.send's to handle
        pass
    if engine is not None and engine.output_closed:
        # Python flushes stdout once more at exit, and would complain on stderr of the closed pipe.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
