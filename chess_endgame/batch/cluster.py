"""The Ray back end of the batch runner: one actor an engine slot, on a cluster of machines.

:class:`RayActors` connects to a running Ray cluster (``auto``: the one
started on this machine with ``ray start --head``; ``ray://host:port``: a
remote one through Ray Client; ``host:port``: the head's GCS, from a machine of
the cluster) and starts one actor a slot (``jobs``, or one per CPU of the
cluster), spread over the nodes. Each actor checks at its start that the
Syzygy tables the driver sees are at the same path on its node, then builds
its worker once (a long-lived engine: the project's player or a UCI engine)
and answers tasks one at a time. The driver feeds each idle actor the next
task and takes results in the order they complete, so a finished result is
the driver's at once: a node lost later loses none.

Faults: an actor that dies (its process killed, its node lost) is replaced
by a fresh one wherever the cluster has room, and the task it held goes back
to the front of the queue; the runner's rule (:mod:`.runner`) allows one retry,
then the task is failed. A worker whose engine died (:exc:`~.protocol.WorkerLost`)
is rebuilt inside its actor. Ctrl-C ends the run; the driver kills its actors.

Ray is imported here only: the package runs without it, and ``--cluster``
without it says in one line how to install it.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from chess_endgame.batch.protocol import BackendError, Sink, WorkerFactory, WorkerLost
from chess_endgame.tablebase.paths import scan

#: How to get Ray, in the one line ``--cluster`` prints without it.
INSTALL = 'pip install -e ".[cluster]" (or: pip install "ray[client]")'
#: Seconds a connection to an explicit address may take before the address is refused.
CONNECT_TIMEOUT = 10.0
#: Seconds the run waits for an actor to start while no actor works (a cluster without a free CPU).
START_TIMEOUT = 300.0
#: Seconds between checks for Ctrl-C while waiting for results.
POLL = 0.25


def import_ray() -> Any:
    """The ``ray`` module. :raises BackendError: in one line saying how to install it."""
    try:
        import ray
    except ImportError:
        raise BackendError(f"--cluster needs Ray, an optional extra: {INSTALL}") from None
    return ray


def check_address(address: str) -> tuple[str, tuple[str, int] | None]:
    """``address`` as Ray takes it, and the (host, port) to try first (None for ``auto``).

    :raises BackendError: when it is none of ``auto``, ``ray://host:port``, ``host:port``.
    """
    text = address.strip()
    if text == "auto":
        return text, None
    rest = text[len("ray://"):] if text.startswith("ray://") else text
    host, sep, port = rest.rpartition(":")
    if not sep or not host or not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536 or "/" in host:
        raise BackendError(f"--cluster takes auto, ray://HOST:PORT (Ray Client, port 10001 by default) or "
                           f"HOST:PORT (the head node, port 6379 by default), not {address!r}")
    return text, (host.strip("[]"), int(port))


@dataclass(frozen=True)
class TablesOnNode:
    """The check each actor makes at its start: the driver's tables at ``path`` are on its node too."""

    path: str
    #: The table files the driver found there (``KRvK.rtbw``...); empty: any table will do.
    files: tuple[str, ...]

    @classmethod
    def of(cls, path: str) -> TablesOnNode:
        found = scan(path)
        return cls(path, tuple(sorted([f"{n}.rtbw" for n in found.wdl] + [f"{n}.rtbz" for n in found.dtz])))

    def __call__(self) -> str | None:
        """What is wrong on this node (None: nothing)."""
        found = scan(self.path)
        here = {f"{n}.rtbw" for n in found.wdl} | {f"{n}.rtbz" for n in found.dtz}
        advice = "every node needs the same Syzygy tables at the same SYZYGY_PATH"
        if not here:
            bad = "; ".join(f"{d}: {p}" for d, p in found.bad_directories.items())
            return f"no Syzygy tables in {self.path}" + (f" ({bad})" if bad else "") + f": {advice}"
        missing = [f for f in self.files if f not in here]
        if missing:
            shown = ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
            return (f"{len(missing)} of the {len(self.files)} Syzygy files in {self.path} are missing ({shown}): "
                    f"{advice}")
        return None


def node_name() -> str:
    """This machine as the messages name it: ``IP (hostname)``."""
    try:
        import ray

        ip = ray.util.get_node_ip_address()
    except Exception:  # noqa: BLE001 - the name is only for messages
        ip = "?"
    return f"{ip} ({socket.gethostname()})"


class Slot:
    """One engine slot: the Ray actor's class (``ray.remote`` is applied when a run starts)."""

    def __init__(self, factory: WorkerFactory, check: Callable[[], str | None] | None) -> None:
        self.node = node_name()
        self.factory = factory
        self.worker = None
        self.problem: str | None = None
        try:
            self.problem = check() if check is not None else None
            if self.problem is None:
                self.worker = factory()
        except Exception as exc:  # noqa: BLE001 - told to the driver by ready()
            self.problem = f"cannot start the worker: {exc or type(exc).__name__}"

    def ready(self) -> tuple[str, str | None, int]:
        """(node, what is wrong or None, process id)."""
        return self.node, self.problem, os.getpid()

    def run(self, index: int, task: Any) -> tuple[int, Any, str | None]:
        """(index, result, None), or (index, None, why) when the worker's engine died (it is rebuilt)."""
        assert self.worker is not None
        try:
            return index, self.worker.run(task), None
        except WorkerLost as lost:
            self.worker.close()
            self.worker = None
            self.worker = self.factory()  # one that cannot be rebuilt ends the run, as at the start
            return index, None, str(lost)


class RayActors:
    """The batch runner's back end on a Ray cluster (see the module's docstring).

    :raises BackendError: in one line when Ray is missing or no cluster answers at ``address``.
    """

    def __init__(self, address: str, actors: int | None = None, *, tables: str | None = None) -> None:
        self.ray = import_ray()
        self.address, self.probe = check_address(address)
        self.tables = TablesOnNode.of(tables) if tables else None
        self.owned = False
        self._connect()
        #: Actors (engine slots): ``actors``, else one per CPU of the cluster.
        self.slots = actors or max(1, int(self.ray.cluster_resources().get("CPU", 1)))

    def _connect(self) -> None:
        ray = self.ray
        if ray.is_initialized():
            return  # a caller (a test, a notebook) is connected already
        probe = self.probe
        if probe is None and os.environ.get("RAY_ADDRESS"):
            with contextlib.suppress(BackendError):
                probe = check_address(os.environ["RAY_ADDRESS"])[1]
        if probe is not None:
            try:
                socket.create_connection(probe, timeout=CONNECT_TIMEOUT).close()
            except OSError as exc:
                raise BackendError(f"no Ray cluster answers at {probe[0]}:{probe[1]} ({exc.strerror or exc}); "
                                   "start one with `ray start --head` (see the README)") from None
        said: list[str] = []
        try:
            with _stderr_kept(said):
                ray.init(address=self.address, logging_level=logging.ERROR, log_to_driver=False)
        except Exception as failure:  # noqa: BLE001 - Ray fails in many ways; the user gets one line
            first = (str(failure).strip().splitlines() or [type(failure).__name__])[0]
            if "InvalidAuthToken" in "".join(said) or "AuthenticationError" in type(failure).__name__:
                first = ("the cluster wants its authentication token: set RAY_AUTH_MODE=token and give this machine "
                         "the head's token (`ray get-auth-token` there) in ~/.ray/auth_token or RAY_AUTH_TOKEN")
            elif self.probe is not None and "RAY_AUTH_MODE" not in os.environ:
                first += " (a cluster with token authentication also needs RAY_AUTH_MODE=token: see the README)"
            raise BackendError(f"cannot connect to the Ray cluster at {self.address}: {first}") from None
        self.owned = True
        _quiet_raylet(ray)

    def close(self) -> None:
        """Disconnect from the cluster when this back end connected."""
        if self.owned and self.ray.is_initialized():
            self.ray.shutdown()
        self.owned = False

    def run(self, factory: WorkerFactory, tasks: Sequence[Any], sink: Sink) -> None:
        ray = self.ray
        self._connect()
        actor_class = ray.remote(num_cpus=1, max_restarts=0, scheduling_strategy="SPREAD")(Slot)
        queue = collections.deque(range(len(tasks)))
        starting: dict[Any, Any] = {}            # ready() ref -> actor
        busy: dict[Any, tuple[Any, int]] = {}    # run() ref -> (actor, task index)
        idle: list[Any] = []
        nodes: dict[Any, str] = {}               # actor -> its node
        everyone: list[Any] = []
        died: list[str] = []                     # actors that died starting

        def start() -> None:
            actor = actor_class.remote(factory, self.tables)
            everyone.append(actor)
            starting[actor.ready.remote()] = actor

        def retire(actor: Any) -> None:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:  # noqa: BLE001,S110 - it is gone already
                pass

        for _ in range(min(self.slots, len(tasks))):
            start()
        waiting_since = time.monotonic()
        try:
            while (queue or busy) and not sink.stopped:
                while idle and queue:
                    actor, index = idle.pop(), queue.popleft()
                    busy[actor.run.remote(index, tasks[index])] = (actor, index)
                if not busy and time.monotonic() - waiting_since > START_TIMEOUT:
                    raise BackendError(f"no Ray actor could start within {START_TIMEOUT:.0f} s: the cluster has no "
                                       "free CPU for one (see `ray status`)")
                ready, _ = ray.wait(list(starting) + list(busy), num_returns=1, timeout=POLL)
                for ref in ready:
                    if ref in starting:
                        actor = starting.pop(ref)
                        try:
                            node, problem, _ = ray.get(ref)
                        except ray.exceptions.RayError as exc:  # it died starting: its node went, or no code there
                            retire(actor)
                            died.append(_first_line(exc))
                            if len(died) > self.slots:
                                raise BackendError(f"Ray actors die as they start ({died[0]}): is chess-endgame "
                                                   "installed on every node?") from None
                            if queue:
                                start()
                            continue
                        if problem is not None:
                            raise BackendError(f"on node {node}: {problem}")
                        nodes[actor] = node
                        idle.append(actor)
                        continue
                    actor, index = busy.pop(ref)
                    waiting_since = time.monotonic()
                    try:
                        _, result, why = ray.get(ref)
                    except ray.exceptions.RayTaskError as exc:
                        cause = getattr(exc, "cause", None)
                        raise cause if isinstance(cause, Exception) else BackendError(str(exc)) from None
                    except ray.exceptions.RayError as exc:  # the actor, its process or its node died
                        retire(actor)
                        if sink.lost(index, f"its Ray actor on {nodes.get(actor, '?')} died ({_first_line(exc)})"):
                            queue.appendleft(index)
                        if queue:
                            start()
                        continue
                    if why is not None:
                        if sink.lost(index, why):
                            queue.appendleft(index)
                    else:
                        sink.done(index, result)
                    idle.append(actor)
        finally:
            for actor in everyone:
                retire(actor)
            self.close()


def _quiet_raylet(ray: Any) -> None:
    """Drop the raylet's notices that Ray's driver prints on standard output (a worker died...): the run
    says in its own line which task's actor died, and standard output may be the command's JSON."""
    module = getattr(getattr(ray, "_private", None), "worker", None)
    original = getattr(module, "print_to_stdstream", None)
    if original is None or getattr(original, "quiet_raylet", False):
        return

    def printer(data: dict, ignore_prefix: bool) -> None:
        if data.get("pid") != "raylet":
            original(data, ignore_prefix)

    printer.quiet_raylet = True  # type: ignore[attr-defined]
    module.print_to_stdstream = printer


@contextlib.contextmanager
def _stderr_kept(into: list[str]) -> Iterator[None]:
    """Keep what is written to file descriptor 2 (Ray's C++ core logs there while it connects) in ``into``
    instead of the terminal: a failed connection is one line, not twenty."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as kept:
        os.dup2(kept.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            kept.seek(0)
            into.append(kept.read().decode("utf-8", errors="replace"))


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__
