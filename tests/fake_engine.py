"""A tiny UCI engine that misbehaves on purpose, for the match runner's tests.

``python fake_engine.py MODE``: ``normal`` (the first legal move, at once),
``slow:SECONDS`` (thinks that long every move, whatever the clock),
``hang`` (never answers ``go``), ``crash:N`` (exits at its N-th ``go``),
``illegal`` (answers a move that is not legal), ``warming:SECONDS`` (like this project's engine
with a cold cache: ``uciok`` at once, ``readyok`` and the first move only that long after it started).
"""

from __future__ import annotations

import sys
import time

import chess


def illegal_move(board: chess.Board) -> str:
    for move in (chess.Move(a, b) for a in chess.SQUARES for b in chess.SQUARES if a != b):
        if not board.is_legal(move):
            return move.uci()
    raise AssertionError("every move is legal")


def main() -> None:
    mode, _, arg = (sys.argv[1] if len(sys.argv) > 1 else "normal").partition(":")
    board = chess.Board()
    goes = 0
    ready_at = time.monotonic() + (float(arg) if mode == "warming" else 0.0)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "uci":
            print(f"id name fake {mode}\nuciok", flush=True)
        elif words[0] == "isready":
            time.sleep(max(0.0, ready_at - time.monotonic()))
            print("readyok", flush=True)
        elif words[0] == "position":
            moves = words.index("moves") if "moves" in words else len(words)
            board = chess.Board() if words[1] == "startpos" else chess.Board(" ".join(words[2:moves]))
            for move in words[moves + 1:]:
                board.push_uci(move)
        elif words[0] == "go":
            goes += 1
            if mode == "hang" or (mode == "crash" and goes >= int(arg)):
                if mode == "crash":
                    sys.exit(3)
                continue
            if mode == "slow":
                time.sleep(float(arg))
            time.sleep(max(0.0, ready_at - time.monotonic()))
            move = illegal_move(board) if mode == "illegal" else min(m.uci() for m in board.legal_moves)
            print(f"info depth 1 nodes 1 score cp 0\nbestmove {move}", flush=True)
        elif words[0] == "quit":
            break


if __name__ == "__main__":
    main()
