"""The transposition table: one numpy array the compiled tree reads and writes without the GIL (and, with
``Threads`` above 1, from several threads at once, without a lock); its entries are
:mod:`chess_endgame.engine.core.transposition`'s."""

from __future__ import annotations

import numpy as np

from chess_endgame.engine.core import transposition as entries


class TranspositionTable:
    """Buckets of two entries, sized from megabytes; depth-preferred replacement with ageing.

    ``table`` is the ``uint64[buckets, 4]`` array the compiled search works in; ``size`` counts entries
    (two a bucket); ``age`` (0..127) tells this search's entries from older ones.
    """

    #: Bytes per entry: the key XOR the data, and the data (two 64-bit words).
    ENTRY_BYTES = 16

    def __init__(self, size_mb: int = 16) -> None:
        self.resize(size_mb)

    @classmethod
    def slots_for(cls, size_mb: int) -> int:
        """Entries of a table of ``size_mb`` MB (a power of two, at least 1024)."""
        slots = max(1024, size_mb * (1 << 20) // cls.ENTRY_BYTES)
        return 1 << (slots.bit_length() - 1)

    def resize(self, size_mb: int) -> None:
        self.size = self.slots_for(size_mb)
        self.table = entries.new_table(self.size * 2 // entries.BUCKET_WORDS)
        self.clear()

    def clear(self) -> None:
        self.table[:] = 0
        self.age = 0

    def new_search(self) -> None:
        self.age = (self.age + 1) & entries.AGE_MASK

    def get(self, key: int) -> tuple[int, int, int, int] | None:
        """(depth, bound, score, move) stored for ``key``, or None."""
        data = np.uint64(entries.probe(self.table, np.uint64(key)))
        if not data:
            return None
        return (int(entries.depth_of(data)), int(entries.bound_of(data)), int(entries.score_of(data)),
                int(entries.move_of(data)))

    def hashfull(self) -> int:
        """Permille of the first 1000 entries used by the current search (UCI ``hashfull``)."""
        sample = self.table[:500, 1::2].ravel()
        used = (sample != 0) & ((sample >> np.uint64(entries.AGE_SHIFT)).astype(np.int64) == self.age)
        return int(np.count_nonzero(used)) * 1000 // len(sample)
