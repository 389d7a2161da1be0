"""The transposition table's entries: packing, buckets and replacement, and lockless reads."""

from __future__ import annotations

import numpy as np
import pytest

from chess_endgame.engine.core import transposition as tt
from chess_endgame.engine.tt import TranspositionTable

U = np.uint64


@pytest.mark.parametrize("depth, bound, score, move, static, age", [
    (-1, tt.UPPER, -32000, 0, tt.NO_STATIC, 0),
    (0, tt.EXACT, 32000, 0x7FFF, 32767, 127),
    (134, tt.LOWER, 19990, 4095 | 5 << 12, -1234, 64),
    (7, tt.EXACT, 0, 1, 0, 1),
])
def test_an_entry_keeps_every_field(depth: int, bound: int, score: int, move: int, static: int, age: int) -> None:
    data = U(tt.pack(depth, bound, score, move, static, age))
    assert data != 0  # an empty entry is 0, a stored one never is
    assert (tt.depth_of(data), tt.bound_of(data), tt.score_of(data), tt.move_of(data), tt.static_of(data),
            tt.age_of(data)) == (depth, bound, score, move, static, age)


def _get(table: np.ndarray, key: np.uint64) -> np.uint64:
    """The entry's data word, typed as the compiled code types it."""
    return U(tt.probe(table, key))


def _bucket_mates(table: np.ndarray, count: int) -> list[np.uint64]:
    """``count`` keys that fall into bucket 3."""
    buckets = table.shape[0]
    return [U(3 + buckets * k + (k << 40)) for k in range(1, count + 1)]


def test_a_bucket_keeps_two_positions_and_replaces_the_shallower_or_older() -> None:
    table = tt.new_table(64)
    a, b, c = _bucket_mates(table, 3)
    tt.store(table, a, 1, 9, tt.EXACT, 10, 100, 5)
    tt.store(table, b, 1, 4, tt.LOWER, 20, 200, 6)
    assert tt.score_of(_get(table, a)) == 10 and tt.score_of(_get(table, b)) == 20
    tt.store(table, c, 1, 6, tt.UPPER, 30, 300, 7)  # b (depth 4) goes, a (depth 9) stays
    assert tt.probe(table, b) == 0
    assert tt.move_of(_get(table, a)) == 100 and tt.move_of(_get(table, c)) == 300
    # Two searches later, each search of age counting 8 plies, a's depth 9 is worth 9 - 16 and c's 6 - 16:
    # c goes, then a goes before b, a shallow entry of this search.
    tt.store(table, b, 3, 2, tt.EXACT, 40, 0, 8)
    assert tt.probe(table, c) == 0 and tt.probe(table, a) != 0
    tt.store(table, c, 3, 1, tt.EXACT, 40, 0, 8)
    assert tt.probe(table, a) == 0 and tt.depth_of(_get(table, b)) == 2 and tt.probe(table, c) != 0


def test_a_position_own_entry_keeps_its_move_static_and_a_much_deeper_result() -> None:
    table = tt.new_table(64)
    key = U(0x1234_5678_9ABC_DEF0)
    tt.store(table, key, 5, 10, tt.LOWER, 50, 777, 33)
    tt.store(table, key, 5, 6, tt.UPPER, 40, 0, tt.NO_STATIC)   # more than 3 plies shallower: kept out
    assert tt.depth_of(_get(table, key)) == 10
    tt.store(table, key, 5, 8, tt.UPPER, 40, 0, tt.NO_STATIC)   # within 3 plies: replaces, keeps move and static
    data = tt.probe(table, key)
    assert (tt.depth_of(data), tt.score_of(data), tt.move_of(data), tt.static_of(data)) == (8, 40, 777, 33)
    tt.store(table, key, 5, 1, tt.EXACT, 0, 0, tt.NO_STATIC)    # an exact result always replaces
    assert tt.bound_of(_get(table, key)) == tt.EXACT
    tt.store(table, key, 6, 1, tt.LOWER, 9, 12, 3)              # and so does any result of a later search
    assert (tt.depth_of(_get(table, key)), tt.age_of(_get(table, key))) == (1, 6)


def test_an_entry_written_half_way_reads_as_a_miss() -> None:
    """Threads share the table without a lock: a key word of one entry beside the data word of another (what
    a reader sees while a writer is between its two stores) is no entry at all."""
    table = tt.new_table(64)
    a, b = _bucket_mates(table, 2)
    tt.store(table, a, 1, 5, tt.EXACT, 10, 100, 5)  # the bucket's first entry
    tt.store(table, b, 1, 7, tt.EXACT, -10, 200, 6)  # its second
    assert tt.probe(table, a) == table[3, 1] and tt.probe(table, b) == table[3, 3]
    torn = table.copy()
    torn[3, 3] = table[3, 1]  # b's key word, a's data word
    assert tt.probe(torn, b) == 0 and tt.probe(torn, a) == table[3, 1]
    torn[3, 1] ^= U(1 << 20)  # a's data with a changed score
    assert tt.probe(torn, a) == 0


def test_the_python_face_reads_what_the_tree_stored() -> None:
    table = TranspositionTable(1)
    assert table.size == 1 << 16 and table.table.shape == (1 << 15, tt.BUCKET_WORDS)
    table.new_search()
    tt.store(table.table, U(999), table.age, 3, tt.LOWER, -77, 4321, 12)
    assert table.get(999) == (3, tt.LOWER, -77, 4321) and table.get(998) is None
    assert table.hashfull() == 0  # bucket 999 lies beyond the 500 the sample reads
    tt.store(table.table, U(7), table.age, 3, tt.LOWER, -77, 4321, 12)
    assert table.hashfull() == 1
    table.new_search()
    assert table.hashfull() == 0 and table.get(7) is not None
