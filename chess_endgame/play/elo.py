"""Elo difference of a match and its 95% error margin, from game results or game pairs.

The score ``s`` (points per game of the first engine) maps to an Elo
difference by the logistic model: ``elo(s) = -400 * log10(1 / s - 1)``.

The margin is that of cutechess-cli (trinomial): the per-game results
(1, 1/2, 0) have variance ``var = (W (1-s)^2 + D (1/2-s)^2 + L s^2) / N``;
the score's standard error is ``sqrt(var / N)``; the 95% interval of the
score, ``s -+ 1.96 * se``, is mapped through ``elo`` and the margin is half
its width. The pentanomial margin does the same over game *pairs* (one start
played with both colours; pair score 0, 1/4, 1/2, 3/4 or 1): pairs absorb
the advantage a start gives one colour, so it is the fairer figure when
every start is played twice (as fishtest reports it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: The two-sided 95% quantile of the normal distribution.
Z95 = 1.959963984540054


def elo(score: float) -> float:
    """Elo difference for a score (points per game); +-inf at 1 and 0."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400 * math.log10(1 / score - 1) + 0.0  # + 0.0: an even score is 0, not -0


def _margin(mean: float, variance: float, n: int) -> float:
    """Half the width, in Elo, of the 95% interval of a mean score ``mean`` of ``n`` samples."""
    if n < 2 or variance <= 0:
        return math.inf if n < 2 or mean in (0.0, 1.0) else 0.0
    se = math.sqrt(variance / n)
    return (elo(mean + Z95 * se) - elo(mean - Z95 * se)) / 2


@dataclass(frozen=True)
class EloEstimate:
    score: float
    elo: float
    #: 95% margin from per-game results (trinomial).
    margin: float
    #: 95% margin from game pairs (pentanomial); None without complete pairs.
    pair_margin: float | None
    pairs: int
    #: Likelihood of superiority: P(the first engine is stronger), from wins and losses.
    los: float


def trinomial(wins: int, draws: int, losses: int) -> tuple[float, float]:
    """(Elo difference, 95% margin) from wins, draws and losses of the first engine."""
    n = wins + draws + losses
    if n == 0:
        return math.nan, math.inf
    s = (wins + 0.5 * draws) / n
    variance = (wins * (1 - s) ** 2 + draws * (0.5 - s) ** 2 + losses * s ** 2) / n
    return elo(s), _margin(s, variance, n)


def pentanomial(pair_scores: Sequence[float]) -> tuple[float, float]:
    """(Elo difference, 95% margin) from the points of game pairs (0, 0.5, 1, 1.5 or 2 each)."""
    n = len(pair_scores)
    if n == 0:
        return math.nan, math.inf
    x = [p / 2 for p in pair_scores]
    s = sum(x) / n
    variance = sum((v - s) ** 2 for v in x) / n
    return elo(s), _margin(s, variance, n)


def likelihood_of_superiority(wins: int, losses: int) -> float:
    """P(the first engine is stronger): the normal approximation cutechess prints as LOS."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1 + math.erf((wins - losses) / math.sqrt(2 * (wins + losses))))


def estimate(wins: int, draws: int, losses: int, pair_scores: Sequence[float] = ()) -> EloEstimate:
    n = wins + draws + losses
    value, margin = trinomial(wins, draws, losses)
    pair_margin = pentanomial(pair_scores)[1] if pair_scores else None
    return EloEstimate((wins + 0.5 * draws) / n if n else math.nan, value, margin, pair_margin, len(pair_scores),
                       likelihood_of_superiority(wins, losses))
