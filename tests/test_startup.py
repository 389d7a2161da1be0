"""Start-up of the UCI engine while its core compiles, and the cases where numba's cache cannot be written. The
first start on an empty cache (uciok at once, the first go answered once compiled) is checked on a real
install, in tests/test_wheel.py, where the whole core compiles anyway; with isready, by the example of
`chess-endgame bench startup` in docs/architecture.md."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import chess
import numba.core.config
import pytest

from .conftest import Pipe

BIN = Path(sys.executable).parent
UCI = [str(BIN / "chess-endgame-uci")]


def _processes_with(variable: str) -> list[int]:
    """The processes whose environment holds ``variable`` (NAME=value), from /proc."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if variable.encode() in environ.read_bytes().split(b"\0"):
                found.append(int(environ.parent.name))
        except OSError:  # gone, or not ours to read
            pass
    return found


def test_quit_during_the_warm_up_exits_at_once(tmp_path: Path) -> None:
    """On an empty cache the warm-up compiles in two processes (on two cores); quit ends both at once."""
    variable = f"NUMBA_CACHE_DIR={tmp_path / 'numba-cache'}"
    engine = Pipe(UCI, env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")})
    engine.send("uci")
    engine.expect("uciok", 10)
    engine.send("isready")  # pending until the warm-up ends: the reader still reads
    proc = Path("/proc/self/environ").exists()
    if proc:  # the engine, and its second process where there are two cores
        expected = 2 if (os.cpu_count() or 1) >= 2 else 1
        deadline = time.monotonic() + 20
        while len(_processes_with(variable)) < expected and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(_processes_with(variable)) == expected
    sent = time.monotonic()
    code = engine.close()
    assert code == 0, engine.stderr()
    assert time.monotonic() - sent < 5
    if proc:
        deadline = time.monotonic() + 5
        while _processes_with(variable) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _processes_with(variable) == []


def test_unwritable_numba_cache_dir_falls_back(tmp_path: Path) -> None:
    """NUMBA_CACHE_DIR that cannot be created (under a file): numba uses the next cache location and the
    engine works."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    engine = Pipe(UCI, env={**os.environ, "NUMBA_CACHE_DIR": str(blocker / "cache")})
    try:
        engine.send("uci")
        engine.expect("uciok", 10)
        engine.send("isready")
        engine.expect("readyok", 600)
        engine.send("position startpos")
        engine.send("go depth 2")
        _, bestmove = engine.expect("bestmove", 60)
        assert chess.Move.from_uci(bestmove.split()[1]) in chess.Board().legal_moves
    finally:
        code = engine.close()
    stderr = engine.stderr()
    assert code == 0 and "Traceback" not in stderr and "warm-up failed" not in stderr, stderr


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(numba.core.config, "CACHE_LOCATOR_CLASSES"),
                    reason="this numba has no NUMBA_CACHE_LOCATOR_CLASSES to simulate an unwritable cache")
def test_no_writable_cache_anywhere_compiles_without_a_cache() -> None:
    """Where numba finds no cache location at all (read-only package and home: simulated with a locator that
    never applies), the core compiles uncached instead of failing at import, and says so on stderr."""
    code = ("import chess, numpy as np; from chess_endgame.engine.core import jit, position as core; "
            "from chess_endgame.engine.core.movegen import perft; "
            "assert jit.COMPILED and not jit.CACHED; p = core.Position(chess.Board()); "
            "print(perft(*p.arrays(), 3, np.zeros(core.STACK * 256, dtype=np.int64)))")
    env = {**os.environ, "NUMBA_CACHE_LOCATOR_CLASSES": "ZipCacheLocator"}
    env.pop("NUMBA_DISABLE_JIT", None)
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["8902"]
    assert "compiling at every start" in result.stderr


def test_warm_command_reports_each_step() -> None:
    result = subprocess.run([str(BIN / "chess-endgame"), "warm"], capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("move generator (perft 2)") and lines[0].endswith(" s")
    assert any(line.startswith("search, endgame, depth 3") for line in lines)
    assert any(line.startswith("total") for line in lines)
    assert "cache:" in lines[-1]


def test_warm_says_a_step_without_tables_was_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No tables found (an empty directory and no embedded set): the probing step is reported as
    skipped, not as a step that took 0.00 s."""
    from click.testing import CliRunner

    from chess_endgame.engine.warm import warm
    from chess_endgame.tablebase import paths
    from chess_endgame_cli.main import cli

    monkeypatch.setattr(paths, "embedded_directory", lambda: str(tmp_path))
    monkeypatch.delenv("SYZYGY_PATH", raising=False)
    done = dict(warm(str(tmp_path)))
    assert done["search with tablebase probes, depth 3"] == "no tables"
    assert done["tablebase probes (the compiled prober)"] == "no tables"
    assert all(isinstance(seconds, float) for what, seconds in done.items() if "tablebase" not in what)
    result = CliRunner().invoke(cli, ["warm", "--syzygy-path", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "search with tablebase probes, depth 3   skipped (no tables)" in result.stdout.splitlines()
    # With the embedded tables alone, the step probes.
    monkeypatch.undo()
    assert isinstance(dict(warm(str(tmp_path)))["search with tablebase probes, depth 3"], float)


def test_warm_in_two_processes_reports_every_step_in_order(syzygy_path: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """``jobs=2`` on a cache without the search (simulated; the helper then loads what this one has): the side
    steps come from the second process, and every step is reported once, in the order of :func:`steps`; should
    the second process fail, its steps run in this one. With the search cached, no second process starts."""
    from chess_endgame.engine import warm as warming

    warming.warm(syzygy_path)
    assert warming._cached_already()
    monkeypatch.setattr(warming, "_cached_already", lambda: False)
    order = [what for what, _ in warming.steps(syzygy_path)]
    seen: list[str] = []
    done = warming.warm(syzygy_path, on_step=lambda what, outcome: seen.append(what), jobs=2)
    assert [what for what, _ in done] == order and sorted(seen) == sorted(order)
    assert seen[-len(warming.SIDE_STEPS):] == [w for w in order if w in warming.SIDE_STEPS]  # reported last
    assert all(isinstance(outcome, float) for _, outcome in done)
    started: list[list[str]] = []

    def failing(path: str | None, names: list[str]) -> subprocess.Popen:
        started.append(names)
        return subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"], stdout=subprocess.PIPE, text=True)

    monkeypatch.setattr(warming, "_start_side", failing)
    done = warming.warm(syzygy_path, jobs=2)
    assert started == [[w for w in order if w in warming.SIDE_STEPS]]
    assert [what for what, _ in done] == order and all(isinstance(outcome, float) for _, outcome in done)
    monkeypatch.setattr(warming, "_cached_already", lambda: True)
    warming.warm(syzygy_path, jobs=2)
    assert len(started) == 1


#: A process that saves 100 entries into one numba cache index, from the instant argv[3] on.
_SAVER = """
import sys, time
from numba.core import caching
import chess_endgame.engine.core.jit  # numba's cache saves take turns from here on
who, path, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
cache = caching.IndexDataCacheFile(cache_path=path, filename_base="f", source_stamp=b"s")
time.sleep(max(0.0, start - time.time()))
for k in range(100):
    cache.save((who, k), f"{who}-{k}")
"""


def test_cache_saves_of_two_processes_at_once_take_turns(tmp_path: Path) -> None:
    """Two processes that save entries of one function into numba's cache at the same instant (as the two of
    ``warm --jobs 2`` or two engines started together on an empty cache do): every entry of each is there
    and names its own data. With numba's own save, unlocked, about half were lost or named the other's data."""
    from numba.core import caching

    start = time.time() + 2.0  # both have imported numba by then
    savers = [subprocess.Popen([sys.executable, "-c", _SAVER, who, str(tmp_path), str(start)]) for who in "ab"]
    assert [saver.wait(timeout=60) for saver in savers] == [0, 0]
    cache = caching.IndexDataCacheFile(cache_path=str(tmp_path), filename_base="f", source_stamp=b"s")
    assert [cache.load((who, k)) for who in "ab" for k in range(100)] == [f"{w}-{k}" for w in "ab" for k in range(100)]


def test_a_change_anywhere_in_the_core_recompiles_all_of_it(tmp_path: Path) -> None:
    """numba stamps a cached function with its own file's hash; the tree compiles the evaluation of
    features.py into itself, so every file of the core is stamped with the digest of all of them."""
    from chess_endgame.engine.core import jit, tree

    copy = tmp_path / "core"
    shutil.copytree(jit.CORE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = jit.sources_digest(str(copy))
    assert before == jit.sources_digest()
    features = copy / "features.py"
    features.write_text(features.read_text() + "\n# a change in another file of the core\n")
    assert jit.sources_digest(str(copy)) != before
    # The stamp numba keeps with the tree's cached code, and checks before loading it.
    assert jit.COMPILED
    assert tree.search._cache._impl.locator.get_source_stamp() == jit.sources_digest()


class _Moved:
    """A class a cache index names, then gone from its module (as ``TablesType`` left ``tbprobe``)."""


def test_a_cache_index_naming_a_class_that_moved_is_read_as_empty(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """numba unpickles a cache's index before it compares the stamp: an index written by older sources that
    names a class those of today do not have must read as a stale (empty) index, not stop the program."""
    from numba.core import caching

    from chess_endgame.engine.core import jit

    assert jit.COMPILED
    older = caching.IndexDataCacheFile(cache_path=str(tmp_path), filename_base="f", source_stamp=b"old")
    older._save_index({"key": "f.0.nbc", "type": _Moved})  # pickled by reference: module and name
    monkeypatch.delattr(sys.modules[_Moved.__module__], "_Moved")
    newer = caching.IndexDataCacheFile(cache_path=str(tmp_path), filename_base="f", source_stamp=b"new")
    assert newer.load("key") is None
    newer.save("key", ("new code",))  # the index is written again, and reads back
    assert newer.load("key") == ("new code",)
