"""The compiled prober against python-chess's reference prober: WDL and DTZ of the same positions.

``chess-endgame tablebases compare`` runs it: seeded random legal positions of every table present (either
side to move, colours mirrored, en passant positions where the material has pawns on both sides), or every
legal position of a table, each probed by both back ends of :class:`~chess_endgame.tablebase.prober.Prober`.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import chess
import chess.syzygy

from chess_endgame.board import random_position
from chess_endgame.tablebase.prober import NotCoveredError, Prober


@dataclass
class Comparison:
    """What both probers answered for one table's positions."""

    table: str
    positions: int = 0
    en_passant: int = 0
    #: (FEN, python-chess's (WDL, DTZ), the compiled prober's), or their errors' reasons.
    mismatches: list[tuple[str, tuple, tuple]] = field(default_factory=list)
    #: Positions either prober could not answer (a corrupt or unreadable table), as the mismatches.
    failures: list[tuple[str, tuple, tuple]] = field(default_factory=list)
    reference_seconds: float = 0.0
    compiled_seconds: float = 0.0


def en_passant_board(table: str, rng: random.Random, tries: int = 1000) -> chess.Board | None:
    """A random legal position of ``table``'s material (pawns on both sides) just after a double pawn push
    that leaves an en passant capture, or None when ``tries`` placements found none."""
    white, black = table.split("v")
    for _ in range(tries):
        turn = rng.choice(chess.COLORS)
        them = not turn
        file = rng.randrange(8)
        pushed = chess.square(file, 3 if them == chess.WHITE else 4)
        beside = [chess.square(f, chess.square_rank(pushed)) for f in (file - 1, file + 1) if 0 <= f < 8]
        board = chess.Board(None)
        board.turn = turn
        board.set_piece_at(pushed, chess.Piece(chess.PAWN, them))
        board.set_piece_at(rng.choice(beside), chess.Piece(chess.PAWN, turn))
        rest = [(c, chess.WHITE) for c in white] + [(c, chess.BLACK) for c in black]
        rest.remove(("P", them))
        rest.remove(("P", turn))
        behind = {pushed + (-8 if them == chess.WHITE else 8), pushed + (-16 if them == chess.WHITE else 16)}
        free = [s for s in chess.SQUARES if not board.piece_at(s) and s not in behind]
        for letter, color in rest:
            piece = chess.Piece.from_symbol(letter if color == chess.WHITE else letter.lower())
            squares = [s for s in free if piece.piece_type != chess.PAWN or 1 <= chess.square_rank(s) <= 6]
            square = rng.choice(squares)
            board.set_piece_at(square, piece)
            free.remove(square)
        board.ep_square = pushed + (-8 if them == chess.WHITE else 8)
        if board.is_valid() and board.has_legal_en_passant():
            return board
    return None


def random_boards(table: str, count: int, rng: random.Random) -> Iterator[chess.Board]:
    """``count`` random legal positions of ``table``'s material: either side to move, half of them with the
    colours mirrored, and with pawns on both sides as many more just after a double push that leaves an en
    passant capture."""
    for _ in range(count):
        board = random_position(table, rng)
        if rng.random() < 0.5:
            board = board.mirror()
        yield board
        if "P" in table.split("v")[0] and "P" in table.split("v")[1]:
            ep = en_passant_board(table, rng)
            if ep is not None:
                yield ep


def every_board(table: str) -> Iterator[chess.Board]:
    """Every legal position of ``table``'s material (three or four pieces), both sides to move."""
    white, black = table.split("v")
    pieces = [chess.Piece.from_symbol(c) for c in white] + [chess.Piece.from_symbol(c.lower()) for c in black]
    for squares in itertools.permutations(range(64), len(pieces)):
        if any(piece.piece_type == chess.PAWN and chess.square_rank(square) in (0, 7)
               for piece, square in zip(pieces, squares, strict=True)):
            continue
        board = chess.Board(None)
        for piece, square in zip(pieces, squares, strict=True):
            board.set_piece_at(square, piece)
        for turn in (chess.WHITE, chess.BLACK):
            board.turn = turn
            if board.is_valid():
                yield board.copy(stack=False)


def _answer(prober: Prober, board: chess.Board) -> tuple:
    try:
        return prober.probe_wdl(board), prober.probe_dtz(board)
    except NotCoveredError as exc:
        return (exc.reason.value,)


def compare(path: str, tables: Iterable[str], boards: Callable[[str], Iterable[chess.Board]],
            on_table: Callable[[Comparison], None] | None = None) -> list[Comparison]:
    """Probe each table's ``boards(table)`` with both back ends (no cache: every answer is probed)."""
    reference = Prober(path, cache_size=0, backend="python-chess")
    compiled = Prober(path, cache_size=0, backend="compiled")
    assert compiled.compiled_tables is not None  # read every header now, not inside the first table's time
    results = []
    try:
        for table in tables:
            result = Comparison(table)
            for board in boards(table):
                started = time.perf_counter()
                expected = _answer(reference, board)
                middle = time.perf_counter()
                found = _answer(compiled, board)
                result.compiled_seconds += time.perf_counter() - middle
                result.reference_seconds += middle - started
                result.positions += 1
                result.en_passant += board.ep_square is not None
                if len(expected) == 1 or len(found) == 1:  # an error's reason, not (WDL, DTZ)
                    result.failures.append((board.fen(), expected, found))
                elif found != expected:
                    result.mismatches.append((board.fen(), expected, found))
            results.append(result)
            if on_table:
                on_table(result)
    finally:
        reference.close()
        compiled.close()
    return results


def tables_of(prober: Prober, pieces: int | None = None) -> list[str]:
    """The tables (WDL and DTZ both present) of ``prober``, of ``pieces`` pieces only when given."""
    names = sorted(set(prober.files.wdl) & set(prober.files.dtz), key=lambda n: (len(n), n))
    return [n for n in names if pieces is None or len(n) - 1 == pieces]
