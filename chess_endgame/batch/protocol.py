"""What the batch runner and its back ends agree on: workers, back ends, sinks, results and the faults they raise."""

from __future__ import annotations

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
