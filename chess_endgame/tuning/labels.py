"""Tuner labels beyond the tables: quiet positions from self-play games, labelled by the game's result.

The tables label positions of at most five pieces; the searcher plays positions
of six to twenty. :func:`selfplay_labels` plays the project's own player
against itself (a fixed node budget a move, the hash cleared before each game,
so a game depends only on the seed, its number and the weights) from seeded
random starts of :data:`MIN_PIECES` to :data:`MAX_PIECES` pieces: balanced
material (the same pieces each side, at most a pawn or a bishop-for-knight
apart), a quiet position that a short search scores within
:data:`~chess_endgame.play.starts.BALANCED_CP`. The tables adjudicate a game as soon as they cover it.
Quiet positions of at least :data:`MIN_PIECES` pieces are sampled from each
finished game (at most ``per_game``) and labelled with the game's result, 1 /
0.5 / 0 from the side to move's view. Games cut at ``max_plies`` give no
labels.

The game's result is what the tables' WDL labels are too (win, draw, loss)
and what the logistic model predicts, but it is noisy: a 300-node player
blunders, and one blunder relabels every position of its game. So each
sampled position can also get the score of a deeper search of its own
(``score_nodes``, e.g. ten times the game's budget), which the tuner turns
into a win probability and blends with the result (:mod:`.pipeline`). A
search label alone would teach the evaluation to imitate itself a few plies
on, blind spots included; the blend keeps the result as the anchor.
:func:`score_positions` adds such scores to positions that lack one (a label
file written without them).

Label files are EPD, one position a line, with the game's result from White's
view in the ``c9`` opcode (the format of the widely used "quiet-labeled" EPD
files, which :func:`read_labels` reads too), the game's number in ``game``
(positions of one game stay on one side of the held-out split; a line without
``game`` is a game of its own) and, where searched, the deeper search's score
in the standard ``ce`` opcode (centipawns from the side to move, a mate in
``n`` as :data:`MATE_CP` - ``n``). Positions, not features, are stored, so a
file stays valid when the features change.
"""

from __future__ import annotations

import functools
import math
import os
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TextIO

import chess
import numpy as np

from chess_endgame.batch.local import LocalProcesses
from chess_endgame.batch.protocol import Backend
from chess_endgame.batch.runner import run_batch
from chess_endgame.board import RESULT_POINTS, epd_lines, is_quiet, random_position, read_epd, read_text
from chess_endgame.engine.evaluation import Evaluator, Weights
from chess_endgame.engine.player import Player, PlayerOptions
from chess_endgame.engine.result import Limits
from chess_endgame.play.engines import PlayerEngine
from chess_endgame.play.game import play_game
from chess_endgame.play.starts import is_balanced, tablebase_adjudicator
from chess_endgame.tablebase.prober import Prober

#: The largest ``ce`` a label file may give (centipawns; a mate scores 10000 less its plies).
MAX_CE = 1_000_000
#: Piece counts (kings included) of the self-play starts and of the positions labelled.
MIN_PIECES = 6
MAX_PIECES = 20
#: Defaults of the command's --selfplay-nodes and --selfplay-per-game.
SELFPLAY_NODES = 500
PER_GAME = 10
#: A start is kept when a search of this many nodes scores it within :data:`~.play.starts.BALANCED_CP`
#: centipawns (0.00 included: the labels want drawn starts too).
BALANCE_NODES = 1000
#: The centipawns a mate found by a label search stands for, less its moves (python-chess's ``mate_score``): a win
#: probability of 1 for any fitted scale.
MATE_CP = 10_000
#: Pieces drawn (without replacement) for both sides' equal sets.
_PIECE_POOL = "QRRBBNN"
_ORDER = {c: i for i, c in enumerate("KQRBNP")}
#: Game results (White's view) and their points for White.


def random_material(rng: random.Random, min_pieces: int = MIN_PIECES, max_pieces: int = MAX_PIECES) -> str:
    """A balanced material such as ``KRBPPPvKRNPP``, its piece count uniform in [min_pieces, max_pieces].

    Both sides get the same 0-4 pieces from Q, R, R, B, B, N, N and the same
    pawns; an odd count gives one side a pawn more, and in a third of the
    materials with a minor piece one side's bishop is a knight or the other
    way round.
    """
    total = rng.randint(min_pieces, max_pieces)
    per_side, extra = divmod(total - 2, 2)
    count = rng.randint(max(0, per_side + extra - 8), min(4, per_side))
    pieces = sorted(rng.sample(_PIECE_POOL, count), key=_ORDER.__getitem__)
    white, black = list(pieces), list(pieces)
    minors = [i for i, c in enumerate(black) if c in "BN"]
    if minors and rng.random() < 1 / 3:
        i = rng.choice(minors)
        black[i] = "N" if black[i] == "B" else "B"
    pawns = [per_side - count, per_side - count]
    pawns[rng.randrange(2)] += extra
    if rng.random() < 0.5:
        white, black = black, white

    def side(types: list[str], n: int) -> str:
        return "K" + "".join(sorted(types, key=_ORDER.__getitem__)) + "P" * n

    return f"{side(white, pawns[0])}v{side(black, pawns[1])}"


def pieces(board: chess.Board) -> int:
    return chess.popcount(board.occupied)


@dataclass
class GameLabels:
    """What one self-play game gave: its start, result and sampled quiet positions (FENs)."""

    number: int
    start: str
    result: str
    termination: str
    plies: int
    positions: list[str] = field(default_factory=list)
    #: The label search's score of each position (centipawns, side to move), when searched.
    scores: list[float] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return self.result in RESULT_POINTS


class SelfPlay:
    """Plays and labels self-play games with one weight set (one per process)."""

    def __init__(self, prober: Prober, weights: Weights, *, nodes: int, seed: int, per_game: int = PER_GAME,
                 max_plies: int = 400, min_pieces: int = MIN_PIECES, max_pieces: int = MAX_PIECES,
                 score_nodes: int = 0) -> None:
        self.prober = prober
        self.player = Player(prober, options=PlayerOptions(faster_mate=False, hash_mb=4),
                             evaluator=Evaluator(weights))
        self.adjudicator = tablebase_adjudicator(prober)
        self.nodes, self.seed, self.per_game, self.max_plies = nodes, seed, per_game, max_plies
        self.min_pieces, self.max_pieces = min_pieces, max_pieces
        self.score_nodes = score_nodes

    def score(self, board: chess.Board) -> float:
        """The label search's score of ``board``: centipawns from the side to move (a mate in ``n``:
        :data:`MATE_CP` - ``n``).

        The hash is cleared first, so a score depends only on the position, the weights and the budget.
        """
        self.player.new_game()
        found = self.player.decide(board, Limits(nodes=self.score_nodes)).score
        return math.nan if found is None else float(found.score(mate_score=MATE_CP))

    def _rng(self, number: int) -> random.Random:
        return random.Random(self.seed * 1_000_003 + number)

    def start(self, rng: random.Random) -> chess.Board:
        """A seeded quiet start that the tables do not cover and a short search calls undecided.

        The piece count is drawn first (uniform), then materials of that count
        and placements until one passes: large counts pass less often, and
        redrawing the count would skew the starts towards small ones.
        """
        total = rng.randint(self.min_pieces, self.max_pieces)
        while True:
            material = random_material(rng, total, total)
            for _ in range(100):
                board = random_position(material, rng)
                if not is_quiet(board) or self.prober.covers(board) is None:
                    continue
                self.player.new_game()
                score = self.player.decide(board, Limits(nodes=BALANCE_NODES)).score
                if is_balanced(score, refuse_draws=False):
                    return board

    def game(self, number: int) -> GameLabels:
        """Game ``number``: the same for the same seed, weights and node budget, in any process."""
        rng = self._rng(number)
        start = self.start(rng)
        self.player.new_game()
        engine = PlayerEngine(self.player, chess.engine.Limit(nodes=self.nodes), name="self")
        seen = [start.copy(stack=False)]
        record = play_game(start, engine, engine, max_plies=self.max_plies, adjudicator=self.adjudicator,
                           on_move=lambda board, _: seen.append(board.copy(stack=False)))
        labels = GameLabels(number, start.fen(), record.result, record.termination, record.plies)
        if labels.finished:
            # The last position ended the game (mate, stalemate, a draw rule, the tables): not a sample.
            candidates = [b for b in seen[:-1] if pieces(b) >= self.min_pieces and is_quiet(b)]
            chosen = sorted(rng.sample(range(len(candidates)), min(self.per_game, len(candidates))))
            labels.positions = [candidates[i].fen() for i in chosen]
            if self.score_nodes:
                labels.scores = [self.score(candidates[i]) for i in chosen]
        return labels


@dataclass
class LabelSet:
    """Labelled positions: boards, labels from the side to move's view, and each one's game."""

    boards: list[chess.Board] = field(default_factory=list)
    #: 1 win, 0.5 draw, 0 loss for the side to move.
    labels: list[float] = field(default_factory=list)
    games: list[int] = field(default_factory=list)
    #: The label search's score (centipawns, side to move), NaN where the position has none.
    scores: list[float] = field(default_factory=list)
    #: Results (White's view) of the finished games, and how many were cut at the ply limit.
    results: dict[str, int] = field(default_factory=lambda: dict.fromkeys(RESULT_POINTS, 0))
    unfinished: int = 0

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def finished_games(self) -> int:
        return sum(self.results.values())

    def add_position(self, board: chess.Board, white_score: float, game: int, score: float = math.nan) -> None:
        self.boards.append(board)
        self.labels.append(white_score if board.turn == chess.WHITE else 1.0 - white_score)
        self.games.append(game)
        self.scores.append(score)

    @property
    def unscored(self) -> list[int]:
        """The rows without a label search's score."""
        return [i for i, s in enumerate(self.scores) if math.isnan(s)]

    def add_game(self, game: GameLabels) -> None:
        if not game.finished:
            self.unfinished += 1
            return
        self.results[game.result] += 1
        scores = game.scores or [math.nan] * len(game.positions)
        for fen, score in zip(game.positions, scores, strict=True):
            self.add_position(chess.Board(fen), RESULT_POINTS[game.result], game.number, score)

    def white_score(self, i: int) -> float:
        return self.labels[i] if self.boards[i].turn == chess.WHITE else 1.0 - self.labels[i]

    def piece_counts(self) -> np.ndarray:
        return np.array([pieces(b) for b in self.boards], dtype=np.int64)


# -- playing many games -------------------------------------------------------------------


class SelfPlayWorker:
    """Plays games by number in one process or Ray actor (a worker of :mod:`chess_endgame.batch`)."""

    def __init__(self, directories: list[str], weights: Weights, kwargs: dict) -> None:
        self.prober = Prober(directories)
        self.selfplay = SelfPlay(self.prober, weights, **kwargs)

    def run(self, number: int) -> GameLabels:
        return self.selfplay.game(number)

    def close(self) -> None:
        self.prober.close()


def selfplay_labels(prober: Prober, weights: Weights, games: int, *, nodes: int, seed: int, per_game: int = PER_GAME,
                    min_pieces: int = MIN_PIECES, max_pieces: int = MAX_PIECES, jobs: int = 1, max_plies: int = 400,
                    score_nodes: int = 0, into: LabelSet | None = None,
                    progress: Callable[[GameLabels], None] | None = None, backend: Backend | None = None,
                    lost: Callable[[int, str], None] | None = None) -> LabelSet:
    """Labelled quiet positions from ``games`` self-play games (see the module's docstring).

    Games 0 .. ``games`` - 1 are played through the shared batch runner in ``jobs``
    processes (or on ``backend``, e.g. Ray actors): the same games for any of them.
    Their starts have ``min_pieces`` to ``max_pieces`` pieces (kings and pawns counted),
    and so have the positions sampled from them. ``progress`` sees each game as it
    ends; ``into`` gets them in game order when the run ends, so a caller that
    catches Ctrl-C (re-raised here after the games played are in) keeps them.
    ``lost(number, why)`` hears of each game whose worker died under it (run once
    more; a game lost twice gives no labels).

    :raises BackendError: (or what a worker raised) when the run could not go on.
    """
    labels = into if into is not None else LabelSet()
    kwargs = {"nodes": nodes, "seed": seed, "per_game": per_game, "max_plies": max_plies, "min_pieces": min_pieces,
              "max_pieces": max_pieces, "score_nodes": score_nodes}
    directories = [os.path.abspath(d) for d in prober.files.directories]
    batch = run_batch(functools.partial(SelfPlayWorker, directories, weights, kwargs), range(games),
                      backend=backend or LocalProcesses(jobs), on_result=progress)
    for game in batch.results:
        labels.add_game(game)
    if lost is not None:
        for number, why in sorted({**batch.retried, **batch.failed}.items()):
            lost(number, why + (" (retried once; it died again: no labels)" if number in batch.failed
                                else " (played again)"))
    if batch.interrupted:
        raise KeyboardInterrupt
    if batch.error is not None:
        raise batch.error
    return labels


class ScoreWorker:
    """Scores chunks of positions by number with the label search (a worker of :mod:`chess_endgame.batch`)."""

    def __init__(self, directories: list[str], weights: Weights, score_nodes: int, chunks: list[list[str]]) -> None:
        self.prober = Prober(directories)
        self.selfplay = SelfPlay(self.prober, weights, nodes=score_nodes, seed=0, score_nodes=score_nodes)
        self.chunks = chunks

    def run(self, number: int) -> tuple[int, list[float]]:
        return number, [self.selfplay.score(chess.Board(fen)) for fen in self.chunks[number]]

    def close(self) -> None:
        self.prober.close()


#: Positions a :class:`ScoreWorker` task scores.
SCORE_CHUNK = 200


def score_positions(prober: Prober, weights: Weights, labels: LabelSet, score_nodes: int, *, jobs: int = 1,
                    progress: Callable[[int], None] | None = None, backend: Backend | None = None) -> int:
    """Give every position of ``labels`` without a score the label search's score (``score_nodes`` nodes).

    The positions are scored in chunks through the shared batch runner (``jobs`` processes, or
    ``backend``); ``progress`` hears how many positions each chunk scored. A chunk's scores are
    stored as it ends, so after Ctrl-C (re-raised here) the scored positions keep their scores.
    Returns the number of positions scored.

    :raises BackendError: (or what a worker raised) when the run could not go on.
    """
    rows = labels.unscored
    parts = [rows[i:i + SCORE_CHUNK] for i in range(0, len(rows), SCORE_CHUNK)]
    chunks = [[labels.boards[i].fen() for i in part] for part in parts]
    directories = [os.path.abspath(d) for d in prober.files.directories]
    scored = 0

    def store(result: tuple[int, list[float]]) -> None:
        nonlocal scored
        number, scores = result
        for i, score in zip(parts[number], scores, strict=True):
            labels.scores[i] = score
        scored += len(scores)
        if progress:
            progress(len(scores))

    batch = run_batch(functools.partial(ScoreWorker, directories, weights, score_nodes, chunks),
                      range(len(chunks)), backend=backend or LocalProcesses(jobs), on_result=store)
    if batch.interrupted:
        raise KeyboardInterrupt
    if batch.error is not None:
        raise batch.error
    return scored


# -- the held-out split -------------------------------------------------------------------


def split_by_game(games: Sequence[int], holdout: float, seed: int) -> np.ndarray:
    """A boolean mask of the held-out rows: a seeded share ``holdout`` of the games, all their positions.

    With two games or more at least one is held out and at least one kept.
    """
    ids = np.asarray(games)
    unique = np.unique(ids)
    if len(unique) < 2:
        return np.zeros(len(ids), dtype=bool)
    count = min(len(unique) - 1, max(1, round(holdout * len(unique))))
    held = np.random.default_rng(seed).permutation(unique)[:count]
    return np.isin(ids, held)


# -- label files --------------------------------------------------------------------------


def write_labels(labels: LabelSet, out: TextIO, header: Iterable[str] = ()) -> None:
    """The label file: ``#`` header lines, then one EPD line a position (``c9`` result, ``game``)."""
    for line in header:
        out.write(f"# {line}\n")
    out.write("# one quiet position a line; c9: the game's result (White's view); game: its number; "
              "ce: a deeper search's score (centipawns, side to move), where searched\n")
    for i, board in enumerate(labels.boards):
        result = {1.0: "1-0", 0.5: "1/2-1/2", 0.0: "0-1"}[labels.white_score(i)]
        ops: dict = {"hmvc": board.halfmove_clock, "fmvn": board.fullmove_number, "c9": result,
                     "game": labels.games[i]}
        if not math.isnan(labels.scores[i]):
            ops["ce"] = round(labels.scores[i])
        out.write(board.epd(**ops) + "\n")


def read_labels(path: str) -> LabelSet:
    """A label file of :func:`write_labels`, or any EPD file whose lines carry a ``c9`` result.

    :raises ValueError: in one line naming the file (and line): not text, a
        line that is not an EPD position with a result, or no position at all.
    """
    labels = LabelSet()
    games: dict[int, str] = {}
    for number, text in epd_lines(read_text(path, "EPD lines")):
        try:
            board, ops = read_epd(text)
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: not an EPD position: {exc}") from None
        result = ops.get("c9")
        if result not in RESULT_POINTS:
            raise ValueError(f"{path}:{number}: no game result (c9 \"1-0\", \"0-1\" or \"1/2-1/2\") on the line")
        if not board.is_valid():
            raise ValueError(f"{path}:{number}: not a legal position: {text}")
        game = ops.get("game")
        if game is None:
            game = -number  # a game of its own
        elif not isinstance(game, int):
            raise ValueError(f"{path}:{number}: the game opcode must be a whole number, not {game!r}")
        score = ops.get("ce")
        if score is None:
            score = math.nan  # no search score: the result alone
        elif not isinstance(score, (int, float)) or isinstance(score, bool) or not abs(score) <= MAX_CE:
            shown = repr(score) if len(repr(score)) <= 20 else repr(score)[:20] + "..."
            raise ValueError(f"{path}:{number}: the ce opcode must be a number of centipawns, not {shown}")
        games.setdefault(game, str(result))
        labels.add_position(board, RESULT_POINTS[str(result)], game, float(score))
    if not labels.boards:
        raise ValueError(f"{path}: no labelled positions (EPD lines with a c9 result) in the file")
    for result in games.values():
        labels.results[result] += 1
    return labels


def read_label_files(paths: Sequence[str]) -> LabelSet:
    """The label files of ``paths`` (:func:`read_labels`) in one set, each file's games renumbered 0, 1, ...
    after the previous files' in order of first appearance, so that no two files share a game.

    :raises ValueError: as :func:`read_labels`, for the first file that cannot be read.
    """
    merged = LabelSet()
    base = 0
    for path in paths:
        one = read_labels(path)
        numbers: dict[int, int] = {}
        for i, board in enumerate(one.boards):
            game = numbers.setdefault(one.games[i], base + len(numbers))
            merged.add_position(board, one.white_score(i), game, one.scores[i])
        base += len(numbers)
        for result, count in one.results.items():
            merged.results[result] += count
    return merged
