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

import fnmatch
import math
from dataclasses import dataclass, field

import numpy as np

from chess_endgame.engine.evaluation import FEATURES, INDEX
from chess_endgame.tuning.data import Dataset, Progress

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


#: A term's middlegame (endgame) weight is learnt only where its middlegame (endgame) part carries at least this
#: share of the term's size in the sample: positions of the tables are almost all endgame, and a middlegame
#: weight fitted there would blow up for real middlegames (the phase scales it to nothing in the sample).
MIN_PART_SHARE = {"mg": 0.3, "eg": 0.05}


def frozen_features(x: np.ndarray, min_support: float = 0.01, sample_weight: np.ndarray | None = None) -> np.ndarray:
    """Features the sample cannot teach, kept at their current weights (a boolean mask).

    Those non-zero in fewer than ``min_support`` of the rows (weighted by ``sample_weight``), a middlegame or
    endgame part smaller than :data:`MIN_PART_SHARE` of its term in the sample, and both parts of the
    :data:`MATING_GUIDES`.
    """
    support = np.average(x != 0, axis=0, weights=sample_weight)
    size = np.average(np.abs(x), axis=0, weights=sample_weight)
    frozen = []
    for i, name in enumerate(FEATURES):
        term, _, part = name.partition(".")
        share = 1.0
        if part:
            other = INDEX[f"{term}.{'eg' if part == 'mg' else 'mg'}"]
            share = size[i] / (size[i] + size[other]) if size[i] + size[other] > 0 else 0.0
        small = bool(part) and share < MIN_PART_SHARE[part]
        frozen.append(bool(support[i] < min_support or term in MATING_GUIDES or small))
    return np.array(frozen, dtype=bool)


def learnt_features(patterns: list[str] | tuple[str, ...]) -> np.ndarray:
    """The features of the terms whose names match one of ``patterns`` (shell-style, ``passer_*``; ``tempo`` is a
    term of one feature), as a boolean mask: a fit that learns only these keeps every other weight.

    :raises ValueError: naming the patterns that match no term.
    """
    terms = [name.partition(".")[0] for name in FEATURES]
    hits = np.array([[fnmatch.fnmatchcase(t, p) for t in terms] for p in patterns], dtype=bool).reshape(-1, len(terms))
    unmatched = [p for p, row in zip(patterns, hits, strict=True) if not row.any()]
    if unmatched:
        raise ValueError(f"no evaluation term matches {', '.join(unmatched)} "
                         "(the terms are the names in a weight file)")
    return hits.any(axis=0)


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
        # Scaled to a unit diagonal (terms range from 0/1 flags to sums of squares), then the least-squares
        # step: terms that add up to others (a piece's table squares and its material) leave the Hessian
        # singular but for the small pull, and the minimum-norm step does not wander along them.
        d = np.sqrt(np.maximum(np.diag(hessian), 1e-300))
        step[free] = np.linalg.lstsq(hessian / np.outer(d, d), gradient / d, rcond=1e-12)[0] / d
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


