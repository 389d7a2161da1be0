"""The arrays of a set of Syzygy tables, as compiled code takes them: :class:`Tables`, a struct of arrays passed
by reference, which :mod:`chess_endgame.tablebase.compiled` fills from the files' headers and the probes
(:mod:`.tbprobe`) read. Without numba it is a named tuple of the same fields."""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from chess_endgame.engine.core.jit import COMPILED, njit
from chess_endgame.engine.core.syzygy import PAIRS_FIELDS

#: The arrays of a set of tables (see :mod:`chess_endgame.tablebase.compiled`, which builds them): the files'
#: bytes (a typed list, one per table), per table its ``info`` row, the piece codes, group sizes and index
#: factors of each file (a-d, pawn tables) and side, its Huffman rows' indices, its DTZ flags and value-map
#: offsets; the Huffman rows and their pools; and two open-addressing maps from a material key to a WDL and
#: a DTZ table.
TABLES_FIELDS = ("data", "info", "pieces", "norm", "factor", "pairs_of", "flags", "map_at", "pairs", "symlen", "base",
                 "wdl_keys", "wdl_tables", "dtz_keys", "dtz_tables")

#: ``info`` fields: pieces, pawns (0/1), encoding (0: three unique pieces lead, 2: the kings), leading and
#: other pawns, symmetric material (0/1), DTZ table (0/1), the material key of the table's first side as White,
#: where the DTZ value maps start, and 1 for a file found damaged when it was read.
NUM, HAS_PAWNS, ENC_TYPE, LEADING, OTHER, SYMMETRIC, IS_DTZ, KEY, MAP_START, BROKEN = range(10)
INFO_FIELDS = 10

if COMPILED:
    from numba.core import types

    from chess_endgame.engine.core import structs
    from chess_endgame.engine.core.jit import StructProxy

    @structs.register
    class TablesType(types.StructRef):
        """numba's type of :class:`Tables`: a reference to a struct of arrays (a tuple of them would be
        unboxed field by field at every call from Python: 0.2 ms for these)."""

        def preprocess_fields(self, fields):
            return tuple((name, types.unliteral(typ)) for name, typ in fields)

    class Tables(StructProxy):
        """The arrays of a set of tables, passed to compiled code by reference."""

    structs.define_proxy(Tables, TablesType, list(TABLES_FIELDS))

    @njit(refcounted=True)
    def _tables_struct(*arrays):
        return Tables(*arrays)
else:
    Tables = namedtuple("Tables", TABLES_FIELDS)  # type: ignore[assignment,misc]


def new_data_list() -> object:
    """An empty list for :class:`Tables`' ``data``: numba's typed list of read-only byte arrays (a plain list
    without numba)."""
    if not COMPILED:
        return []
    from numba import typed

    return typed.List.empty_list(types.Array(types.uint8, 1, "C", readonly=True))


def no_tables() -> Tables:
    """A :class:`Tables` of no table (a tree without compiled tables asks its probe callback)."""
    empty = np.zeros(0, dtype=np.int64)
    keys = np.zeros(16, dtype=np.uint64)
    return new_tables(data=new_data_list(), info=np.zeros((0, INFO_FIELDS), dtype=np.int64),
                      pieces=np.zeros((0, 4, 2, 7), dtype=np.int64), norm=np.zeros((0, 4, 2, 7), dtype=np.int64),
                      factor=np.zeros((0, 4, 2, 7), dtype=np.int64), pairs_of=np.zeros((0, 4, 2), dtype=np.int64),
                      flags=np.zeros((0, 4), dtype=np.int64), map_at=np.zeros((0, 4, 4), dtype=np.int64),
                      pairs=np.zeros((0, PAIRS_FIELDS), dtype=np.int64), symlen=empty,
                      base=np.zeros(0, dtype=np.uint64), wdl_keys=keys, wdl_tables=np.zeros(16, dtype=np.int64),
                      dtz_keys=keys.copy(), dtz_tables=np.zeros(16, dtype=np.int64))


def new_tables(**arrays: object) -> Tables:
    """A :class:`Tables` of the given arrays (every name of :data:`TABLES_FIELDS`); Python reads them back as
    plain attributes."""
    if not COMPILED:
        return Tables(**arrays)
    tables = _tables_struct(*(arrays[name] for name in TABLES_FIELDS))
    tables.__dict__.update(arrays)
    return tables
