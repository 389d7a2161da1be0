"""How the core is compiled: the modules compiled without reference counting, the structs they read, and the
reassociated sum."""

from __future__ import annotations

import importlib
import os

import chess
import numpy as np
import pytest
from numba.core import types

from chess_endgame.engine.core import features, jit
from chess_endgame.engine.evaluation import Evaluator, feature_matrix
from chess_endgame.engine.result import Limits
from chess_endgame.engine.search import Searcher


def _holds_an_array(t: types.Type) -> bool:
    if isinstance(t, types.Array):
        return True
    return any(_holds_an_array(inner) for inner in getattr(t, "types", ()) or ())


def test_functions_compiled_without_reference_counts_never_return_an_array() -> None:
    assert jit.COMPILED, "run this test without NUMBA_DISABLE_JIT: it inspects the compiled core"
    # Compile what a search, an evaluation and the tuner's feature rows call.
    Searcher().search(chess.Board("8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1"), Limits(depth=5))
    board = chess.Board("r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQ1RK1 w kq - 4 5")
    Evaluator().evaluate(board)
    feature_matrix([board])
    borrowing = refcounted = 0
    for name in sorted(jit.BORROWING_MODULES):
        module = importlib.import_module(f"chess_endgame.engine.core.{name}")
        for attr, dispatcher in vars(module).items():
            if not hasattr(dispatcher, "overloads") or dispatcher.__module__ != module.__name__:
                continue
            if dispatcher.targetoptions.get("_nrt", True):
                refcounted += 1
                continue
            borrowing += 1
            for signature in dispatcher.signatures:
                result = dispatcher.overloads[signature].signature.return_type
                # A view returned without a count would be freed under its new owner.
                assert not _holds_an_array(result), f"{name}.{attr} returns {result}"
    # features.feature_rows allocates its scratch, tree.root is where Python starts a search, and
    # treestate._tree_struct builds a Tree.
    assert borrowing >= 60 and refcounted == 3


def _searched_tree() -> tuple[Searcher, object]:
    searcher = Searcher()
    searcher.search(chess.Board("8/5pk1/6p1/3p4/3R4/6P1/5PK1/4r3 w - - 0 1"), Limits(depth=4))
    return searcher, searcher._tree


def test_a_tree_passed_from_python_keeps_its_count() -> None:
    """Unboxing a Tree counts a reference; a function compiled without counts gives it back at once, one with
    counts after the call: either way the struct's count is what it was (else it would never be freed)."""
    from chess_endgame.engine.core import treestate

    searcher, tree = _searched_tree()
    assert not treestate.draw_score.targetoptions["_nrt"] and treestate.tt_store.targetoptions["_nrt"] is False
    before = tree._meminfo.refcount
    for _ in range(5):
        treestate.draw_score(tree)  # compiled without counts
        treestate.static_eval(tree)
    searcher.search(chess.Board("8/5pk1/6p1/3p4/3R4/6P1/5PK1/4r3 w - - 0 1"), Limits(depth=2))  # tree.root counts
    assert tree._meminfo.refcount == before


def test_code_without_counts_reads_a_tree_as_python_wrote_it() -> None:
    from chess_endgame.engine.core import treestate

    _, tree = _searched_tree()
    tree.counters[treestate.DRAW_WHITE] = 17
    white = bool(tree.state[treestate.TURN])
    assert treestate.draw_score(tree) == (17 if white else -17)


@jit.njit(refcounted=False)
def _set_a_field(tree, counters):
    tree.counters = counters


def test_code_without_counts_cannot_set_a_field() -> None:
    _, tree = _searched_tree()
    with pytest.raises(Exception, match="counters is set in a function compiled without reference counts"):
        _set_a_field(tree, np.zeros(16, dtype=np.int64))


def test_the_reassociated_weighted_sum_is_the_dot_product() -> None:
    rng = np.random.default_rng(5)
    weights = rng.uniform(-100, 100, features.N_FEATURES)  # the feature vector's order: tempo, then mg, eg pairs
    raw = np.where(rng.random(features.N_TERMS) < 0.1, rng.integers(-3, 4, features.N_TERMS), 0).astype(float)
    mg, eg = 0.375, 0.5
    row = features.planar(weights[None, :])[0]
    assert row[0] == weights[0] and row.shape == weights.shape
    # The sparse block (square tables, mobility) is read from notes, one a man (+1 White, -1 Black); what the
    # dense terms hold there is ignored.
    maps = np.zeros(features.MAPS_SIZE, dtype=np.uint64)
    notes = [2 * k + (1 if raw[k] < 0 else 0) for k in range(features.SPARSE_FIRST, features.SPARSE_END)
             for _ in range(abs(int(raw[k])))][:2 * features.MAX_MEN]
    sparse = np.zeros_like(raw)
    for code in notes:
        sparse[code >> 1] += -1.0 if code & 1 else 1.0
    raw[features.SPARSE_FIRST:features.SPARSE_END] = sparse[features.SPARSE_FIRST:features.SPARSE_END]
    expected = float(np.dot(weights[1::2], raw) * mg + np.dot(weights[2::2], raw) * eg)
    maps[features.NOTE_COUNT] = len(notes)
    maps[features.NOTE_COUNT + 1:features.NOTE_COUNT + 1 + len(notes)] = notes
    garbage = raw.copy()
    garbage[features.SPARSE_FIRST:features.SPARSE_END] = rng.uniform(-9, 9, features.SPARSE_END - features.SPARSE_FIRST)
    assert len(notes) > 10
    assert features.weighted_sum(row, garbage, maps, mg, eg) == pytest.approx(expected, rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("fault", ["full disk", "read-only since", "no locks"])
def test_a_cache_that_cannot_be_saved_leaves_the_code_running(tmp_path, monkeypatch, capsys, fault: str) -> None:
    """A cache directory that takes no save once numba has chosen it (full, made read-only, refusing the lock):
    the function compiles and runs uncached, and one line says so."""
    import errno
    import fcntl
    import sys

    from numba.core import caching

    name = "cached_" + fault.replace(" ", "_").replace("-", "_")
    (tmp_path / f"{name}.py").write_text("from chess_endgame.engine.core.jit import njit\n\n\n"
                                         "@njit\ndef twice(x):\n    return 2 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)  # decorated: numba has chosen the directory

    def refuse(code: int):
        def raising(*args, **kwargs):
            raise OSError(code, os.strerror(code))
        return raising

    if fault == "full disk":
        monkeypatch.setattr(caching.IndexDataCacheFile, "_save_data", refuse(errno.ENOSPC))
    elif fault == "read-only since":
        monkeypatch.setattr(caching.tempfile, "TemporaryFile", refuse(errno.EROFS))  # numba's check of the directory
    else:
        monkeypatch.setattr(fcntl, "flock", refuse(errno.ENOLCK))
    try:
        assert module.twice(21) == 42
    finally:
        sys.modules.pop(name, None)
    err = capsys.readouterr().err
    strerror = {"full disk": errno.ENOSPC, "read-only since": errno.EROFS, "no locks": errno.ENOLCK}[fault]
    assert err.count("numba could not save compiled code in") == 1 and os.strerror(strerror) in err, err
