"""Linear evaluation ``h(s) = w0 + sum_i w_i * f_i(s)`` with endgame features.

Features are defined once, compiled, in :mod:`chess_endgame.engine.core.features`
(which the search core calls directly); this module is their Python face for
python-chess boards. They are from White's view (White's term minus Black's);
:meth:`Evaluator.evaluate` negates them for Black to move and adds the tempo
weight ``w0`` for the side to move, so scores are centipawns from the side to
move: ``round(w0 + (s if White to move else -s))`` with ``s`` the sum, left to
right, of ``w_i * f_i`` for ``i >= 1``. Weights live in one named numpy vector
read from ``data/weights.json`` (rewritten by ``chess-endgame tune``).

Phase ``mg`` runs from 1 (all minor and major pieces on the board) to 0 (bare
kings and pawns); ``eg = 1 - mg``. Features named ``*_eg`` / ``*_mg`` are
scaled by it, so the evaluation stays linear in its weights.
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
from chess_endgame.engine.core.features import FEATURES
from chess_endgame.engine.core.position import bitboards

INDEX = {name: i for i, name in enumerate(FEATURES)}
_N = len(FEATURES)

WEIGHTS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "weights.json")



# -- weights ------------------------------------------------------------------------


class WeightsError(ValueError):
    """A weight file that does not match :data:`FEATURES`."""


@dataclass(frozen=True)
class Weights:
    """The weight vector, indexed like :data:`FEATURES`."""

    vector: np.ndarray
    source: str = "hand"

    def __getitem__(self, name: str) -> float:
        return float(self.vector[INDEX[name]])

    def as_dict(self) -> dict[str, float]:
        return {name: float(v) for name, v in zip(FEATURES, self.vector, strict=True)}


def load_weights(path: str = WEIGHTS_FILE) -> Weights:
    """Read a weight file; :exc:`WeightsError` names any missing or extra feature."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as exc:  # ValueError: not UTF-8 (UnicodeDecodeError), not JSON
        raise WeightsError(f"cannot read weight file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    weights = data.get("weights") if isinstance(data, dict) else None
    if not isinstance(weights, dict):
        raise WeightsError(f"{path}: expected an object with a 'weights' mapping")
    missing = [n for n in FEATURES if n not in weights]
    extra = [n for n in weights if n not in INDEX]
    if missing or extra:
        parts = ([f"missing {', '.join(missing)}"] if missing else []) + \
                ([f"unknown {', '.join(extra)}"] if extra else [])
        raise WeightsError(f"{path}: weight names do not match the features: {'; '.join(parts)}")
    values = [weights[n] for n in FEATURES]
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
        raise WeightsError(f"{path}: every weight must be a finite number")
    return Weights(np.array(values, dtype=np.float64), str(data.get("source", "unknown")))


def save_weights(weights: Weights, out: str | TextIO = WEIGHTS_FILE, *, comment: str = "") -> None:
    """Write a weight file to the path (or open text file) ``out``."""
    data = {"comment": comment or "Weights of the linear evaluation (chess_endgame/engine/evaluation.py).",
            "source": weights.source,
            "weights": {n: round(float(v), 3) for n, v in zip(FEATURES, weights.vector, strict=True)}}
    if not isinstance(out, str):
        json.dump(data, out, indent=2)
        out.write("\n")
        return
    with open(out, "w", encoding="utf-8") as f:
        save_weights(weights, f, comment=comment)


# -- features -----------------------------------------------------------------------

_PAWN_KEYS, _PAWN_TERMS = _core.new_pawn_table()


def features(board: chess.Board) -> list[float]:
    """The feature vector of ``board`` (White's view; ``tempo`` is 1), ordered like :data:`FEATURES`."""
    out = np.empty(_N, dtype=np.float64)
    _core.features_into(bitboards(board), 1 if board.turn else 0, out, _PAWN_KEYS, _PAWN_TERMS)
    return out.tolist()


# -- evaluation ----------------------------------------------------------------------


class Evaluator:
    """Scores positions with a weight vector: centipawns from the side to move."""

    def __init__(self, weights: Weights | None = None) -> None:
        self.weights = weights or load_weights()
        #: The weights as the compiled :func:`.core.features.evaluate` takes them (``vector[0]`` the tempo).
        self.vector = np.ascontiguousarray(self.weights.vector, dtype=np.float64)
        self._scratch = np.empty(_N, dtype=np.float64)
        self.pawn_keys, self.pawn_terms = _core.new_pawn_table()

    def evaluate(self, board: chess.Board) -> int:
        return int(_core.evaluate(bitboards(board), 1 if board.turn else 0, self.vector, self._scratch,
                                  self.pawn_keys, self.pawn_terms))

    def contributions(self, board: chess.Board) -> list[tuple[str, float, float, float]]:
        """(name, feature value from the side to move, weight, contribution) for every feature."""
        f = features(board)
        sign = 1 if board.turn else -1
        rows = []
        for i, name in enumerate(FEATURES):
            value = f[i] if i == 0 else sign * f[i]
            rows.append((name, value + 0.0, float(self.weights.vector[i]), value * float(self.weights.vector[i]) + 0.0))
        return rows


def feature_matrix(boards: Sequence[chess.Board]) -> np.ndarray:
    """Features of many positions from the side to move's view: an (N, len(FEATURES)) array."""
    bbs = np.array([bitboards(b) for b in boards], dtype=np.uint64).reshape(len(boards), 16)
    turns = np.array([1 if b.turn else 0 for b in boards], dtype=np.int64)
    rows = np.empty((len(boards), _N), dtype=np.float64)
    _core.feature_rows(bbs, turns, rows, _PAWN_KEYS, _PAWN_TERMS)
    rows[:, 1:] *= (2.0 * turns - 1.0)[:, None]
    return rows
