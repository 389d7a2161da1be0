"""Where the tables live: the directories of a Syzygy path, the per-user data directory, the embedded 3-4-piece set
beneath them all, and what files a path holds.

Lookup order, for every command, the UCI engine and the server: --syzygy-path/SyzygyPath, else
``$SYZYGY_PATH``, else the per-user data directory; then the embedded set for whatever those lack (the first
directory that has a file answers for it, as in Stockfish's SyzygyPath).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field

import chess
import chess.syzygy

TABLE_SUFFIXES = (".rtbw", ".rtbz")


#: Where users get tables; every "no tables" message ends with this.
HOW_TO_GET_TABLES = (
    "get more tables with `chess-endgame tablebases download` (the 5-piece set; --pieces 6 for 6), or point "
    "SYZYGY_PATH or --syzygy-path at a directory of tables"
)


def split_path(path: str | Iterable[str] | None) -> list[str]:
    """Directories of a Syzygy path: os.pathsep-separated like Stockfish's SyzygyPath.

    Empty entries and Stockfish's ``<empty>`` placeholder are dropped.
    """
    if path is None:
        return []
    parts = path.split(os.pathsep) if isinstance(path, str) else list(path)
    return [p.strip() for p in parts if p.strip() and p.strip() != "<empty>"]


@dataclass
class TableFiles:
    """The table files found in a set of directories, by table name."""

    directories: list[str] = field(default_factory=list)
    wdl: dict[str, str] = field(default_factory=dict)  # name -> path
    dtz: dict[str, str] = field(default_factory=dict)
    #: Directories that do not exist or cannot be listed, with the problem.
    bad_directories: dict[str, str] = field(default_factory=dict)

    @property
    def max_pieces(self) -> int:
        """Largest piece count of any WDL table found (0 when there is none)."""
        return max((len(name) - 1 for name in self.wdl), default=0)

    @property
    def complete_pieces(self) -> int:
        """Largest n such that every WDL and DTZ table with up to n pieces is present."""
        complete = 0
        for n in range(3, 8):
            needed = set(chess.syzygy.tablenames(piece_count=n))
            if needed <= self.wdl.keys() and needed <= self.dtz.keys():
                complete = n
            else:
                break
        return complete

    def summary(self) -> str:
        """Stockfish's wording: ``Found N WDL and M DTZ tablebase files (up to K-man).``"""
        return (f"Found {len(self.wdl)} WDL and {len(self.dtz)} DTZ tablebase files "
                f"(up to {self.max_pieces}-man).")


def scan(path: str | Iterable[str] | None) -> TableFiles:
    """Find the Syzygy files (``*.rtbw``, ``*.rtbz`` with a valid table name) in a path.

    The first directory that has a file wins, as in Stockfish's SyzygyPath (and a
    shell's PATH): later directories fill in only what earlier ones lack. Missing
    directories are listed in ``bad_directories``.
    """
    found = TableFiles()
    for directory in split_path(path):
        try:
            names = sorted(os.listdir(directory))
        except OSError as exc:
            found.bad_directories[directory] = exc.strerror or str(exc)
            continue
        found.directories.append(directory)
        for filename in names:
            name, ext = os.path.splitext(filename)
            if ext not in TABLE_SUFFIXES or not chess.syzygy.is_tablename(name):
                continue
            full = os.path.join(directory, filename)
            kind = found.wdl if ext == ".rtbw" else found.dtz
            if name not in kind and os.path.isfile(full):
                kind[name] = full
    return found


def embedded_directory() -> str:
    """The embedded 3-4-piece tables shipped with the package (``tablebases/`` of the checkout)."""
    import chess_endgame_tablebases

    return chess_endgame_tablebases.DIRECTORY


def user_directory(kind: str) -> str:
    """This program's per-user ``"data"`` or ``"cache"`` directory: ``$XDG_DATA_HOME/chess-endgame``
    (``~/.local/share/chess-endgame``) or ``$XDG_CACHE_HOME/chess-endgame`` (``~/.cache/...``) on Linux,
    ``~/Library/Application Support/chess-endgame`` or ``~/Library/Caches/chess-endgame`` on macOS,
    ``%LOCALAPPDATA%\\chess-endgame`` on Windows (both)."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
    elif sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Application Support" if kind == "data" else "~/Library/Caches")
    elif kind == "data":
        base = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "chess-endgame")


def default_directory() -> str:
    """The per-user directory for tables, where ``tablebases download`` writes by default: ``syzygy`` in
    :func:`user_directory` ``("data")``."""
    return os.path.join(user_directory("data"), "syzygy")


def user_path(path: str | None = None) -> str:
    """The user's own table directories: ``path`` if given, else ``$SYZYGY_PATH``, else the per-user
    data directory if it exists (else ``""``). The embedded set is not part of it."""
    if path and split_path(path):
        return path
    env = os.environ.get("SYZYGY_PATH")
    if env and split_path(env):
        return env
    directory = default_directory()
    return directory if os.path.isdir(directory) else ""


def with_embedded(path: str | None) -> str:
    """``path`` followed by the embedded directory (unless it is there already), which so answers only for
    what ``path`` lacks."""
    directories = split_path(path)
    embedded = embedded_directory()
    if not any(os.path.realpath(d) == os.path.realpath(embedded) for d in directories):
        directories.append(embedded)
    return os.pathsep.join(directories)


def resolve_path(path: str | None = None) -> str:
    """The Syzygy path every command uses: :func:`user_path` (``path``, else ``$SYZYGY_PATH``, else the
    per-user directory), then the embedded 3-4-piece set beneath it."""
    return with_embedded(user_path(path))
