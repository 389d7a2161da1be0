"""Ray's overhead per position: one fixed-depth suite through the batch runner's two back ends.

    python scripts/bench_cluster.py --cluster auto --jobs 2 --depth 6 --copies 10 --repeat 3 \\
        tests/data/tactics.epd tests/data/mates.epd

Runs the suite (its positions ``--copies`` times over) with ``--jobs`` local processes
and with as many Ray actors on the cluster at ``--cluster``, alternating, ``--repeat``
times, and prints the median wall time of each, the time to the first result (start-up:
processes spawned or actors placed, engines built) and the overhead of Ray per position.
Then no-op tasks (a worker that returns its task) through both: the round trip of one
task alone. Start a cluster first (``ray start --head --num-cpus 2``); SYZYGY_PATH
names the tables.
"""

from __future__ import annotations

import argparse
import statistics
import time

import chess.engine

from chess_endgame.batch.local import LocalProcesses
from chess_endgame.batch.runner import choose_backend, run_batch
from chess_endgame.suite import EngineSpec, load_files, run_items
from chess_endgame.tablebase.paths import resolve_path


class Echo:
    """A worker that does nothing: what is left is the back end's own cost."""

    def run(self, task: int) -> int:
        return task

    def close(self) -> None:
        pass


def timed(run) -> tuple[float, float, float]:
    """(wall seconds, seconds to the first result, this process's CPU seconds after it) of ``run(on_result)``."""
    start = time.perf_counter()
    first: list[float] = []

    def arrived(_: object) -> None:
        if not first:
            first.append(time.perf_counter() - start)
            first.append(time.process_time())

    run(arrived)
    wall, cpu = time.perf_counter() - start, time.process_time()
    return wall, first[0] if first else float("nan"), cpu - first[1] if first else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--cluster", default="auto")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--echo", type=int, default=2000, help="no-op tasks")
    args = parser.parse_args()

    path = resolve_path(None)
    items = load_files(args.files).items * args.copies
    spec = EngineSpec(limits=chess.engine.Limit(depth=args.depth), syzygy_path=path)
    n = len(items)
    runs: dict[str, list[tuple[float, float, float]]] = {"local": [], "ray": []}
    for _ in range(args.repeat):
        for name in runs:
            backend = LocalProcesses(args.jobs) if name == "local" else choose_backend(args.jobs, args.cluster,
                                                                                       tables=path)
            runs[name].append(timed(lambda on, b=backend: run_items(items, spec, backend=b, on_result=on)))
    print(f"{n} positions at depth {args.depth}, {args.jobs} slots, {args.repeat} runs each (median):")
    wall = {}
    for name, got in runs.items():
        wall[name] = statistics.median(w for w, _, _ in got)
        first = statistics.median(f for _, f, _ in got)
        print(f"  {name:<6} wall {wall[name]:7.2f} s   first result {first:5.2f} s   "
              f"{1000 * wall[name] / n:6.1f} ms a position   runs: {', '.join(f'{w:.2f}' for w, _, _ in got)}")
    print(f"  Ray's overhead: {wall['ray'] - wall['local']:+.2f} s a run, "
          f"{1000 * (wall['ray'] - wall['local']) / n:+.2f} ms a position")

    echo: dict[str, tuple[float, float, float]] = {}
    for name in ("local", "ray"):
        backend = LocalProcesses(args.jobs) if name == "local" else choose_backend(args.jobs, args.cluster)
        echo[name] = timed(lambda on, b=backend: run_batch(Echo, range(args.echo), backend=b, on_result=on))
    print(f"{args.echo} no-op tasks:")
    for name, (w, f, cpu) in echo.items():
        print(f"  {name:<6} wall {w:6.2f} s   first result {f:5.2f} s   "
              f"{1e6 * (w - f) / (args.echo - 1):7.0f} us a task after the first, "
              f"{1e6 * cpu / (args.echo - 1):5.0f} us of the driver's CPU")


if __name__ == "__main__":
    main()
