"""One tuning run, from labelled positions to tuned weights and their figures: the table positions (and PGN
positions) split into train and held-out sets, the self-play positions split by game and weighted by source,
then the scale ``k`` and the weights fitted (:mod:`.fit`). The command line only parses, shows progress and
prints what comes back."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

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
    """What one run gives: the tuned weight vector (every bucket's, one after the other), its scale and figures,
    and how the data was split."""

    tuned: np.ndarray
    k: float
    #: Features kept at the start weights (too little support, or mating guides).
    frozen: np.ndarray
    report: Report
    #: The start weights in the tuned weights' buckets (what ``tuned`` is compared with, weight for weight).
    start: Weights
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


def margins(data: Dataset, weights: Weights) -> np.ndarray:
    """Each row's evaluation (``x . w``, centipawns from the side to move, before rounding) by the weights of its
    bucket of men."""
    if not weights.buckets:
        return data.x @ weights.vector
    if data.men is None:
        raise ValueError("bucketed weights need each row's men")
    bucket = weights.buckets_of(data.men)
    out = np.empty(len(data))
    for i, row in enumerate(weights.rows):
        out[bucket == i] = data.x[bucket == i] @ row
    return out


def _compared(data: Dataset, start: Weights, tuned: Weights) -> Dataset:
    """``data`` with two columns, the start and the tuned evaluation, which the weights (1, 0) and (0, 1) read:
    :func:`.fit.evaluate_fit`'s figures of bucketed weights."""
    return replace(data, x=np.column_stack([margins(data, start), margins(data, tuned)]))


def bucketed_start(start: Weights, buckets: tuple[int, ...] | None, learn_buckets: tuple[str, ...] = ()) -> Weights:
    """The start weights in ``buckets`` (None: their own).

    :raises WeightsError: for buckets that are not ascending men counts.
    :raises ValueError: naming the ``learn_buckets`` that are not among them.
    """
    if buckets is not None:
        start = start.rebucketed(buckets)
    unknown = [b for b in learn_buckets if b not in start.ranges()]
    if unknown:
        raise ValueError(f"--learn-buckets: no bucket of men {', '.join(unknown)} (the buckets: "
                         f"{' '.join(start.ranges())})")
    return start


def fit_weights(prober: Prober, start: Weights, *, per_material: int, seed: int, holdout: float, l2: float,
                cursed_as_draws: bool = True, buckets: tuple[int, ...] | None = None,
                learn_buckets: tuple[str, ...] = (),
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

    ``buckets``: fit a set of weights for each bucket of men (:class:`.Weights`), each starting from the start
    weights for its men (None: the start weights' buckets). Each set is fitted on the positions of its bucket
    alone (the scale ``k`` is shared), which is the fit of all of them at once: a position's loss depends on its
    own bucket's weights only. ``learn_buckets``: the buckets to fit, by their men (``"13-32"``, as
    :meth:`.Weights.ranges` names them); the others keep their start weights (empty: every bucket).

    ``learn``: patterns of the terms to learn (:func:`.fit.learnt_features`); the others keep their start
    weights (empty: every term). ``sampling`` is called once per material sampled, ``fitting`` once per Newton step
    of each bucket.
    :raises TooFewPositions: when fewer than :data:`MIN_POSITIONS` positions could be labelled, or no weight could
        be fitted (every bucket asked for below that many, or only mating guides in ``learn``).
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
    start = bucketed_start(start, buckets, learn_buckets)
    k = fit_k(margins(train, start)[:, None], train.y, np.ones(1), sample_weight=train.weight)
    train, held = train.blended(k, score_share), held.blended(k, score_share)
    bucket = start.buckets_of(train.men)
    tuned, frozen = start.rows.copy(), np.ones(start.rows.shape, dtype=bool)
    thin = []
    for i in range(len(start.rows)):
        rows = bucket == i
        if learn_buckets and start.ranges()[i] not in learn_buckets:
            continue  # not asked for: its start weights stay
        if rows.sum() < MIN_POSITIONS:
            thin.append(f"{start.ranges()[i]} men: {rows.sum()}")
            continue  # too few positions to teach this bucket anything: its start weights stay
        weight = None if train.weight is None else train.weight[rows]
        frozen[i] = frozen_features(train.x[rows], sample_weight=weight)
        if learn:
            frozen[i] |= ~learnt_features(learn)
        tuned[i] = fit(train.x[rows], train.y[rows], start.rows[i], k, l2=l2, frozen=frozen[i], progress=fitting,
                       sample_weight=weight)
    if frozen.all():
        asked = sum(1 for i in range(len(start.rows)) if not learn_buckets or start.ranges()[i] in learn_buckets)
        why = (f"fewer than {MIN_POSITIONS} training positions in the buckets asked for ({', '.join(thin)})"
               if len(thin) == asked else "the terms of --learn are mating guides or too rarely non-zero in the sample")
        raise TooFewPositions(f"nothing to fit: {why}; the start weights stand")
    result = Weights(tuned.reshape(-1), start.source, start.buckets)
    report = evaluate_fit(_compared(train, start, result), _compared(held, start, result), np.array([1.0, 0.0]),
                          np.array([0.0, 1.0]), k, {name: _compared(g, start, result) for name, g in groups.items()})
    return FitRun(result.vector, k, frozen.reshape(-1), report, start,
                  sum(1 for s in train.source if s == "selfplay"), sum(1 for s in held.source if s == "selfplay"),
                  held_games, groups)
