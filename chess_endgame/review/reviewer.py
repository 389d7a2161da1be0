"""Reviewing one game: every position evaluated, every move judged.

Every position of the game's main line goes through the :class:`~..player.Player`
service once: where the tables cover it the chooser ranks it (its best move,
class and line), elsewhere the searcher evaluates it at the per-move budget;
that evaluation (of the position after each move, White's view) is the move's
``[%eval]`` and the curve. Each move is then judged (:mod:`.judge`) from the
tables when the position before it is covered; beyond them as Lichess does,
from the evaluations before and after the move, and a drop is confirmed (and
graded) by the score of the best move against the score of the move played,
both searched from the same position at the same budget (a second search,
restricted to the move played): separate searches of two positions reach
different depths and differ by the side to move, which a weak budget turns into
false alarms.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import chess
import chess.engine
import chess.pgn
import chess.syzygy

from chess_endgame.chooser import Choice, MoveClass, game_result, rank_move
from chess_endgame.engine.player import Decision, Player, PlayerOptions
from chess_endgame.engine.result import Limits
from chess_endgame.pgn import game_problem
from chess_endgame.review.judge import TIGHT_PLIES, Judgement, Verdict, drawn_by, eval_judgement, tablebase_judgement
from chess_endgame.tablebase.prober import NotCoveredError, Prober
from chess_endgame.tablebase.remote import RemoteProber, RootProber

#: Search budget per position beyond the tables when none is given (nodes; deterministic).
DEFAULT_NODES = 20000
#: Plies of the best line shown for a flagged move.
LINE_PLIES = 8


@dataclass(frozen=True)
class ReviewOptions:
    """The per-position budget beyond the tables (``movetime`` ms, ``nodes``, ``depth`` plies;
    none given: :data:`DEFAULT_NODES` nodes) and the ``?!`` margin in plies."""

    movetime: int | None = None
    nodes: int | None = None
    depth: int | None = None
    tight_plies: int = TIGHT_PLIES
    hash_mb: int = 16

    def limits(self) -> Limits:
        if self.movetime is None and self.nodes is None and self.depth is None:
            return Limits(nodes=DEFAULT_NODES)
        return Limits(movetime=self.movetime, nodes=self.nodes, depth=self.depth)


@dataclass
class MoveReview:
    """One move of the main line and its verdict. Classes are from the mover's view."""

    ply: int                    # 1 for the game's first move
    move_number: int            # the fullmove number before the move
    color: str                  # "white" or "black": who moved
    uci: str
    san: str
    #: "tablebase" (judged by the tables' classes) or "search" (judged by evaluations).
    source: str
    #: Tablebase class of the position before the move (its best move's) and of the move played.
    before: str | None = None
    after: str | None = None
    judgement: Judgement | None = None
    #: Why it was flagged, in words.
    reason: str = ""
    #: The best move (SAN) and its line (SAN, from the position before the move); set for flagged moves.
    best: str | None = None
    line: list[str] = field(default_factory=list)
    #: Evaluation of the position after the move, White's point of view (None: the search gave none).
    eval: chess.engine.PovScore | None = None

    @property
    def label(self) -> str:
        """``37. Kd5`` or ``37... Kd5``."""
        return f"{self.move_number}{'.' if self.color == 'white' else '...'} {self.san}"


@dataclass
class TableEntry:
    """The first position of the game within the tables, and the tables' verdict on it."""

    ply: int                    # moves played before it (0: the game starts in the tables)
    material: str               # e.g. "KRPvKR"
    turn: str                   # side to move
    cls: str                    # its class from the side to move's view
    result: str                 # the result perfect play gives: "1-0", "0-1", "1/2-1/2"


@dataclass
class GameReview:
    """A reviewed game; plain data (it crosses process boundaries)."""

    number: int                 # 1-based position of the game in its file
    pgn: str                    # the game as read, to annotate
    headers: dict[str, str]
    moves: list[MoveReview] = field(default_factory=list)
    #: Evaluation of the start position, White's point of view.
    start_eval: chess.engine.PovScore | None = None
    entered: TableEntry | None = None
    seconds: float = 0.0

    @property
    def evals(self) -> list[chess.engine.PovScore | None]:
        """Every position's evaluation, the start first (White's point of view)."""
        return [self.start_eval] + [m.eval for m in self.moves]


@dataclass
class _Position:
    """A position's evaluation: the player's decision (None at the end of the game)."""

    score: chess.engine.PovScore | None
    decision: Decision | None = None

    @property
    def choice(self) -> Choice | None:
        d = self.decision
        return d.choice if d is not None and d.source == "tablebase" and d.choice is not None else None


def pov(score: chess.engine.Score | None, turn: chess.Color) -> chess.engine.PovScore | None:
    """The player's score (side to move) as python-chess's PovScore."""
    return None if score is None else chess.engine.PovScore(score, turn)


class Reviewer:
    """Reviews games with one :class:`Player` on ``prober``, and ``remote`` (a server speaking the Lichess
    tablebase API) where ``prober`` does not reach, as the player asks it: at each root."""

    def __init__(self, prober: Prober, options: ReviewOptions | None = None, *,
                 remote: RemoteProber | None = None) -> None:
        self.options = options or ReviewOptions()
        # Pure chooser play at tablebase roots (the chooser's best move is the reference) and no
        # line: a line is drawn only for flagged moves, by the second player.
        self.player = Player(prober, options=PlayerOptions(hash_mb=self.options.hash_mb, faster_mate=False,
                                                           tb_pv_plies=0))
        # The line of a flagged move: LINE_PLIES plies whatever the machine's load (the time cap is a safety net).
        self._liner = Player(prober, options=PlayerOptions(hash_mb=1, faster_mate=False, tb_pv_plies=LINE_PLIES,
                                                           tb_pv_ms=10_000))
        self.player.set_remote(remote)
        self._liner.set_remote(remote)
        #: What ranks the move played: the prober that ranked the root (local tables first, then the server).
        self.prober = prober if remote is None else RootProber(prober, remote)

    def review(self, game: chess.pgn.Game, number: int = 1) -> GameReview:
        """Review the main line of ``game`` (its start position and history included).

        :raises ValueError: when the game cannot be replayed (:func:`game_problem` says why).
        """
        start = time.monotonic()
        problem = game_problem(game)
        if problem is not None:
            raise ValueError(problem)
        board = game.board()
        if board.chess960 and not board.castling_rights:
            board.chess960 = False  # without castling, Chess960 plays as standard chess from here on
        self.player.new_game()
        review = GameReview(number, str(game), dict(game.headers))
        here = self._evaluate(board)
        review.start_eval = here.score
        for ply, move in enumerate(game.mainline_moves(), 1):
            if move not in board.legal_moves:
                raise ValueError(f"illegal move {move.uci()} at ply {ply}")
            if review.entered is None:
                review.entered = self._entry(board, here, ply - 1)
            entry = MoveReview(ply, board.fullmove_number, "white" if board.turn == chess.WHITE else "black",
                               move.uci(), board.san(move), "search")
            board.push(move)
            after = self._evaluate(board)
            board.pop()
            self._judge(board, move, here, after, entry)
            board.push(move)
            entry.eval, here = after.score, after
            review.moves.append(entry)
        if review.entered is None:
            review.entered = self._entry(board, here, len(review.moves))
        review.seconds = time.monotonic() - start
        return review

    # -- evaluating ------------------------------------------------------------------------

    def _evaluate(self, board: chess.Board) -> _Position:
        if board.is_checkmate():
            return _Position(chess.engine.PovScore(chess.engine.Mate(0), board.turn))
        if board.is_stalemate() or board.is_insufficient_material():
            return _Position(chess.engine.PovScore(chess.engine.Cp(0), board.turn))
        decision = self.player.decide(board, self.options.limits())
        return _Position(pov(decision.score, board.turn), decision)

    def _entry(self, board: chess.Board, here: _Position, ply: int) -> TableEntry | None:
        """``board`` as the game's entry into the tables, when it is one: ranked by them, or mated, stalemated or
        dead within their reach (the rules' verdict is theirs); else None."""
        if here.choice is not None:
            cls = here.choice.result
        elif here.decision is None and self.prober.covers(board) is None:
            cls = MoveClass.LOSS if board.is_checkmate() else MoveClass.DRAW
        else:
            return None
        return TableEntry(ply, chess.syzygy.calc_key(board), "white" if board.turn == chess.WHITE else "black",
                          cls.name, game_result(cls, board.turn))

    # -- judging ---------------------------------------------------------------------------

    def _judge(self, board: chess.Board, move: chess.Move, here: _Position, after: _Position,
               entry: MoveReview) -> None:
        """Fill in ``entry``'s verdict on ``move`` from ``board`` (evaluated as ``here``; ``after`` the move)."""
        choice = here.choice
        verdict = Verdict(None)
        best_move = here.decision.move if here.decision is not None else None
        if choice is not None and choice.best is not None:
            try:
                played = rank_move(board, move, self.prober, rule50=self.player.options.rule50)
            except NotCoveredError:
                played = None
            if played is not None:
                best = choice.best
                entry.source, entry.before, entry.after = "tablebase", choice.result.name, played.cls.name
                best_move = best.move
                board.push(move)
                repeats, draw = board.is_repetition(2), drawn_by(board)
                board.pop()
                verdict = tablebase_judgement(best, played, repeats=repeats, tight=self.options.tight_plies,
                                              draw=draw)
        if entry.source == "search" and move != best_move and here.score is not None and after.score is not None \
                and eval_judgement(here.score.pov(board.turn), after.score.pov(board.turn)).judgement is not None:
            played_score = self._score_of(board, move)  # a drop between two searches: confirm it from one root
            if played_score is not None:
                verdict = eval_judgement(here.score.pov(board.turn), played_score.pov(board.turn))
        if verdict.judgement is None:
            return
        entry.judgement, entry.reason = verdict.judgement, verdict.reason
        if best_move is not None and best_move != move:
            line = self._line(board) if entry.source == "tablebase" else here.decision.pv  # type: ignore[union-attr]
            if not line or line[0] != best_move:
                line = [best_move]
            entry.best = board.san(best_move)
            entry.line = _san_line(board, line)

    def _score_of(self, board: chess.Board, move: chess.Move) -> chess.engine.PovScore | None:
        """The search's score of ``move`` at ``board``'s root, at the same budget as the best move's."""
        limits = self.options.limits()
        limits.searchmoves = [move]
        return pov(self.player.decide(board, limits).score, board.turn)

    def _line(self, board: chess.Board) -> list[chess.Move]:
        """The chooser's best move and a few plies of tablebase play after it."""
        return self._liner.decide(board, Limits()).pv


def _san_line(board: chess.Board, moves: list[chess.Move]) -> list[str]:
    """SAN of ``moves`` played from ``board``, as far as they are legal."""
    temp = board.copy(stack=False)
    sans = []
    for move in moves:
        if move not in temp.legal_moves:
            break
        sans.append(temp.san(move))
        temp.push(move)
    return sans
