"""Syzygy tablebase prober: WDL/DTZ answers, reasons for "not covered", a cache.

Two back ends answer the same: the compiled prober (:mod:`chess_endgame.tablebase.compiled`, numba, the default
where numba is installed) and python-chess's :mod:`chess.syzygy`, the reference implementation (``backend``).
Every answer is from the point of view of the side
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

import enum
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol, TypeVar

import chess
import chess.syzygy

from chess_endgame.engine.core.jit import COMPILED
from chess_endgame.engine.core.tbprobe import FAILED
from chess_endgame.tablebase.cache import LRU
from chess_endgame.tablebase.compiled import CompiledTables, CorruptTable
from chess_endgame.tablebase.paths import HOW_TO_GET_TABLES, resolve_path, scan

WDL_CATEGORIES = {2: "win", 1: "cursed win", 0: "draw", -1: "blessed loss", -2: "loss"}


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


class _BrokenTable:
    """Stands in for a table that failed once, so it fails fast afterwards."""

    def __init__(self, table: chess.syzygy.Table, problem: str) -> None:
        self.path = table.path
        self.key = table.key
        self.mirrored_key = table.mirrored_key
        self.problem = problem

    def probe_wdl_table(self, board: chess.Board) -> int:
        raise CorruptTable(self.path, self.problem)

    def probe_dtz_table(self, board: chess.Board, wdl: int) -> tuple[int, int]:
        raise CorruptTable(self.path, self.problem)

    def close(self) -> None:
        pass


def _problem(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if "ensure" in text and "valid syzygy" in text:
        # python-chess: "invalid magic header: ensure '/x/KQvK.rtbw' is a valid ..."
        text = text.split(":", 1)[0]
    return f"{text} (unreadable or corrupt file)"


class _GuardedTablebase(chess.syzygy.Tablebase):
    """python-chess tablebase whose table accesses turn file errors into CorruptTable, and whose
    close() cannot hang after Ctrl-C."""

    #: A read was cut short by KeyboardInterrupt (or another BaseException). python-chess counts each
    #: table's readers and its close() waits until that count is 0; an interrupt between a read's
    #: end and its count's decrement leaves the count at 1, and close() would wait for ever (seen as
    #: ``tablebases verify --deep`` not exiting after Ctrl-C).
    interrupted = False

    def _guard(self, tables: dict, board: chess.Board, exc: Exception) -> CorruptTable:
        table = tables.get(chess.syzygy.calc_key(board))
        if table is None or isinstance(table, _BrokenTable):
            return CorruptTable("?", _problem(exc))
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
        return CorruptTable(table.path, broken.problem)

    def probe_wdl_table(self, board: chess.Board) -> int:
        try:
            return super().probe_wdl_table(board)
        except (KeyError, CorruptTable):
            raise
        except Exception as exc:  # noqa: BLE001 - any failure inside a file is corruption
            raise self._guard(self.wdl, board, exc) from exc
        except BaseException:
            self.interrupted = True
            raise

    def probe_dtz_table(self, board: chess.Board, wdl: int) -> tuple[int, int]:
        try:
            return super().probe_dtz_table(board, wdl)
        except (KeyError, CorruptTable):
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


@dataclass
class ProbeStats:
    """Counters since the last reset. ``tbhits`` counts answers (file or cache)."""

    wdl_probes: int = 0
    dtz_probes: int = 0
    cache_hits: int = 0
    tbhits: int = 0


class TablebaseProber(Protocol):
    """What the chooser, the player and the front ends ask of a prober.

    :class:`Prober` (local files) and :class:`~chess_endgame.tablebase.remote.RemoteProber` (a
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


_P = TypeVar("_P", bound="ProberBase")


class ProberBase:
    """What every prober shares: the piece-count limit and the counters. A subclass sets ``_largest`` (the most
    pieces it can answer) before ``probe_limit``, and defines ``close()``."""

    _largest: int
    #: Largest piece count probed: the smaller of what is there and :attr:`probe_limit`.
    max_pieces: int
    stats: ProbeStats

    @property
    def probe_limit(self) -> int:
        """Use the tables only up to this many pieces (UCI ``SyzygyProbeLimit``)."""
        return self._probe_limit

    @probe_limit.setter
    def probe_limit(self, value: int) -> None:
        self._probe_limit = value
        self.max_pieces = min(self._largest, value)

    def reset_stats(self) -> None:
        self.stats = ProbeStats()

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self: _P) -> _P:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class Prober(ProberBase):
    """Probes Syzygy tables in one or more directories.

    ``path`` is a list of directories or one os.pathsep-separated string (like
    Stockfish's ``SyzygyPath``); ``None`` or empty means no tables (every probe
    answers :attr:`Reason.NO_TABLES`, except dead positions, which are draws).
    ``probe_limit`` caps the piece count probed (UCI ``SyzygyProbeLimit``).
    ``cache_size`` bounds each of the WDL and DTZ caches, in entries (about
    0.5 KB each); 0 disables caching. ``backend``: ``"compiled"`` (the default with numba) or
    ``"python-chess"`` (the reference; the default without numba).
    """

    def __init__(self, path: str | Iterable[str] | None = None, *, probe_limit: int = 7,
                 cache_size: int = 65536, backend: str | None = None) -> None:
        if backend not in (None, "compiled", "python-chess"):
            raise ValueError(f"unknown prober backend {backend!r} (compiled or python-chess)")
        self.files = scan(path)
        self._largest = self.files.max_pieces
        self.probe_limit = probe_limit
        self.stats = ProbeStats()
        self._wdl_cache = LRU(cache_size)
        self._dtz_cache = LRU(cache_size)
        paths = list(self.files.wdl.values()) + list(self.files.dtz.values())
        self.backend = backend or ("compiled" if COMPILED else "python-chess")
        self._tables: CompiledTables | _GuardedTablebase
        if self.backend == "compiled":
            self._tables = CompiledTables(paths)
        else:
            self._tables = _GuardedTablebase(max_fds=128)
            for table_path in paths:
                self._tables.add_file(table_path)
        #: Corrupt or unreadable files met so far: path -> what is wrong.
        self.corrupt: dict[str, str] = {}

    # -- configuration ---------------------------------------------------

    @property
    def available(self) -> bool:
        """True when at least one WDL table was found."""
        return bool(self.files.wdl)

    def summary(self) -> str:
        return self.files.summary()

    @property
    def compiled_tables(self) -> object | None:
        """The compiled back end's tables (:class:`~chess_endgame.engine.core.tbtables.Tables`), which the
        search's tree probes directly; None with python-chess."""
        return self._tables.tables if isinstance(self._tables, CompiledTables) else None

    def clear_cache(self) -> None:
        self._wdl_cache.clear()
        self._dtz_cache.clear()

    def close(self) -> None:
        self._tables.close()

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
        if isinstance(exc, CorruptTable):
            self.corrupt[exc.path] = exc.problem
            name = os.path.splitext(os.path.basename(exc.path))[0]
            return NotCoveredError(NotCovered(
                Reason.CORRUPT_TABLE, f"corrupt table {exc.path}: {exc.problem}",  # the path: which copy
                (name,)))
        text = str(exc.args[0]) if exc.args else str(exc)
        name = text.rsplit(" ", 1)[-1]
        if isinstance(exc, chess.syzygy.MissingTableError) and (not name.startswith("K") or "vK" not in name):
            # python-chess resolved a capture of a king: the side not to move was in check.
            return NotCoveredError(NotCovered(
                Reason.INVALID_POSITION, "invalid position: the side not to move is in check"))
        if isinstance(exc, chess.syzygy.MissingTableError):
            name = chess.syzygy.normalize_tablename(name)  # the file's name: the stronger side first
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

    def probe_many(self, boards: list[chess.Board], dtz: bool = False) -> list[int | None]:
        """WDL (or with ``dtz`` DTZ) of every board, None where the tables cannot answer; with the compiled
        back end in one compiled call (no cache, no counters: for batches such as a benchmark's or a
        server's), else one probe after another."""
        if isinstance(self._tables, CompiledTables):
            limit = self.max_pieces
            covered = [not b.castling_rights and b.occupied.bit_count() <= limit or self.covers(b) is None
                       for b in boards]
            values = self._tables.probe_many(boards, dtz)
            return [int(v) if ok and v != FAILED else None for v, ok in zip(values, covered, strict=True)]
        probe = self.probe_dtz if dtz else self.probe_wdl
        found: list[int | None] = []
        for board in boards:
            try:
                found.append(probe(board))
            except NotCoveredError:
                found.append(None)
        return found

    def dtz_stored(self, board: chess.Board) -> bool:
        """Whether the DTZ table holds ``board``'s side to move (one table read for :meth:`probe_dtz`).

        Syzygy DTZ tables are one-sided: for the other side python-chess answers
        :meth:`probe_dtz` with a one-ply search, a DTZ probe per legal move. A caller
        that only needs to bound the value can do better with those moves' own probes.
        True when unsure (no table, a bad file): then :meth:`probe_dtz` answers or reports.
        """
        try:
            return self._tables.probe_dtz_table(self._check(board), 2)[1] >= 0
        except (KeyError, CorruptTable, NotCoveredError):
            return True

    def _probe(self, board: chess.Board, cache: LRU, probe: Callable[[chess.Board], int], counter: str) -> int:
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
            except (KeyError, CorruptTable) as exc:
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


def open_prober(path: str | None = None, **kwargs: int) -> Prober:
    """A :class:`Prober` on :func:`resolve_path` (``path``, ``$SYZYGY_PATH`` or the per-user directory,
    then the embedded 3-4-piece set)."""
    return Prober(resolve_path(path), **kwargs)
