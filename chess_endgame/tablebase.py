"""Syzygy tablebase prober: WDL/DTZ answers, reasons for "not covered", a cache.

Wraps :mod:`chess.syzygy`. Every answer is from the point of view of the side
to move and assumes the position was reached by a zeroing move (halfmove clock
0), exactly like the tables themselves; the move chooser applies the real clock.

- WDL: ``2`` win, ``1`` cursed win (a win that the 50-move rule turns into a
  draw), ``0`` draw, ``-1`` blessed loss, ``-2`` loss.
- DTZ: plies to the next zeroing move (capture or pawn move) with optimal play,
  positive when winning, negative when losing, ``0`` for draws. A stored value
  ``n`` may mean ``n`` or ``n + 1`` plies (DTZ50'' rounding, see
  :meth:`chess.syzygy.Tablebase.probe_dtz`).

Probing never raises a bare :exc:`KeyError`: positions the tables cannot answer
raise :exc:`NotCoveredError` (or, from :meth:`Prober.probe`, return a
:class:`NotCovered`) with the reason, and a corrupt file is named with what is
wrong with it while every other table keeps working.
"""

from __future__ import annotations

import collections
import enum
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

import chess
import chess.syzygy

WDL_CATEGORIES = {2: "win", 1: "cursed win", 0: "draw", -1: "blessed loss", -2: "loss"}

TABLE_SUFFIXES = (".rtbw", ".rtbz")

#: Where users get tables; every "no tables" message ends with this.
HOW_TO_GET_TABLES = (
    "get more tables with `chess-endgame tablebases download` (the 5-piece set; --pieces 6 for 6), or point "
    "SYZYGY_PATH or --syzygy-path at a directory of tables"
)


def category(wdl: int) -> str:
    """Name of a WDL value: win, cursed win, draw, blessed loss or loss."""
    return WDL_CATEGORIES[wdl]


class Reason(enum.Enum):
    """Why the tables give no answer for a position."""

    NO_TABLES = "no tables"
    TOO_MANY_PIECES = "too many pieces"
    CASTLING = "castling rights"
    MISSING_TABLE = "missing table"
    CORRUPT_TABLE = "corrupt table"
    INVALID_POSITION = "invalid position"
    #: A remote tablebase server did not answer usefully (timeout, HTTP error, malformed answer, rate limit).
    REMOTE = "remote tablebase"


@dataclass(frozen=True)
class NotCovered:
    """The tables cannot answer this position; :attr:`message` says why."""

    reason: Reason
    message: str
    #: Table names involved (the missing or corrupt ones), e.g. ``("KQRvKB",)``.
    tables: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class ProbeResult:
    """A tablebase answer for the side to move (halfmove clock assumed 0)."""

    #: -2..2, see the module docstring.
    wdl: int
    #: Distance to zeroing in plies (DTZ50'' with rounding), side to move.
    dtz: int

    @property
    def category(self) -> str:
        return category(self.wdl)


class NotCoveredError(Exception):
    """Raised by the fast probing methods when the tables cannot answer."""

    def __init__(self, answer: NotCovered) -> None:
        super().__init__(answer.message)
        self.answer = answer

    @property
    def reason(self) -> Reason:
        return self.answer.reason


class _CorruptTable(Exception):
    """Internal: a table file failed while being opened or probed."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{os.path.basename(path)}: {problem}")
        self.path = path
        self.problem = problem


class _BrokenTable:
    """Stands in for a table that failed once, so it fails fast afterwards."""

    def __init__(self, table: chess.syzygy.Table, problem: str) -> None:
        self.path = table.path
        self.key = table.key
        self.mirrored_key = table.mirrored_key
        self.problem = problem

    def probe_wdl_table(self, board: chess.Board) -> int:
        raise _CorruptTable(self.path, self.problem)

    def probe_dtz_table(self, board: chess.Board, wdl: int) -> tuple[int, int]:
        raise _CorruptTable(self.path, self.problem)

    def close(self) -> None:
        pass


def _problem(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if "ensure" in text and "valid syzygy" in text:
        # python-chess: "invalid magic header: ensure '/x/KQvK.rtbw' is a valid ..."
        text = text.split(":", 1)[0]
    return f"{text} (unreadable or corrupt file)"


class _GuardedTablebase(chess.syzygy.Tablebase):
    """python-chess tablebase whose table accesses turn file errors into _CorruptTable, and whose
    close() cannot hang after Ctrl-C."""

    #: A read was cut short by KeyboardInterrupt (or another BaseException). python-chess counts each
    #: table's readers and its close() waits until that count is 0; an interrupt between a read's
    #: end and its count's decrement leaves the count at 1, and close() would wait for ever (seen as
    #: ``tablebases verify --deep`` not exiting after Ctrl-C).
    interrupted = False

    def _guard(self, tables: dict, board: chess.Board, exc: Exception) -> _CorruptTable:
        table = tables.get(chess.syzygy.calc_key(board))
        if table is None or isinstance(table, _BrokenTable):
            return _CorruptTable("?", _problem(exc))
        broken = _BrokenTable(table, _problem(exc))
        try:
            table.close()
        except Exception:  # noqa: BLE001 - closing a broken mmap may fail too
            pass
        tables[broken.key] = broken
        tables[broken.mirrored_key] = broken
        with self.lru_lock:
            if table in self.lru:
                self.lru.remove(table)
        return _CorruptTable(table.path, broken.problem)

    def probe_wdl_table(self, board: chess.Board) -> int:
        try:
            return super().probe_wdl_table(board)
        except (KeyError, _CorruptTable):
            raise
        except Exception as exc:  # noqa: BLE001 - any failure inside a file is corruption
            raise self._guard(self.wdl, board, exc) from exc
        except BaseException:
            self.interrupted = True
            raise

    def probe_dtz_table(self, board: chess.Board, wdl: int) -> tuple[int, int]:
        try:
            return super().probe_dtz_table(board, wdl)
        except (KeyError, _CorruptTable):
            raise
        except Exception as exc:  # noqa: BLE001
            raise self._guard(self.dtz, board, exc) from exc
        except BaseException:
            self.interrupted = True
            raise

    def close(self) -> None:
        """Close every table; after an interrupted read, drop them instead: their memory maps are
        unmapped when collected, and nothing waits on a reader that will never leave."""
        if not self.interrupted:
            super().close()
            return
        self.wdl.clear()
        self.dtz.clear()
        with self.lru_lock:
            self.lru.clear()


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


@dataclass
class ProbeStats:
    """Counters since the last reset. ``tbhits`` counts answers (file or cache)."""

    wdl_probes: int = 0
    dtz_probes: int = 0
    cache_hits: int = 0
    tbhits: int = 0


class TablebaseProber(Protocol):
    """What the chooser, the player and the front ends ask of a prober.

    :class:`Prober` (local files) and :class:`~chess_endgame.remote.RemoteProber` (a
    server speaking the Lichess tablebase API) both answer it, so nothing above
    them knows which one it talks to. WDL -2..2 and DTZ in plies, from the side to
    move, halfmove clock taken as 0; :exc:`NotCoveredError` when there is no answer.
    """

    stats: ProbeStats
    #: Largest piece count probed (after the probe limit).
    max_pieces: int

    @property
    def available(self) -> bool: ...

    def covers(self, board: chess.Board) -> NotCovered | None: ...

    def probe_wdl(self, board: chess.Board) -> int: ...

    def probe_dtz(self, board: chess.Board) -> int: ...

    def dtz_stored(self, board: chess.Board) -> bool: ...

    def probe(self, board: chess.Board) -> ProbeResult | NotCovered: ...

    def summary(self) -> str: ...

    def close(self) -> None: ...


class _LRU:
    """A bounded least-recently-used map.

    No lock: each OrderedDict operation is atomic under the GIL, and the one
    race that remains (another thread evicting a key between ``get`` and
    ``move_to_end``) is caught.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: collections.OrderedDict = collections.OrderedDict()

    def get(self, key: object) -> int | None:
        data = self._data
        value = data.get(key)
        if value is not None:
            try:
                data.move_to_end(key)
            except KeyError:
                pass
        return value

    def put(self, key: object, value: int) -> None:
        if self.size <= 0:
            return
        data = self._data
        data[key] = value
        if len(data) > self.size:
            try:
                data.popitem(last=False)
            except KeyError:
                pass

    def clear(self) -> None:
        self._data.clear()

    def __len__(self) -> int:
        return len(self._data)


class Prober:
    """Probes Syzygy tables in one or more directories.

    ``path`` is a list of directories or one os.pathsep-separated string (like
    Stockfish's ``SyzygyPath``); ``None`` or empty means no tables (every probe
    answers :attr:`Reason.NO_TABLES`, except dead positions, which are draws).
    ``probe_limit`` caps the piece count probed (UCI ``SyzygyProbeLimit``).
    ``cache_size`` bounds each of the WDL and DTZ caches, in entries (about
    0.5 KB each); 0 disables caching.
    """

    def __init__(self, path: str | Iterable[str] | None = None, *, probe_limit: int = 7,
                 cache_size: int = 65536) -> None:
        self.files = scan(path)
        self._largest = self.files.max_pieces
        self.probe_limit = probe_limit
        self.stats = ProbeStats()
        self._wdl_cache = _LRU(cache_size)
        self._dtz_cache = _LRU(cache_size)
        self._tables = _GuardedTablebase(max_fds=128)
        for table_path in list(self.files.wdl.values()) + list(self.files.dtz.values()):
            self._tables.add_file(table_path)
        #: Corrupt or unreadable files met so far: path -> what is wrong.
        self.corrupt: dict[str, str] = {}

    # -- configuration ---------------------------------------------------

    @property
    def probe_limit(self) -> int:
        """Use the tables only up to this many pieces (UCI ``SyzygyProbeLimit``)."""
        return self._probe_limit

    @probe_limit.setter
    def probe_limit(self, value: int) -> None:
        self._probe_limit = value
        self.max_pieces = min(self._largest, value)

    @property
    def available(self) -> bool:
        """True when at least one WDL table was found."""
        return bool(self.files.wdl)

    def summary(self) -> str:
        return self.files.summary()

    def reset_stats(self) -> None:
        self.stats = ProbeStats()

    def clear_cache(self) -> None:
        self._wdl_cache.clear()
        self._dtz_cache.clear()

    def close(self) -> None:
        self._tables.close()

    def __enter__(self) -> Prober:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- probing -----------------------------------------------------------

    def _check(self, board: chess.Board) -> chess.Board:
        """Raise NotCoveredError unless the tables can be probed; return the board to probe."""
        pieces = board.occupied.bit_count()
        if pieces > self.max_pieces:
            if not self.files.wdl:
                raise NotCoveredError(NotCovered(
                    Reason.NO_TABLES, f"no Syzygy tables loaded; {HOW_TO_GET_TABLES}"))
            limit = "SyzygyProbeLimit " if self.probe_limit < self._largest else "the tables present "
            hint = f"; {HOW_TO_GET_TABLES}" if limit.startswith("the") and pieces <= 6 else ""
            raise NotCoveredError(NotCovered(
                Reason.TOO_MANY_PIECES,
                f"{pieces} pieces on the board, {limit}reach {self.max_pieces}{hint}"))
        if board.castling_rights:
            if board.clean_castling_rights():
                raise NotCoveredError(NotCovered(
                    Reason.CASTLING, "Syzygy tables do not cover positions with castling rights"))
            board = board.copy(stack=False)
            board.castling_rights = chess.BB_EMPTY
        return board

    def _fail(self, exc: Exception) -> NotCoveredError:
        if isinstance(exc, _CorruptTable):
            self.corrupt[exc.path] = exc.problem
            name = os.path.splitext(os.path.basename(exc.path))[0]
            return NotCoveredError(NotCovered(
                Reason.CORRUPT_TABLE, f"corrupt table {os.path.basename(exc.path)}: {exc.problem}",
                (name,)))
        text = str(exc.args[0]) if exc.args else str(exc)
        name = text.rsplit(" ", 1)[-1]
        if isinstance(exc, chess.syzygy.MissingTableError) and (not name.startswith("K") or "vK" not in name):
            # python-chess resolved a capture of a king: the side not to move was in check.
            return NotCoveredError(NotCovered(
                Reason.INVALID_POSITION, "invalid position: the side not to move is in check"))
        if isinstance(exc, chess.syzygy.MissingTableError):
            kind = "WDL" if " wdl " in text else "DTZ"
            ext = ".rtbw" if kind == "WDL" else ".rtbz"
            return NotCoveredError(NotCovered(
                Reason.MISSING_TABLE, f"missing {kind} table {name}{ext}", (name,)))
        return NotCoveredError(NotCovered(Reason.MISSING_TABLE, text))

    def probe_wdl(self, board: chess.Board) -> int:
        """WDL of the side to move, -2..2 (halfmove clock assumed 0).

        :raises NotCoveredError: when the tables cannot answer.
        """
        return self._probe(board, self._wdl_cache, self._tables.probe_wdl, "wdl_probes")

    def probe_dtz(self, board: chess.Board) -> int:
        """DTZ of the side to move in plies (positive wins, negative loses, 0 draws).

        :raises NotCoveredError: when the tables cannot answer.
        """
        return self._probe(board, self._dtz_cache, self._tables.probe_dtz, "dtz_probes")

    def dtz_stored(self, board: chess.Board) -> bool:
        """Whether the DTZ table holds ``board``'s side to move (one table read for :meth:`probe_dtz`).

        Syzygy DTZ tables are one-sided: for the other side python-chess answers
        :meth:`probe_dtz` with a one-ply search, a DTZ probe per legal move. A caller
        that only needs to bound the value can do better with those moves' own probes.
        True when unsure (no table, a bad file): then :meth:`probe_dtz` answers or reports.
        """
        try:
            return self._tables.probe_dtz_table(self._check(board), 2)[1] >= 0
        except (KeyError, _CorruptTable, NotCoveredError):
            return True

    def _probe(self, board: chess.Board, cache: _LRU, probe: Callable[[chess.Board], int], counter: str) -> int:
        key = board._transposition_key()
        value = cache.get(key)
        stats = self.stats
        if value is not None:
            stats.cache_hits += 1
            stats.tbhits += 1
            return value
        if not (board.pawns | board.rooks | board.queens) and board.is_insufficient_material():
            value = 0
        else:
            probe_board = self._check(board)
            setattr(stats, counter, getattr(stats, counter) + 1)
            try:
                value = probe(probe_board)
            except (KeyError, _CorruptTable) as exc:
                raise self._fail(exc) from None
        stats.tbhits += 1
        cache.put(key, value)
        return value

    def probe(self, board: chess.Board) -> ProbeResult | NotCovered:
        """WDL and DTZ of the side to move, or the reason the tables cannot answer."""
        try:
            return ProbeResult(self.probe_wdl(board), self.probe_dtz(board))
        except NotCoveredError as exc:
            return exc.answer

    def covers(self, board: chess.Board) -> NotCovered | None:
        """Cheap pre-check without probing: ``None`` when worth probing, else why not."""
        if board.is_insufficient_material():
            return None
        try:
            self._check(board)
        except NotCoveredError as exc:
            return exc.answer
        return None


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


def open_prober(path: str | None = None, **kwargs: int) -> Prober:
    """A :class:`Prober` on :func:`resolve_path` (``path``, ``$SYZYGY_PATH`` or the per-user directory,
    then the embedded 3-4-piece set)."""
    return Prober(resolve_path(path), **kwargs)
