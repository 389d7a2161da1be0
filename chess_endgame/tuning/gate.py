"""The gate before an install: tuned weights replace the shipped ones only when they are better on held-out data and
do not lose a match."""

from __future__ import annotations

import shutil

from chess_endgame.engine.evaluation import WEIGHTS_FILE, load_weights
from chess_endgame.tuning.fit import Report

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
