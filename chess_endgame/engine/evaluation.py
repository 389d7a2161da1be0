"""The tapered linear evaluation's Python face: weights, features of python-chess boards, and explanations.

The terms are defined once, compiled, in :mod:`chess_endgame.engine.core.features` (which the search core
calls directly). Each term has a middlegame and an endgame weight; the phase ``mg`` (1 with all minor and
major pieces, 0 with none) blends them, and an endgame scale factor (1, or less in drawish endings)
multiplies the endgame part, so the evaluation stays linear in its weights::

    h = w_tempo + sign * sum_t (w_mg[t] * mg + w_eg[t] * (1 - mg) * scale) * term_t

in centipawns from the side to move (``sign`` +1 for White to move, -1 for Black; the terms are from White's
view). The weights live in one named numpy vector, ordered like :data:`FEATURES`, read from
``data/weights.json`` (rewritten by ``chess-endgame tune``): version 3, one ``[mg, eg]`` pair a term. A weight
file may hold several such sets, each for a range of men on the board (its *buckets*, as an NNUE's output
buckets): a position is scored with the set of its count of men, so a rook or a passed pawn may be worth
more with 8 men than with 16, and the evaluation stays linear in every set's weights.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

import chess
import numpy as np

from chess_endgame.engine.core import features as _core
from chess_endgame.engine.core.features import FAMILIES, FEATURES, MAX_MEN, N_TERMS, TERMS
from chess_endgame.engine.core.position import bitboards

INDEX = {name: i for i, name in enumerate(FEATURES)}
_N = len(FEATURES)
#: The weight file format this build writes; it reads this one and version 2 (a single set of weights).
WEIGHTS_VERSION = 3

WEIGHTS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "weights.json")


# -- weights ------------------------------------------------------------------------


class WeightsError(ValueError):
    """A weight file that does not match :data:`FEATURES`."""


@dataclass(frozen=True)
class Weights:
    """The weights: for each bucket of men on the board, a vector indexed like :data:`FEATURES` (the tempo,
    then each term's ``.mg`` and ``.eg``), the buckets' vectors one after the other in ``vector``.

    ``buckets`` are the buckets' upper bounds in men (kings and pawns counted), ascending: ``(8, 12)`` means
    three sets, for 2-8 men, 9-12 and 13-32; ``()`` (the default) one set for every position.
    """

    vector: np.ndarray
    source: str = "hand"
    buckets: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        b = self.buckets
        if any(not 2 <= m < MAX_MEN for m in b) or list(b) != sorted(set(b)):
            raise WeightsError(f"buckets must be ascending men counts from 2 to {MAX_MEN - 1}, not {list(b)!r}")
        if len(self.vector) != (len(b) + 1) * _N:
            raise WeightsError(f"{len(b) + 1} bucket(s) need {(len(b) + 1) * _N} weights, not {len(self.vector)}")

    @property
    def rows(self) -> np.ndarray:
        """The weights as one row (indexed like :data:`FEATURES`) a bucket."""
        return self.vector.reshape(len(self.buckets) + 1, _N)

    def bucket_of(self, men: int) -> int:
        """The bucket of a position with ``men`` men on the board (kings and pawns counted)."""
        return int(self.buckets_of(np.array([men]))[0])

    def buckets_of(self, men: np.ndarray) -> np.ndarray:
        """:meth:`bucket_of` of every count in ``men``."""
        return np.searchsorted(self.buckets, men, side="left")

    def ranges(self) -> list[str]:
        """Each bucket's men, as ``"2-8"``."""
        edges = (1,) + self.buckets + (MAX_MEN,)
        return [f"{edges[i] + 1}-{edges[i + 1]}" for i in range(len(edges) - 1)]

    def by_men(self) -> np.ndarray:
        """The weights of each count of men, 0 to :data:`MAX_MEN` (a row each, in the feature vector's order;
        :func:`.core.features.planar` lays them out as the compiled evaluation reads them)."""
        return np.ascontiguousarray(self.rows[[self.bucket_of(m) for m in range(MAX_MEN + 1)]], dtype=np.float64)

    def rebucketed(self, buckets: tuple[int, ...]) -> Weights:
        """The same evaluation with the buckets ``buckets``: each new bucket starts from the weights of the
        old bucket that holds its fewest men."""
        edges = (1,) + tuple(buckets)
        rows = [self.rows[self.bucket_of(edges[i] + 1)] for i in range(len(buckets) + 1)]
        return Weights(np.concatenate(rows), self.source, tuple(buckets))

    def names(self) -> list[str]:
        """A name for each weight of ``vector``: the feature's, with its bucket's men where there are buckets
        (``"pawn.eg [2-8 men]"``)."""
        if not self.buckets:
            return list(FEATURES)
        return [f"{name} [{men} men]" for men in self.ranges() for name in FEATURES]

    def __getitem__(self, name: str) -> float:
        """A weight by feature name, from the first bucket (the fewest men; the only one without buckets)."""
        return float(self.vector[INDEX[name]])

    def as_dict(self) -> dict[str, float]:
        return {name: float(v) for name, v in zip(self.names(), self.vector, strict=True)}


#: The largest weight (centipawns, either sign) a weight file may give: far beyond any fitted weight, and small
#: enough that no evaluation overflows the integer it is rounded to.
MAX_WEIGHT = 1_000_000


def _finite(value: float) -> bool:
    """A weight a float holds: finite, at most :data:`MAX_WEIGHT` in size (an integer of 400 digits is not)."""
    try:
        return math.isfinite(value) and abs(value) <= MAX_WEIGHT
    except OverflowError:
        return False


def _weight_set(path: str, weights: object) -> list[float]:
    """One set of weights (``{"tempo": t, term: [mg, eg], ...}``) as a vector; :exc:`WeightsError` names any
    missing or extra term."""
    if not isinstance(weights, dict):
        raise WeightsError(f"{path}: expected a 'weights' mapping of term names to [middlegame, endgame] weights")
    names = ("tempo",) + TERMS
    missing = [n for n in names if n not in weights]
    extra = [n for n in weights if n not in names and n != "men"]
    if missing or extra:
        parts = ([f"missing {', '.join(missing[:8])}{' ...' if len(missing) > 8 else ''}"] if missing else []) + \
                ([f"unknown {', '.join(extra[:8])}{' ...' if len(extra) > 8 else ''}"] if extra else [])
        raise WeightsError(f"{path}: weight names do not match the terms: {'; '.join(parts)}")
    values = [weights["tempo"]]
    for term in TERMS:
        pair = weights[term]
        if not (isinstance(pair, list) and len(pair) == 2):
            raise WeightsError(f"{path}: {term} needs [middlegame, endgame] weights, not {pair!r}")
        values += pair
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and _finite(v) for v in values):
        raise WeightsError(f"{path}: every weight must be a finite number of at most {MAX_WEIGHT:,} centipawns "
                           "either way")
    return values


def load_weights(path: str = WEIGHTS_FILE) -> Weights:
    """Read a weight file (version 3, or 2: one set); :exc:`WeightsError` names a wrong version, bad buckets and any
    missing or extra term."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as exc:  # ValueError: not UTF-8 (UnicodeDecodeError), not JSON
        raise WeightsError(f"cannot read weight file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    weights = data.get("weights") if isinstance(data, dict) else None
    if not isinstance(weights, (dict, list)):
        raise WeightsError(f"{path}: expected an object with a 'weights' mapping")
    version = data.get("version", 1)
    if version not in (2, WEIGHTS_VERSION) or isinstance(version, bool) or not isinstance(version, int):
        raise WeightsError(f"{path}: a weight file of version {version!r}; this build reads versions 2 and "
                           f"{WEIGHTS_VERSION} (the number; a middlegame and an endgame weight for each of its "
                           f"{N_TERMS} terms): fit one with chess-endgame tune")
    buckets = data.get("buckets", []) if version == WEIGHTS_VERSION else []
    sets = weights if isinstance(weights, list) else [weights]
    if not (isinstance(buckets, list) and all(isinstance(m, int) and not isinstance(m, bool) for m in buckets)):
        raise WeightsError(f"{path}: 'buckets' must be a list of men counts, not {buckets!r}")
    if len(sets) != len(buckets) + 1 or (version == 2 and isinstance(weights, list)):
        raise WeightsError(f"{path}: {len(buckets)} bucket bound(s) need {len(buckets) + 1} set(s) of weights, "
                           f"not {len(sets)}")
    values = [v for one in sets for v in _weight_set(path, one)]
    loaded = Weights(np.array(values, dtype=np.float64), str(data.get("source", "unknown")), tuple(buckets))
    labelled = [(one.get("men"), men) for one, men in zip(sets, loaded.ranges(), strict=True) if "men" in one]
    if any(said != men for said, men in labelled):
        raise WeightsError(f"{path}: the sets are labelled for {', '.join(str(s) for s, _ in labelled)} men, but the "
                           f"buckets {buckets!r} make them {', '.join(loaded.ranges())}")
    return loaded


def save_weights(weights: Weights, out: str | TextIO = WEIGHTS_FILE, *, comment: str = "") -> None:
    """Write a weight file (version 3: the buckets' upper bounds in men, and a set of weights a bucket: the tempo,
    then ``[mg, eg]`` per term) to the path or open text file."""
    sets = [{"men": men, "tempo": round(float(v[0]), 3),
             **{t: [round(float(v[1 + 2 * k]), 3), round(float(v[2 + 2 * k]), 3)] for k, t in enumerate(TERMS)}}
            for men, v in zip(weights.ranges(), weights.rows, strict=True)]
    data = {"comment": comment or "Weights of the tapered linear evaluation (chess_endgame/engine/evaluation.py).",
            "version": WEIGHTS_VERSION, "source": weights.source, "buckets": list(weights.buckets), "weights": sets}
    if not isinstance(out, str):
        out.write(_dump(data))
        return
    with open(out, "w", encoding="utf-8") as f:
        f.write(_dump(data))


def _dump(data: dict) -> str:
    """JSON with one term a line (a pair stays on its line)."""
    head = {k: v for k, v in data.items() if k != "weights"}
    lines = [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    sets = ["    {\n" + ",\n".join(f"      {json.dumps(k)}: {json.dumps(v)}" for k, v in one.items()) + "\n    }"
            for one in data["weights"]]
    return "{\n" + "\n".join(lines) + '\n  "weights": [\n' + ",\n".join(sets) + "\n  ]\n}\n"


# -- features -----------------------------------------------------------------------

_PAWN_KEYS, _PAWN_TERMS = _core.new_pawn_table()


def features(board: chess.Board) -> list[float]:
    """The feature vector of ``board`` (White's view; ``tempo`` is 1), ordered like :data:`FEATURES`."""
    out = np.empty(_N, dtype=np.float64)
    _core.features_into(bitboards(board), 1 if board.turn else 0, out, _PAWN_KEYS, _PAWN_TERMS,
                        np.zeros(_core.MAPS_SIZE, dtype=np.uint64))
    return out.tolist()


def terms(board: chess.Board) -> tuple[list[float], float, float]:
    """(every term of :data:`TERMS`, White's view; ``mg``; the endgame scale factor) of ``board``."""
    raw = np.empty(N_TERMS, dtype=np.float64)
    bb = bitboards(board)
    maps = np.zeros(_core.MAPS_SIZE, dtype=np.uint64)
    _core.terms_into(bb, 1 if board.turn else 0, raw, _PAWN_KEYS, _PAWN_TERMS, maps)
    mg, scale = _core.phase_and_scale(bb)
    return raw.tolist(), float(mg), float(scale)


# -- evaluation ----------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """What one family of terms adds, in centipawns from the side to move."""

    family: str
    mg: float           # the middlegame weights' part, already times ``mg``
    eg: float           # the endgame weights' part, already times ``(1 - mg) * scale``
    terms: list[tuple[str, float, float, float]]  # (term, value from the side to move, w_mg, w_eg), non-zero

    @property
    def total(self) -> float:
        return self.mg + self.eg


@dataclass(frozen=True)
class Explanation:
    """An evaluation taken apart: the phase, the scale factor, the tempo and each family's parts."""

    total: int
    mg: float
    scale: float
    tempo: float
    parts: list[Part]
    #: The men the weights used are for (``"9-10"``), or "" where the weights have a single set.
    bucket: str = ""


class Evaluator:
    """Scores positions with a weight vector: centipawns from the side to move."""

    def __init__(self, weights: Weights | None = None) -> None:
        self.weights = weights or load_weights()
        self._by_men = self.weights.by_men()
        #: The weights as the compiled :func:`.core.features.evaluate` takes them (:func:`.core.features.planar`):
        #: a row for each count of men (``matrix[men, 0]`` the tempo).
        self.matrix = _core.planar(self._by_men)
        self._scratch = np.empty(_core.SCRATCH_SIZE, dtype=np.float64)
        self.pawn_keys, self.pawn_terms = _core.new_pawn_table()

    def evaluate(self, board: chess.Board) -> int:
        return int(_core.evaluate(bitboards(board), 1 if board.turn else 0, self.matrix, self._scratch,
                                  self.pawn_keys, self.pawn_terms))

    def explain(self, board: chess.Board) -> Explanation:
        """The evaluation by family of terms, each with its middlegame and endgame part; the parts and the
        tempo add up to :meth:`evaluate` (before its rounding)."""
        raw, mg, scale = terms(board)
        sign = 1 if board.turn else -1
        eg = (1.0 - mg) * scale
        men = len(board.piece_map())
        v = self._by_men[men]
        parts = []
        k = 0
        for family, names in FAMILIES:
            m = e = 0.0
            rows = []
            for name in names:
                value = sign * raw[k]
                w_mg, w_eg = float(v[1 + 2 * k]), float(v[2 + 2 * k])
                m += w_mg * value * mg
                e += w_eg * value * eg
                if value:
                    rows.append((name, value + 0.0, w_mg, w_eg))
                k += 1
            parts.append(Part(family, m + 0.0, e + 0.0, rows))
        w = self.weights
        bucket = w.ranges()[w.bucket_of(men)] if w.buckets else ""
        return Explanation(self.evaluate(board), mg, scale, float(v[0]), parts, bucket)


def feature_matrix(boards: Sequence[chess.Board]) -> np.ndarray:
    """Features of many positions from the side to move's view: an (N, len(FEATURES)) array."""
    bbs = np.array([bitboards(b) for b in boards], dtype=np.uint64).reshape(len(boards), 16)
    turns = np.array([1 if b.turn else 0 for b in boards], dtype=np.int64)
    rows = np.empty((len(boards), _N), dtype=np.float64)
    _core.feature_rows(bbs, turns, rows, _PAWN_KEYS, _PAWN_TERMS)
    rows[:, 1:] *= (2.0 * turns - 1.0)[:, None]
    return rows
