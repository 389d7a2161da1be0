"""One batch runner: many independent tasks through workers, partial results kept.

A *worker* does the work of one process: it is built once per process by a
picklable *factory* (a module-level class, or a :func:`functools.partial` of
one) and answers tasks one at a time with ``run(task) -> result``; ``close()``
ends it. Results are plain, picklable data.

A *back end* decides where the workers live. :class:`LocalProcesses` runs
them in this process (``jobs=1``) or in a pool of spawned processes;
:class:`~.cluster.RayActors` runs them in Ray actors on a cluster (one actor
an engine slot). :func:`choose_backend` picks one from the commands' ``--jobs`` and
``--cluster``. :func:`run_batch` is the entry point for the suite runner,
``review`` and the tuner's self-play labelling: it keeps every result that
arrived when Ctrl-C or a failure stops the run.

Faults are the runner's, not the commands': a worker whose engine died raises
:exc:`WorkerLost`, and an actor (or its node) may die under a task; either
way the back end replaces the worker and the task runs once more, then it is
given up as failed (:attr:`BatchResult.retried`, :attr:`BatchResult.failed`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic

from chess_endgame.batch.local import LocalProcesses
from chess_endgame.batch.protocol import ATTEMPTS, Backend, BatchResult, R, T, WorkerFactory


def choose_backend(jobs: int | None = 1, cluster: str | None = None, *, tables: str | None = None) -> Backend:
    """The back end of ``--jobs`` and ``--cluster``: local processes, or Ray actors on the cluster at
    ``cluster`` (``auto``, ``ray://host:port``, ``host:port``), ``jobs`` of them (None: one per CPU of the
    cluster), checking on each actor that the tables at ``tables`` are there.

    :raises BackendError: in one line when Ray is not installed or no cluster answers at ``cluster``.
    """
    if cluster is None:
        return LocalProcesses(jobs or 1)
    from chess_endgame.batch.cluster import RayActors

    return RayActors(cluster, jobs, tables=tables)


class _Books(Generic[R]):
    """The :class:`Sink` of :func:`run_batch`: results by index, the retry rule, the caller's callback."""

    def __init__(self, tasks: Sequence[Any], on_result: Callable[[R], bool | None] | None,
                 failed: Callable[[Any, str], R] | None) -> None:
        self.tasks, self.on_result, self.make_failed = tasks, on_result, failed
        self.results: dict[int, R] = {}
        self.runs: dict[int, int] = {}
        self.retried: dict[int, str] = {}
        self.failed: dict[int, str] = {}
        self.stopped = False

    def done(self, index: int, result: R) -> None:
        self.results[index] = result
        if self.on_result is not None and self.on_result(result) is False:
            self.stopped = True

    def lost(self, index: int, why: str) -> bool:
        self.runs[index] = self.runs.get(index, 0) + 1
        if self.runs[index] < ATTEMPTS:
            self.retried[index] = why
            return True
        self.failed[index] = why
        if self.make_failed is not None:
            self.done(index, self.make_failed(self.tasks[index], why))
        return False


def run_batch(factory: WorkerFactory, tasks: Sequence[T], *, backend: Backend | None = None,
              on_result: Callable[[R], bool | None] | None = None,
              failed: Callable[[T, str], R] | None = None) -> BatchResult[R]:
    """Run every task through workers built by ``factory``; keep what is done whatever happens.

    ``on_result`` sees each result as it arrives (any order) and may return False to
    stop the run. A task whose worker died twice is given up: ``failed(task, why)``
    makes its stand-in result (without it the task has none). Ctrl-C sets
    :attr:`BatchResult.interrupted`; any other exception ends the run and is kept in
    :attr:`BatchResult.error` for the caller to report.
    """
    backend = backend or LocalProcesses()
    books: _Books[R] = _Books(tasks, on_result, failed)
    batch: BatchResult[R] = BatchResult()
    try:
        backend.run(factory, tasks, books)
    except KeyboardInterrupt:
        batch.interrupted = True
    except Exception as exc:  # noqa: BLE001 - keep what was done; the caller reports it
        batch.error = exc
    batch.indexes = sorted(books.results)
    batch.results = [books.results[i] for i in batch.indexes]
    batch.retried, batch.failed = dict(books.retried), dict(books.failed)
    return batch




