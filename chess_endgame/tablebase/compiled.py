"""The compiled Syzygy prober: table files memory-mapped as numpy arrays, probed by compiled code.

:class:`CompiledTables` reads every table's header once, when the set is first probed, into the arrays of
:class:`chess_endgame.engine.core.tbtables.Tables`; the probes themselves (index, decompression, the search of
captures and en passant, the DTZ rules) run compiled and without the GIL, so the search's tree probes without
calling back into Python. It answers what the prober asks of python-chess's :class:`chess.syzygy.Tablebase`
(``probe_wdl``, ``probe_dtz``, ``probe_dtz_table``) with the same values and the same exceptions:
:exc:`chess.syzygy.MissingTableError` for a missing table, :exc:`CorruptTable` for a damaged file (the other
tables keep working). python-chess stays the reference implementation behind the same interface
(:class:`chess_endgame.tablebase.prober.Prober`'s ``backend``).
"""

from __future__ import annotations

import mmap
import os
import threading
from dataclasses import dataclass, field

import chess
import chess.syzygy
import numpy as np

from chess_endgame.engine.core import syzygy as fmt
from chess_endgame.engine.core import tbprobe
from chess_endgame.engine.core.position import EP, FROM_NULL, HALFMOVE, STACK, STATE_SIZE, TURN
from chess_endgame.engine.core.tbprobe import LEVELS, MATERIAL_SHIFT
from chess_endgame.engine.core.tbtables import INFO_FIELDS, Tables, new_data_list, new_tables

WDL_MAGIC = b"\x71\xe8\x23\x5d"
DTZ_MAGIC = b"\xd7\x66\x0c\xa5"
_ORDER = "KQRBNP"
_KIND = {"P": 1, "N": 2, "B": 3, "R": 4, "Q": 5}


class CorruptTable(Exception):
    """A table file that is not what its name says (truncated, damaged, not a Syzygy file)."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{os.path.basename(path)}: {problem}")
        self.path = path
        self.problem = problem


def material(white: str, black: str) -> int:
    """The core's material key (:func:`~chess_endgame.engine.core.tbprobe.material_key`) of the pieces named by
    ``white`` and ``black`` (letters KQRBNP)."""
    key = 0
    for color, side in ((1, white), (0, black)):
        for letter, kind in _KIND.items():
            key |= side.count(letter) << int(MATERIAL_SHIFT[color, kind])
    return key


def name_of(key: int) -> str:
    """The table name (python-chess's ``calc_key`` form, White first) of a material key."""
    sides = []
    for color in (1, 0):
        side = "K"
        for letter in "QRBNP":
            side += letter * ((key >> int(MATERIAL_SHIFT[color, _KIND[letter]])) & 15)
        sides.append(side)
    return "v".join(sides)


def _normalize(name: str, mirror: bool = False) -> str:
    return chess.syzygy.normalize_tablename(name, mirror=mirror)


@dataclass
class _Header:
    """One table file's header, read (see :func:`_read`)."""

    path: str
    dtz: bool
    num: int
    pawns: tuple[int, int]
    enc_type: int
    symmetric: bool
    key: int                      # material key of the first side (as White) for the colour decision
    lookup: tuple[int, int]       # the material keys python-chess files it under (both colourings)
    pieces: np.ndarray = field(default_factory=lambda: np.zeros((4, 2, 7), dtype=np.int64))
    norm: np.ndarray = field(default_factory=lambda: np.zeros((4, 2, 7), dtype=np.int64))
    factor: np.ndarray = field(default_factory=lambda: np.zeros((4, 2, 7), dtype=np.int64))
    pairs: dict = field(default_factory=dict)  # (file, side) -> (row, symlen, base)
    flags: np.ndarray = field(default_factory=lambda: np.zeros(4, dtype=np.int64))
    map_at: np.ndarray = field(default_factory=lambda: np.zeros((4, 4), dtype=np.int64))
    map_start: int = 0
    problem: str = ""             # why the file cannot be probed ("" when it can)


def _subfactor(k: int, n: int) -> int:
    f, d = n, 1
    for i in range(1, k):
        f *= n - i
        d *= i + 1
    return f // d


def _norm_piece(h: _Header, pieces: list[int]) -> list[int]:
    norm = [0] * h.num
    norm[0] = 3 if h.enc_type == 0 else 2
    return _group(norm, pieces, norm[0])


def _group(norm: list[int], pieces: list[int], i: int) -> list[int]:
    """Set ``norm`` at the start of each run of like pieces from ``i`` on to the run's length."""
    while i < len(norm):
        j = i
        while j < len(norm) and pieces[j] == pieces[i]:
            norm[i] += 1
            j += 1
        i += norm[i]
    return norm


def _norm_pawn(h: _Header, pieces: list[int]) -> list[int]:
    norm = [0] * h.num
    norm[0] = h.pawns[0]
    if h.pawns[1]:
        norm[h.pawns[0]] = h.pawns[1]
    return _group(norm, pieces, h.pawns[0] + h.pawns[1])


def _factors(h: _Header, norm: list[int], order: int, lead: int, order2: int = 0x0F) -> tuple[list[int], int]:
    """The index factor of each group of the table's pieces, and the table's size: the leading group
    (``lead`` placements) in place ``order``, the other side's pawns (when ``order2`` < 15) in place ``order2``,
    then each group of like pieces as a combination of the squares the groups before it leave."""
    factor = [0] * 7
    i = norm[0] + (norm[norm[0]] if order2 < 0x0F else 0)
    n = 64 - i
    f, k = 1, 0
    while i < h.num or k in (order, order2):
        if k == order:
            factor[0] = f
            f *= lead
        elif k == order2:
            factor[norm[0]] = f
            f *= _subfactor(norm[norm[0]], 48 - norm[0])
        else:
            factor[i] = f
            f *= _subfactor(norm[i], n)
            n -= norm[i]
            i += norm[i]
        k += 1
    return factor, f


def _set(h: _Header, file: int, side: int, pieces: list[int], norm: list[int], factor: list[int]) -> None:
    h.pieces[file, side, :h.num] = pieces
    h.norm[file, side, :h.num] = norm
    h.factor[file, side, :] = factor


def _pieces(h: _Header, data: np.ndarray, at: int, file: int, side: int, shift: int) -> int:
    """Read the piece codes and order of a file's side at ``at``; set its norm and factors; its table size."""
    first = 1 + (h.pawns[1] > 0) if h.pawns[0] else 1
    pieces = [(int(data[at + first + i]) >> shift) & 0x0F for i in range(h.num)]
    order = (int(data[at]) >> shift) & 0x0F
    if h.pawns[0]:
        order2 = (int(data[at + 1]) >> shift) & 0x0F if h.pawns[1] else 0x0F
        norm = _norm_pawn(h, pieces)
        factor, size = _factors(h, norm, order, int(fmt.PAWN_FACTOR[norm[0] - 1, file]), order2)
    else:
        norm = _norm_piece(h, pieces)
        factor, size = _factors(h, norm, order, int(fmt.PIVOT_FACTOR[h.enc_type]))
    _set(h, file, side, pieces, norm, factor)
    return size


def _read(path: str, data: np.ndarray, dtz: bool) -> _Header:
    """The header of the table file at ``path`` (its bytes ``data``): piece orders, index factors, Huffman
    set-ups and where each part lies. A file that does not hold what the header promises gets a
    ``problem``."""
    name = os.path.splitext(os.path.basename(path))[0]
    first, second = name.split("v")
    pawns = [second.count("P"), first.count("P")]
    if pawns[1] > 0 and (pawns[0] == 0 or pawns[1] < pawns[0]):
        pawns.reverse()
    unique = sum((first.count(p) == 1) + (second.count(p) == 1) for p in _ORDER)
    key, mirrored = _normalize(name), _normalize(name, mirror=True)
    white, black = key.split("v")
    h = _Header(path, dtz, len(name) - 1, (pawns[0], pawns[1]), 0 if unique >= 3 else 2, key == mirrored,
                material(white, black), (material(white, black), material(black, white)))
    size = data.shape[0]
    if size % 64 != 16 or size < 16:
        h.problem = "invalid file size"
        return h
    if bytes(data[:4]) != (DTZ_MAGIC if dtz else WDL_MAGIC):
        h.problem = "invalid magic header"
        return h
    if not h.pawns[0] and h.enc_type != 0 and unique != 2:
        h.problem = "not a chess table (more than two like pieces lead)"
        return h
    try:
        _layout(h, data)
    except IndexError:
        h.problem = "truncated header"
    return h


def _layout(h: _Header, data: np.ndarray) -> None:
    """Read the piece orders and Huffman set-ups, then place the index tables, block sizes and blocks."""
    split = (not h.dtz) and bool(data[4] & 1)
    files = 4 if data[4] & 2 else 1
    sides = 2 if split else 1
    at = 5
    sizes: dict = {}
    if h.pawns[0]:
        step = h.num + 1 + (h.pawns[1] > 0)
        tb_size = {}
        for f in range(4):
            tb_size[f, 0] = _pieces(h, data, at, f, 0, 0)
            if not h.dtz:
                tb_size[f, 1] = _pieces(h, data, at, f, 1, 4)
            at += step
    else:
        tb_size = {(0, 0): _pieces(h, data, at, 0, 0, 0)}
        if not h.dtz:
            tb_size[0, 1] = _pieces(h, data, at, 0, 1, 4)
        at += h.num + 1
        files = 1
    at += at & 1
    for f in range(files):
        for side in range(sides):
            flags = int(data[at])
            row, symlen, base, after, part_sizes = fmt.read_pairs(data, at, tb_size[f, side], not h.dtz)
            if row[fmt.BLOCKS] < 0:
                raise IndexError
            if h.dtz:
                h.flags[f] = flags
            h.pairs[f, side] = (row, symlen, base)
            sizes[f, side] = part_sizes
            at = after
    if h.dtz:
        h.map_start = at
        for f in range(files):
            if h.flags[f] & 2:
                if h.flags[f] & 16:
                    if h.pawns[0]:
                        at += at & 1
                    for i in range(4):
                        h.map_at[f, i] = (at + 2 - h.map_start) // 2
                        at += 2 + 2 * int(fmt.u16(data, at))
                else:
                    for i in range(4):
                        h.map_at[f, i] = at + 1 - h.map_start
                        at += 1 + int(data[at])
        at += at & 1
    for part, column in ((0, fmt.INDEXTABLE), (1, fmt.SIZETABLE)):
        for f in range(files):
            for side in range(sides):
                h.pairs[f, side][0][column] = at
                at += int(sizes[f, side][part])
    for f in range(files):
        for side in range(sides):
            at = (at + 0x3F) & ~0x3F
            h.pairs[f, side][0][fmt.DATA] = at
            at += int(sizes[f, side][2])
    if at > data.shape[0]:
        raise IndexError
    if not h.pawns[0]:  # some pawnless tables store their sides the other way round than their names
        codes = h.pieces[0, 0, :h.num]
        white = "".join(_ORDER[6 - (c & 7)] for c in codes if c < 8)
        black = "".join(_ORDER[6 - (c & 7)] for c in codes if c >= 8)
        h.key = material(white, black)
    for f in range(4):  # one Huffman set-up for both sides when the table is not split, for all files when 1
        for side in range(2):
            if (f, side) not in h.pairs:
                h.pairs[f, side] = h.pairs.get((f, 0), h.pairs.get((0, side), h.pairs[0, 0]))


def bitboards_of(board: chess.Board) -> list[int]:
    """The core's ``bb`` of ``board`` (index ``8 * colour + piece type``, colour 1 White) as 16 integers."""
    black, white = board.occupied_co[chess.BLACK], board.occupied_co[chess.WHITE]
    kinds = (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings)
    return [black, *(k & black for k in kinds), 0, white, *(k & white for k in kinds), 0]


def _key_map(entries: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    size = 1 << max(4, (4 * len(entries)).bit_length())
    keys = np.zeros(size, dtype=np.uint64)
    tables = np.zeros(size, dtype=np.int64)
    for key, table in entries:
        slot = key & (size - 1)
        while keys[slot] and keys[slot] != key:
            slot = (slot + 1) & (size - 1)
        keys[slot], tables[slot] = key, table
    return keys, tables


def _map(path: str) -> np.ndarray:
    """The file's bytes, memory-mapped read-only (an empty array for an empty file)."""
    with open(path, "rb") as handle:
        if os.fstat(handle.fileno()).st_size == 0:
            return np.zeros(0, dtype=np.uint8)
        return np.frombuffer(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ), dtype=np.uint8)


def build(paths: list[str]) -> tuple[Tables, list[_Header]]:
    """Read every table file of ``paths`` (``.rtbw``, ``.rtbz``) into a :class:`Tables`; the headers, in table
    order, say what is wrong with the files that cannot be probed."""
    data = new_data_list()
    headers: list[_Header] = []
    for path in paths:
        try:
            array = _map(path)
        except (OSError, ValueError) as exc:
            array = np.zeros(0, dtype=np.uint8)
            header = _Header(path, path.endswith(".rtbz"), 0, (0, 0), 0, False, 0, (0, 0), problem=str(exc))
        else:
            header = _read(path, array, path.endswith(".rtbz"))
        array.flags.writeable = False
        data.append(array)
        headers.append(header)
    count = len(headers)
    info = np.zeros((count, INFO_FIELDS), dtype=np.int64)
    pieces = np.zeros((count, 4, 2, 7), dtype=np.int64)
    norm = np.zeros_like(pieces)
    factor = np.zeros_like(pieces)
    pairs_of = np.full((count, 4, 2), -1, dtype=np.int64)
    flags = np.zeros((count, 4), dtype=np.int64)
    map_at = np.zeros((count, 4, 4), dtype=np.int64)
    rows, symlens, bases = [], [], []
    symlen_at = base_at = 0
    for t, h in enumerate(headers):
        info[t] = (h.num, h.pawns[0] > 0, h.enc_type, h.pawns[0], h.pawns[1], h.symmetric, h.dtz, h.key,
                   h.map_start, bool(h.problem))
        if h.problem:
            continue
        pieces[t], norm[t], factor[t], flags[t], map_at[t] = h.pieces, h.norm, h.factor, h.flags, h.map_at
        seen: dict[int, int] = {}
        for (f, side), (row, symlen, base) in sorted(h.pairs.items()):
            if id(row) not in seen:
                row = row.copy()
                row[fmt.SYMLEN_AT], row[fmt.BASE_AT] = symlen_at, base_at
                symlen_at += len(symlen)
                base_at += len(base)
                seen[id(h.pairs[f, side][0])] = len(rows)
                rows.append(row)
                symlens.append(symlen)
                bases.append(base)
            pairs_of[t, f, side] = seen[id(h.pairs[f, side][0])]
    wdl = [(key, t) for t, h in enumerate(headers) if not h.dtz for key in h.lookup]
    dtz = [(key, t) for t, h in enumerate(headers) if h.dtz for key in h.lookup]
    wdl_keys, wdl_tables = _key_map(wdl)
    dtz_keys, dtz_tables = _key_map(dtz)
    tables = new_tables(data=data, info=info, pieces=pieces, norm=norm, factor=factor, pairs_of=pairs_of, flags=flags,
                        map_at=map_at, pairs=np.array(rows, dtype=np.int64).reshape(-1, fmt.PAIRS_FIELDS),
                        symlen=np.concatenate(symlens) if symlens else np.zeros(0, dtype=np.int64),
                        base=np.concatenate(bases) if bases else np.zeros(0, dtype=np.uint64),
                        wdl_keys=wdl_keys, wdl_tables=wdl_tables, dtz_keys=dtz_keys, dtz_tables=dtz_tables)
    return tables, headers


class _Scratch(threading.local):
    """A thread's arrays for a probe from Python: the core's board arrays and the probe's rows of moves."""

    def __init__(self) -> None:
        self.bb = np.zeros(16, dtype=np.uint64)
        self.mailbox = np.zeros(64, dtype=np.int64)
        self.state = np.zeros(STATE_SIZE, dtype=np.int64)
        self.keys = np.zeros(STACK, dtype=np.uint64)
        self.undo = np.zeros((STACK, 5), dtype=np.int64)
        self.moves = np.zeros((LEVELS, 256), dtype=np.int32)
        self.err = np.zeros(2, dtype=np.int64)


class CompiledTables:
    """Table files probed by compiled code, with python-chess's probing interface (see the module docstring).

    The headers are read at the first probe (or :attr:`tables`); the files stay mapped until :meth:`close`.
    Thread-safe: each thread probes with arrays of its own.
    """

    def __init__(self, paths: list[str]) -> None:
        self.paths = list(paths)
        self._tables: Tables | None = None
        self._headers: list[_Header] = []
        self._lock = threading.Lock()
        self._scratch = _Scratch()

    @property
    def tables(self) -> Tables:
        """The arrays the compiled probes read (built once)."""
        if self._tables is None:
            with self._lock:
                if self._tables is None:
                    self._tables, self._headers = build(self.paths)
        return self._tables

    def close(self) -> None:
        """Forget the tables (their files are unmapped once nothing refers to them)."""
        with self._lock:
            self._tables, self._headers = None, []

    def _load(self, board: chess.Board) -> _Scratch:
        """This thread's scratch, holding ``board`` (bitboards and state; the mailbox is the probe's to fill)."""
        s = self._scratch
        s.bb[:] = bitboards_of(board)
        state = s.state
        state[:] = 0
        state[TURN] = int(board.turn)
        state[EP] = -1 if board.ep_square is None else board.ep_square
        state[HALFMOVE] = board.halfmove_clock
        state[FROM_NULL] = 1000
        return s

    def _raise(self, s: _Scratch, board: chess.Board) -> None:
        code, detail = int(s.err[0]), int(s.err[1])
        if code == tbprobe.INVALID_POSITION:
            # python-chess would capture the king, and miss the table of a material without it.
            white, black = chess.syzygy.calc_key(board).split("v")
            name = f"{white}v{black[1:]}" if board.turn == chess.WHITE else f"{white[1:]}v{black}"
            raise chess.syzygy.MissingTableError(f"did not find wdl table {name}")
        if code == tbprobe.CORRUPT_TABLE:
            header = self._headers[detail]
            raise CorruptTable(header.path, f"{header.problem or 'data not as its header says'} (unreadable or "
                                            "corrupt file)")
        kind = "wdl" if code == tbprobe.MISSING_WDL else "dtz"
        raise chess.syzygy.MissingTableError(f"did not find {kind} table {name_of(detail)}")

    def probe_wdl(self, board: chess.Board) -> int:
        """WDL of the side to move, -2..2 (python-chess's ``probe_wdl``)."""
        return self._probe(board, False)

    def probe_dtz(self, board: chess.Board) -> int:
        """DTZ of the side to move in plies (python-chess's ``probe_dtz``)."""
        return self._probe(board, True)

    def _probe(self, board: chess.Board, dtz: bool) -> int:
        tables = self.tables
        s = self._load(board)
        value = tbprobe.probe_board(tables, s.bb, s.mailbox, s.state, s.keys, s.undo, s.moves, s.err, dtz)
        if s.err[0]:
            self._raise(s, board)
        return int(value)

    def probe_many(self, boards: list[chess.Board], dtz: bool = False) -> np.ndarray:
        """WDL (or with ``dtz`` DTZ) of every board, in one compiled call; :data:`~.tbprobe.FAILED` where the
        tables cannot answer (a missing or damaged table: probe that board alone for the reason)."""
        tables = self.tables
        s = self._scratch
        packed = np.array([(b.occupied_co[chess.WHITE], b.occupied_co[chess.BLACK], b.pawns, b.knights, b.bishops,
                            b.rooks, b.queens, b.kings, b.turn, 64 if b.ep_square is None else b.ep_square)
                           for b in boards], dtype=np.uint64).reshape(-1, tbprobe.PACKED_FIELDS)
        values = np.zeros(len(boards), dtype=np.int64)
        bb = np.zeros(16, dtype=np.uint64)
        tbprobe.probe_many(tables, packed, values, dtz, bb, s.mailbox, s.state, s.keys, s.undo, s.moves, s.err)
        return values

    def probe_wdl_table(self, board: chess.Board) -> int:
        """The WDL table's own value, no capture or en passant searched (python-chess's ``probe_wdl_table``)."""
        tables = self.tables
        s = self._load(board)
        value = tbprobe.wdl_table(tables, s.bb, s.state[0], s.err)
        if s.err[0]:
            self._raise(s, board)
        return int(value)

    def probe_dtz_table(self, board: chess.Board, wdl: int) -> tuple[int, int]:
        """The DTZ table's own value and 1, or (0, -1) when it does not store this side to move."""
        tables = self.tables
        s = self._load(board)
        value = tbprobe.dtz_table(tables, s.bb, s.state[0], wdl, s.err)
        if s.err[0]:
            self._raise(s, board)
        return (int(value), 1) if value >= 0 else (0, -1)
