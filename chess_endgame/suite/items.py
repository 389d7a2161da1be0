"""Reading suites: EPD files and Lichess puzzle CSV files, leniently (bad lines are reported)."""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field

import chess

from chess_endgame.board import PositionError, epd_lines, illegal_because, parse_fen, read_epd, read_text

#: EPD operations that say what to check.
OPERATIONS = ("bm", "am", "dm", "wdl", "dtz")

@dataclass
class Item:
    """One position of a suite, ready to solve."""

    file: str
    line: int
    id: str
    #: FEN of the position to solve (a puzzle's FEN after the opponent's setup move).
    fen: str
    kind: str  # "epd" or "puzzle"
    #: EPD: {"bm": [uci...], "am": [...], "dm": n, "wdl": n, "dtz": n, "result": "1-0"}.
    ops: dict = field(default_factory=dict)
    #: Puzzle: the full line after the setup move, solver moves at even indices (UCI).
    solution: list[str] = field(default_factory=list)
    #: Puzzle: the setup move (UCI), part of the game history.
    setup: str | None = None
    themes: list[str] = field(default_factory=list)

    def board(self) -> chess.Board:
        """The position to solve; a puzzle's setup move is in the move stack (the game history)."""
        if self.setup:
            board = chess.Board(self.ops["start_fen"])
            board.push_uci(self.setup)
            return board
        return chess.Board(self.fen)

    def expected(self) -> dict:
        """What the position asks for, as the file gives it (UCI moves): its EPD operations (``bm``, ``am``,
        ``dm``, ``wdl``, ``dtz``, ``result``), or a puzzle's ``line`` after the setup move."""
        if self.kind == "puzzle":
            return {"line": list(self.solution)}
        return {key: self.ops[key] for key in (*OPERATIONS, "result") if key in self.ops}

    @property
    def operations(self) -> list[str]:
        """What this item is scored on: its EPD operations, or "puzzle"."""
        if self.kind == "puzzle":
            return ["puzzle"]
        return [op for op in OPERATIONS if op in self.ops] or ["none"]


class LoadError(Exception):
    """A suite file that cannot be read at all."""


@dataclass
class Loaded:
    items: list[Item]
    #: (file, line, message) of every line that was skipped.
    skipped: list[tuple[str, int, str]]
    #: One message per file that could not be read at all (the others are loaded).
    errors: list[str] = field(default_factory=list)


def load_files(paths: list[str], *, theme: str | None = None) -> Loaded:
    """Read every file (EPD, or Lichess CSV by its ``.csv`` name or header); bad files go to ``errors``."""
    loaded = Loaded([], [])
    for path in paths:
        try:
            items, skipped = load_file(path, theme=theme)
        except LoadError as exc:
            loaded.errors.append(str(exc))
            continue
        loaded.items += items
        loaded.skipped += skipped
    return loaded


def load_file(path: str, *, theme: str | None = None) -> tuple[list[Item], list[tuple[str, int, str]]]:
    """The positions of one suite file and its skipped lines.

    :raises LoadError: when the file cannot be opened or is not a suite at all.
    """
    try:
        text = read_text(path, "EPD lines or Lichess puzzles", kind="suite")
    except ValueError as exc:
        raise LoadError(f"{exc}") from None
    path_is_csv = path.lower().endswith(".csv") or text.startswith("PuzzleId,")
    if path_is_csv:
        items, skipped = _load_puzzles(path, text, theme)
    else:
        items, skipped = _load_epd(path, text)
    if not items and not skipped and not (theme and path_is_csv):  # puzzles all of other themes: not an error
        raise LoadError(f"{path} holds no positions")
    return items, skipped


def _load_epd(path: str, text: str) -> tuple[list[Item], list[tuple[str, int, str]]]:
    items, skipped = [], []
    name = os.path.basename(path)
    for number, line in epd_lines(text):
        try:
            board, ops = read_epd(line)
        except ValueError as exc:
            skipped.append((path, number, f"not an EPD position: {exc}"))
            continue
        problem = illegal_because(board)
        if problem:
            skipped.append((path, number, f"illegal position: {problem}"))
            continue
        if not any(board.generate_legal_moves()):
            skipped.append((path, number, f"no legal move: {'checkmate' if board.is_check() else 'stalemate'}"))
            continue
        try:
            clean = _operations(ops)
        except ValueError as exc:
            skipped.append((path, number, str(exc)))
            continue
        items.append(Item(path, number, str(ops.get("id", f"{name}:{number}")), board.fen(), "epd", clean))
    return items, skipped


def _operations(ops: dict) -> dict:
    """The operations the runner uses, as plain data (UCI strings, ints)."""
    clean: dict = {key: [m.uci() for m in ops[key]] for key in ("bm", "am") if key in ops}
    for key in ("bm", "am"):
        if key in clean and not clean[key]:
            raise ValueError(f"operation {key} names no move")
    for key in ("dm", "wdl", "dtz"):
        if key in ops:
            value = ops[key]
            if not isinstance(value, int) and not (isinstance(value, float) and value.is_integer()):
                raise ValueError(f"operation {key} needs an integer, got {value!r}")
            clean[key] = int(value)
    if clean.get("dm", 1) < 1:
        raise ValueError(f"operation dm needs a positive number of moves, got {clean['dm']}")
    if not -2 <= clean.get("wdl", 0) <= 2:
        raise ValueError(f"operation wdl is -2 to 2, got {clean['wdl']}")
    result = ops.get("result") or ops.get("c0")
    if isinstance(result, str) and result.strip() in ("1-0", "0-1", "1/2-1/2"):
        clean["result"] = result.strip()
    return clean


def _load_puzzles(path: str, text: str, theme: str | None) -> tuple[list[Item], list[tuple[str, int, str]]]:
    """Lichess's puzzle CSV, a puzzle a line: each line is read on its own, so that a stray quote costs its own
    line only (the csv module would join the lines after it into one field), and line numbers are the file's."""
    items, skipped = [], []
    lines = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    header = next(csv.reader([lines[0][1]])) if lines else []
    if not {"PuzzleId", "FEN", "Moves"} <= set(header):
        raise LoadError(f"{path}: a puzzle CSV needs the columns PuzzleId, FEN and Moves")
    for number, line in lines[1:]:
        try:
            row = dict(zip(header, next(csv.reader([line])), strict=False))
        except csv.Error as exc:
            skipped.append((path, number, f"not a CSV line: {exc}"))
            continue
        themes = (row.get("Themes") or "").split()
        if theme and theme not in themes:
            continue
        moves = (row.get("Moves") or "").split()
        try:
            board = parse_fen(row.get("FEN") or "")
            if len(moves) < 2:
                raise PositionError("a puzzle needs the setup move and at least one solution move")
            start_fen = board.fen()
            line = [chess.Move.from_uci(m) for m in moves]
            for move in line:
                if not board.is_legal(move):
                    raise PositionError(f"move {move.uci()} is illegal in {board.fen()}")
                board.push(move)
        except (PositionError, ValueError) as exc:
            skipped.append((path, number, str(exc)))
            continue
        after_setup = chess.Board(start_fen)
        after_setup.push(line[0])
        items.append(Item(path, number, row.get("PuzzleId") or f"{os.path.basename(path)}:{number}",
                          after_setup.fen(), "puzzle",
                          {"start_fen": start_fen}, moves[1:], moves[0], themes))
    return items, skipped
