"""The batch runner's retry rule, on local processes: a worker that dies is rebuilt, its task run once more."""

from __future__ import annotations

import functools
import os
import signal
import threading
import time
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


class Killed(Flaky):
    """Like :class:`Flaky`, but its process is killed (SIGKILL, as the out-of-memory killer does) on task t the
    first ``deaths[t]`` times."""

    def run(self, task: int) -> int:
        runs = self.tally / str(task)
        with open(runs, "a") as f:
            f.write("x")
        if len(runs.read_text()) <= self.deaths.get(task, 0):
            time.sleep(0.3)  # so that other tasks are under way too
            os.kill(os.getpid(), signal.SIGKILL)
        return task * task


def test_a_worker_process_that_dies_loses_its_task_and_the_run_goes_on(tmp_path: Path) -> None:
    """The pool replaces a killed process but never answers for its task: the run had waited for ever."""
    factory = functools.partial(Killed, str(tmp_path), {1: 1, 3: 2})
    done: list = []
    thread = threading.Thread(target=lambda: done.append(run_batch(factory, list(range(5)), backend=LocalProcesses(2),
                                                                   failed=lambda task, why: -task)), daemon=True)
    thread.start()
    thread.join(120)
    assert done, "the run waited for the killed process's answer"
    batch = done[0]
    assert batch.error is None and not batch.interrupted
    assert batch.indexes == list(range(5)) and batch.results == [0, 1, 4, -3, 16]
    assert set(batch.retried) == {1, 3} and "worker process" in batch.retried[1] and "died" in batch.retried[1]
    assert set(batch.failed) == {3}
    assert (tmp_path / "1").read_text() == "xx" and (tmp_path / "3").read_text() == "xx"
