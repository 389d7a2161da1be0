"""Playing a position out between two agents, with adjudication and PGN.

Agents: the engines of :mod:`.engines` (this project's player, any UCI engine)
and the tablebase defender (:class:`TablebaseAgent`: the move chooser's pure
DTZ ranking, resisting longest and taking every 50-move draw it can reach).
``play`` (CLI), the benchmarks, the match and the suite runner's ``--play``
all use :func:`play_game`.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import chess
import chess.pgn

from chess_endgame.board import TERMINATIONS, outcome
from chess_endgame.chooser import Choice, choose, rank_move
from chess_endgame.tablebase.prober import NotCoveredError, Prober


@dataclass
class AgentMove:
    move: chess.Move | None
    #: Short note for the PGN (source, class, score).
    comment: str = ""
    #: Set when the agent loses instead of moving ("engine": its process died or hung; "illegal": it
    #: sent no usable move); ``comment`` then says why.
    forfeit: str = ""


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
    #: max plies, illegal move, time forfeit, forfeit
    termination: str = ""
    #: How the side to move at the end lost, when it did not lose on the board: "time", "illegal", "engine".
    forfeit: str = ""

    @property
    def plies(self) -> int:
        return len(self.moves)

    @property
    def pgn_termination(self) -> str:
        """The PGN standard's Termination value (section 9.8.1): "normal" for an end by the rules, "time forfeit",
        "rules infraction" (an illegal move), "abandoned" (an engine that failed), "adjudication" (the tables or a
        move limit), "unterminated" (a game stopped without a result)."""
        if self.result == "*":
            return "unterminated"
        if self.forfeit:
            return {"time": "time forfeit", "illegal": "rules infraction"}.get(self.forfeit, "abandoned")
        return "normal" if self.termination in TERMINATIONS.values() else "adjudication"

    @property
    def final_turn(self) -> chess.Color:
        """The side to move when the game ended (the one that forfeited, if any)."""
        return chess.Board(self.start_fen).turn ^ (self.plies % 2 == 1)

    def pgn(self, event: str = "chess-endgame play", headers: dict[str, str] | None = None) -> str:
        game = chess.pgn.Game()
        game.headers["Event"] = event
        game.headers["White"] = self.white
        game.headers["Black"] = self.black
        game.headers["Result"] = self.result
        game.headers["Termination"] = self.pgn_termination
        for name, value in (headers or {}).items():
            game.headers[name] = value
        board = chess.Board(self.start_fen)
        if self.start_fen != chess.STARTING_FEN:
            game.setup(board)
        node: chess.pgn.GameNode = game
        for played in self.moves:
            node = node.add_variation(played.move, comment=played.comment)
        # The tag takes the PGN standard's words; how the game ended, in ours, closes the game text
        # (as Cutechess writes "{White mates}" after the last move).
        if self.termination:
            node.comment = f"{node.comment} {self.termination}".strip()
        out = io.StringIO()
        print(game, file=out)
        return out.getvalue()


@dataclass
class Clock:
    """Chess clocks kept as a GUI keeps them, in seconds.

    The mover's thinking time comes off its clock; a clock below ``-margin``
    has fallen. Then the increment is added, and with a repeating control
    (``moves`` in ``base``, e.g. 40/10) every ``moves``-th move adds ``base``.
    """

    base: float
    increment: float = 0.0
    moves: int | None = None
    #: Seconds a side may overrun its clock before it loses (cutechess's timemargin).
    margin: float = 0.0
    remaining: dict[chess.Color, float] = field(init=False)
    played: dict[chess.Color, int] = field(init=False)

    def __post_init__(self) -> None:
        self.remaining = {chess.WHITE: self.base, chess.BLACK: self.base}
        self.played = {chess.WHITE: 0, chess.BLACK: 0}

    def moves_to_go(self, color: chess.Color) -> int | None:
        """Moves left to the next control (UCI ``movestogo``), None in sudden death."""
        return self.moves - self.played[color] % self.moves if self.moves else None

    def punch(self, color: chess.Color, seconds: float) -> bool:
        """``color`` moved after ``seconds`` of thought: False when its flag fell."""
        self.remaining[color] -= seconds
        if self.remaining[color] < -self.margin:
            return False
        self.played[color] += 1
        self.remaining[color] += self.increment
        if self.moves and self.played[color] % self.moves == 0:
            self.remaining[color] += self.base
        return True

    def pgn_clock(self, color: chess.Color) -> str:
        """``[%clk h:mm:ss.s]``, the clock comment GUIs and lichess read."""
        tenths = max(0, round(self.remaining[color] * 10))
        return f"[%clk {tenths // 36000}:{tenths // 600 % 60:02d}:{tenths % 600 // 10:02d}.{tenths % 10}]"


def adjudicate(board: chess.Board) -> tuple[str, str] | None:
    """(result, termination) when the game is over by the rules (:func:`~chess_endgame.board.outcome`), else None."""
    over = outcome(board)
    return None if over is None else (over.result(), TERMINATIONS[over.termination])


def play_game(board: chess.Board, white: Agent, black: Agent, *, max_plies: int = 500,
              prober: Prober | None = None, on_move: Callable[[chess.Board, PlayedMove], None] | None = None,
              adjudicator: Callable[[chess.Board], tuple[str, str] | None] | None = None,
              clock: Clock | None = None) -> GameRecord:
    """Play ``board`` out. With ``prober``, every move's comment gets its tablebase class when covered;
    ``adjudicator`` may end the game early (e.g. by the tables' verdict). With ``clock``, each move's
    time is taken off the mover's clock (agents that play on the clock read it themselves) and a side
    whose flag falls loses, or draws when the other side has no mating material (as in cutechess)."""
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
        start = time.monotonic()
        answer = agent.move(board.copy())
        loss = "0-1" if board.turn == chess.WHITE else "1-0"
        if clock is not None and not clock.punch(board.turn, time.monotonic() - start):
            mate_possible = not board.has_insufficient_material(not board.turn)
            record.result = loss if mate_possible else "1/2-1/2"
            record.termination = f"time forfeit by {agent.name}" + ("" if mate_possible else
                                                                     "; the other side cannot mate")
            record.forfeit = "time"
            break
        if answer.forfeit:
            record.result, record.termination = loss, f"forfeit by {agent.name}: {answer.comment}"
            record.forfeit = answer.forfeit
            break
        if answer.move is None or not board.is_legal(answer.move):
            record.result = loss
            record.termination = f"illegal move {answer.move} by {agent.name}"
            record.forfeit = "illegal"
            break
        comment = answer.comment
        if clock is not None:
            comment = f"{comment} {clock.pgn_clock(board.turn)}".strip()
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
