"""The compiled core's bit functions (``core/bits.py``): the lowest and highest set bit and the count of set bits,
compiled (the processor's ``cttz``, ``ctlz``, ``ctpop``) and as plain Python (``NUMBA_DISABLE_JIT=1``); the sliding
attacks, and the attackers of a square and the pinned pieces built on them, against python-chess."""

from __future__ import annotations

import ast
import os
import random
import subprocess
import sys

import chess
import numpy as np

from chess_endgame.engine.core import jit
from chess_endgame.engine.core.bits import BISHOP_LINES, ROOK_LINES, bishop_attacks, lsb, msb, popcount, rook_attacks
from chess_endgame.engine.core.position import attackers, bitboards, pinned

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


def _python_chess_slides(square: int, occupied: int) -> tuple[int, int]:
    """A bishop's and a rook's attacks from ``square`` by python-chess's tables."""
    diagonal = chess.BB_DIAG_ATTACKS[square][chess.BB_DIAG_MASKS[square] & occupied]
    straight = chess.BB_RANK_ATTACKS[square][chess.BB_RANK_MASKS[square] & occupied] | \
        chess.BB_FILE_ATTACKS[square][chess.BB_FILE_MASKS[square] & occupied]
    return diagonal, straight


#: Occupancies of every density, the empty and the full board among them.
OCCUPANCIES = [0, (1 << 64) - 1] + [_RNG.getrandbits(64) & _RNG.getrandbits(64) & _RNG.getrandbits(64)
                                    for _ in range(60)] + [_RNG.getrandbits(64) for _ in range(60)]


def test_sliding_attacks_agree_with_python_chess_on_every_square() -> None:
    """The rays cut behind their first blocker (found without a branch: a bit beyond each ray's end) on every
    square of the board edges and corners too, and the empty-board lines that gate the rays."""
    for occupied in OCCUPANCIES:
        for square in range(64):
            diagonal, straight = _python_chess_slides(square, occupied)
            assert int(bishop_attacks(square, np.uint64(occupied))) == diagonal, (square, hex(occupied))
            assert int(rook_attacks(square, np.uint64(occupied))) == straight, (square, hex(occupied))
    for square in range(64):
        assert (int(BISHOP_LINES[square]), int(ROOK_LINES[square])) == _python_chess_slides(square, 0)


def test_attackers_and_pins_agree_with_python_chess() -> None:
    """``attackers`` (which traces a slider's rays only when one stands on the square's lines) and ``pinned``
    against python-chess, on positions of random games from the start and from endings with every kind of
    piece."""
    rng = random.Random(3)
    starts = [chess.STARTING_FEN, "4k3/2b5/8/3q4/8/2N2R2/4P3/4K3 w - - 0 1", "8/1r3k2/8/2B5/5n2/8/3Q4/6K1 b - - 0 1",
              "3k4/8/8/8/8/8/8/R3K2R w KQ - 0 1", "8/8/3k4/8/8/2K5/8/8 w - - 0 1"]
    checked = 0
    for fen in starts:
        board = chess.Board(fen)
        for _ in range(60):
            bb = bitboards(board)
            occupied = bb[0] | bb[8]
            for square in range(64):
                for color in (chess.WHITE, chess.BLACK):
                    ours = int(attackers(bb, square, int(color), occupied))
                    assert ours == int(board.attackers_mask(color, square)), (board.fen(), square, color)
                    checked += 1
            turn = int(board.turn)
            king = board.king(board.turn)
            expected = 0
            for square in chess.scan_forward(board.occupied_co[board.turn]):
                if board.is_pinned(board.turn, square) and square != king:
                    expected |= 1 << square
            assert int(pinned(bb, turn, king, occupied)) == expected, board.fen()
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
    assert checked > 30_000
