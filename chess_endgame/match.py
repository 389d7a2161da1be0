"""A fast self-play match between two weight sets, from balanced 6- to 10-piece positions.

The starting positions (:func:`starting_positions`, :func:`balanced_starts`,
:func:`read_openings`) and the tablebase adjudicator also serve the
engine-against-engine matches of :mod:`.engine_match`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

import chess

from .chooser import Choice, choose, game_result
from .engines import PlayerEngine, SearchLimits
from .evaluation import Evaluator, Weights
from .game import play_game
from .player import Player, PlayerOptions
from .sampling import random_position
from .search import Limits
from .suite.items import read_epd
from .tablebase import Prober
from .tune import is_quiet

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


#: A start is balanced when a short search (:data:`BALANCE_NODES` nodes) scores it within this many
#: centipawns: neither side wins at once, so the games test play rather than the draw of the start.
BALANCED_CP = 150
BALANCE_NODES = 3000


def starting_positions(count: int, seed: int,
                       accept: Callable[[chess.Board], bool] | None = None) -> list[chess.Board]:
    """``count`` seeded quiet positions of :data:`MATERIALS`, White to move (``accept``: a further filter)."""
    rng = random.Random(seed)
    boards = []
    while len(boards) < count:
        board = random_position(MATERIALS[len(boards) % len(MATERIALS)], rng, turn=chess.WHITE)
        if is_quiet(board) and not board.was_into_check() and (accept is None or accept(board)):
            boards.append(board)
    return boards


def balanced_starts(count: int, seed: int, prober: Prober | None = None, *, max_cp: int = BALANCED_CP,
                    nodes: int = BALANCE_NODES, progress: Callable[[], None] | None = None) -> list[chess.Board]:
    """:func:`starting_positions` that this project's search, at ``nodes`` nodes, scores within ``max_cp``.

    About half the random placements pass (the others have a pawn running or a
    piece hanging); each costs a tenth of a second or so. Deterministic for a
    seed: a node limit, the hash cleared. ``progress`` is called per start found.
    """
    player = Player(prober, options=PlayerOptions(faster_mate=False))

    def balanced(board: chess.Board) -> bool:
        player.new_game()
        score = player.decide(board, Limits(nodes=nodes)).score
        ok = score is not None and score.mate is None and abs(score.cp) <= max_cp  # None: no depth completed
        if ok and progress:
            progress()
        return ok

    return starting_positions(count, seed, balanced)


def read_openings(path: str) -> list[chess.Board]:
    """The positions of an EPD or FEN file, one a line (``#`` comments and blank lines skipped).

    :raises ValueError: in one line naming the file and line, for an
        unreadable file, a line that is not a legal position, or no position.
    """
    try:
        with open(path, encoding="utf-8-sig") as f:
            lines = f.read().splitlines()
    except UnicodeDecodeError:
        raise ValueError(f"cannot read {path}: not a text file of EPD or FEN lines") from None
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    boards = []
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
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
            a = PlayerEngine(players["first"], SearchLimits(nodes=nodes), name="first")
            b = PlayerEngine(players["second"], SearchLimits(nodes=nodes), name="second")
            white, black = (a, b) if first_plays_white else (b, a)
            record = play_game(start, white, black, max_plies=max_plies, adjudicator=adjudicator)
            result.record.append((start.fen(), first_plays_white, record.result))
            points = {"1-0": 1.0, "0-1": 0.0}.get(record.result, 0.5)
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
