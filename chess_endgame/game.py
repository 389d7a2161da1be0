"""Playing a position out between two agents, with adjudication and PGN.

Agents: the engines of :mod:`.engines` (this project's player, any UCI engine)
and the tablebase defender (:class:`TablebaseAgent`: the move chooser's pure
DTZ ranking, resisting longest and taking every 50-move draw it can reach).
``play`` (CLI), the benchmarks, the match and the suite runner's ``--play``
all use :func:`play_game`.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import chess
import chess.pgn

from .chooser import Choice, choose, rank_move
from .tablebase import NotCoveredError, Prober


@dataclass
class AgentMove:
    move: chess.Move | None
    #: Short note for the PGN (source, class, score).
    comment: str = ""


class Agent(Protocol):
    name: str

    def move(self, board: chess.Board) -> AgentMove: ...

    def close(self) -> None: ...


class TablebaseAgent:
    """The tablebase defender: pure DTZ ranking (no search); ``fallback`` plays uncovered positions."""

    def __init__(self, prober: Prober, fallback: Agent | None = None, *, rule50: bool = True) -> None:
        self.prober = prober
        self.fallback = fallback
        self.rule50 = rule50
        self.name = "tablebase"

    def move(self, board: chess.Board) -> AgentMove:
        choice = choose(board, self.prober, rule50=self.rule50)
        if isinstance(choice, Choice) and choice.moves:
            best = choice.moves[0]
            return AgentMove(best.move, f"tablebase {best.cls.name} D={best.distance}")
        if self.fallback is None:
            raise NotCoveredError(choice) if not isinstance(choice, Choice) else RuntimeError("no legal move")
        return self.fallback.move(board)

    def close(self) -> None:
        if self.fallback is not None:
            self.fallback.close()


@dataclass
class PlayedMove:
    move: chess.Move
    san: str
    comment: str


@dataclass
class GameRecord:
    start_fen: str
    white: str
    black: str
    moves: list[PlayedMove] = field(default_factory=list)
    result: str = "*"
    #: checkmate, stalemate, insufficient material, threefold repetition, 50-move rule,
    #: max plies, illegal move
    termination: str = ""

    @property
    def plies(self) -> int:
        return len(self.moves)

    def pgn(self, event: str = "chess-endgame play") -> str:
        game = chess.pgn.Game()
        game.headers["Event"] = event
        game.headers["White"] = self.white
        game.headers["Black"] = self.black
        game.headers["Result"] = self.result
        game.headers["Termination"] = self.termination
        board = chess.Board(self.start_fen)
        if self.start_fen != chess.STARTING_FEN:
            game.setup(board)
        node: chess.pgn.GameNode = game
        for played in self.moves:
            node = node.add_variation(played.move, comment=played.comment)
        out = io.StringIO()
        print(game, file=out)
        return out.getvalue()


def adjudicate(board: chess.Board) -> tuple[str, str] | None:
    """(result, termination) when the game is over, else None.

    Checkmate comes first; then stalemate, insufficient material, threefold
    repetition and the 50-move rule (a halfmove clock of 100: the side to move
    claims it).
    """
    if board.is_checkmate():
        return ("0-1" if board.turn == chess.WHITE else "1-0"), "checkmate"
    if board.is_stalemate():
        return "1/2-1/2", "stalemate"
    if board.is_insufficient_material():
        return "1/2-1/2", "insufficient material"
    if board.halfmove_clock >= 100:
        return "1/2-1/2", "50-move rule"
    if board.is_repetition(3):
        return "1/2-1/2", "threefold repetition"
    return None


def play_game(board: chess.Board, white: Agent, black: Agent, *, max_plies: int = 500,
              prober: Prober | None = None, on_move: Callable[[chess.Board, PlayedMove], None] | None = None,
              adjudicator: Callable[[chess.Board], tuple[str, str] | None] | None = None) -> GameRecord:
    """Play ``board`` out. With ``prober``, every move's comment gets its tablebase class when covered;
    ``adjudicator`` may end the game early (e.g. by the tables' verdict)."""
    board = board.copy()
    record = GameRecord(board.fen(), white.name, black.name)
    while True:
        over = adjudicate(board) or (adjudicator(board) if adjudicator else None)
        if over:
            record.result, record.termination = over
            break
        if record.plies >= max_plies:
            record.termination = "max plies"
            break
        agent = white if board.turn == chess.WHITE else black
        answer = agent.move(board.copy())
        if answer.move is None or not board.is_legal(answer.move):
            record.result = "0-1" if board.turn == chess.WHITE else "1-0"
            record.termination = f"illegal move {answer.move} by {agent.name}"
            break
        comment = answer.comment
        if prober is not None:
            comment = _with_class(board, answer.move, prober, comment)
        played = PlayedMove(answer.move, board.san(answer.move), comment)
        board.push(answer.move)
        record.moves.append(played)
        if on_move:
            on_move(board, played)
    return record


def _with_class(board: chess.Board, move: chess.Move, prober: Prober, comment: str) -> str:
    """Prefix the move's tablebase class (when the tables cover the position) to ``comment``."""
    if comment.startswith("tablebase ") or prober.covers(board) is not None:
        return comment
    try:
        ranked = rank_move(board, move, prober)
    except NotCoveredError:
        return comment
    return f"{ranked.cls.name} D={ranked.distance}" + (f"; {comment}" if comment else "")
