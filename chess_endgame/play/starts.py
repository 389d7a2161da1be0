"""A fast self-play match between two weight sets, from balanced 6- to 10-piece positions.

The starting positions (:func:`starting_positions`, :func:`balanced_starts`,
:func:`read_openings`) and the tablebase adjudicator also serve the
engine-against-engine matches of :mod:`.match`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import chess
import chess.engine

from chess_endgame.board import RESULT_POINTS, epd_lines, is_quiet, random_position, read_epd, read_text
from chess_endgame.chooser import Choice, choose, game_result
from chess_endgame.engine.evaluation import Evaluator, Weights
from chess_endgame.engine.player import Player, PlayerOptions
from chess_endgame.play.engines import PlayerEngine
from chess_endgame.play.game import play_game
from chess_endgame.tablebase.prober import Prober

#: Balanced materials of 6 to 10 pieces: the evaluation decides how they are played.
MATERIALS = ("KRPvKRP", "KRPPvKRP", "KBPPvKNPP", "KRPPvKRPP", "KQPPvKQPP", "KNPPPvKBPPP", "KRBPPvKRNPP",
             "KPPPPvKPPPP", "KRPPPvKRPPP", "KBPPPvKBPPP")


@dataclass
class MatchResult:
    wins: int = 0
    draws: int = 0
    losses: int = 0
    #: (start FEN, the first weight set had White, result) of every game.
    record: list[tuple[str, bool, str]] = field(default_factory=list)

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """Points of the first weight set per game (0.5 is an even match)."""
        return (self.wins + 0.5 * self.draws) / self.games if self.games else float("nan")


#: A start is balanced when the judge (by default this project's search at :data:`BALANCE_NODES` nodes) scores
#: it within this many centipawns, and not 0.00, the score of a draw it found (a forced draw, most often a trade
#: into drawn 5-piece tables, tests nothing): neither side wins at once, so the games test play rather than the
#: start. (Stockfish reports some dead draws as +/-0.02; those pass.)
BALANCED_CP = 150
BALANCE_NODES = 100_000
#: The judge may try this many random placements per start (plus 100) before it is given up on.
MAX_TRIES_PER_START = 50
#: The same for unbalanced starts (a ``min_cp``), which are rarer.
MAX_TRIES_PER_UNBALANCED_START = 200


class NoBalancedStarts(Exception):
    """The judge kept too few of the random placements: it cannot judge these endgames."""


class Judge(Protocol):
    """What scores a candidate start: :class:`~.engines.PlayerEngine` or :class:`~.engines.ExternalEngine`."""

    def new_position(self) -> None: ...

    def evaluate(self, board: chess.Board) -> chess.engine.Score | None: ...


def starting_positions(count: int, seed: int, accept: Callable[[chess.Board], bool] | None = None,
                       materials: tuple[str, ...] = MATERIALS) -> list[chess.Board]:
    """``count`` seeded quiet positions of ``materials`` in turn, White to move (``accept``: a further filter)."""
    rng = random.Random(seed)
    boards = []
    while len(boards) < count:
        board = random_position(materials[len(boards) % len(materials)], rng, turn=chess.WHITE)
        if is_quiet(board) and not board.was_into_check() and (accept is None or accept(board)):
            boards.append(board)
    return boards


def is_balanced(score: chess.engine.Score | None, max_cp: int = BALANCED_CP, *, refuse_draws: bool = True,
                min_cp: int = 0) -> bool:
    """A judge's score of a start (either side's view) that keeps it: ``min_cp`` to ``max_cp`` centipawns for
    one side or the other, not a mate, and not 0 (a draw it found) unless ``refuse_draws`` is False (the tuner's
    self-play wants drawn starts too). A ``min_cp`` above 0 asks for unbalanced starts (:func:`balanced_starts`)."""
    cp = None if score is None else score.score()  # None for a mate
    return cp is not None and (0 < abs(cp) or not refuse_draws) and min_cp <= abs(cp) <= max_cp


def default_judge(prober: Prober | None, nodes: int = BALANCE_NODES) -> PlayerEngine:
    """This project's search at ``nodes`` nodes a start, its hash cleared for each (so a seed's starts repeat)."""
    return PlayerEngine(Player(prober, options=PlayerOptions(faster_mate=False)), chess.engine.Limit(nodes=nodes))


def balanced_starts(count: int, seed: int, prober: Prober | None = None, *, judge: Judge | None = None,
                    max_cp: int = BALANCED_CP, nodes: int = BALANCE_NODES,
                    progress: Callable[[chess.Board], None] | None = None, min_cp: int = 0) -> list[chess.Board]:
    """:func:`starting_positions` that ``judge`` keeps (:func:`is_balanced`), of the :data:`MATERIALS` with more
    pieces than ``prober``'s tables (which would end the game at once).

    The default judge is :func:`default_judge` at ``nodes`` nodes: a seed
    gives the same starts every time. About one random placement in five
    passes (the others have a pawn running, a piece hanging, or are draws it
    finds), at about a tenth of a second each. An engine judged at a node limit
    with one thread is deterministic too. ``progress`` is called with each start kept, in order (so that a
    caller interrupted by Ctrl-C still has those judged).

    ``min_cp`` above 0 keeps only starts that one side leads by ``min_cp`` to
    ``max_cp`` (an unbalanced book, as fishtest's UHO books): more game pairs
    end won and drawn rather than drawn twice, so an SPRT between two close
    versions decides in fewer games. Such starts are rarer (Stockfish at
    200,000 nodes kept 1 in 45 placements at 90-200 cp), and the judge may
    try :data:`MAX_TRIES_PER_UNBALANCED_START` a start.

    :raises NoBalancedStarts: when the judge has not kept ``count`` starts after
        :data:`MAX_TRIES_PER_START` tries per start, plus 100 (say, an engine that
        scores every position 0.00).
    """
    largest = prober.max_pieces if prober is not None and prober.available else 0
    materials = tuple(m for m in MATERIALS if len(m) - 1 > largest)  # "KRPvKRP": 6 pieces
    if not materials:
        raise NoBalancedStarts(f"the tables cover every start material (up to {largest} pieces)")
    if judge is None:
        judge = default_judge(prober, nodes)
    tries = MAX_TRIES_PER_UNBALANCED_START if min_cp > 0 else MAX_TRIES_PER_START
    tried, kept, limit = 0, 0, tries * count + 100
    window = f"{min_cp} to {max_cp} cp for one side" if min_cp > 0 else f"within +/-{max_cp} cp"

    def balanced(board: chess.Board) -> bool:
        nonlocal tried, kept
        if tried >= limit:
            raise NoBalancedStarts(f"the judge kept {kept} of {tried} random starts (it keeps a start it scores "
                                   f"{window} and not 0.00); it cannot judge these endgames")
        tried += 1
        judge.new_position()
        ok = is_balanced(judge.evaluate(board), max_cp, min_cp=min_cp)
        if ok:
            kept += 1
            if progress:
                progress(board)
        return ok

    return starting_positions(count, seed, balanced, materials)


def read_openings(path: str) -> list[chess.Board]:
    """The positions of an EPD or FEN file, one a line (``#`` comments and blank lines skipped).

    :raises ValueError: in one line naming the file and line, for an
        unreadable file, a line that is not a legal position, or no position.
    """
    boards = []
    for number, text in epd_lines(read_text(path)):
        try:
            board, _ = read_epd(text)  # also a full FEN, its clocks kept
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: not an EPD or FEN position: {exc}") from None
        if not board.is_valid() or board.is_game_over():
            raise ValueError(f"{path}:{number}: not a position to play from: {text}")
        boards.append(board)
    if not boards:
        raise ValueError(f"{path}: no positions (EPD or FEN lines) in the file")
    return boards


def tablebase_adjudicator(prober: Prober) -> Callable[[chess.Board], tuple[str, str] | None]:
    """End a game as soon as the tables cover it, with their verdict."""

    def verdict(board: chess.Board) -> tuple[str, str] | None:
        if prober.covers(board) is not None:
            return None
        choice = choose(board, prober)
        if not isinstance(choice, Choice) or not choice.moves:
            return None
        result = game_result(choice.result, board.turn)
        return result, ("tablebase draw" if result == "1/2-1/2" else "tablebase win")

    return verdict


def play_match(first: Weights, second: Weights, *, games: int, nodes: int, seed: int, prober: Prober,
               max_plies: int = 160, progress: Callable[[MatchResult], None] | None = None) -> MatchResult:
    """``games`` games (each start twice, colours swapped), ``nodes`` per move, the tables adjudicating."""
    result = MatchResult()
    adjudicator = tablebase_adjudicator(prober)
    options = PlayerOptions(faster_mate=False)
    players = {name: Player(prober, options=options, evaluator=Evaluator(weights))
               for name, weights in (("first", first), ("second", second))}
    for start in starting_positions((games + 1) // 2, seed):
        for first_plays_white in (True, False):
            if result.games >= games:
                break
            for player in players.values():
                player.new_game()
            a = PlayerEngine(players["first"], chess.engine.Limit(nodes=nodes), name="first")
            b = PlayerEngine(players["second"], chess.engine.Limit(nodes=nodes), name="second")
            white, black = (a, b) if first_plays_white else (b, a)
            record = play_game(start, white, black, max_plies=max_plies, adjudicator=adjudicator)
            result.record.append((start.fen(), first_plays_white, record.result))
            points = RESULT_POINTS.get(record.result, 0.5)
            mine = points if first_plays_white else 1.0 - points
            if mine == 1.0:
                result.wins += 1
            elif mine == 0.0:
                result.losses += 1
            else:
                result.draws += 1
            if progress:
                progress(result)
    return result
