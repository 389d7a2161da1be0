"""Compile (or load from numba's cache) every compiled entry point, through public APIs only.

The first run on a machine compiles the core (tens of seconds) and writes numba's cache; later runs
load it (about a second). ``chess-endgame warm`` runs :func:`warm` at install time, and the UCI engine
runs it in a background thread at start-up (:func:`start`) so that ``uciok`` comes at once and
``readyok`` once the compiled code is ready.

Only public APIs are called (the search, the evaluation's features, the perft of the move
generator), so the warm-up keeps covering the compiled code however its internals change.

With ``jobs=2`` a second process takes the steps of :data:`SIDE_STEPS` while this one compiles the search:
the two share only numba's cache (what one has compiled and saved, the other loads instead of compiling;
their saves take turns). On the 2-core development machine (2026-12-03) an empty cache took 54.0 s so,
against 95.9 s in one process. The UCI engine's warm-up does the same on an empty cache.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import chess
import numpy as np

#: A small endgame (searched without tables, and with them where they are found).
ENDGAME = "8/5k2/8/3p4/3P4/2K5/8/4R3 w - - 0 1"
#: A middlegame with castling rights, en passant, promotions and checks within a few plies.
MIDDLEGAME = "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1"
#: Five pieces, with a capture into the embedded 4-piece tables at once: the tree probes.
PROBING = "8/8/3k4/8/4r3/2K1R3/5P2/8 w - - 0 1"
#: Four pieces, an en passant capture possible: a probe of it runs every part of the compiled prober.
TABLE_POSITION = "8/8/8/k2Pp3/8/8/8/4K3 w - e6 0 2"


#: The steps a second process takes with ``jobs=2``: the compiled prober's entry points and the evaluation's
#: features, which the first process's search would otherwise compile before it could go on.
SIDE_STEPS = ("tablebase probes (the compiled prober)", "evaluation features")


#: Second processes still compiling; killed when this process exits (a GUI's quit during the warm-up).
_helpers: set[subprocess.Popen] = set()
_exiting = False


def default_jobs() -> int:
    """The processes :func:`warm` compiles in by default: 2 where the machine has two cores or more."""
    return min(2, os.cpu_count() or 1)


class Skipped(Exception):
    """A step had nothing to do here (the message says why): it is reported as skipped, not timed."""


def steps(syzygy_path: str | None = None) -> list[tuple[str, Callable[[], object]]]:
    """The warm-up's steps: (what, function)."""
    from chess_endgame.engine.core import movegen, position
    from chess_endgame.engine.evaluation import features
    from chess_endgame.engine.result import Limits
    from chess_endgame.engine.search import Searcher
    from chess_endgame.tablebase.paths import resolve_path
    from chess_endgame.tablebase.prober import Prober

    def perft() -> int:
        p = position.Position(chess.Board(MIDDLEGAME))
        return int(movegen.perft(*p.arrays(), 2, np.zeros(position.STACK * 256, dtype=np.int64)))

    def evaluation() -> list[float]:
        return [x for fen in (ENDGAME, MIDDLEGAME) for x in features(chess.Board(fen))]

    def search(fen: str, prober: Prober | None = None) -> Callable[[], object]:
        return lambda: Searcher(prober=prober).search(chess.Board(fen), Limits(depth=3))

    def probing() -> object:
        prober = Prober(resolve_path(syzygy_path))
        if not prober.available:
            raise Skipped("no tables")
        return search(PROBING, prober)()

    def probes() -> object:
        prober = Prober(resolve_path(syzygy_path), cache_size=0)
        if prober.backend != "compiled" or not prober.available:
            raise Skipped("python-chess's prober: nothing to compile" if prober.available else "no tables")
        board = chess.Board(TABLE_POSITION)
        return prober.probe_wdl(board), prober.probe_dtz(board), prober.probe_many([board]), prober.dtz_stored(board)

    return [("move generator (perft 2)", perft), ("evaluation features", evaluation),
            ("search, endgame, depth 3", search(ENDGAME)), ("search, middlegame, depth 3", search(MIDDLEGAME)),
            ("search with tablebase probes, depth 3", probing), ("tablebase probes (the compiled prober)", probes)]


def warm(syzygy_path: str | None = None, on_step: Callable[[str, float | str], None] | None = None,
         jobs: int = 1) -> list[tuple[str, float | str]]:
    """Run every step; ``on_step(what, outcome)`` after each, where the outcome is the step's seconds, or
    the reason it was skipped (a string). Returns (what, outcome) of each step, in the order of
    :func:`steps`. ``jobs`` 2 or more: the steps of :data:`SIDE_STEPS` run at the same time in a second
    process (where numba writes a cache and its saves take turns between processes, see
    :mod:`.core.jit`; else in this one), reported once this process's steps are done; should that process
    fail, its steps run here."""
    from chess_endgame.engine.core import jit

    todo = steps(syzygy_path)
    shared = jobs > 1 and jit.SAVES_TAKE_TURNS and cache_directory() is not None and not _cached_already()
    side = [what for what, _ in todo if what in SIDE_STEPS] if shared else []
    helper = _start_side(syzygy_path, side) if side else None
    done: dict[str, float | str] = {}

    def report(what: str, outcome: float | str) -> None:
        done[what] = outcome
        if on_step:
            on_step(what, outcome)

    try:
        for what, func in todo:
            if what not in side:
                report(what, _timed(func))
    except BaseException:  # a failure or Ctrl-C here: the second process goes too
        if helper is not None:
            helper.kill()
            helper.wait()
        raise
    if helper is not None:
        for what, outcome in _finish_side(helper):
            if what in side and what not in done:
                report(what, outcome)
    for what, func in todo:  # the second process failed: its steps run here (unless this process is leaving)
        if what not in done and not _exiting:
            report(what, _timed(func))
    return [(what, done.get(what, "stopped")) for what, _ in todo]


def _cached_already() -> bool:
    """Whether numba's cache holds today's search (its entry point's index is there and fresh): the warm-up
    then only loads, and a second process would cost more than it saves."""
    from chess_endgame.engine.core import tree

    load_index = getattr(getattr(getattr(tree.root, "_cache", None), "_cache_file", None), "_load_index", None)
    return bool(load_index and load_index())


def _timed(func: Callable[[], object]) -> float | str:
    """The seconds ``func`` took, or why it was skipped."""
    start = time.perf_counter()
    try:
        func()
    except Skipped as why:
        return str(why)
    return time.perf_counter() - start


def _start_side(syzygy_path: str | None, names: list[str]) -> subprocess.Popen:
    """A second interpreter that runs the steps ``names`` and prints each outcome as a JSON line."""
    code = ("import json, sys; from chess_endgame.engine.warm import _side_main; "
            "_side_main(json.loads(sys.argv[1]), sys.argv[2:])")
    helper = subprocess.Popen([sys.executable, "-c", code, json.dumps(syzygy_path), *names],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
    _helpers.add(helper)
    return helper


def _side_main(syzygy_path: str | None, names: list[str]) -> None:
    funcs = dict(steps(syzygy_path))
    for what in names:
        print(json.dumps([what, _timed(funcs[what])]), flush=True)


def _finish_side(helper: subprocess.Popen) -> list[tuple[str, float | str]]:
    """The outcomes the second process printed (its failed step and those after it are missing)."""
    out, _ = helper.communicate()
    _helpers.discard(helper)
    outcomes = []
    for line in out.splitlines():
        try:
            what, outcome = json.loads(line)
        except (ValueError, TypeError):  # not a line of _side_main's
            continue
        outcomes.append((what, outcome))
    return outcomes


@atexit.register
def _kill_helpers() -> None:
    global _exiting
    _exiting = True
    for helper in list(_helpers):
        helper.kill()


def cache_directory() -> str | None:
    """Where numba keeps the core's compiled code (None: no cache, or numba missing or disabled)."""
    from chess_endgame.engine.core import movegen

    cache = getattr(movegen.perft, "_cache", None)
    return getattr(cache, "_cache_path", None)


def start() -> threading.Event:
    """Run :func:`warm` in a daemon thread, in :func:`default_jobs` processes; the event is set when it is over
    (also if it failed: the failure goes to stderr in one line, and the engine compiles what it needs when it
    needs it). A second process still compiling when this one exits is killed."""
    done = threading.Event()

    def run() -> None:
        try:
            warm(jobs=default_jobs())
        except Exception as exc:  # noqa: BLE001 - the engine must start whatever the warm-up hits
            sys.stderr.write(f"chess-endgame: warm-up failed: {type(exc).__name__}: {exc}\n")
        finally:
            done.set()

    threading.Thread(target=run, name="warm-up", daemon=True).start()
    return done
