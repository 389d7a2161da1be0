"""Bounded caches of tablebase answers, the least recently used going first: :class:`LRU` in memory (the local
prober's WDL and DTZ answers, the remote prober's answers and refusals) and :class:`DiskCache`, an SQLite file
that keeps a remote server's answers across runs."""

from __future__ import annotations

import collections
import os
import sqlite3
import threading
import time
from collections.abc import Hashable, Mapping
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

#: Rows kept in the disk cache (about 100 bytes each); the least recently used go first.
DEFAULT_CACHE_ENTRIES = 100_000


class LRU(Generic[K, V]):
    """A bounded least-recently-used map (``size`` 0: keeps nothing).

    No lock: each OrderedDict operation is atomic under the GIL, and the one
    race that remains (another thread evicting a key between ``get`` and
    ``move_to_end``) is caught.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: collections.OrderedDict[K, V] = collections.OrderedDict()

    def get(self, key: K) -> V | None:
        data = self._data
        value = data.get(key)
        if value is not None:
            try:
                data.move_to_end(key)
            except KeyError:
                pass
        return value

    def put(self, key: K, value: V) -> None:
        self.update({key: value})

    def update(self, items: Mapping[K, V]) -> None:
        if self.size <= 0:
            return
        data = self._data
        data.update(items)
        while len(data) > self.size:
            try:
                data.popitem(last=False)
            except KeyError:
                pass

    def clear(self) -> None:
        self._data.clear()

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)


class DiskCache:
    """Answers kept across runs: (server, position) -> (WDL, DTZ) in a small SQLite file.

    Bounded to ``max_entries`` rows (about 100 bytes each): the least recently used
    go first. Any SQLite error (locked, read-only, full, corrupt) turns the cache
    off with :attr:`problem` saying why; it never raises.
    """

    def __init__(self, path: str, max_entries: int = DEFAULT_CACHE_ENTRIES) -> None:
        self.path = path
        self.max_entries = max_entries
        self.problem: str | None = None
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._rows = 0
        try:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            db = sqlite3.connect(path, timeout=2.0, check_same_thread=False, isolation_level=None)
            db.execute("CREATE TABLE IF NOT EXISTS answers (server TEXT NOT NULL, position TEXT NOT NULL, "
                       "wdl INTEGER NOT NULL, dtz INTEGER NOT NULL, used REAL NOT NULL, "
                       "PRIMARY KEY (server, position)) WITHOUT ROWID")
            db.execute("CREATE INDEX IF NOT EXISTS answers_used ON answers (used)")
            self._rows = db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]
            self._db = db
        except (sqlite3.Error, OSError) as exc:
            self.problem = f"disk cache {path} off: {exc}"

    def get(self, server: str, position: str) -> tuple[int, int] | None:
        with self._lock:
            if self._db is None:
                return None
            try:
                row = self._db.execute("SELECT wdl, dtz FROM answers WHERE server = ? AND position = ?",
                                       (server, position)).fetchone()
                if row is not None:
                    self._db.execute("UPDATE answers SET used = ? WHERE server = ? AND position = ?",
                                     (time.time(), server, position))
            except sqlite3.Error as exc:
                self._off(exc)
                return None
        return (int(row[0]), int(row[1])) if row is not None else None

    def put(self, server: str, answers: dict[str, tuple[int, int]]) -> None:
        with self._lock:
            if self._db is None:
                return
            now = time.time()
            try:
                self._db.execute("BEGIN")
                self._db.executemany("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?)",
                                     [(server, key, wdl, dtz, now) for key, (wdl, dtz) in answers.items()])
                self._rows += len(answers)
                if self._rows > self.max_entries:
                    self._rows = self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]
                    excess = self._rows - self.max_entries * 9 // 10
                    if excess > 0 and self._rows > self.max_entries:
                        self._db.execute("DELETE FROM answers WHERE (server, position) IN (SELECT server, position "
                                         "FROM answers ORDER BY used LIMIT ?)", (excess,))
                        self._rows -= excess
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._off(exc)

    def __len__(self) -> int:
        with self._lock:
            if self._db is None:
                return 0
            try:
                return int(self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])
            except sqlite3.Error:
                return 0

    def _off(self, exc: Exception) -> None:
        self.problem = f"disk cache {self.path} off: {exc}"
        try:
            assert self._db is not None
            self._db.close()
        except (sqlite3.Error, AssertionError):
            pass
        self._db = None

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                try:
                    self._db.close()
                except sqlite3.Error:
                    pass
                self._db = None
