"""Lazy SMP (``Threads``): helper threads share the TT, node limits stay exact, stop stops them all."""

from __future__ import annotations

import threading
import time

import chess
import numpy as np
import pytest

from chess_endgame.engine import search, smp
from chess_endgame.engine.core.bits import U64
from chess_endgame.engine.core.position import PLY
from chess_endgame.engine.core.treestate import AGE, DRAW_WHITE, NODES, RULE50, TB_CALLS, tb_wdl
from chess_endgame.engine.result import Limits
from chess_endgame.engine.search import Searcher
from chess_endgame.engine.smp import NodeBudget, skips
from chess_endgame.tablebase.prober import Prober

from .conftest import Pipe, require_tables

ROOK_ENDING = "8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1"


def test_helpers_spread_over_depths() -> None:
    """Helper 1 searches the even depths, helper 2 the odd ones, helpers 3 to 6 two depths in four."""
    assert [d for d in range(1, 9) if not skips(1, d)] == [2, 4, 6, 8]
    assert [d for d in range(1, 9) if not skips(2, d)] == [1, 3, 5, 7]
    assert [d for d in range(1, 9) if not skips(3, d)] == [1, 4, 5, 8]
    assert all(sum(not skips(i, d) for d in range(1, 101)) >= 40 for i in range(1, 64))


def test_the_node_budget_hands_out_exactly_its_nodes_across_threads() -> None:
    budget = NodeBudget(10_000, threads=4)
    taken: list[int] = []

    def take() -> None:
        while granted := budget.take(37):
            taken.append(granted)

    workers = [threading.Thread(target=take) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert sum(taken) == 10_000 - 4 and budget.take(5) == 0


@pytest.fixture
def many_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine of 64 cores, so that a test's threads all start whatever this machine has."""
    monkeypatch.setattr(search, "usable_cores", lambda: 64)


@pytest.mark.parametrize("threads, nodes", [(2, 5000), (2, 150_000), (3, 150_000)])
def test_a_node_limit_is_exact_across_threads(threads: int, nodes: int, many_cores: None) -> None:
    searcher = Searcher(threads=threads)
    result = searcher.search(chess.Board(ROOK_ENDING), Limits(nodes=nodes))
    assert result.nodes == nodes
    helpers = [helper.nodes for helper in searcher._active]
    assert len(helpers) == threads - 1 and all(n > 0 for n in helpers)
    assert int(searcher._tree.counters[NODES]) + sum(helpers) == nodes


def test_no_more_threads_than_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads 64 on two cores: one helper beside the main thread (64 had made a 100 ms search take 5 s)."""
    monkeypatch.setattr(search, "usable_cores", lambda: 2)
    searcher = Searcher(threads=64)
    result = searcher.search(chess.Board(ROOK_ENDING), Limits(nodes=200_000))
    assert result.nodes == 200_000 and len(searcher._active) == 1
    monkeypatch.setattr(search, "usable_cores", lambda: 1)
    searcher.search(chess.Board(ROOK_ENDING), Limits(nodes=200_000))
    assert searcher._active == []


def test_usable_cores_follow_the_affinity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(smp.os, "sched_getaffinity", lambda pid: {0}, raising=False)  # taskset -c 0
    assert smp.usable_cores() == 1
    monkeypatch.delattr(smp.os, "sched_getaffinity")  # not on Linux: the machine's count
    monkeypatch.setattr(smp.os, "cpu_count", lambda: 6)
    assert smp.usable_cores() == 6


def test_a_small_node_limit_is_searched_by_the_main_thread_alone(many_cores: None) -> None:
    searcher = Searcher(threads=4)
    result = searcher.search(chess.Board(ROOK_ENDING), Limits(nodes=3000))
    assert result.nodes == 3000 and searcher._active == []


def test_two_threads_find_what_one_finds_and_end_together(many_cores: None) -> None:
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")  # Rd8 mates
    result = Searcher(threads=2).search(board, Limits(depth=6))
    assert result.best_move == chess.Move.from_uci("d1d8") and result.score.mate() == 1
    searcher = Searcher(threads=2)
    result = searcher.search(chess.Board(ROOK_ENDING), Limits(movetime=300))
    assert result.best_move in chess.Board(ROOK_ENDING).legal_moves
    assert searcher._active and all(helper._thread is None and helper.nodes > 0 for helper in searcher._active)


def test_stop_ends_every_thread_promptly(many_cores: None) -> None:
    limits = Limits(infinite=True)
    searcher = Searcher(threads=3)
    before = threading.active_count()
    holder: dict = {}
    done = threading.Event()

    def run() -> None:
        holder["result"] = searcher.search(chess.Board(ROOK_ENDING), limits)
        holder["end"] = time.monotonic()
        done.set()

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.5)
    assert threading.active_count() == before + 3  # the search's thread and two helpers
    stopped_at = time.monotonic()
    limits.stop.set()
    assert done.wait(5)
    thread.join()
    latency = holder["end"] - stopped_at
    assert latency < 0.15, f"stop took {latency * 1000:.0f} ms"  # measured 1-3 ms; margin for loaded CI
    assert threading.active_count() == before
    assert holder["result"].best_move in chess.Board(ROOK_ENDING).legal_moves


def test_one_thread_at_a_fixed_depth_is_deterministic() -> None:
    runs = [Searcher().search(chess.Board(ROOK_ENDING), Limits(depth=9)) for _ in range(2)]
    assert runs[0].nodes == runs[1].nodes and runs[0].pv == runs[1].pv


def test_a_half_written_wdl_cache_slot_reads_as_a_miss(prober: Prober) -> None:
    """Threads share the tree's WDL cache without a lock: a slot whose value does not match its key word is
    probed again, never taken."""
    require_tables(prober, "KRPvKR")
    board = chess.Board("8/8/8/4k3/R7/5P2/6K1/r7 w - - 0 1")
    searcher = Searcher(prober=prober)
    searcher.search(board, Limits(depth=1))
    tree = searcher._tree
    key = tree.keys[tree.state[PLY]]
    slot = int(key & U64(tree.wdl_keys.shape[0] - 1))

    def probes() -> int:
        return searcher.probe_calls + int(tree.counters[TB_CALLS])

    assert tb_wdl(tree, searcher._probe_callback) == prober.probe_wdl(board) + 2
    made = probes()
    assert tb_wdl(tree, searcher._probe_callback) == prober.probe_wdl(board) + 2
    assert probes() == made  # from the cache
    tree.wdl_values[slot] = (tree.wdl_values[slot] + 1) % 5  # another thread's value, this key's word
    assert tb_wdl(tree, searcher._probe_callback) == prober.probe_wdl(board) + 2
    assert probes() == made + 1


@pytest.mark.parametrize("backend", ["compiled", "python-chess"])
def test_helpers_probe_the_tables_and_the_result_holds(syzygy_path: str, backend: str, many_cores: None) -> None:
    """Helpers probe the tables from their own trees: the compiled prober without Python, python-chess's
    through the callback (each such call takes the GIL, counted apart)."""
    prober = Prober(syzygy_path, backend=backend)
    require_tables(prober, "KRPvKR", "KRvKR")
    board = chess.Board("8/8/8/4k3/R7/5PP1/6K1/r7 w - - 0 1")  # KRPPvKR: captures fall into the tables
    searcher = Searcher(prober=prober, threads=2)
    result = searcher.search(board, Limits(nodes=400_000))
    assert result.nodes == 400_000 and result.tbhits > 0
    helper = searcher._active[0]
    if backend == "compiled":
        assert helper.tree.counters[TB_CALLS] > 0 and searcher.probe_calls == 0
    else:
        assert 0 < searcher.helper_probe_calls <= searcher.probe_calls
    single = Searcher(prober=prober).search(board, Limits(nodes=400_000))
    assert (result.score.score() or 0) > 0 and (single.score.score() or 0) > 0  # both see White ahead


def test_uci_threads_option() -> None:
    engine = Pipe().handshake()
    try:
        engine.send("uci")
        _, line = engine.expect("option name Threads")
        assert line == "option name Threads type spin default 1 min 1 max 64"
        for bad in ("0", "65", "two"):
            engine.send(f"setoption name Threads value {bad}")
            _, line = engine.expect("info string")
            assert "Threads" in line and "from 1 to 64" in line
        engine.send("setoption name Threads value 2")
        engine.send(f"position fen {ROOK_ENDING}")
        engine.send("go nodes 200000")
        _, line = engine.expect("bestmove", 60)
        assert any(seen.startswith("info depth") for seen in engine.seen)
        assert chess.Move.from_uci(line.split()[1]) in chess.Board(ROOK_ENDING).legal_moves
    finally:
        assert engine.close() == 0


def test_threads_search_with_numpy_ints_as_settings(many_cores: None) -> None:
    """The helpers take the main tree's settings (age, probe depth, rule50, table pieces, draw score)."""
    searcher = Searcher(threads=2, contempt=20)
    searcher.search(chess.Board(ROOK_ENDING), Limits(nodes=20_000))
    helper = searcher._active[0]
    for index in (AGE, DRAW_WHITE, RULE50):
        assert helper.tree.counters[index] == searcher._tree.counters[index]
    assert np.shares_memory(helper.tree.tt, searcher._tree.tt)
    assert not np.shares_memory(helper.tree.history, searcher._tree.history)
