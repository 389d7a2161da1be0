"""The transposition table: numpy arrays the compiled tree reads and writes without the GIL, one entry a slot,
checked by key."""

from __future__ import annotations

import numpy as np


class TranspositionTable:
    """Slots derived from a size in MB; depth-preferred replacement with ageing.

    Two numpy arrays the compiled search reads and writes: ``keys`` (the 64-bit Zobrist key of
    each slot) and ``data`` (depth, bound, score, move code, age; age -1 marks an empty slot).
    """

    #: Bytes per slot: an 8-byte key and five 4-byte fields.
    ENTRY_BYTES = 28

    def __init__(self, size_mb: int = 16) -> None:
        self.resize(size_mb)

    @classmethod
    def slots_for(cls, size_mb: int) -> int:
        """Slots of a table of ``size_mb`` MB (a power of two, at least 1024)."""
        slots = max(1024, size_mb * (1 << 20) // cls.ENTRY_BYTES)
        return 1 << (slots.bit_length() - 1)

    def resize(self, size_mb: int) -> None:
        self.size = self.slots_for(size_mb)
        self.keys = np.zeros(self.size, dtype=np.uint64)
        self.data = np.zeros((self.size, 5), dtype=np.int32)
        self.clear()

    def clear(self) -> None:
        self.keys[:] = 0
        self.data[:] = 0
        self.data[:, 4] = -1
        self.age = 0

    def new_search(self) -> None:
        self.age = (self.age + 1) & 255

    def get(self, key: int) -> tuple[int, int, int, int] | None:
        """(depth, bound, score, move) stored for ``key``, or None."""
        index = key & (self.size - 1)
        if self.data[index, 4] < 0 or int(self.keys[index]) != key:
            return None
        depth, bound, score, move, _ = (int(v) for v in self.data[index])
        return depth, bound, score, move

    def hashfull(self) -> int:
        """Permille of the first 1000 slots used by the current search (UCI ``hashfull``)."""
        sample = self.data[:1000, 4]
        return int(np.count_nonzero(sample == self.age)) * 1000 // len(sample)
