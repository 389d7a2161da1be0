"""Learning the evaluation weights from tablebase labels: a logistic model fitted with numpy.

The evaluation is linear, ``h(s) = w . f(s)`` (centipawns, side to move), so
the probability that the side to move wins is modelled as
``P(win) = sigmoid(k * h(s))`` with labels win = 1, draw = 0.5, loss = 0.
``k`` is first fitted for the current weights (a 1-D search), then the weights
by Newton steps on the log-loss with an L2 penalty that pulls them towards
the current (hand) weights: features the sample barely exercises, like the
middlegame terms in 5-piece endings, keep their hand values.

Beyond the tables' five pieces, :mod:`.labels` gives quiet positions of 6 to
20 pieces from self-play games, labelled by the game's result; the fit then
weights each row so that each source carries a set share of the loss
(:func:`source_weights`), and :func:`evaluate_fit` reports held-out figures
by group (tables, self-play by piece count).
"""

from __future__ import annotations

import math
import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field

import chess
import chess.pgn
import numpy as np

from chess_endgame.board import RESULT_POINTS, is_quiet, random_position
from chess_endgame.engine.evaluation import FEATURES, WEIGHTS_FILE, feature_matrix, load_weights
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

    def __len__(self) -> int:
        return len(self.y)

    def take(self, rows: np.ndarray) -> Dataset:
        """The rows ``rows`` (indices or a boolean mask)."""
        index = np.flatnonzero(rows) if rows.dtype == bool else rows
        return Dataset(self.x[index], self.y[index], [self.source[i] for i in index],
                       None if self.weight is None else self.weight[index])

    def split(self, holdout: float, seed: int) -> tuple[Dataset, Dataset]:
        """A seeded (train, held-out) split."""
        order = np.random.default_rng(seed).permutation(len(self.y))
        cut = int(len(order) * (1 - holdout))
        return self.take(order[:cut]), self.take(order[cut:])

    @staticmethod
    def concat(parts: list[Dataset]) -> Dataset:
        """The rows of ``parts`` one after the other (weights 1 where a part has none)."""
        weighted = any(p.weight is not None for p in parts)
        return Dataset(np.vstack([p.x for p in parts]), np.concatenate([p.y for p in parts]),
                       [s for p in parts for s in p.source],
                       np.concatenate([p.weight if p.weight is not None else np.ones(len(p)) for p in parts])
                       if weighted else None)


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


def dataset(boards: list[chess.Board], labels: list[float], sources: list[str]) -> Dataset:
    return Dataset(feature_matrix(boards), np.asarray(labels, dtype=np.float64), list(sources))


# -- the model ------------------------------------------------------------------------------


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # numerically safe


def log_loss(x: np.ndarray, y: np.ndarray, w: np.ndarray, k: float,
             sample_weight: np.ndarray | None = None) -> float:
    """Mean cross-entropy of the soft labels under P(win) = sigmoid(k * x.w) (weighted by ``sample_weight``)."""
    p = np.clip(_sigmoid(k * (x @ w)), 1e-12, 1 - 1e-12)
    return float(-np.average(y * np.log(p) + (1 - y) * np.log(1 - p), weights=sample_weight))


def sign_accuracy(x: np.ndarray, y: np.ndarray, w: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """Share of decisive positions (wins and losses) whose result the sign of h predicts."""
    decisive = y != 0.5
    if not decisive.any():
        return float("nan")
    h = x[decisive] @ w
    return float(np.average((h > 0) == (y[decisive] == 1.0),
                            weights=None if sample_weight is None else sample_weight[decisive]))


def fit_k(x: np.ndarray, y: np.ndarray, w: np.ndarray, lo: float = 1e-4, hi: float = 0.1,
          sample_weight: np.ndarray | None = None) -> float:
    """The scale k that minimises the log-loss of fixed weights (golden-section search on log k)."""
    a, b = math.log(lo), math.log(hi)
    ratio = (math.sqrt(5) - 1) / 2
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    for _ in range(60):
        if log_loss(x, y, w, math.exp(c), sample_weight) < log_loss(x, y, w, math.exp(d), sample_weight):
            b = d
        else:
            a = c
        c, d = b - ratio * (b - a), a + ratio * (b - a)
    return math.exp((a + b) / 2)


#: Features that steer a won ending towards mate (the lone king to the edge, the kings together, KBN's
#: corner): every position where they are non-zero carries the same label, a win, so a fit of results
#: cannot see them help and only drifts them (a drift once left the searcher unable to mate KRvK).
MATING_GUIDES = ("mop_edge", "mop_kings", "kbn_corner")


def frozen_features(x: np.ndarray, min_support: float = 0.01, sample_weight: np.ndarray | None = None) -> np.ndarray:
    """Features the sample cannot teach, kept at their current weights (a boolean mask).

    Those non-zero in fewer than ``min_support`` of the rows (weighted by
    ``sample_weight``), the ``*_mg`` terms, which the middlegame phase
    scales to almost nothing in positions of the tables (fitting them there
    would blow them up for real middlegames), and the :data:`MATING_GUIDES`.
    """
    support = np.average(x != 0, axis=0, weights=sample_weight)
    return np.array([support[i] < min_support or name.endswith("_mg") or name in MATING_GUIDES
                     for i, name in enumerate(FEATURES)])


def fit(x: np.ndarray, y: np.ndarray, w0: np.ndarray, k: float, *, l2: float = 1e-6, steps: int = 50,
        frozen: np.ndarray | None = None, progress: Progress | None = None,
        sample_weight: np.ndarray | None = None) -> np.ndarray:
    """Weights minimising ``log-loss + l2 * sum_i var(f_i) * (w_i - w0_i)^2``, by damped Newton steps.

    Scaling each weight's penalty by its feature's variance makes ``l2`` mean the
    same for material counts and for mobility sums: it is paid per centipawn of
    typical contribution moved away from the hand weights. With
    ``sample_weight`` the log-loss and the variances are weighted means.
    """
    s = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    n = float(np.sum(s))
    mean = (s @ x) / n
    scale = np.maximum((s @ (x - mean) ** 2) / n, 1e-6)
    scale[0] = 1.0
    penalty = l2 * scale
    w = w0.astype(np.float64).copy()
    free = ~frozen if frozen is not None else np.ones(len(w0), dtype=bool)

    def objective(v: np.ndarray) -> float:
        return log_loss(x, y, v, k, sample_weight) + float(np.sum(penalty * (v - w0) ** 2))

    current = objective(w)
    for _ in range(steps):
        p = _sigmoid(k * (x @ w))
        gradient = (k * (x.T @ (s * (p - y))) / n + 2 * penalty * (w - w0))[free]
        hessian = ((k * k) * (x.T * (s * p * (1 - p))) @ x / n + np.diag(2 * penalty))[np.ix_(free, free)]
        step = np.zeros_like(w)
        try:
            step[free] = np.linalg.solve(hessian, gradient)
        except np.linalg.LinAlgError:
            step[free] = np.linalg.lstsq(hessian, gradient, rcond=None)[0]
        t = 1.0
        while t > 1e-4:
            candidate = w - t * step
            value = objective(candidate)
            if value <= current:
                break
            t /= 2
        else:
            break
        w, previous, current = candidate, current, value
        if progress:
            progress(1)
        if previous - current < 1e-10:
            break
    return w


@dataclass
class GroupFigures:
    """Held-out figures of one group of positions (e.g. self-play positions of 6-12 pieces)."""

    name: str
    size: int
    hand_loss: float
    tuned_loss: float
    hand_sign: float
    tuned_sign: float

    @property
    def better(self) -> bool:
        return self.tuned_loss < self.hand_loss


@dataclass
class Report:
    k: float
    hand_train: float
    hand_holdout: float
    tuned_train: float
    tuned_holdout: float
    hand_sign: float
    tuned_sign: float
    train_size: int
    holdout_size: int
    #: Held-out figures by group (by source and piece count); empty without self-play labels.
    groups: list[GroupFigures] = field(default_factory=list)

    @property
    def better(self) -> bool:
        return self.tuned_holdout < self.hand_holdout


#: The self-play match a tuned weight set must not lose before it is installed.
MIN_MATCH_GAMES = 100


def reasons_not_to_install(report: Report, match_score: float | None, match_games: int) -> list[str]:
    """Why tuned weights must not replace the shipped ones (empty: they may)."""
    reasons = []
    if not report.better:
        reasons.append("held-out log-loss is not better")
    reasons += [f"held-out log-loss is not better on {g.name}" for g in report.groups if g.size and not g.better]
    if match_score is None or match_games < MIN_MATCH_GAMES:
        reasons.append(f"no self-play match of {MIN_MATCH_GAMES} games or more")
    elif match_score < 0.5:
        reasons.append(f"the tuned weights lost the match ({match_score:.3f})")
    return reasons


def install(path: str) -> str:
    """Make the weight file at ``path`` the shipped one; returns where it went."""
    load_weights(path)  # refuse a file the evaluation could not load
    shutil.copyfile(path, WEIGHTS_FILE)
    return WEIGHTS_FILE


def group_figures(name: str, data: Dataset, hand: np.ndarray, tuned: np.ndarray, k: float) -> GroupFigures:
    """Unweighted held-out figures of one group (nan when it is empty)."""
    if not len(data):
        return GroupFigures(name, 0, *[float("nan")] * 4)
    return GroupFigures(name, len(data), log_loss(data.x, data.y, hand, k), log_loss(data.x, data.y, tuned, k),
                        sign_accuracy(data.x, data.y, hand), sign_accuracy(data.x, data.y, tuned))


def evaluate_fit(train: Dataset, holdout: Dataset, hand: np.ndarray, tuned: np.ndarray, k: float,
                 groups: dict[str, Dataset] | None = None) -> Report:
    """Train and held-out figures (weighted as in the fit), and unweighted ones for each held-out group."""
    tw, hw = train.weight, holdout.weight
    return Report(k, log_loss(train.x, train.y, hand, k, tw), log_loss(holdout.x, holdout.y, hand, k, hw),
                  log_loss(train.x, train.y, tuned, k, tw), log_loss(holdout.x, holdout.y, tuned, k, hw),
                  sign_accuracy(holdout.x, holdout.y, hand, hw), sign_accuracy(holdout.x, holdout.y, tuned, hw),
                  len(train), len(holdout),
                  [group_figures(name, data, hand, tuned, k) for name, data in (groups or {}).items()])


#: Default share of the fit's weight carried by the self-play positions (the tables carry the rest).
SELFPLAY_SHARE = 0.5


def source_weights(selfplay: np.ndarray, share: float = SELFPLAY_SHARE) -> np.ndarray:
    """Row weights (mean 1) giving the rows marked ``selfplay`` ``share`` of the total, the others the rest.

    Within a source every position weighs the same; a source without rows leaves all weights 1.
    """
    selfplay = np.asarray(selfplay, dtype=bool)
    n, n_self = len(selfplay), int(selfplay.sum())
    if n_self in (0, n):
        return np.ones(n)
    return np.where(selfplay, share * n / n_self, (1 - share) * n / (n - n_self))

