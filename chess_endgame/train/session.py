"""A drill being played: the user's moves judged by the tables, the program's replies, take-backs, hints.

Every user move gets :class:`Feedback` from the tables (the review's judgement,
:func:`~chess_endgame.review.judge.tablebase_judgement`, under the 50-move rule and the game's history): the
result kept, the 50-move margin spent, or the result thrown away and why; then the best move and the line the
tables give from before the move. The program answers with :func:`~.defence.tough_move` (or, for a baseline,
:func:`~.defence.plain_move`). The drill ends when the game does (checkmate, stalemate, insufficient material,
a threefold repetition or the 50-move rule, draws claimed at once).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

import chess

from chess_endgame.board import outcome
from chess_endgame.chooser import Choice, MoveClass, RankedMove, choose
from chess_endgame.review.judge import Judgement, class_outcome, drawn_by, spare, tablebase_judgement
from chess_endgame.tablebase.prober import NotCovered, Prober
from chess_endgame.train.defence import NoTablebaseMove, plain_move, tough_move
from chess_endgame.train.drill import WIN, Drill

#: Plies of the tables' line shown after a move (from the position before it).
LINE_PLIES = 8
#: The classes whose 50-move margin is told: a cursed win or blessed loss has none left.
SPARE_CLASSES = (MoveClass.WIN, MoveClass.MAYBE_WIN, MoveClass.MAYBE_LOSS, MoveClass.LOSS)
#: What the user's move did to the result.
KEPT, SPENT, THROWN_AWAY = "kept", "spent", "thrown away"


@dataclass
class Feedback:
    """The tables' word on one user move (classes and margins from the user's view)."""

    move: str            # SAN
    uci: str
    verdict: str         # KEPT, SPENT or THROWN_AWAY
    before: str          # the result before the move: win, cursed win, draw, blessed loss, loss
    after: str           # the result after it
    reason: str          # why (empty when kept)
    best: str            # the tables' best move (SAN)
    line: list[str]      # the tables' line from before the move, best move first (SAN)
    spare: int | None    # plies left before the 50-move draw after the move, when winning or losing
    reply: str | None = None  # the program's answer (SAN), None at the end

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Summary:
    result: str          # "won", "drawn", "lost"
    success: bool        # the goal reached
    moves: int           # the user's moves
    shortest: int | None  # the user's moves in the tables' own line from the start against the same defence
    errors: int          # moves that threw the result away
    seconds: float

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Session:
    """A drill in play. ``tough`` False answers with the plain tablebase move (the baseline)."""

    drill: Drill
    prober: Prober
    seed: int = 0
    tough: bool = True
    board: chess.Board = field(init=False)
    feedback: list[Feedback] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.board = self.drill.board
        self.user = self.board.turn
        self._choices: dict[str, Choice] = {}

    # -- asking the tables --------------------------------------------------------------------------------------

    def _choice(self, board: chess.Board) -> Choice:
        key = board.fen() + " " + " ".join(m.uci() for m in board.move_stack[-8:])
        choice = self._choices.get(key)
        if choice is None:
            found = choose(board, self.prober, full=True)
            if isinstance(found, NotCovered):
                raise NoTablebaseMove(found.message)
            choice = self._choices[key] = found
        return choice

    def answer(self, board: chess.Board) -> chess.Move:
        """The program's move in ``board`` (its side to move); its random choice among equals is seeded by the
        session's seed and the ply, so that the same game gets the same answers (in the terminal and on the
        stateless training page alike)."""
        if not self.tough:
            return plain_move(board, self.prober)
        return tough_move(board, self.prober, random.Random(f"{self.seed}:{len(board.move_stack)}"))

    def line(self, board: chess.Board, first: chess.Move, plies: int = LINE_PLIES) -> list[str]:
        """The tables' line from ``board``: ``first``, then the best move of each side (SAN)."""
        board = board.copy()
        words = []
        move: chess.Move | None = first
        while move is not None and len(words) < plies:
            words.append(board.san(move))
            board.push(move)
            if outcome(board) is not None:
                break
            try:
                best = self._choice(board).best
            except NoTablebaseMove:
                break
            move = best.move if best is not None else None
        return words

    # -- the game ------------------------------------------------------------------------------------------------

    @property
    def over(self) -> bool:
        return outcome(self.board) is not None

    def parse(self, text: str) -> chess.Move:
        """The user's move from SAN or UCI; :exc:`ValueError` saying why not."""
        text = text.strip()
        for parse in (self.board.parse_san, self.board.parse_uci):
            try:
                move = parse(text)
            except ValueError:
                continue
            if move:  # not the null move ("--", "0000"), which python-chess reads as a move
                return move
        legal = ", ".join(sorted(self.board.san(m) for m in self.board.legal_moves))
        raise ValueError(f"not a legal move here: {text!r} (legal: {legal})")

    def play(self, text: str) -> Feedback:
        """Play the user's move (SAN or UCI), judge it, and answer it unless the game is over."""
        if self.over:
            raise ValueError("the drill is over")
        if self.board.turn != self.user:
            raise ValueError("not the user's turn")
        move = self.parse(text)
        choice = self._choice(self.board)
        best = choice.best
        played = next(m for m in choice.moves if m.move == move)
        assert best is not None
        feedback = self._judge(choice, best, played)
        self.board.push(move)
        if not self.over:
            reply = self.answer(self.board)
            feedback.reply = self.board.san(reply)
            self.board.push(reply)
        self.feedback.append(feedback)
        return feedback

    def _judge(self, choice: Choice, best: RankedMove, played: RankedMove) -> Feedback:
        board = self.board
        after = board.copy()
        after.push(played.move)
        repeats = not after.is_repetition(3) and after.is_repetition(2)
        verdict = tablebase_judgement(best, played, repeats=repeats, draw=drawn_by(after))
        if verdict.judgement is Judgement.BLUNDER:
            kind = THROWN_AWAY
        elif verdict.judgement is not None:
            kind = SPENT
        else:
            kind = KEPT
        return Feedback(board.san(played.move), played.uci, kind, class_outcome(best.cls).text,
                        class_outcome(played.cls).text, verdict.reason, board.san(best.move),
                        self.line(board, best.move),
                        spare(played) if played.cls in SPARE_CLASSES and not after.is_checkmate() else None)

    def undo(self) -> bool:
        """Take back the user's last move (and the program's answer to it); False when there is none."""
        if not self.feedback:
            return False
        last = self.feedback.pop()
        if last.reply is not None:
            self.board.pop()
        self.board.pop()
        return True

    def hint(self) -> str:
        """The tables' best move for the user now (SAN)."""
        if self.over:
            raise ValueError("the drill is over")
        if self.board.turn != self.user:
            raise ValueError("not the user's turn")
        best = self._choice(self.board).best
        if best is None:
            raise ValueError("the drill is over")
        return self.board.san(best.move)

    # -- the end -------------------------------------------------------------------------------------------------

    def result(self) -> str:
        """won, drawn or lost (from the user's view) once over; "playing" before."""
        end = outcome(self.board)
        if end is None:
            return "playing"
        if end.winner is None:
            return "drawn"
        return "won" if end.winner == self.user else "lost"

    def shortest(self, plies: int = 300) -> int | None:
        """The user's moves in the tables' own line from the start against the same defence (None for a draw
        drill, or a line that did not end within ``plies``)."""
        if self.drill.goal != WIN:
            return None
        board = self.drill.board
        moves = 0
        for _ in range(plies):
            if outcome(board) is not None:
                return moves
            if board.turn == self.user:
                best = self._choice(board).best
                assert best is not None
                board.push(best.move)
                moves += 1
            else:
                board.push(self.answer(board))
        return None

    def summary(self) -> Summary:
        result = self.result()
        success = result == "won" if self.drill.goal == WIN else result in ("drawn", "won")
        errors = sum(1 for f in self.feedback if f.verdict == THROWN_AWAY)
        return Summary(result, success, len(self.feedback), self.shortest(), errors,
                       round(time.monotonic() - self.started, 1))
