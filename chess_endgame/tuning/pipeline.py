"""One tuning run, from labelled positions to tuned weights and their figures: the table positions (and PGN
positions) split into train and held-out sets, the self-play positions split by game and weighted by source,
then the scale ``k`` and the weights fitted (:mod:`.fit`). The command line only parses, shows progress and
prints what comes back."""

from __future__ import annotations

from dataclasses import dataclass, field

import chess
import numpy as np

from chess_endgame.engine.evaluation import Weights
from chess_endgame.tablebase.prober import Prober
from chess_endgame.tuning.data import Dataset, Progress, dataset, source_weights, tablebase_positions
from chess_endgame.tuning.fit import Report, evaluate_fit, fit, fit_k, frozen_features, learnt_features
from chess_endgame.tuning.labels import LabelSet, split_by_game

#: Held-out groups of the self-play positions, by piece count.
PIECE_GROUPS = (("6-12", 6, 12), ("13+", 13, 32))
#: Fewer labelled table (and PGN) positions than this teach nothing.
MIN_POSITIONS = 100


class TooFewPositions(ValueError):
    """The tables (and PGN games) gave too few labelled positions to fit anything."""


@dataclass
class FitRun:
    """What one run gives: the tuned weight vector, its scale and figures, and how the data was split."""

    tuned: np.ndarray
    k: float
    #: Features kept at the start weights (too little support, or mating guides).
    frozen: np.ndarray
    report: Report
    #: Self-play positions in the train and held-out sets, and the games held out.
    selfplay_train: int = 0
    selfplay_held: int = 0
    held_games: int = 0
    groups: dict[str, Dataset] = field(default_factory=dict)


def with_selfplay(train: Dataset, held: Dataset, played: LabelSet, holdout: float, seed: int, share: float,
                  table_name: str) -> tuple[Dataset, Dataset, dict[str, Dataset], int]:
    """Add the self-play positions (split by game) to the table ones, each source weighted to ``share``.

    Returns the train and held-out sets, the held-out groups and the number of held-out games.
    """
    data = dataset(played.boards, played.labels, ["selfplay"] * len(played), played.scores)
    out = split_by_game(played.games, holdout, seed)
    counts = played.piece_counts()
    groups = {table_name: held}
    for name, lo, hi in PIECE_GROUPS:
        groups[f"self-play, {name} pieces"] = data.take(out & (counts >= lo) & (counts <= hi))
    train, held = Dataset.concat([train, data.take(~out)]), Dataset.concat([held, data.take(out)])
    for part in (train, held):
        part.weight = source_weights(np.array([s == "selfplay" for s in part.source]), share)
    return train, held, groups, len(set(np.asarray(played.games)[out].tolist()))


def fit_weights(prober: Prober, start: Weights, *, per_material: int, seed: int, holdout: float, l2: float,
                cursed_as_draws: bool = True,
                extra: tuple[list[chess.Board], list[float], list[str]] = ([], [], []),
                played: LabelSet | None = None, selfplay_share: float = 0.5, score_share: float = 0.0,
                table_name: str = "tables", learn: tuple[str, ...] = (), sampling: Progress | None = None,
                fitting: Progress | None = None) -> FitRun:
    """Sample ``per_material`` positions of every material the tables cover (plus ``extra``, e.g. PGN
    positions, and ``played`` self-play labels), fit from ``start`` and measure on the held-out part.

    The scale ``k`` is fitted to the results (and WDL) alone; then each self-play position that has a deeper
    search's score gets its label blended with that score's win probability, ``score_share`` of it
    (:meth:`Dataset.blended`), and the weights are fitted and measured on the blended labels. The held-out
    groups by piece count keep the games' results, so that runs with and without scores compare.

    ``learn``: patterns of the terms to learn (:func:`.fit.learnt_features`); the others keep their start
    weights (empty: every term). ``sampling`` is called once per material sampled, ``fitting`` once per Newton step.
    :raises TooFewPositions: when fewer than :data:`MIN_POSITIONS` positions could be labelled.
    :raises ValueError: when a pattern of ``learn`` matches no term.
    """
    boards, labels, sources = tablebase_positions(prober, per_material, seed, cursed_as_draws=cursed_as_draws,
                                                  progress=sampling)
    boards, labels, sources = boards + extra[0], labels + extra[1], sources + extra[2]
    if len(boards) < MIN_POSITIONS:
        raise TooFewPositions(f"only {len(boards)} quiet positions could be labelled; more tables are needed")
    train, held = dataset(boards, labels, sources).split(holdout, seed)
    groups: dict[str, Dataset] = {}
    held_games = 0
    if played is not None and len(played):
        train, held, groups, held_games = with_selfplay(train, held, played, holdout, seed, selfplay_share,
                                                        table_name)
    k = fit_k(train.x, train.y, start.vector, sample_weight=train.weight)
    train, held = train.blended(k, score_share), held.blended(k, score_share)
    frozen = frozen_features(train.x, sample_weight=train.weight)
    if learn:
        frozen |= ~learnt_features(learn)
    tuned = fit(train.x, train.y, start.vector, k, l2=l2, frozen=frozen, progress=fitting,
                sample_weight=train.weight)
    report = evaluate_fit(train, held, start.vector, tuned, k, groups)
    return FitRun(tuned, k, frozen, report, sum(1 for s in train.source if s == "selfplay"),
                  sum(1 for s in held.source if s == "selfplay"), held_games, groups)
