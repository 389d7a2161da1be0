"""Sequential probability ratio test (SPRT) over game pairs, as fishtest, OpenBench and fastchess run it.

Each game pair (one start played with both colours) gives the first engine 0, 0.5, 1, 1.5 or 2 points; the
five counts are the pentanomial. The test decides between H0: "the first engine is elo0 stronger" and H1: "it is
elo1 stronger" (elo0 < elo1), passing at elo0 at most ``alpha`` of the time and failing at elo1 at most ``beta``.

The log-likelihood ratio is Michel Van den Bergh's generalized one, as fishtest's ``LLRcalc`` computes it:
``LLR = N * sum p_i log(q1_i / q0_i)``, with ``p`` the observed frequencies of the N pairs and ``q0``, ``q1``
the most likely distributions under H0 and H1. For logistic Elo the hypothesis fixes the expected score
(support_MLE_multinomial.pdf, Proposition 1.1), for normalized Elo the t-value ``(mu - 1/2) / sigma``
(normalized_elo_practical.pdf, Section 4.1; both at https://www.cantate.be/Fishtest/).

Normalized Elo ("nElo") is ``(s - 1/2) / sigma * 800 / ln 10``, ``s`` the score per game and ``sigma`` its
standard deviation per game, ``sqrt(2)`` times that of the pair score: a difference in nElo takes the same
number of games to resolve at any draw rate.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from chess_endgame.play.elo import Z95, pentanomial

#: Normalized Elo per unit of t-value per game (fishtest's ``nelo_divided_by_nt``).
NELO_PER_T = 800 / math.log(10)
#: Stands in for an empty pentanomial cell while the LLR is computed (fishtest's ``regularize``).
EPSILON = 1e-3
MODELS = ("normalized", "logistic")
#: The pair score (points per game) of each pentanomial cell.
CELL_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
_KEYS = ("elo0", "elo1", "alpha", "beta", "model")


#: The largest Elo difference a bound may state (a score of 99.7% in logistic Elo; the LLR's arithmetic overflows
#: long before the largest floats).
MAX_ELO = 1000


def score(elo_diff: float) -> float:
    """Expected points per game of the side that is ``elo_diff`` logistic Elo stronger."""
    return 1 / (1 + 10 ** (-elo_diff / 400))


@dataclass(frozen=True)
class SprtBounds:
    """H0: the first engine is ``elo0`` stronger; H1: ``elo1``; in normalized or logistic Elo."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "normalized"

    def __post_init__(self) -> None:
        for key in _KEYS[:4]:
            value = getattr(self, key)
            if not math.isfinite(value):
                raise ValueError(f"SPRT: {key} must be a finite number, got {value}")
            if key in ("alpha", "beta") and not 0 < value < 0.5:
                raise ValueError(f"SPRT: {key} must be in (0, 0.5), got {value:g}")
            if key in ("elo0", "elo1") and abs(value) > MAX_ELO:
                raise ValueError(f"SPRT: {key} must be within -{MAX_ELO}..{MAX_ELO}, got {value:g}")
        if self.elo1 <= self.elo0:
            raise ValueError(f"SPRT: elo1 ({self.elo1:g}) must be greater than elo0 ({self.elo0:g})")
        if self.model not in MODELS:
            raise ValueError(f"SPRT: unknown model {self.model!r} (expected normalized or logistic)")

    @property
    def lower(self) -> float:
        """LLR at or below which H0 is accepted (the test fails): ``log(beta / (1 - alpha))``."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """LLR at or above which H1 is accepted (the test passes): ``log((1 - beta) / alpha)``."""
        return math.log((1 - self.beta) / self.alpha)

    def __str__(self) -> str:
        return f"elo0={self.elo0:g} elo1={self.elo1:g} alpha={self.alpha:g} beta={self.beta:g} model={self.model}"

    @classmethod
    def parse(cls, text: str | Sequence[str]) -> SprtBounds:
        """Bounds from ``"elo0=0 elo1=5 alpha=0.05 beta=0.05 model=normalized"`` or its tokens (split at spaces or
        commas), in any order; alpha, beta and model are optional. Raises ValueError with a one-line message."""
        tokens = [text] if isinstance(text, str) else list(text)
        values: dict[str, float | str] = {}
        for token in " ".join(tokens).replace(",", " ").split():
            key, sep, value = token.partition("=")
            if not sep or not value:
                raise ValueError(f"SPRT: expected key=value, got {token!r}")
            if key not in _KEYS:
                raise ValueError(f"SPRT: unknown key {key!r} (expected {', '.join(_KEYS)})")
            if key in values:
                raise ValueError(f"SPRT: {key} is given twice")
            try:
                values[key] = value if key == "model" else float(value)
            except ValueError:
                raise ValueError(f"SPRT: {key} must be a number, got {value!r}") from None
        if "elo0" not in values or "elo1" not in values:
            raise ValueError("SPRT: elo0 and elo1 are required, e.g. 'elo0=0 elo1=5'")
        return cls(**values)  # type: ignore[arg-type]


@dataclass
class Pentanomial:
    """Counts of game pairs in which the first engine scored 0, 0.5, 1, 1.5 and 2 points."""

    counts: tuple[int, ...] = (0, 0, 0, 0, 0)

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    def add(self, pair_points: float) -> None:
        """Count a pair in which the first engine scored ``pair_points`` (0, 0.5, 1, 1.5 or 2)."""
        if pair_points not in (0, 0.5, 1, 1.5, 2):
            raise ValueError(f"pair points must be 0, 0.5, 1, 1.5 or 2, got {pair_points!r}")
        self.counts = tuple(c + (cell == 2 * pair_points) for cell, c in enumerate(self.counts))

    @staticmethod
    def pair_points(first: float, second: float) -> float:
        """Points of the first engine over a pair, from its points (1, 0.5 or 0) in each of the two games."""
        for result in (first, second):
            if result not in (0, 0.5, 1):
                raise ValueError(f"a game result must be 1, 0.5 or 0 points, got {result!r}")
        return first + second


def _secular(p: Sequence[float], phi: Sequence[float], x: float = 0.0) -> float:
    """The root x of ``sum p_i phi_i / (1 + x phi_i) = 0`` with every ``1 + x phi_i > 0``: the maximum of the
    concave ``sum p_i log(1 + x phi_i)``, by Newton steps from ``x`` (or 0) halved until they climb."""
    if not all(x * f > -1 for f in phi):
        x = 0.0
    height = sum(pi * math.log1p(x * f) for pi, f in zip(p, phi, strict=True))
    for _ in range(100):
        terms = [pi * f / (1 + x * f) for pi, f in zip(p, phi, strict=True)]
        step = sum(terms) / sum(t * t / pi for t, pi in zip(terms, p, strict=True))
        if abs(step) <= 1e-12 * (1 + abs(x)):  # Newton converges quadratically: this step lands on the root
            return x + step
        while True:
            new = x + step
            if all(new * f > -1 for f in phi):
                new_height = sum(pi * math.log1p(new * f) for pi, f in zip(p, phi, strict=True))
                if new_height >= height:
                    break
            step /= 2
            if abs(step) <= 1e-12 * (1 + abs(x)):  # no step climbs: x is the top, to rounding
                return x
        x, height = new, new_height
    return x


def _mle_score(p: Sequence[float], s: float) -> list[float]:
    """The pair-score distribution nearest ``p`` (maximum likelihood) whose expected score is ``s``."""
    phi = [a - s for a in CELL_SCORES]
    x = _secular(p, phi)
    return [pi / (1 + x * f) for pi, f in zip(p, phi, strict=True)]


def _mle_t(p: Sequence[float], t: float) -> list[float]:
    """The pair-score distribution nearest ``p`` whose t-value ``(mu - 1/2) / sigma`` is ``t``.

    With ``u = a - 1/2`` the constraint is ``E[u] = k sqrt(E[u^2])``, ``k = t / sqrt(1 + t^2)``. At the maximum,
    ``q`` is also the nearest distribution with ``E[phi_r(u)] = 0`` for ``phi_r(u) = u - k (u^2 + r) / (2 sqrt(r))``
    (the constraint linearized at ``r = E_q[u^2]``), so only ``r`` is sought: the root of ``E_q(r)[u^2] - r``,
    which changes sign between ``r`` where ``phi_r(1/2)`` vanishes and ``r = 1/4``."""
    if t < 0:
        return _mle_t(p[::-1], -t)[::-1]
    if t == 0:
        return _mle_score(p, 0.5)
    k = t / math.sqrt(1 + t * t)
    u = [a - 0.5 for a in CELL_SCORES]
    lo, hi = ((1 - math.sqrt(1 - k * k)) / (2 * k)) ** 2, 0.25
    r = min(max(sum(pi * v * v for pi, v in zip(p, u, strict=True)), lo + (hi - lo) / 4), hi)
    x, last = 0.0, None
    for _ in range(200):  # the fixed point r <- E_q(r)[u^2], then secant steps; bisection if they leave the bracket
        phi = [v - k * (v * v + r) / (2 * math.sqrt(r)) for v in u]
        x = _secular(p, phi, x)
        q = [pi / (1 + x * f) for pi, f in zip(p, phi, strict=True)]
        g = sum(qi * v * v for qi, v in zip(q, u, strict=True)) - r
        lo, hi = (r, hi) if g > 0 else (lo, r)
        if abs(g) < 1e-15 or hi - lo < 1e-15:
            break
        guess = r + g if last is None or last[1] == g else r - g * (r - last[0]) / (g - last[1])
        last, r = (r, g), guess if lo < guess < hi else (lo + hi) / 2
    return q


def llr(counts: Sequence[int], bounds: SprtBounds) -> float:
    """Generalized log-likelihood ratio of H1 over H0 for pentanomial ``counts`` (pairs in which the first
    engine scored 0, 0.5, 1, 1.5, 2 points); positive favours H1. Empty cells count ``EPSILON`` pairs."""
    if len(counts) != 5 or any(c < 0 for c in counts):
        raise ValueError(f"pentanomial counts must be five non-negative numbers, got {tuple(counts)}")
    if sum(counts) == 0:
        return 0.0
    cells = [c if c > 0 else EPSILON for c in counts]
    n = sum(cells)
    p = [c / n for c in cells]
    if bounds.model == "logistic":
        q0, q1 = (_mle_score(p, score(e)) for e in (bounds.elo0, bounds.elo1))
    else:  # the t-value of the pair score is sqrt(2) times that per game
        q0, q1 = (_mle_t(p, math.sqrt(2) * e / NELO_PER_T) for e in (bounds.elo0, bounds.elo1))
    return n * sum(pi * math.log(b / a) for pi, a, b in zip(p, q0, q1, strict=True))


def normalized_elo(counts: Sequence[int]) -> tuple[float, float]:
    """(normalized Elo, 95% margin) of the first engine from pentanomial counts; the margin is the delta
    method's for the t-value, ``var(t) = (1 - t skew + t^2 (kurtosis excess + 2) / 4) / pairs``."""
    n = sum(counts)
    mu = sum(c * a for c, a in zip(counts, CELL_SCORES, strict=True)) / max(n, 1)
    var, m3, m4 = (sum(c * (a - mu) ** k for c, a in zip(counts, CELL_SCORES, strict=True)) / max(n, 1)
                   for k in (2, 3, 4))
    if n < 2 or var <= 0:
        return math.nan, math.inf
    t = (mu - 0.5) / math.sqrt(var)
    var_t = max(0.0, 1 - t * m3 / var ** 1.5 + t * t * (m4 / var ** 2 - 1) / 4) / n
    return t / math.sqrt(2) * NELO_PER_T, Z95 * math.sqrt(var_t / 2) * NELO_PER_T


@dataclass(frozen=True)
class SprtState:
    """Where a test stands. ``decision``: "H1" (passed), "H0" (failed) or None (continue). Elo figures are the
    first engine's: logistic Elo and its 95% margin over pairs (``elo.pentanomial``), normalized Elo and its."""

    llr: float
    lower: float
    upper: float
    pairs: int
    counts: tuple[int, ...]
    decision: str | None
    elo: float
    elo_margin: float
    nelo: float
    nelo_margin: float


class Sprt:
    """An SPRT fed one game pair at a time. The first crossing of a bound decides, and the decision stands
    when pairs still in play are added afterwards (they move the counts and the LLR only)."""

    def __init__(self, bounds: SprtBounds) -> None:
        self.bounds = bounds
        self.pentanomial = Pentanomial()
        self.llr = 0.0
        self.decision: str | None = None

    @property
    def done(self) -> bool:
        return self.decision is not None

    def add_pair(self, points: float) -> None:
        """Count a pair in which the first engine scored ``points`` (0, 0.5, 1, 1.5 or 2)."""
        self.pentanomial.add(points)
        self.llr = llr(self.pentanomial.counts, self.bounds)
        if self.decision is None:
            self.decision = "H1" if self.llr >= self.bounds.upper else "H0" if self.llr <= self.bounds.lower else None

    def state(self) -> SprtState:
        """The state, with Elo estimates (their cost grows with the number of pairs)."""
        counts = self.pentanomial.counts
        value, margin = pentanomial([cell / 2 for cell in range(5) for _ in range(counts[cell])])
        return SprtState(self.llr, self.bounds.lower, self.bounds.upper, self.pentanomial.pairs, counts,
                         self.decision, value, margin, *normalized_elo(counts))


def simulate(elo_diff: float, draw_ratio: float, bounds: SprtBounds, rng: random.Random,
             max_pairs: int = 100_000) -> str | None:
    """Run an SPRT on simulated pairs until it decides: "H1", "H0", or None after ``max_pairs`` pairs. The
    first engine is ``elo_diff`` logistic Elo stronger; each game is drawn with probability ``draw_ratio``,
    independently of its pair, and won or lost otherwise so that its expected score is ``score(elo_diff)``."""
    s = score(elo_diff)
    win, loss = s - draw_ratio / 2, 1 - s - draw_ratio / 2
    if not 0 <= draw_ratio < 1 or win < 0 or loss < 0:
        raise ValueError(f"no game gives a score of {s:.4f} with a draw ratio of {draw_ratio:g}")
    sprt = Sprt(bounds)
    for _ in range(max_pairs):
        games = [rng.random() for _ in range(2)]
        sprt.add_pair(sum(1.0 if g < win else 0.0 if g < win + loss else 0.5 for g in games))
        if sprt.done:
            return sprt.decision
    return None
