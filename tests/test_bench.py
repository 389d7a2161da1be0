"""chess_endgame.bench: the one percentile every benchmark reports."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chess_endgame.bench.common import percentile


@pytest.mark.parametrize("q", [0, 1, 25, 50, 90, 99, 99.9, 100])
def test_percentile_equals_numpy_s_linear_interpolation(q: float) -> None:
    values = [3.0, 1.0, 4.0, 1.5, 9.0, 2.6, 5.3, 5.8, 9.7, 9.3, 2.4]
    assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)))


def test_p99_9_differs_from_the_maximum_and_edge_cases() -> None:
    values = list(range(1001))
    assert percentile(values, 99.9) == pytest.approx(999.0) and percentile(values, 100) == 1000
    assert percentile([7.0], 99) == 7.0 and math.isnan(percentile([], 50))
    with pytest.raises(ValueError, match="from 0 to 100"):
        percentile(values, 101)
