"""The tuner: the fitter on synthetic data, labels, the quiet filter, the command, the match."""

from __future__ import annotations

from pathlib import Path

import chess
import numpy as np
import pytest
from click.testing import CliRunner

from chess_endgame import tune
from chess_endgame.evaluation import FEATURES, load_weights
from chess_endgame.match import play_match, starting_positions
from chess_endgame.tablebase import Prober
from chess_endgame_cli.main import cli


def _synthetic(seed: int, n: int = 40000) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    rng = np.random.default_rng(seed)
    x = np.column_stack([np.ones(n), rng.integers(-2, 3, n), rng.normal(0, 3, n), rng.integers(0, 2, n),
                         rng.normal(0, 10, n)])
    w_true = np.array([15.0, 300.0, 40.0, -120.0, 8.0])
    k = 0.004
    p = 1 / (1 + np.exp(-k * (x @ w_true)))
    y = (rng.random(n) < p).astype(float)  # sampled wins and losses
    return x, y, w_true, k


def test_fitter_recovers_known_weights() -> None:
    x, y, w_true, k = _synthetic(1)
    fitted = tune.fit(x, y, np.zeros(5), k, l2=0.0, steps=100)
    assert np.allclose(fitted, w_true, rtol=0.1, atol=6.0), fitted
    # And k, for fixed true weights.
    assert tune.fit_k(x, y, w_true) == pytest.approx(k, rel=0.1)


def test_soft_labels_and_frozen_weights() -> None:
    x, _, w_true, k = _synthetic(2)
    y = 1 / (1 + np.exp(-k * (x @ w_true)))  # exact probabilities as soft labels
    start = np.array([0.0, 250.0, 0.0, 0.0, 0.0])
    frozen = np.array([False, False, False, True, False])
    fitted = tune.fit(x, y, start, k, l2=0.0, frozen=frozen, steps=100)
    assert fitted[3] == 0.0 and abs(fitted[1] - 300) < 40
    assert tune.log_loss(x, y, fitted, k) < tune.log_loss(x, y, start, k)
    # A strong pull keeps the weights at the start.
    pulled = tune.fit(x, y, start, k, l2=10.0)
    assert np.allclose(pulled, start, atol=1.0)


def test_labels_and_quiet_positions() -> None:
    assert [tune.label(w) for w in (2, 1, 0, -1, -2)] == [1.0, 0.5, 0.5, 0.5, 0.0]
    assert [tune.label(w, cursed_as_draws=False) for w in (1, -1)] == [1.0, 0.0]
    assert tune.is_quiet(chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1"))
    assert not tune.is_quiet(chess.Board("4k3/8/8/8/8/8/r7/R3K3 w - - 0 1"))  # a capture pending
    assert not tune.is_quiet(chess.Board("4k3/8/8/8/8/8/8/4K2r w - - 0 1"))   # in check


def test_accuracy_counts_only_decisive_positions() -> None:
    x = np.array([[1.0, 1.0], [1.0, -1.0], [1.0, 1.0]])
    y = np.array([1.0, 0.0, 0.5])
    assert tune.sign_accuracy(x, y, np.array([0.0, 100.0])) == 1.0
    assert tune.sign_accuracy(x, y, np.array([0.0, -100.0])) == 0.0


def test_tune_command_writes_loadable_weights(syzygy_path: str, tmp_path: Path) -> None:
    out = tmp_path / "w.json"
    result = CliRunner().invoke(cli, ["tune", "--per-material", "20", "--output", str(out)])
    assert result.exit_code == 0, result.stderr
    assert "held-out log-loss" in result.stdout and "tuned weights" in result.stdout
    weights = load_weights(str(out))
    assert list(weights.as_dict()) == list(FEATURES) and weights.source.startswith("tuned")
    refused = CliRunner().invoke(cli, ["tune", "--install", "--match-games", "10"])
    assert refused.exit_code == 2 and "--match-games 100" in refused.stderr


def test_match_plays_both_colours(prober: Prober) -> None:
    starts = starting_positions(3, seed=4)
    assert all(6 <= chess.popcount(b.occupied) <= 10 and b.is_valid() for b in starts)
    hand = load_weights()
    result = play_match(hand, hand, games=4, nodes=300, seed=4, prober=prober, max_plies=20)
    assert result.games == 4 and result.wins + result.draws + result.losses == 4
    # Every start is played twice, the first weight set taking White once and Black once.
    by_start: dict[str, list[bool]] = {}
    for fen, first_white, _ in result.record:
        by_start.setdefault(fen, []).append(first_white)
    assert list(by_start.values()) == [[True, False], [True, False]]
    assert [fen for fen in by_start] == [b.fen() for b in starting_positions(2, seed=4)]
