"""Endgame drills: a start position and a goal (win it, or hold the draw) for the user's side.

A drill comes from a material (``KQvKR``: a random position of it whose class for the user is the goal, at a
difficulty: the plies the tables need to the next zeroing move), from a FEN (the goal is what the tables give
the side to move), or from the named classics of :data:`CLASSICS`. Every start is checked against the tables:
its goal is what perfect play gives the user, never a position where a capture at once settles it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import chess

from chess_endgame.board import TERMINATIONS, clock_problem, outcome, parse_material, random_position
from chess_endgame.chooser import Choice, MoveClass, choose
from chess_endgame.tablebase.prober import NotCovered, Prober

WIN, DRAW = "win", "draw"
#: Difficulty -> the band of the user's DTZ (plies to the next zeroing move with best play) for a win, and
#: the most moves that hold a draw.
DIFFICULTIES = {"easy": ((1, 12), 99), "medium": ((13, 40), 6), "hard": ((41, 100), 2)}


@dataclass(frozen=True)
class Classic:
    name: str
    fen: str
    goal: str
    description: str


#: Named classics, the side to move is the user's. Each is checked by the tests against the tables.
CLASSICS = {c.name.lower(): c for c in (
    Classic("Lucena", "1K1k4/1P6/8/8/8/8/r7/2R5 w - - 0 1", WIN,
            "rook and pawn against rook, the pawn on the seventh: build a bridge (Rd1+, then the rook to the "
            "fourth rank)"),
    Classic("Philidor", "3k4/R7/7r/3PK3/8/8/8/8 b - - 0 1", DRAW,
            "rook against rook and pawn: keep the rook on the sixth rank until the pawn advances, then check "
            "from behind"),
    Classic("Vancura", "R7/6k1/P4r2/8/8/8/8/6K1 b - - 0 1", DRAW,
            "a rook pawn on the sixth: attack it from the side, the king near the corner"),
    Classic("KBN", "8/8/8/3k4/8/8/8/KBN5 w - - 0 1", WIN,
            "bishop and knight: drive the king to a corner of the bishop's colour"),
    Classic("QvR", "8/8/8/3k4/8/5r2/8/KQ6 w - - 0 1", WIN,
            "queen against rook: separate king and rook, win the rook with a fork or a skewer"),
    Classic("Saavedra", "8/8/1KP5/3r4/8/8/8/k7 w - - 0 1", WIN,
            "the pawn queens only by underpromotion: c7, then c8=R!"),
    Classic("Opposition", "8/4k3/8/4PK2/8/8/8/8 b - - 0 1", DRAW,
            "king and pawn against king, the defender: take the opposition (one move holds)"),
)}


@dataclass(frozen=True)
class Drill:
    """A start position (the user to move) and the user's goal."""

    name: str
    fen: str
    goal: str
    description: str = ""

    @property
    def board(self) -> chess.Board:
        return chess.Board(self.fen)

    @property
    def user(self) -> chess.Color:
        return self.board.turn


class DrillError(ValueError):
    """The drill cannot be made (unknown name, bad FEN, a lost position, ...)."""


class NotFound(DrillError):
    """No such drill: an unknown classic, a material the tables do not cover (the message says which table is
    missing and how to get it), or no position of the difficulty found."""


def goal_of(board: chess.Board, prober: Prober) -> str:
    """The goal the tables give the side to move: a win, or (drawn or lost) holding the draw; :exc:`DrillError`
    for a lost position or one the tables cannot answer."""
    choice = choose(board, prober)
    if isinstance(choice, NotCovered):
        raise NotFound(f"the tables cannot answer {board.fen()}: {choice.message}")
    over = outcome(board)
    if not choice.moves or over is not None:
        how = f" ({TERMINATIONS[over.termination]})" if over is not None else ""
        raise DrillError(f"{board.fen()} is already over{how}")
    if choice.result >= MoveClass.MAYBE_WIN:
        return WIN
    if choice.result >= MoveClass.BLESSED_LOSS:  # a draw, a cursed win or a blessed loss: the draw is the goal
        return DRAW
    raise DrillError(f"{board.fen()} is lost for the side to move: nothing to train")


def from_fen(fen: str, prober: Prober) -> Drill:
    try:
        board = chess.Board(fen)
    except ValueError as exc:
        raise DrillError(f"not a FEN: {fen!r} ({exc})") from None
    if not board.is_valid():
        raise DrillError(f"not a legal position: {fen}")
    problem = clock_problem(board)
    if problem:
        raise DrillError(f"not a FEN: {fen[:100]!r} ({problem})")
    return Drill("FEN", board.fen(), goal_of(board, prober))


def named(name: str, prober: Prober) -> Drill:
    classic = CLASSICS.get(name.lower())
    if classic is None:
        raise NotFound(f"no classic named {name!r}; the classics: {', '.join(c.name for c in CLASSICS.values())}")
    return Drill(classic.name, classic.fen, classic.goal, classic.description)


def _quiet(board: chess.Board) -> bool:
    """No capture for either side: a start that a capture settles at once teaches nothing."""
    if any(board.is_capture(m) for m in board.legal_moves):
        return False
    board.push(chess.Move.null())
    try:
        return not any(board.is_capture(m) for m in board.legal_moves)
    finally:
        board.pop()


def from_material(material: str, prober: Prober, *, user: chess.Color = chess.WHITE, difficulty: str = "medium",
                  rng: random.Random | None = None, tries: int = 4000) -> Drill:
    """A random quiet position of ``material`` (White's pieces first) with the user to move as ``user``, of the
    goal the material gives the user: a win at the difficulty's DTZ band, or a draw with few holding moves."""
    rng = rng or random.Random()
    if difficulty not in DIFFICULTIES:
        raise DrillError(f"difficulty {difficulty!r}: easy, medium or hard")
    try:
        parse_material(material)
    except ValueError as exc:
        raise DrillError(str(exc)) from None
    (low, high), most_holding = DIFFICULTIES[difficulty]
    for _ in range(tries):
        try:
            board = random_position(material, rng, turn=user)
        except ValueError as exc:  # no legal placement (nine pawns, a king always in check)
            raise DrillError(f"{material}: {exc}") from None
        if not _quiet(board):
            continue
        choice = choose(board, prober, full=True)
        if isinstance(choice, NotCovered):
            raise NotFound(f"{material}: {choice.message}")
        if choice.result == MoveClass.WIN and choice.root_dtz is not None and low <= choice.root_dtz <= high:
            return Drill(material, board.fen(), WIN, f"{difficulty}: win in {choice.root_dtz} plies to zeroing")
        if choice.result == MoveClass.DRAW and _holding(choice) <= most_holding and _could_lose(choice):
            return Drill(material, board.fen(), DRAW, f"{difficulty}: {_holding(choice)} moves hold the draw")
    raise NotFound(f"no {difficulty} {material} position for {'White' if user else 'Black'} found in {tries} "
                     "tries (a material where that side can neither win nor be in danger?)")


def _holding(choice: Choice) -> int:
    return sum(1 for m in choice.moves if m.cls >= MoveClass.DRAW)


def _could_lose(choice: Choice) -> bool:
    return any(m.cls < MoveClass.DRAW for m in choice.moves)
