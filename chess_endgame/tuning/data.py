"""The tuner's data: labelled positions from the tables (their WDL), from PGN games and from self-play (the
games' results), as feature rows from the side to move's view, with a weight per source."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import chess
import chess.pgn
import numpy as np

from chess_endgame.board import RESULT_POINTS, is_quiet, random_position
from chess_endgame.engine.evaluation import feature_matrix
from chess_endgame.pgn import PgnError, parse_game, read_games
from chess_endgame.tablebase.prober import NotCoveredError, Prober

Progress = Callable[[int], None]


@dataclass
class Dataset:
    """Feature rows (side to move's view) and labels (1 win, 0.5 draw, 0 loss for the side to move)."""

    x: np.ndarray
    y: np.ndarray
    #: Where each row came from: a material name, "pgn" or "selfplay".
    source: list[str]
    #: Each row's weight in the losses (None: all equal), e.g. from :func:`source_weights`.
    weight: np.ndarray | None = None
    #: A deeper search's score of each row (centipawns, side to move; NaN: none, as for every table row).
    score: np.ndarray | None = None
    #: The men on the board of each row (kings and pawns counted), which pick its bucket of weights (None: not known).
    men: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.y)

    def take(self, rows: np.ndarray) -> Dataset:
        """The rows ``rows`` (indices or a boolean mask)."""
        index = np.flatnonzero(rows) if rows.dtype == bool else rows
        return Dataset(self.x[index], self.y[index], [self.source[i] for i in index],
                       None if self.weight is None else self.weight[index],
                       None if self.score is None else self.score[index],
                       None if self.men is None else self.men[index])

    def split(self, holdout: float, seed: int) -> tuple[Dataset, Dataset]:
        """A seeded (train, held-out) split."""
        order = np.random.default_rng(seed).permutation(len(self.y))
        cut = int(len(order) * (1 - holdout))
        return self.take(order[:cut]), self.take(order[cut:])

    @staticmethod
    def concat(parts: list[Dataset]) -> Dataset:
        """The rows of ``parts`` one after the other (weights 1 where a part has none)."""
        weighted = any(p.weight is not None for p in parts)
        scored = any(p.score is not None for p in parts)
        return Dataset(np.vstack([p.x for p in parts]), np.concatenate([p.y for p in parts]),
                       [s for p in parts for s in p.source],
                       np.concatenate([p.weight if p.weight is not None else np.ones(len(p)) for p in parts])
                       if weighted else None,
                       np.concatenate([p.score if p.score is not None else np.full(len(p), np.nan) for p in parts])
                       if scored else None,
                       np.concatenate([p.men for p in parts]) if all(p.men is not None for p in parts) else None)

    def blended(self, k: float, share: float) -> Dataset:
        """The rows with each scored row's label blended with its score's win probability.

        A scored row's label becomes ``(1 - share) * label + share * sigmoid(k * score)``
        (``k``: the fitted scale, per centipawn); rows without a score keep theirs.
        """
        if self.score is None or share == 0:
            return self
        has = ~np.isnan(self.score)
        searched = 1.0 / (1.0 + np.exp(-k * np.where(has, self.score, 0.0)))
        y = np.where(has, (1 - share) * self.y + share * searched, self.y)
        return Dataset(self.x, y, self.source, self.weight, self.score, self.men)


def label(wdl: int, *, cursed_as_draws: bool = True) -> float:
    if wdl == 2 or (wdl == 1 and not cursed_as_draws):
        return 1.0
    if wdl == -2 or (wdl == -1 and not cursed_as_draws):
        return 0.0
    return 0.5


def covered_materials(prober: Prober) -> list[str]:
    """Every material the present WDL tables cover, in both colour orientations."""
    names = sorted(prober.files.wdl, key=lambda n: (len(n), n))
    materials = []
    for name in names:
        white, black = name.split("v")
        materials.append(name)
        if white != black:
            materials.append(f"{black}v{white}")
    return materials


def tablebase_positions(prober: Prober, per_material: int, seed: int, *, cursed_as_draws: bool = True,
                        progress: Progress | None = None) -> tuple[list[chess.Board], list[float], list[str]]:
    """Seeded quiet positions of every covered material, labelled by their WDL (side to move)."""
    rng = random.Random(seed)
    boards, labels, sources = [], [], []
    for material in covered_materials(prober):
        found = tries = 0
        while found < per_material and tries < per_material * 50:
            tries += 1
            board = random_position(material, rng)
            if not is_quiet(board):
                continue
            try:
                wdl = prober.probe_wdl(board)
            except NotCoveredError:
                break  # a dependency of this table is missing
            boards.append(board)
            labels.append(label(wdl, cursed_as_draws=cursed_as_draws))
            sources.append(material)
            found += 1
        if progress:
            progress(1)
    return boards, labels, sources


def pgn_positions(path: str, per_game: int, seed: int, *, skip_plies: int = 16
                  ) -> tuple[list[chess.Board], list[float], list[str]]:
    """Quiet positions from the games of a PGN file, labelled by the game's result (side to move).

    :raises PgnError: when the file is not PGN or none of its finished games gives a position (games that
        cannot be replayed are left out).
    """
    rng = random.Random(seed)
    boards, labels = [], []
    games, _ = read_games(path)
    for pgn_game in games:
        game = parse_game(pgn_game.text)
        result = game.headers.get("Result", "*") if game is not None else "*"
        if game is None or result not in RESULT_POINTS:
            continue
        white_score = RESULT_POINTS[result]
        board = game.board()
        candidates = []
        for ply, move in enumerate(game.mainline_moves()):
            board.push(move)
            if ply >= skip_plies and is_quiet(board):
                candidates.append(board.copy(stack=False))
        for board in rng.sample(candidates, min(per_game, len(candidates))):
            boards.append(board)
            labels.append(white_score if board.turn == chess.WHITE else 1.0 - white_score)
    if not boards:
        raise PgnError(f"{path}: no quiet position after ply {skip_plies} in a finished game "
                       f"(1-0, 0-1, 1/2-1/2) among its {len(games)} games")
    return boards, labels, ["pgn"] * len(boards)


def dataset(boards: list[chess.Board], labels: list[float], sources: list[str],
            scores: list[float] | None = None) -> Dataset:
    return Dataset(feature_matrix(boards), np.asarray(labels, dtype=np.float64), list(sources),
                   score=None if scores is None else np.asarray(scores, dtype=np.float64),
                   men=np.array([chess.popcount(b.occupied) for b in boards], dtype=np.int64))


#: Default share of the fit's weight carried by the self-play positions (the tables carry the rest).
SELFPLAY_SHARE = 0.5
#: Default share of a self-play label taken from its deeper search's score (the game's result has the rest).
SCORE_SHARE = 0.5


def source_weights(selfplay: np.ndarray, share: float = SELFPLAY_SHARE) -> np.ndarray:
    """Row weights (mean 1) giving the rows marked ``selfplay`` ``share`` of the total, the others the rest.

    Within a source every position weighs the same; a source without rows leaves all weights 1.
    """
    selfplay = np.asarray(selfplay, dtype=bool)
    n, n_self = len(selfplay), int(selfplay.sum())
    if n_self in (0, n):
        return np.ones(n)
    return np.where(selfplay, share * n / n_self, (1 - share) * n / (n - n_self))
