"""Managing Syzygy files: what is present (info), whether it is sound (verify), getting it (download).

File names, sets and dependencies come from :mod:`chess.syzygy`
(``tablenames``, ``is_tablename``); the official embedded checksums are read
from lists in the official format (``KQvK.rtbw: <32 hex digits>``, one per
line): the 3-4-5-piece lists ship with the embedded tables
(:data:`chess_endgame_tablebases.CHECKSUM_LISTS`) and check every download.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import chess
import chess.syzygy

from chess_endgame.board import random_position
from chess_endgame.tablebase.paths import embedded_directory, scan, with_embedded
from chess_endgame.tablebase.prober import NotCoveredError, Prober, Reason

WDL_MAGIC = bytes([0x71, 0xE8, 0x23, 0x5D])
DTZ_MAGIC = bytes([0xD7, 0x66, 0x0C, 0xA5])

#: Approximate sizes in bytes of the official N-piece sets (WDL files, DTZ files): syzygy-tables.info's
#: totals for 5 and 6 pieces (the 3-4-piece part of 3-4-5 taken off); 3 and 4 are measured from the
#: embedded files (:func:`set_size`).
SET_SIZES = {5: (376_000_000, 559_000_000), 6: (68_200_000_000, 81_900_000_000)}

_CHECKSUM_LINE = re.compile(r"^\s*([KQRBNP]+v[KQRBNP]+\.rtb[wz])\s*:\s*([0-9a-fA-F]{32})\s*$")


def official_names(pieces: int) -> list[str]:
    """Every table name with 3..``pieces`` pieces, smallest first (python-chess's list)."""
    names = set(chess.syzygy.tablenames(piece_count=pieces))
    return sorted(names, key=lambda n: (len(n), n))


def table_files(pieces: int, *, wdl_only: bool = False, smallest: int = 3) -> list[str]:
    """File names of the official tables of ``smallest`` to ``pieces`` pieces (``.rtbw`` and, unless
    wdl_only, ``.rtbz``)."""
    files = []
    for name in official_names(pieces):
        if len(name) - 1 < smallest:
            continue
        files.append(name + ".rtbw")
        if not wdl_only:
            files.append(name + ".rtbz")
    return files


def set_size(pieces: int, *, wdl_only: bool = False) -> int:
    """Bytes of the official ``pieces``-piece set: measured from the embedded files for 3 and 4, else the
    published approximate total (:data:`SET_SIZES`)."""
    if pieces in SET_SIZES:
        wdl, dtz = SET_SIZES[pieces]
        return wdl if wdl_only else wdl + dtz
    return sum(os.path.getsize(os.path.join(embedded_directory(), f))
               for f in table_files(pieces, wdl_only=wdl_only, smallest=pieces))


# -- info ---------------------------------------------------------------------


@dataclass
class PieceCountInfo:
    pieces: int
    wdl: list[str] = field(default_factory=list)
    dtz: list[str] = field(default_factory=list)
    #: Official tables of this size with a WDL or DTZ file missing.
    missing: list[str] = field(default_factory=list)
    size: int = 0


@dataclass
class TablesInfo:
    directories: list[str]
    bad_directories: dict[str, str]
    counts: list[PieceCountInfo]
    total_size: int
    summary: str
    #: Largest n such that every WDL and DTZ table with up to n pieces is present (0: none).
    complete_pieces: int = 0
    #: Table name -> {"wdl": directory, "dtz": directory} of the files that answer for it (the first
    #: directory of the path that has the file).
    sources: dict[str, dict[str, str]] = field(default_factory=dict)

    def answering(self) -> dict[str, list[str]]:
        """Directory -> the tables it answers for (WDL or DTZ), in path order, smallest tables first."""
        by_directory: dict[str, list[str]] = {d: [] for d in self.directories}
        for name, kinds in self.sources.items():
            for directory in dict.fromkeys(kinds.values()):
                by_directory.setdefault(directory, []).append(name)
        return {d: sorted(names, key=lambda n: (len(n), n)) for d, names in by_directory.items()}


def info(path: str) -> TablesInfo:
    """Which tables are present per piece count, which official 3-4-5 ones are missing, sizes."""
    found = scan(path)
    by_count: dict[int, PieceCountInfo] = {n: PieceCountInfo(n) for n in (3, 4, 5)}
    sources: dict[str, dict[str, str]] = {}
    for kind in ("wdl", "dtz"):
        for name, file_path in getattr(found, kind).items():
            entry = by_count.setdefault(len(name) - 1, PieceCountInfo(len(name) - 1))
            getattr(entry, kind).append(name)
            entry.size += os.path.getsize(file_path)
            sources.setdefault(name, {})[kind] = os.path.dirname(file_path)
    for name in official_names(5):
        if name not in found.wdl or name not in found.dtz:
            by_count[len(name) - 1].missing.append(name)
    counts = [by_count[n] for n in sorted(by_count)]
    for entry in counts:
        entry.wdl.sort()
        entry.dtz.sort()
        entry.missing.sort()
    return TablesInfo(found.directories, found.bad_directories, counts,
                      sum(c.size for c in counts), found.summary(), found.complete_pieces,
                      dict(sorted(sources.items(), key=lambda item: (len(item[0]), item[0]))))


# -- checksums ------------------------------------------------------------------


class ChecksumListError(ValueError):
    """A checksum list cannot be read or has a malformed line."""


def read_checksums(paths: Iterable[str]) -> dict[str, str]:
    """File name -> 32 lower-case hex digits, from lists in the official format."""
    sums: dict[str, str] = {}
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.readlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ChecksumListError(f"cannot read checksum list {path}: {exc}") from None
        for number, line in enumerate(lines, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            match = _CHECKSUM_LINE.match(line)
            if not match:
                raise ChecksumListError(
                    f"{path}:{number}: expected 'NAME.rtbw: <32 hex digits>', got {line.strip()[:60]!r}")
            sums[match.group(1)] = match.group(2).lower()
    return sums


def embedded_checksum(path: str) -> str:
    """The file's embedded checksum: its last 16 bytes, as hex."""
    with open(path, "rb") as f:
        f.seek(-16, os.SEEK_END)
        return f.read(16).hex()


def structure_problems(path: str) -> list[str]:
    """Header and size checks every Syzygy file must pass (empty list when fine)."""
    problems = []
    magic = WDL_MAGIC if path.endswith(".rtbw") else DTZ_MAGIC
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError as exc:
        return [f"cannot read: {exc.strerror or exc}"]
    if head != magic:
        problems.append(f"bad magic header {head.hex() or '(empty file)'}, expected {magic.hex()}")
    if size % 64 != 16:
        problems.append(f"size {size} bytes is not 16 mod 64 (truncated or padded)")
    return problems


def open_problem(path: str) -> str | None:
    """Open and initialise the table in python-chess; the error text, or None when it opens."""
    table_class = chess.syzygy.WdlTable if path.endswith(".rtbw") else chess.syzygy.DtzTable
    try:
        table = table_class(path)
        try:
            if path.endswith(".rtbw"):
                table.init_table_wdl()
            else:
                table.init_table_dtz()
        finally:
            table.close()
    except Exception as exc:  # noqa: BLE001 - any failure means the file is unusable
        return f"python-chess cannot open it: {str(exc).split(': ensure')[0] or type(exc).__name__}"
    return None


# -- deep check -------------------------------------------------------------------


def _flip_material(name: str) -> str:
    white, black = name.split("v")
    return f"{black}v{white}"


def _child_value(board: chess.Board, prober: Prober, dtz: bool) -> tuple[int, bool]:
    """(value, zeroing) of the child after the last move, from the child's side to move."""
    if board.is_checkmate():
        return (-1 if dtz else -2), True
    return (prober.probe_dtz(board) if dtz else prober.probe_wdl(board)), False


def _wdl_consistent(board: chess.Board, prober: Prober) -> str | None:
    """Check the WDL of ``board`` against a 1-ply search of its children."""
    parent = prober.probe_wdl(board)
    values = []  # (value for the parent's side, zeroing)
    for move in board.legal_moves:
        zeroing = board.is_zeroing(move)
        board.push(move)
        try:
            child, _ = _child_value(board, prober, dtz=False)
        finally:
            board.pop()
        values.append((-child, zeroing))
    if not values:
        expected = -2 if board.is_check() else 0
        return None if parent == expected else f"terminal position probes {parent}, expected {expected}"

    def sign(v: int) -> int:
        return (v > 0) - (v < 0)

    best_sign = max(sign(v) for v, _ in values)
    if sign(parent) != best_sign:
        return f"WDL {parent} but the best child gives {max(v for v, _ in values)}"
    if parent == 2 and not any(v == 2 for v, _ in values):
        return "WDL 2 but no move reaches a won position"
    if parent == -2 and not all(v == -2 for v, _ in values):
        return "WDL -2 but some move escapes the loss"
    if parent == 1 and any(v == 2 and z for v, z in values):
        return "WDL 1 (cursed) but a zeroing move wins outright"
    return None


def _dtz_consistent(board: chess.Board, prober: Prober) -> str | None:
    """Check the DTZ of ``board`` against its children's DTZ (1-ply), allowing DTZ rounding."""
    wdl = prober.probe_wdl(board)
    dtz = prober.probe_dtz(board)
    if wdl == 0:
        return None if dtz == 0 else f"draw (WDL 0) with DTZ {dtz}"
    if (dtz > 0) != (wdl > 0):
        return f"DTZ {dtz} disagrees with WDL {wdl}"
    outcomes = []
    for move in board.legal_moves:
        zeroing = board.is_zeroing(move)
        board.push(move)
        try:
            if board.is_checkmate():
                outcomes.append(1)
            elif zeroing:
                child = prober.probe_wdl(board)
                outcomes.append({-2: 1, -1: 101, 0: 0, 1: -101, 2: -1}[child])
            else:
                child = prober.probe_dtz(board)
                outcomes.append(-child + (1 if child < 0 else -1 if child > 0 else 0))
        finally:
            board.pop()
    if not outcomes:
        return None
    if wdl > 0:
        expected = min(v for v in outcomes if v > 0) if any(v > 0 for v in outcomes) else None
    else:
        expected = min(outcomes) if all(v < 0 for v in outcomes) else None
    if expected is None or abs(abs(dtz) - abs(expected)) > 1:
        return f"DTZ {dtz} but a 1-ply search of the children gives {expected}"
    return None


def deep_check(path: str, prober: Prober, *, samples: int, seed: int) -> tuple[int, list[str]]:
    """Probe ``samples`` seeded random positions of the file's table and check them 1 ply deep.

    Returns (positions checked, problems). Positions whose children need a table
    that is absent are skipped (they test nothing about this file).
    """
    name, ext = os.path.splitext(os.path.basename(path))
    rng = random.Random(f"{seed}:{name}")
    checked, problems = 0, []
    for i in range(samples):
        material = name if i % 2 == 0 else _flip_material(name)
        board = random_position(material, rng)
        try:
            problem = (_wdl_consistent if ext == ".rtbw" else _dtz_consistent)(board, prober)
        except NotCoveredError as exc:
            if exc.answer.reason is Reason.CORRUPT_TABLE and name in exc.answer.tables:
                problems.append(str(exc))
                break
            continue
        checked += 1
        if problem:
            problems.append(f"{board.fen()}: {problem}")
            if len(problems) >= 3:
                break
    return checked, problems


# -- verify -------------------------------------------------------------------------


@dataclass
class FileReport:
    path: str
    size: int
    problems: list[str] = field(default_factory=list)
    #: "ok", "mismatch", "unlisted", or "-" when no list was given.
    checksum: str = "-"
    deep_checked: int = 0

    @property
    def name(self) -> str:
        return os.path.basename(self.path)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_file(path: str, *, checksums: dict[str, str] | None = None,
                prober: Prober | None = None, samples: int = 0, seed: int = 0) -> FileReport:
    """All checks of one file: structure, opens in python-chess, checksum, and deep sampling."""
    report = FileReport(path, os.path.getsize(path) if os.path.exists(path) else 0)
    report.problems = structure_problems(path)
    if not report.problems:
        problem = open_problem(path)
        if problem:
            report.problems.append(problem)
    if checksums is not None:
        expected = checksums.get(report.name)
        if expected is None:
            report.checksum = "unlisted"
        elif report.size >= 16 and embedded_checksum(path) == expected:
            report.checksum = "ok"
        else:
            report.checksum = "mismatch"
            report.problems.append(f"embedded checksum differs from the list ({expected})")
    if prober is not None and samples > 0 and not report.problems:
        report.deep_checked, deep = deep_check(path, prober, samples=samples, seed=seed)
        report.problems.extend(deep)
    return report


def table_paths(path: str) -> list[str]:
    """Every table file in ``path`` (os.pathsep-separated directories), smallest tables first."""
    found = scan(path)
    return sorted(list(found.wdl.values()) + list(found.dtz.values()),
                  key=lambda p: (len(os.path.basename(p)), os.path.basename(p)))


def verify(path: str, *, checksums: dict[str, str] | None = None, deep: bool = False,
           samples: int = 32, seed: int = 1, files: list[str] | None = None,
           on_file: Callable[[FileReport], None] | None = None) -> list[FileReport]:
    """Verify the table files in ``path`` (os.pathsep-separated directories), or just ``files``."""
    files = table_paths(path) if files is None else files
    # The embedded 3-4-piece set behind ``path``, as every command has it: a 5-piece table's moves lead into them,
    # and without them the deep check skipped those positions (a corrupt file passed as sound).
    prober = Prober(with_embedded(path), cache_size=0) if deep else None
    reports = []
    try:
        for file_path in files:
            report = verify_file(file_path, checksums=checksums, prober=prober,
                                 samples=samples if deep else 0, seed=seed)
            reports.append(report)
            if on_file:
                on_file(report)
    finally:
        if prober:
            prober.close()
    return reports
