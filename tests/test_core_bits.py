"""The compiled core's bit functions (``core/bits.py``): the lowest and highest set bit and the count of set bits,
compiled (the processor's ``cttz``, ``ctlz``, ``ctpop``) and as plain Python (``NUMBA_DISABLE_JIT=1``)."""

from __future__ import annotations

import ast
import os
import random
import subprocess
import sys

import numpy as np

from chess_endgame.engine.core import jit
from chess_endgame.engine.core.bits import lsb, msb, popcount

_RNG = random.Random(7)
#: Every single bit, the full board, both ends together, and random bitboards of every density.
CASES = [1 << s for s in range(64)] + [(1 << 64) - 1, 0x8000_0000_0000_0001] + \
    [_RNG.getrandbits(64) & _RNG.getrandbits(64) | 1 << _RNG.randrange(64) for _ in range(100)] + \
    [_RNG.getrandbits(64) | _RNG.getrandbits(64) | 1 << _RNG.randrange(64) for _ in range(100)]


def expected(b: int) -> list[int]:
    """Lowest set bit, highest set bit, number of set bits, by Python's integers."""
    return [(b & -b).bit_length() - 1, b.bit_length() - 1, bin(b).count("1")]


def test_compiled_bit_functions_agree_with_python_integers() -> None:
    assert jit.COMPILED, "run this test without NUMBA_DISABLE_JIT: it checks the compiled functions"
    for b in CASES:
        x = np.uint64(b)
        assert [lsb(x), msb(x), popcount(x)] == expected(b), hex(b)
    assert popcount(np.uint64(0)) == 0


def test_the_same_bit_functions_without_jit() -> None:
    """NUMBA_DISABLE_JIT=1: the plain-Python functions give the same answers."""
    code = ("import numpy as np; from chess_endgame.engine.core.bits import lsb, msb, popcount; "
            "from chess_endgame.engine.core.jit import COMPILED; assert not COMPILED; "
            f"print([[int(f(np.uint64(b))) for f in (lsb, msb, popcount)] for b in {CASES!r}]"
            " + [int(popcount(np.uint64(0)))])")
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert ast.literal_eval(result.stdout) == [expected(b) for b in CASES] + [0]
