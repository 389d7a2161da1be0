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

import multiprocessing
import queue
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

#: Runs of one task whose worker died under it: the first and one retry.
ATTEMPTS = 2


class WorkerLost(Exception):
    """Raised by :meth:`Worker.run` when what it runs died (an engine process): the worker cannot go on.

    The back end closes it, builds a fresh one from the factory (the engine is
    restarted) and hands the task to the runner's retry rule.
    """


class BackendError(Exception):
    """A back end cannot run the batch: Ray is missing, no cluster at the address, a node without the
    tables. The message is one line for the user."""


class Sink(Protocol):
    """What a back end reports to (:func:`run_batch` keeps the books and the retry rule)."""

    #: True once the run is to stop (the caller asked): the back end returns.
    stopped: bool

    def done(self, index: int, result: Any) -> None:
        """Task ``index`` gave ``result``."""

    def lost(self, index: int, why: str) -> bool:
        """The worker running task ``index`` died (``why``); True: run the task again, False: it failed."""
        ...


class Backend(Protocol):
    """Where the workers run."""

    @property
    def slots(self) -> int:
        """Workers at most (one engine each): processes or Ray actors."""
        ...

    def run(self, factory: WorkerFactory, tasks: Sequence[Any], sink: Sink) -> None:
        """Run ``tasks`` until all are done, failed, or ``sink.stopped``; results go to ``sink`` as they arrive.

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
    #: Tasks run a second time because their worker died, and why (the first run's loss).
    retried: dict[int, str] = field(default_factory=dict)
    #: Tasks given up after their second run's worker died too, and why.
    failed: dict[int, str] = field(default_factory=dict)


class LocalProcesses:
    """Workers on this machine: ``jobs=1`` in this process, else a pool of ``jobs`` spawned processes.

    Worker processes ignore SIGINT: Ctrl-C is the parent's, which ends the pool
    and keeps what arrived. A worker that raises :exc:`WorkerLost` is replaced
    in its process.
    """

    def __init__(self, jobs: int = 1) -> None:
        self.jobs = max(1, jobs)

    @property
    def slots(self) -> int:
        """Workers at most (one engine each)."""
        return self.jobs

    def run(self, factory: WorkerFactory, tasks: Sequence[Any], sink: Sink) -> None:
        if self.jobs == 1 or len(tasks) <= 1:
            self._run_here(factory, tasks, sink)
            return
        context = multiprocessing.get_context("spawn")
        arrived: queue.SimpleQueue = queue.SimpleQueue()
        with context.Pool(min(self.jobs, len(tasks)), initializer=_init, initargs=(factory,)) as pool:
            try:
                def submit(index: int) -> None:
                    pool.apply_async(_run, ((index, tasks[index]),), callback=arrived.put,
                                     error_callback=lambda exc: arrived.put(_Raised(exc)))

                for index in range(len(tasks)):
                    submit(index)
                pending = len(tasks)
                while pending and not sink.stopped:
                    try:
                        answer = arrived.get(timeout=0.2)  # a timeout keeps Ctrl-C prompt
                    except queue.Empty:
                        continue
                    if isinstance(answer, _Raised):
                        raise answer.exc
                    index, result = answer
                    if isinstance(result, _Lost):
                        if sink.lost(index, result.why):
                            submit(index)
                            continue
                    else:
                        sink.done(index, result)
                    pending -= 1
            except BaseException:
                pool.terminate()
                raise

    @staticmethod
    def _run_here(factory: WorkerFactory, tasks: Sequence[Any], sink: Sink) -> None:
        worker: Worker | None = factory()
        try:
            for index, task in enumerate(tasks):
                while True:
                    try:
                        sink.done(index, worker.run(task))
                        break
                    except WorkerLost as lost:
                        worker.close()
                        worker = None
                        worker = factory()  # one that cannot be rebuilt ends the run, as at the start
                        if not sink.lost(index, str(lost)):
                            break
                if sink.stopped:
                    return
        finally:
            if worker is not None:
                worker.close()


def choose_backend(jobs: int | None = 1, cluster: str | None = None, *, tables: str | None = None) -> Backend:
    """The back end of ``--jobs`` and ``--cluster``: local processes, or Ray actors on the cluster at
    ``cluster`` (``auto``, ``ray://host:port``, ``host:port``), ``jobs`` of them (None: one per CPU of the
    cluster), checking on each actor that the tables at ``tables`` are there.

    :raises BackendError: in one line when Ray is not installed or no cluster answers at ``cluster``.
    """
    if cluster is None:
        return LocalProcesses(jobs or 1)
    from .cluster import RayActors  # Ray is an optional extra, imported only when asked for

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


# -- worker processes -----------------------------------------------------------------------

@dataclass(frozen=True)
class _Lost:
    """A worker process's answer for a task whose worker died (it has been replaced)."""

    why: str


@dataclass(frozen=True)
class _Raised:
    exc: BaseException


_worker: Worker | None = None
_factory: WorkerFactory | None = None
_init_error: list[BaseException] = []


def _init(factory: WorkerFactory) -> None:
    global _worker, _factory
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's business
    _factory = factory
    try:
        _worker = factory()
    except Exception as exc:  # noqa: BLE001 - reported with the first task this process takes
        _init_error.append(exc)


def _run(indexed: tuple[int, Any]) -> tuple[int, Any]:
    global _worker
    index, task = indexed
    if _worker is None:
        raise _init_error[0] if _init_error else RuntimeError("the worker could not be started")
    try:
        return index, _worker.run(task)
    except WorkerLost as lost:
        _worker.close()
        _worker = None
        assert _factory is not None
        _worker = _factory()  # a worker that cannot be rebuilt ends the run, as at the start
        return index, _Lost(str(lost))
