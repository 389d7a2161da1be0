"""The batch runner's retry rule, on local processes: a worker that dies is rebuilt, its task run once more."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from chess_endgame.batch.local import LocalProcesses
from chess_endgame.batch.protocol import WorkerLost
from chess_endgame.batch.runner import run_batch


class Flaky:
    """Squares numbers; dies (WorkerLost) on task t the first ``deaths[t]`` times any worker runs it."""

    def __init__(self, tally: str, deaths: dict[int, int]) -> None:
        self.tally, self.deaths = Path(tally), deaths

    def run(self, task: int) -> int:
        runs = self.tally / str(task)
        with open(runs, "a") as f:
            f.write("x")
        if len(runs.read_text()) <= self.deaths.get(task, 0):
            raise WorkerLost(f"engine died on {task}")
        return task * task

    def close(self) -> None:
        pass


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_lost_worker_is_rebuilt_and_its_task_run_once_more(jobs: int, tmp_path: Path) -> None:
    factory = functools.partial(Flaky, str(tmp_path), {2: 1, 4: 2})
    batch = run_batch(factory, list(range(6)), backend=LocalProcesses(jobs), failed=lambda task, why: -task)
    assert batch.error is None and not batch.interrupted
    assert batch.indexes == list(range(6)) and batch.results == [0, 1, 4, 9, -4, 25]
    assert batch.retried == {2: "engine died on 2", 4: "engine died on 4"}
    assert batch.failed == {4: "engine died on 4"}
    assert (tmp_path / "2").read_text() == "xx" and (tmp_path / "4").read_text() == "xx"  # never a third run
