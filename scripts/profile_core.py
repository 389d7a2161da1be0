"""Profile the compiled search with Linux ``perf``: name the compiled functions in its report.

``perf`` cannot name code that numba compiled at run time. This script compiles the core afresh, writes
``/tmp/perf-<pid>.map`` (perf's map of JIT code: address, size and name of every compiled function, read
from the object code numba keeps for each of them) and then searches a fixed list of positions, so that
``perf report`` splits the search's time by function:

    NUMBA_CACHE_DIR=$(mktemp -d) perf record -F 1999 -o perf.data python scripts/profile_core.py
    perf report -i perf.data --no-children --sort symbol

An empty ``NUMBA_CACHE_DIR`` is needed: functions loaded from numba's cache come without their object
code, and the script stops with a message when it finds none. Compiling takes about a minute on the
machines of docs/bench.md, before the searches start, and its samples are in the report too (about 85% of
them with the default 3 s a position: ``--seconds 20`` makes the search the larger part). To find the
instruction that a hot function waits on, add ``--objects DIR`` (each function's object file, for
``objdump -d``) and compare the offsets of ``perf script -F ip,sym`` from the function's address in the map.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import shutil
import subprocess
import sys
import tempfile
import time

import chess

import chess_endgame.engine.core as core_package
from chess_endgame.engine.core.jit import COMPILED
from chess_endgame.engine.result import Limits
from chess_endgame.engine.search import Searcher

NM = "nm"

#: Endings of 8 to 10 men and one middlegame (the searcher has no tables: it probes nothing).
POSITIONS = ["8/8/4kpp1/3p1b2/p6P/2B5/6P1/6K1 b - - 0 1", "8/5pk1/6p1/8/2r5/6P1/5PK1/3R4 w - - 0 1",
             "8/2k5/1p6/p1p5/P1P2K2/1P6/8/8 w - - 0 1", "2r3k1/5pp1/7p/8/8/6P1/5PKP/2R5 w - - 0 1",
             "r4rk1/1pp2ppp/p1n5/3q4/3P4/2P2N2/PP3PPP/R2Q1RK1 w - - 0 1"]


def compiled_functions() -> list:
    """Every compiled function of the core's modules (numba dispatchers), each once."""
    found = []
    for module in pkgutil.iter_modules(core_package.__path__):
        namespace = importlib.import_module(f"{core_package.__name__}.{module.name}")
        for value in vars(namespace).values():
            if hasattr(value, "overloads") and all(value is not f for f in found):
                found.append(value)
    return found


def perf_map(objects: str | None) -> list[str]:
    """Lines of perf's map (``start size name``, hexadecimal) for every compiled function's code."""
    lines = []
    for function in compiled_functions():
        for result in function.overloads.values():
            library = result.library
            try:
                code = library._get_compiled_object()
            except RuntimeError:
                continue  # loaded from numba's cache: no object code to read
            with tempfile.NamedTemporaryFile(suffix=".o") as f:
                f.write(code)
                f.flush()
                symbols = subprocess.run([NM, "-S", "--defined-only", f.name], capture_output=True,
                                         text=True, check=True).stdout
            if objects:
                with open(os.path.join(objects, f"{function.__module__}.{function.__name__}.o"), "wb") as out:
                    out.write(code)
            text = [line.split() for line in symbols.splitlines()]
            text = [(int(a, 16), int(s, 16), name) for a, s, kind, name in (t for t in text if len(t) == 4)
                    if kind in "tT"]
            # Where the library sits in memory: an exported function's address less its offset in the object.
            addresses = ((library.get_pointer_to_function(name), offset) for offset, _, name in text)
            base = next((address - offset for address, offset in addresses if address), None)
            if base is not None:
                lines += [f"{base + offset:x} {size:x} {name}" for offset, size, name in text]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="search time a position (default 3)")
    parser.add_argument("--objects", metavar="DIR", help="also write each function's object file to DIR")
    args = parser.parse_args()
    if not args.seconds > 0:
        parser.error(f"--seconds must be above 0, not {args.seconds}")
    if not COMPILED:
        parser.error("the core is not compiled here (numba missing, or NUMBA_DISABLE_JIT=1): nothing to profile")
    if shutil.which(NM) is None:
        parser.error("nm (binutils) is needed to read the compiled functions' symbols: install binutils")
    if args.objects:
        if os.path.exists(args.objects) and not os.path.isdir(args.objects):
            parser.error(f"--objects {args.objects}: not a directory")
        os.makedirs(args.objects, exist_ok=True)
    searcher = Searcher()
    searcher.search(chess.Board(POSITIONS[0]), Limits(depth=2))  # compiles the core (about a minute)
    lines = perf_map(args.objects)
    if not lines:
        print("error: the core was loaded from numba's cache, without its object code; "
              "run with NUMBA_CACHE_DIR set to an empty directory", file=sys.stderr)
        return 2
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"perf map: /tmp/perf-{os.getpid()}.map, {len(lines)} functions", file=sys.stderr)
    nodes, start = 0, time.process_time()
    for fen in POSITIONS:
        searcher.tt.clear()
        searcher.search(chess.Board(fen), Limits(movetime=int(args.seconds * 1000)))
        nodes += searcher.nodes
    seconds = time.process_time() - start
    print(f"{nodes:,} nodes in {seconds:.1f} CPU s: {nodes / seconds:,.0f} nodes/s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
