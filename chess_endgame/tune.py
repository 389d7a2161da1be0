"""Learning the evaluation weights from tablebase labels: a logistic model fitted with numpy.

The evaluation is linear, ``h(s) = w . f(s)`` (centipawns, side to move), so
the probability that the side to move wins is modelled as
``P(win) = sigmoid(k * h(s))`` with labels win = 1, draw = 0.5, loss = 0.
``k`` is first fitted for the current weights (a 1-D search), then the weights
by Newton steps on the log-loss with an L2 penalty that pulls them towards
the current (hand) weights: features the sample barely exercises, like the
middlegame terms in 5-piece endings, keep their hand values.
"""

from __future__ import annotations

import math
import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass

import chess
import chess.pgn
import numpy as np

from .evaluation import FEATURES, WEIGHTS_FILE, feature_matrix, load_weights
from .sampling import random_position
from .tablebase import NotCoveredError, Prober

Progress = Callable[[int], None]


@dataclass
class Dataset:
    """Feature rows (side to move's view) and labels (1 win, 0.5 draw, 0 loss for the side to move)."""

    x: np.ndarray
    y: np.ndarray
    #: Where each row came from: a material name or "pgn".
    source: list[str]

    def __len__(self) -> int:
        return len(self.y)

    def split(self, holdout: float, seed: int) -> tuple[Dataset, Dataset]:
        """A seeded (train, held-out) split."""
        order = np.random.default_rng(seed).permutation(len(self.y))
        cut = int(len(order) * (1 - holdout))
        a, b = order[:cut], order[cut:]
        return (Dataset(self.x[a], self.y[a], [self.source[i] for i in a]),
                Dataset(self.x[b], self.y[b], [self.source[i] for i in b]))


def is_quiet(board: chess.Board) -> bool:
    """No check and no capture or promotion pending for the side to move: the static eval is fair."""
    if board.is_check():
        return False
    return not any(board.is_capture(m) or m.promotion for m in board.legal_moves)


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


class PgnError(ValueError):
    """A PGN file that cannot be read, or that gives no labelled position."""


class _GameBuilder(chess.pgn.GameBuilder):
    """python-chess's game builder without logging: a game's errors stay in ``game.errors``."""

    def handle_error(self, error: Exception) -> None:
        self.game.errors.append(error)


def pgn_positions(path: str, per_game: int, seed: int, *, skip_plies: int = 16
                  ) -> tuple[list[chess.Board], list[float], list[str]]:
    """Quiet positions from the games of a PGN file, labelled by the game's result (side to move).

    :raises PgnError: when the file is not PGN or none of its finished games gives a position.
    """
    rng = random.Random(seed)
    boards, labels = [], []
    games = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        while True:
            try:
                game = chess.pgn.read_game(f, Visitor=_GameBuilder)
            except Exception as exc:  # noqa: BLE001 - python-chess's parser fails in many ways on non-PGN text
                raise PgnError(f"{path} is not a readable PGN file (game {games + 1}: "
                               f"{type(exc).__name__}: {exc})") from None
            if game is None:
                break
            games += 1
            result = game.headers.get("Result", "*")
            if result not in ("1-0", "0-1", "1/2-1/2"):
                continue
            white_score = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[result]
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
                       f"(1-0, 0-1, 1/2-1/2) among its {games} games")
    return boards, labels, ["pgn"] * len(boards)


def dataset(boards: list[chess.Board], labels: list[float], sources: list[str]) -> Dataset:
    return Dataset(feature_matrix(boards), np.asarray(labels, dtype=np.float64), list(sources))


# -- the model ------------------------------------------------------------------------------


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # numerically safe


def log_loss(x: np.ndarray, y: np.ndarray, w: np.ndarray, k: float) -> float:
    """Mean cross-entropy of the soft labels under P(win) = sigmoid(k * x.w)."""
    p = np.clip(_sigmoid(k * (x @ w)), 1e-12, 1 - 1e-12)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def sign_accuracy(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """Share of decisive positions (wins and losses) whose result the sign of h predicts."""
    decisive = y != 0.5
    if not decisive.any():
        return float("nan")
    h = x[decisive] @ w
    return float(np.mean((h > 0) == (y[decisive] == 1.0)))


def fit_k(x: np.ndarray, y: np.ndarray, w: np.ndarray, lo: float = 1e-4, hi: float = 0.1) -> float:
    """The scale k that minimises the log-loss of fixed weights (golden-section search on log k)."""
    a, b = math.log(lo), math.log(hi)
    ratio = (math.sqrt(5) - 1) / 2
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    for _ in range(60):
        if log_loss(x, y, w, math.exp(c)) < log_loss(x, y, w, math.exp(d)):
            b = d
        else:
            a = c
        c, d = b - ratio * (b - a), a + ratio * (b - a)
    return math.exp((a + b) / 2)


def frozen_features(x: np.ndarray, min_support: float = 0.01) -> np.ndarray:
    """Features the sample cannot teach, kept at their current weights (a boolean mask).

    Those non-zero in fewer than ``min_support`` of the rows, and the ``*_mg``
    terms, which the middlegame phase scales to almost nothing in positions of
    the tables (fitting them there would blow them up for real middlegames).
    """
    support = np.mean(x != 0, axis=0)
    return np.array([support[i] < min_support or name.endswith("_mg") for i, name in enumerate(FEATURES)])


def fit(x: np.ndarray, y: np.ndarray, w0: np.ndarray, k: float, *, l2: float = 1e-6, steps: int = 50,
        frozen: np.ndarray | None = None, progress: Progress | None = None) -> np.ndarray:
    """Weights minimising ``log-loss + l2 * sum_i var(f_i) * (w_i - w0_i)^2``, by damped Newton steps.

    Scaling each weight's penalty by its feature's variance makes ``l2`` mean the
    same for material counts and for mobility sums: it is paid per centipawn of
    typical contribution moved away from the hand weights.
    """
    n = len(y)
    scale = np.maximum(np.var(x, axis=0), 1e-6)
    scale[0] = 1.0
    penalty = l2 * scale
    w = w0.astype(np.float64).copy()
    free = ~frozen if frozen is not None else np.ones(len(w0), dtype=bool)

    def objective(v: np.ndarray) -> float:
        return log_loss(x, y, v, k) + float(np.sum(penalty * (v - w0) ** 2))

    current = objective(w)
    for _ in range(steps):
        p = _sigmoid(k * (x @ w))
        gradient = (k * (x.T @ (p - y)) / n + 2 * penalty * (w - w0))[free]
        hessian = ((k * k) * (x.T * (p * (1 - p))) @ x / n + np.diag(2 * penalty))[np.ix_(free, free)]
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


def evaluate_fit(train: Dataset, holdout: Dataset, hand: np.ndarray, tuned: np.ndarray, k: float) -> Report:
    return Report(k, log_loss(train.x, train.y, hand, k), log_loss(holdout.x, holdout.y, hand, k),
                  log_loss(train.x, train.y, tuned, k), log_loss(holdout.x, holdout.y, tuned, k),
                  sign_accuracy(holdout.x, holdout.y, hand), sign_accuracy(holdout.x, holdout.y, tuned),
                  len(train), len(holdout))

