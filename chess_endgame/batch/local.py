"""The local back end of the batch runner: this process (one job) or a pool of spawned processes."""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from chess_endgame.batch.protocol import Sink, Worker, WorkerFactory, WorkerLost

# -- worker processes -----------------------------------------------------------------------
_worker: Worker | None = None
_factory: WorkerFactory | None = None
_init_error: list[BaseException] = []
_started: Any = None  # the parent's queue of (task index, attempt, process id) as each task starts


class LocalProcesses:
    """Workers on this machine: ``jobs=1`` in this process, else a pool of ``jobs`` spawned processes.

    Worker processes ignore SIGINT: Ctrl-C is the parent's, which ends the pool
    and keeps what arrived. A worker that raises :exc:`WorkerLost` is replaced
    in its process; a worker process that dies (killed, out of memory) is
    replaced by the pool, and its task is lost as if its worker had raised
    :exc:`WorkerLost` (the pool itself would wait for its answer for ever).
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
        started = context.Queue()
        attempts = [0] * len(tasks)
        running: dict[int, int] = {}  # task index -> the process on its current attempt
        with context.Pool(min(self.jobs, len(tasks)), initializer=_init, initargs=(factory, started)) as pool:
            try:
                def submit(index: int) -> None:
                    attempts[index] = abs(attempts[index]) + 1
                    pool.apply_async(_run, ((index, attempts[index], tasks[index]),), callback=arrived.put,
                                     error_callback=lambda exc: arrived.put(_Raised(exc)))

                for index in range(len(tasks)):
                    submit(index)
                pending = len(tasks)
                while pending and not sink.stopped:
                    try:
                        answer = arrived.get(timeout=0.2)  # a timeout keeps Ctrl-C prompt
                    except queue.Empty:
                        _note_starts(started, attempts, running)
                        for index, pid in list(running.items()):
                            if _alive(pid):
                                continue
                            del running[index]
                            if sink.lost(index, f"its worker process ({pid}) died"):
                                submit(index)
                            else:
                                pending -= 1
                        continue
                    if isinstance(answer, _Raised):
                        raise answer.exc
                    index, attempt, result = answer
                    if attempt != attempts[index]:
                        continue  # an attempt already given up as lost
                    _note_starts(started, attempts, running)
                    running.pop(index, None)
                    attempts[index] = -attempts[index]  # answered: a start noted late is not this attempt's
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


def _note_starts(started: Any, attempts: list[int], running: dict[int, int]) -> None:
    """Note which process each task's current attempt started on (earlier attempts' notes are stale)."""
    while True:
        try:
            index, attempt, pid = started.get_nowait()
        except queue.Empty:
            return
        if attempt == attempts[index]:
            running[index] = pid


def _alive(pid: int) -> bool:
    """Whether process ``pid`` is still there (the pool reaps a dead worker within a tenth of a second)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@dataclass(frozen=True)
class _Lost:
    """A worker process's answer for a task whose worker died (it has been replaced)."""

    why: str


@dataclass(frozen=True)
class _Raised:
    exc: BaseException


def _init(factory: WorkerFactory, started: Any) -> None:
    global _worker, _factory, _started
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's business
    _factory, _started = factory, started
    try:
        _worker = factory()
    except Exception as exc:  # noqa: BLE001 - reported with the first task this process takes
        _init_error.append(exc)


def _run(indexed: tuple[int, int, Any]) -> tuple[int, int, Any]:
    global _worker
    index, attempt, task = indexed
    if _worker is None:
        raise _init_error[0] if _init_error else RuntimeError("the worker could not be started")
    _started.put((index, attempt, os.getpid()))
    try:
        return index, attempt, _worker.run(task)
    except WorkerLost as lost:
        _worker.close()
        _worker = None
        assert _factory is not None
        _worker = _factory()  # a worker that cannot be rebuilt ends the run, as at the start
        return index, attempt, _Lost(str(lost))
