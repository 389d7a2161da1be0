"""One batch runner: many independent tasks through workers, partial results kept.

A *worker* does the work of one process: it is built once per process by a
picklable *factory* (a module-level class, or a :func:`functools.partial` of
one) and answers tasks one at a time with ``run(task) -> result``; ``close()``
ends it. Results are plain, picklable data.

A *back end* decides where the workers live. :class:`LocalProcesses` runs
them in this process (``jobs=1``) or in a pool of spawned processes; another
back end (Ray actors on a cluster) only has to implement :class:`Backend`.
:func:`run_batch` is the entry point for the suite runner and ``review``: it
keeps every result that arrived when Ctrl-C or a failure stops the run.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Worker(Protocol[T, R]):
    """Answers tasks one at a time in one process; built by a picklable factory."""

    def run(self, task: T) -> R: ...

    def close(self) -> None: ...


#: Builds a worker (called once in each process); must pickle for process back ends.
WorkerFactory = Callable[[], Worker]
#: Sees ``(task index, result)`` as results arrive, in any order; returns False to stop the run.
ResultSink = Callable[[int, Any], bool]


class Backend(Protocol):
    """Where the workers run."""

    def run(self, factory: WorkerFactory, tasks: Sequence[Any], on_result: ResultSink) -> None:
        """Run ``tasks`` until all are done or ``on_result`` returns False.

        Exceptions (Ctrl-C, a worker that cannot be built, a task that raised) go
        to the caller, :func:`run_batch`.
        """
        ...


@dataclass
class BatchResult(Generic[R]):
    """What a run produced: the results of the tasks done, in task order."""

    results: list[R] = field(default_factory=list)
    #: Indexes (into the task list) of :attr:`results`.
    indexes: list[int] = field(default_factory=list)
    #: Ctrl-C stopped the run.
    interrupted: bool = False
    #: The exception that stopped the run early (None when it finished or ``on_result`` stopped it).
    error: BaseException | None = None


class LocalProcesses:
    """Workers on this machine: ``jobs=1`` in this process, else a pool of ``jobs`` spawned processes.

    Worker processes ignore SIGINT: Ctrl-C is the parent's, which ends the pool
    and keeps what arrived.
    """

    def __init__(self, jobs: int = 1) -> None:
        self.jobs = max(1, jobs)

    def run(self, factory: WorkerFactory, tasks: Sequence[Any], on_result: ResultSink) -> None:
        if self.jobs == 1 or len(tasks) <= 1:
            worker = factory()
            try:
                for index, task in enumerate(tasks):
                    if on_result(index, worker.run(task)) is False:
                        return
            finally:
                worker.close()
            return
        context = multiprocessing.get_context("spawn")
        with context.Pool(min(self.jobs, len(tasks)), initializer=_init, initargs=(factory,)) as pool:
            try:
                for index, result in pool.imap_unordered(_run, enumerate(tasks)):
                    if on_result(index, result) is False:
                        break
            except BaseException:
                pool.terminate()
                raise


def run_batch(factory: WorkerFactory, tasks: Sequence[T], *, backend: Backend | None = None,
              on_result: Callable[[R], bool | None] | None = None) -> BatchResult[R]:
    """Run every task through workers built by ``factory``; keep what is done whatever happens.

    ``on_result`` sees each result as it arrives (any order) and may return False to
    stop the run. Ctrl-C sets :attr:`BatchResult.interrupted`; any other exception
    ends the run and is kept in :attr:`BatchResult.error` for the caller to report.
    """
    backend = backend or LocalProcesses()
    done: dict[int, R] = {}

    def take(index: int, result: R) -> bool:
        done[index] = result
        return not (on_result is not None and on_result(result) is False)

    batch: BatchResult[R] = BatchResult()
    try:
        backend.run(factory, tasks, take)
    except KeyboardInterrupt:
        batch.interrupted = True
    except Exception as exc:  # noqa: BLE001 - keep what was done; the caller reports it
        batch.error = exc
    batch.indexes = sorted(done)
    batch.results = [done[i] for i in batch.indexes]
    return batch


# -- worker processes -----------------------------------------------------------------------

_worker: Worker | None = None
_init_error: list[BaseException] = []


def _init(factory: WorkerFactory) -> None:
    global _worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's business
    try:
        _worker = factory()
    except Exception as exc:  # noqa: BLE001 - reported with the first task this process takes
        _init_error.append(exc)


def _run(indexed: tuple[int, Any]) -> tuple[int, Any]:
    index, task = indexed
    if _worker is None:
        raise _init_error[0] if _init_error else RuntimeError("the worker could not be started")
    return index, _worker.run(task)
