"""The compiled search core: one source, so the same moves and node counts with and without the JIT."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import chess

from chess_endgame.engine.core import jit, tree
from chess_endgame.engine.result import Limits, uci_words
from chess_endgame.engine.search import Searcher

#: Small searches that still go through every part of the tree: null move and its verification,
#: pruning, extensions, quiescence with checks, repetitions, the 50-move rule and mates.
POSITIONS = [
    ("8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1", 4),
    ("6k1/5ppp/8/8/4n3/3P4/5PPP/6K1 w - - 0 1", 4),
    ("8/8/p1p5/1p5p/1P5p/8/PPP2K1p/4R1rk w - - 0 1", 4),
    ("r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQ1RK1 w kq - 4 5", 3),
    ("7k/8/6K1/8/8/8/8/R7 w - - 97 80", 3),
]

_SCRIPT = """
import json, sys
import chess
from chess_endgame.engine.core import jit, tree
from chess_endgame.engine.result import Limits, uci_words
from chess_endgame.engine.search import Searcher
assert not jit.COMPILED and not hasattr(tree.root, "signatures"), "the JIT is on"
out = []
for fen, depth in json.loads(sys.argv[1]):
    r = Searcher().search(chess.Board(fen), Limits(depth=depth))
    out.append([r.best_move.uci(), r.nodes, uci_words(r.score)])
print(json.dumps(out))
"""


def _run(jit: bool) -> list[list]:
    env = dict(os.environ)
    if jit:
        env.pop("NUMBA_DISABLE_JIT", None)
    else:
        env["NUMBA_DISABLE_JIT"] = "1"
    done = subprocess.run([sys.executable, "-c", _SCRIPT, json.dumps(POSITIONS)], env=env, capture_output=True,
                          text=True, timeout=600, check=True)
    return json.loads(done.stdout)


def test_the_same_moves_and_nodes_with_and_without_the_jit() -> None:
    # This process runs the core compiled (else the test would compare Python with Python): numba dispatchers
    # that have compiled code for what the searches below called.
    assert jit.COMPILED, "run this test without NUMBA_DISABLE_JIT: it compares the compiled core with Python"
    compiled = []
    for fen, depth in POSITIONS:
        result = Searcher().search(chess.Board(fen), Limits(depth=depth))
        compiled.append([result.best_move.uci(), result.nodes, uci_words(result.score)])
    assert tree.root.signatures  # the searches called compiled code, not the Python
    assert compiled == _run(jit=False)
