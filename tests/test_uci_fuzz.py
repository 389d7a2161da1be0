"""A UCI fuzz: random and malformed lines, ``go`` with random limits, ``isready`` every 20 lines.

Every ``go`` must be answered by exactly one ``bestmove``, every ``isready`` by ``readyok``, and
the engine must stay alive. Run with ``UCI_FUZZ_LINES=20000`` for a longer run.
"""

from __future__ import annotations

import os
import random
import time

import chess

from .conftest import Pipe

LINES = int(os.environ.get("UCI_FUZZ_LINES", "5000"))
FENS = [chess.STARTING_FEN, "8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1", "8/8/3k4/8/8/8/4r3/K5Q1 w - - 90 60",
        "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",
        "2rq1rk1/pp1bppbp/3p1np1/4n3/3NP3/1BN1BP2/PPPQ2PP/2KR3R w - - 0 12", "8/8/8/8/8/3k4/8/3K4 w - - 0 1"]
COMMANDS = {"uci", "isready", "setoption", "ucinewgame", "position", "go", "stop", "ponderhit", "debug", "register",
            "quit"}
WORDS = ["go", "stop", "position", "fen", "startpos", "moves", "setoption", "name", "value", "isready",
         "ponderhit", "ucinewgame", "debug", "on", "wtime", "btime", "depth", "nodes", "movetime", "infinite",
         "searchmoves", "e2e4", "-1", "0", "99999999999999999999", "abc", "MultiPV", "Hash", "\x00", "é"]


def _go(rng: random.Random) -> str:
    parts = ["go"]
    for key, values in (("depth", ["1", "2", "3", "-1", "0", "x"]), ("nodes", ["1", "50", "800", "-5", "y"]),
                        ("movetime", ["1", "10", "30", "-5", "z"]), ("wtime", ["0", "20", "200", "-50"]),
                        ("btime", ["0", "20", "200"]), ("winc", ["0", "10"]), ("movestogo", ["1", "5", "0"]),
                        ("mate", ["1", "2", "-1"])):
        if rng.random() < 0.25:
            parts += [key, rng.choice(values)]
    if rng.random() < 0.08:
        parts.append("infinite")
    if rng.random() < 0.08:
        parts.append("ponder")
    if rng.random() < 0.1:
        parts += ["searchmoves", rng.choice(["e2e4", "a1a8", "zz", "g1d1"])]
    if len(parts) == 1:
        parts += ["depth", "2"]
    return " ".join(parts)


def _line(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.3:
        return _go(rng)
    if roll < 0.45:
        return "stop"
    if roll < 0.55:
        fen = rng.choice(FENS)
        return rng.choice([f"position fen {fen}", "position startpos moves e2e4 e7e5", f"position fen {fen[:20]}",
                           "position startpos moves e2e5", "position"])
    if roll < 0.6:
        return rng.choice(["ponderhit", "ucinewgame", "debug on", "uci"])
    if roll < 0.7:
        return rng.choice(["setoption name MultiPV value 3", "setoption name MultiPV value 1",
                           "setoption name Hash value 4", "setoption name Move Overhead value 5",
                           "setoption name UCI_ShowWDL value true", "setoption name Nope value 1",
                           "setoption name Hash value x", "setoption name Clear Hash", "setoption"])
    return " ".join(rng.choice(WORDS) for _ in range(rng.randrange(0, 6)))


def _command(line: str) -> str | None:
    """The command a line gives: its first known word (unknown words before it are skipped, as UCI asks)."""
    return next((word for word in line.split() if word in COMMANDS), None)


def test_uci_fuzz(syzygy_path: str) -> None:
    rng = random.Random(20261123)
    pipe = Pipe().handshake()
    gos, readies = 0, 1  # the handshake's own isready
    try:
        pipe.send(f"setoption name SyzygyPath value {syzygy_path}")
        for n in range(1, LINES + 1):
            line = _line(rng)
            if n % 20 == 0:
                line = "isready"
            command = _command(line)
            gos += command == "go"
            readies += command == "isready"
            pipe.send(line)
            if n % 20 == 0:  # let the engine keep up, as a GUI waits for readyok
                pipe.expect("readyok", 20)
        pipe.send("stop")
        pipe.send("isready")
        readies += 1
        pipe.expect("readyok", 20)
        end = time.monotonic() + 20
        while sum(x.startswith("bestmove") for x in pipe.seen) < gos and time.monotonic() < end:
            pipe.drain(0.1)
        pipe.drain(0.3)
        assert pipe.proc.poll() is None, "the engine died"
        assert sum(x.startswith("bestmove") for x in pipe.seen) == gos
        assert sum(x == "readyok" for x in pipe.seen) == readies
        assert not [x for x in pipe.seen if "Traceback" in x or "error handling" in x or "search failed" in x]
    finally:
        assert pipe.close() == 0
