"""``chess-endgame bench probe|choose|convert|search|tree-probes|threads|serve|perft|startup``: benchmarks
printing figures."""

from __future__ import annotations

import collections
import math
import statistics
import sys

import click
from tqdm import tqdm

from chess_endgame.bench.choose import bench_choose, bench_worst
from chess_endgame.bench.common import percentile
from chess_endgame.bench.convert import ConvertRun, bench_convert
from chess_endgame.bench.features import bench_features
from chess_endgame.bench.perft import POSITIONS as PERFT_POSITIONS
from chess_endgame.bench.perft import PerftRow, bench_perft, warm_up
from chess_endgame.bench.probe import REVIEW_PASSES, WORKLOADS, Rate, bench_probe
from chess_endgame.bench.search import (
    POSITIONS,
    TREE_PROBE_MATERIALS,
    SearchRow,
    TreeProbeRun,
    bench_search,
    bench_tree_probes,
)
from chess_endgame.bench.startup import GO_DEPTH, GO_FEN, StartupRun, bench_startup, engine_command
from chess_endgame.bench.threads import ThreadsRow, bench_threads, positions_for
from chess_endgame.engine.timeman import RANKING_MS
from chess_endgame.tablebase.paths import resolve_path
from chess_endgame.text import plural

from .common import fail, interrupted, prober_option, syzygy_path_option, user_errors, warn_bad_directories

#: Help of every benchmark's --seed.
SEED_HELP = "Seed of the random positions (same seed, same workload)."


@click.group()
def bench() -> None:
    """Speed benchmarks on fixed, seeded workloads."""


def _bar(total: int, desc: str, unit: str) -> tqdm:
    """A progress bar on stderr (shown on a terminal only), gone when done."""
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True, disable=None, leave=False)


def _tables(syzygy_path: str | None, pieces: int = 3) -> str:
    """The tables' path; a warning for each directory the user named that cannot be read (as every command gives),
    exit 2 where the tables found stop short of ``pieces`` men."""
    from chess_endgame.tablebase.paths import scan

    path = resolve_path(syzygy_path)
    found = scan(path)
    warn_bad_directories(syzygy_path, found.bad_directories)
    if found.max_pieces < pieces:
        has = f"tables up to {found.max_pieces} men" if found.wdl else "no Syzygy tables"
        fail(f"this benchmark needs {pieces}-man tables and {path} has {has} (set SYZYGY_PATH or --syzygy-path)")
    return path


@bench.command("probe")
@syzygy_path_option
@click.option("--positions", default=300, show_default=True, type=click.IntRange(10, 100000),
              help="Random positions per material (KQvKR, KRPvK, KRPvKR).")
@click.option("--seed", default=1, show_default=True, type=int, help=SEED_HELP)
@click.option("--repeat", default=3, show_default=True, type=click.IntRange(1, 100), metavar="RUNS",
              help="Timed runs per figure; the best is kept.")
@click.option("--game-plies", default=120, show_default=True, type=click.IntRange(1, 1000), metavar="PLIES",
              help="Longest game, in plies, whose probes are replayed.")
@user_errors
def probe(syzygy_path: str | None, positions: int, seed: int, repeat: int, game_plies: int) -> None:
    """WDL and DTZ probes per second: the prober against raw python-chess."""
    from chess_endgame.tablebase.prober import Prober

    path = _tables(syzygy_path)
    probe_backend = Prober(path).backend
    rows: list[tuple[str, Rate, Rate, Rate | None]] = []
    with _bar(WORKLOADS, "probe", "workload") as bar:
        try:
            result = bench_probe(path, per_material=positions, seed=seed, repeat=repeat, game_plies=game_plies,
                                 on_row=lambda *row: (rows.append(row), bar.update(1)))
        except KeyboardInterrupt:
            result = None
    click.echo(f"tables: {path}")
    if result is not None:
        once, review = result.replay_hit_rates
        click.echo(f"workloads: {result.positions} random positions (seed {seed}); the probes of a "
                   f"{result.replay_plies}-ply game of the player against the tablebase defender, as played "
                   f"(cache hit rate {once:.0%}) and replayed {REVIEW_PASSES}x as when reviewing it in a GUI "
                   f"({review:.0%})")
    click.echo(f"prober: the {probe_backend} back end")
    click.echo(f"{'workload':<26}{'probes':>8}{'python-chess/s':>16}{'prober/s':>12}{'ratio':>8}{'batch/s':>12}"
               f"{'ratio':>8}")
    for label, raw, ours, batch in rows:
        batch_text = (f"{batch.per_second:>12,.0f}{batch.per_second / raw.per_second:>8.2f}" if batch is not None
                      else f"{'-':>12}{'-':>8}")
        click.echo(f"{label:<26}{raw.probes:>8}{raw.per_second:>16,.0f}{ours.per_second:>12,.0f}"
                   f"{ours.per_second / raw.per_second:>8.2f}{batch_text}")
    if result is None:
        interrupted(f"{len(rows)} of {WORKLOADS} workloads measured")
    click.echo("prober/s: one probe a call through the prober's API and cache; batch/s: all positions in one call "
               "(Prober.probe_many)")
    click.echo(f"targets (compiled back end): WDL >= 20x and DTZ >= 10x python-chess on distinct positions; game "
               f"replayed {REVIEW_PASSES}x ratio >= 5")


@bench.command("choose")
@syzygy_path_option
@click.option("--positions", default=25, show_default=True, type=click.IntRange(1, 10000),
              help="Random positions per material for the chooser-against-naive comparison.")
@click.option("--worst-positions", default=20, show_default=True, type=click.IntRange(0, 10000), metavar="N",
              help="Random positions per material (every material present) for the worst case; 0 skips it.")
@click.option("--seed", default=1, show_default=True, type=int, help=SEED_HELP)
@click.option("--repeat", default=3, show_default=True, type=click.IntRange(1, 100),
              help="Timed runs per position in the comparison (the best one counts).")
@user_errors
def choose(syzygy_path: str | None, positions: int, worst_positions: int, seed: int, repeat: int) -> None:
    """Milliseconds per root choice: the chooser against the naive baseline (DTZ of every child), and
    the chooser's worst case over every material present at clocks 0..99 (what the time manager reserves)."""
    path = _tables(syzygy_path)
    r = bench_choose(path, per_material=positions, seed=seed, repeat=repeat)
    click.echo(f"{r.positions} positions (seed {seed}, clocks 0..99) of {', '.join(r.materials)}")
    click.echo(f"{'':<10}{'median ms':>11}{'p95 ms':>9}{'DTZ probes':>12}")
    for label, times, dtz in (("chooser", r.chooser_ms, r.chooser_dtz_probes),
                              ("naive", r.naive_ms, r.naive_dtz_probes)):
        click.echo(f"{label:<10}{statistics.median(times):>11.2f}{percentile(times, 95):>9.2f}{dtz:>12}")
    click.echo(f"speed-up: median {r.ratio_median:.2f}x, p95 {r.ratio_p95:.2f}x (target >= 1.5x)")
    click.echo(f"same best class: {r.same_class}/{r.positions} ({100 * r.same_class / r.positions:.0f}%)")
    if worst_positions:
        w = bench_worst(path, per_material=worst_positions, seed=seed,
                        progress=lambda items: tqdm(items, desc="worst case", unit="pos", file=sys.stderr,
                                                    dynamic_ncols=True, disable=None, leave=False))
        ms, fen = w.slowest
        click.echo(f"worst case, one cold choice each: {w.positions} positions of {w.materials} materials, "
                   f"clocks 0..99")
        click.echo(f"  median {w.percentile(50):.2f} ms, p99 {w.percentile(99):.2f} ms, "
                   f"p99.9 {w.percentile(99.9):.2f} ms, max {ms:.2f} ms ({fen})")
        click.echo(f"  reserved by the time manager: {RANKING_MS} ms")


@bench.command("convert")
@syzygy_path_option
@click.option("--positions", default=12, show_default=True, type=click.IntRange(1, 1000),
              help="Won positions to play out (round robin over the materials present).")
@click.option("--seed", default=1, show_default=True, type=int, help=SEED_HELP)
@click.option("--mate-nodes", default=20000, show_default=True, type=click.IntRange(100, 10**7), metavar="NODES",
              help="Search nodes the faster-mate mode may spend per move.")
@user_errors
def convert(syzygy_path: str | None, positions: int, seed: int, mate_nodes: int) -> None:
    """Play seeded won positions against the tablebase defender: pure DTZ and faster-mate modes."""
    path = _tables(syzygy_path)
    runs: list[ConvertRun] = []
    with _bar(2 * positions, "convert", "game") as bar:
        try:
            r = bench_convert(path, count=positions, seed=seed, mate_nodes=mate_nodes,
                              on_game=lambda: bar.update(1), on_run=runs.append)
        except KeyboardInterrupt:
            r = None
    if r is not None:
        click.echo(f"{r.positions} won positions (seed {seed}) of {', '.join(r.materials)}")
    click.echo(f"{'mode':<14}{'converted':>11}{'mean plies to mate':>20}")
    for run in runs:
        click.echo(f"{run.mode:<14}{run.wins:>6}/{positions:<4}{run.mean_plies:>20.1f}")
        for fen, result, why in run.failures:
            click.echo(f"  not converted: {fen} -> {result} ({why})")
    if r is None:
        interrupted(f"{len(runs)} of 2 modes complete")
    pure, fast = runs
    if pure.plies and fast.plies:
        click.echo(f"faster-mate mode mates in {fast.mean_plies / pure.mean_plies:.2f}x the plies of pure DTZ play")


@bench.command("search")
@click.option("--depth", type=click.IntRange(1, 64), default=None, metavar="PLIES",
              help="Search every position to this depth in plies (default: each position's own depth).")
@click.option("--movetime", type=click.IntRange(1, None), default=None, metavar="MS",
              help="Search each position for MS milliseconds instead of a fixed depth.")
@click.option("--repeat", default=3, show_default=True, type=click.IntRange(1, 20), metavar="RUNS",
              help="Runs per position; the fastest is kept.")
@user_errors
def search(depth: int | None, movetime: int | None, repeat: int) -> None:
    """Depth, effective branching factor (EBF) and nodes per CPU-second on a fixed list of positions
    (no tables), and a node-count signature."""
    if depth is not None and movetime is not None:
        fail("give --depth or --movetime, not both")
    rows: list[SearchRow] = []
    stopped = False
    with _bar(len(POSITIONS), "search", "pos") as bar:
        try:
            bench_search(depth=depth, movetime=movetime, repeat=repeat,
                         on_row=lambda row: (rows.append(row), bar.update(1)))
        except KeyboardInterrupt:
            stopped = True
    click.echo(f"{'position':<34}{'depth':>6}{'EBF':>6}{'nodes':>10}{'cpu s':>8}{'nodes/cpu-s':>13}  best   score")
    for row in rows:
        click.echo(f"{row.name:<34}{row.depth:>6}{_or_dash(row.ebf, '.2f'):>6}{row.nodes:>10}{row.cpu_seconds:>8.3f}"
                   f"{row.nps:>13,.0f}  {row.best_move:<6} {row.score}")
    if stopped:
        interrupted(f"{len(rows)} of {len(POSITIONS)} positions measured")
    nodes = sum(r.nodes for r in rows)
    cpu = sum(r.cpu_seconds for r in rows)
    click.echo(f"{'total':<34}{'':>12}{nodes:>10}{cpu:>8.3f}{nodes / cpu:>13,.0f}")
    click.echo(f"signature: {nodes}" if movetime is None else "signature: n/a (time-limited run)")


def _or_dash(value: float, spec: str) -> str:
    """``value`` formatted, or "-" where nothing was measured (nan: no probe, no game, too few iterations)."""
    return "-" if math.isnan(value) else format(value, spec)


@bench.command("tree-probes")
@syzygy_path_option
@prober_option
@click.option("--positions", default=20, show_default=True, type=click.IntRange(1, 10000),
              help="Random six-piece positions searched.")
@click.option("--depth", default=8, show_default=True, type=click.IntRange(1, 64), metavar="PLIES",
              help="Depth of each search, in plies.")
@click.option("--seed", default=1, show_default=True, type=int, help=SEED_HELP)
@user_errors
def tree_probes(syzygy_path: str | None, backend: str | None, positions: int, depth: int, seed: int) -> None:
    """What a tablebase probe from inside the compiled tree costs (WDL, after zeroing moves; results are kept
    in the tree's WDL cache). With the compiled prober the tree probes the tables itself, timed by the
    processor's cycle counter; with python-chess a callback into Python builds a board from the tree's arrays
    and asks it. The first search compiles and is not counted."""
    from chess_endgame.tablebase.prober import Prober

    prober = Prober(_tables(syzygy_path, 5), backend=backend)
    backend = prober.backend
    run = TreeProbeRun(0, 0, 0, 0, 0.0, 0.0)
    stopped = False
    with _bar(positions, "tree-probes", "pos") as bar:
        try:
            bench_tree_probes(prober, positions=positions, depth=depth, seed=seed, on_position=lambda: bar.update(1),
                              run=run)
        except KeyboardInterrupt:
            stopped = True
    if stopped and not run.positions:
        interrupted("no position measured")
    click.echo(f"{run.positions} positions ({', '.join(TREE_PROBE_MATERIALS)}, seed {seed}) to depth {depth}: "
               f"{run.nodes} nodes in {run.cpu_seconds:.2f} CPU s ({run.nodes / run.cpu_seconds:,.0f} nodes/cpu-s)")
    if backend == "compiled":
        click.echo(f"{run.probes} probes from the tree, {run.compiled} of them by the compiled prober (the rest from "
                   f"the tree's WDL cache), {run.calls} calls into Python: {run.compiled_seconds:.3f} s probing, "
                   f"{_or_dash(run.us_per_compiled, '.1f')} us a probe, {_or_dash(100 * run.share, '.1f')}% of the "
                   f"search")
    else:
        click.echo(f"{run.probes} probes from the tree, {run.calls} of them calls into Python (the rest from the "
                   f"tree's WDL cache): {run.probe_seconds:.3f} s in the callback, {_or_dash(run.us_per_call, '.1f')} "
                   f"us a call, {_or_dash(100 * run.share, '.1f')}% of the search")
    if stopped:
        interrupted(f"{run.positions} of {positions} positions measured")


@bench.command("threads")
@click.option("--threads", default=2, show_default=True, type=click.IntRange(2, 64), metavar="N",
              help="Threads of the second search of each position (the first has one).")
@click.option("--movetime", default=2000, show_default=True, type=click.IntRange(10, None), metavar="MS",
              help="Wall time of each search, in ms.")
@click.option("--tables", is_flag=True,
              help="Search random six-piece positions with probes inside the tree (needs the five-piece tables).")
@click.option("--positions", default=8, show_default=True, type=click.IntRange(1, 1000),
              help="With --tables: random six-piece positions searched.")
@click.option("--seed", default=1, show_default=True, type=int, help=SEED_HELP)
@syzygy_path_option
@prober_option
@user_errors
def threads(threads: int, movetime: int, tables: bool, positions: int, seed: int, syzygy_path: str | None,
            backend: str | None) -> None:
    """Nodes per second with N threads (Lazy SMP) against one, side by side: each position searched for the same
    wall time with 1 thread, then N. Without --tables, the endgames of bench search but KRvK (its search ends at
    the mate), without tables; with it,
    random six-piece positions probed in the tree, and how many probes called into Python from the main
    thread and from the helpers (each call takes the GIL)."""
    from chess_endgame.engine.smp import usable_cores
    from chess_endgame.tablebase.prober import Prober

    if threads > usable_cores():
        fail(f"--threads {threads}: this process may use {plural(usable_cores(), 'core')}, and a search starts no "
             "more threads than that")
    prober = Prober(_tables(syzygy_path, 5), backend=backend) if tables else None
    rows: list[ThreadsRow] = []
    stopped = False
    with _bar(positions if tables else len(positions_for(None, 0, seed)), "threads", "pos") as bar:
        try:
            bench_threads(threads, movetime, prober=prober, count=positions, seed=seed,
                          on_row=lambda row: (rows.append(row), bar.update(1)))
        except KeyboardInterrupt:
            stopped = True
    probes = "  probe calls 1 / N (helpers)" if tables else ""
    click.echo(f"{'position':<30}{'nodes/s 1':>12}{'nodes/s N':>12}{'ratio':>9}{'depth 1':>8}{'depth N':>8}{probes}")
    for r in rows:
        calls = (f"  {r.one.probe_calls} / {r.many.probe_calls} ({r.many.helper_probe_calls})" if tables else "")
        click.echo(f"{r.name[:29]:<30}{r.one.nps:>12,.0f}{r.many.nps:>12,.0f}{r.ratio:>9.2f}{r.one.depth:>8}"
                   f"{r.many.depth:>8}{calls}")
    if stopped:
        interrupted(f"{len(rows)} positions measured")
    if rows:
        one = sum(r.one.nodes for r in rows) / sum(r.one.seconds for r in rows)
        many = sum(r.many.nodes for r in rows) / sum(r.many.seconds for r in rows)
        click.echo(f"{'total':<30}{one:>12,.0f}{many:>12,.0f}{many / one:>9.2f}")
    backend_text = f"; tables probed by the {prober.backend} prober" if prober is not None else ""
    click.echo(f"N = {threads} threads, {movetime} ms a search (wall time){backend_text}; target: N = 2 on 2 free "
               "cores >= 1.7x")


@bench.command("serve")
@syzygy_path_option
@click.option("--requests", default=400, show_default=True, type=click.IntRange(1, 100000),
              help="Distinct positions requested of each server (one request each).")
@click.option("--clients", default=16, show_default=True, type=click.IntRange(1, 1000),
              help="Concurrent clients (connections), each sending its next request when answered.")
@click.option("--seed", default=1, show_default=True, type=int, help=SEED_HELP)
@user_errors
def serve(syzygy_path: str | None, requests: int, clients: int, seed: int) -> None:
    """Requests per second of chess-endgame serve's /standard on distinct 3-5-piece positions, with the compiled
    prober and with python-chess's, side by side: a server process each, the same positions, concurrent
    clients in this process."""
    from chess_endgame.bench.serve import ServeRun, bench_serve

    path = _tables(syzygy_path)
    runs: list[ServeRun] = []
    with _bar(2, "serve", "server") as bar:
        try:
            bench_serve(path, ["compiled", "python-chess"], requests=requests, clients=clients, seed=seed,
                        on_run=lambda run: (runs.append(run), bar.update(1)))
        except RuntimeError as exc:
            fail(str(exc))
        except KeyboardInterrupt:
            pass
    click.echo(f"/standard on {requests} distinct 3-5-piece positions (seed {seed}), {clients} concurrent clients; "
               f"tables: {path}")
    click.echo(f"{'prober':<14}{'requests/s':>12}{'p50 ms':>9}{'p99 ms':>9}{'failures':>10}")
    for run in runs:
        click.echo(f"{run.backend:<14}{run.per_second:>12.1f}{run.ms(50):>9.0f}{run.ms(99):>9.0f}"
                   f"{len(run.failures):>10}")
    if len(runs) == 2:
        click.echo(f"compiled / python-chess: {runs[0].per_second / runs[1].per_second:.2f}x (target >= 3x)")
    else:
        interrupted(f"{len(runs)} of 2 servers measured")


@bench.command("defence")
@syzygy_path_option
@click.option("--positions", default=300, show_default=True, type=click.IntRange(1, 100000),
              help="Seeded quiet 4-5-piece won positions, each played against both defences.")
@click.option("--nodes", default=2000, show_default=True, type=click.IntRange(1, 10**7),
              help="The attacker's search budget a move, in nodes (no tables).")
@click.option("--seed", default=1, show_default=True, type=int, help=SEED_HELP)
@click.option("--jobs", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Games played at once, in that many processes.")
@user_errors
def defence(syzygy_path: str | None, positions: int, nodes: int, seed: int, jobs: int) -> None:
    """How often a weak attacker (this project's search at --nodes, without tables) fails to win seeded 4-5-piece
    wins against the drills' tough defence and against the plain longest-DTZ defence (target: 1.3x as often)."""
    from chess_endgame.bench.defence import Game, bench_defence

    path = _tables(syzygy_path)
    games: list[Game] = []
    stopped = False
    with _bar(2 * positions, "defence", "game") as bar:
        try:
            bench_defence(path, positions=positions, nodes=nodes, seed=seed, jobs=jobs,
                          on_game=lambda game: (games.append(game), bar.update(1)))
        except ValueError as exc:
            fail(str(exc))
        except KeyboardInterrupt:
            stopped = True
    click.echo(f"{positions} quiet 4-5-piece wins (seed {seed}); the attacker: this project's search at {nodes} "
               f"nodes a move, no tables")
    click.echo(f"{'defence':<10}{'games':>7}{'attacker failed':>17}{'rate':>8}")
    rates = {}
    for name in ("plain", "tough"):
        played = [g for g in games if g.defence == name]
        failed = sum(g.failed for g in played)
        rates[name] = failed / len(played) if played else float("nan")
        reasons = collections.Counter(g.why for g in played if g.failed)
        why = ", ".join(f"{reason} {n}" for reason, n in reasons.most_common())
        click.echo(f"{name:<10}{len(played):>7}{failed:>17}{_or_dash(100 * rates[name], '.1f') + '%':>8}  {why}")
    if stopped:
        interrupted(f"{len(games)} of {2 * positions} games played")
    if rates["plain"] > 0:
        click.echo(f"tough / plain: {rates['tough'] / rates['plain']:.2f}x (target >= 1.3x)")


@bench.command("features")
@click.option("--positions", default=100_000, show_default=True, type=click.IntRange(1, 10**7),
              help="Random positions (3 to 18 pieces) whose features are computed.")
@click.option("--seed", default=1, show_default=True, type=int, help=SEED_HELP)
@user_errors
def features(positions: int, seed: int) -> None:
    """Seconds to compute the evaluation features of N positions (target: 100k in under a minute)."""
    with _bar(positions, "positions", "pos") as bar:
        count, wall, cpu = bench_features(positions, seed, progress=bar.update)
    click.echo(f"{plural(count, 'position')} (3 to 18 pieces, seed {seed}): feature matrix in {wall:.2f} s "
               f"({cpu:.2f} CPU s), {count / wall:,.0f} positions/s")


@bench.command("perft")
@click.option("--repeat", default=3, show_default=True, type=click.IntRange(1, 20), metavar="RUNS",
              help="Timed runs of each compiled perft; the fastest is kept (python-chess runs once).")
@user_errors
def perft(repeat: int) -> None:
    """Leaf nodes per second of the compiled move generator (chess_endgame.engine.core) against python-chess's own
    perft, on the standard perft positions, every count checked (exit 1 on a mismatch).

    bulk: the moves at the last ply are counted, not made (core.movegen.perft; python-chess:
    legal_moves.count()). full: every leaf is made and unmade (python-chess: push/pop). python-chess
    runs at a smaller depth; its counts are checked against the compiled ones at that depth, and the
    compiled ones against the published counts. The first call compiles (or loads numba's cache):
    it is timed apart and not counted.
    """
    first = warm_up()
    rows: list[PerftRow] = []
    stopped = False
    with _bar(len(PERFT_POSITIONS), "perft", "pos") as bar:
        try:
            bench_perft(repeat=repeat, on_row=lambda row: (rows.append(row), bar.update(1)))
        except KeyboardInterrupt:
            stopped = True
    click.echo(f"first call (compile or load from numba's cache), not counted: {first:.2f} s")
    click.echo(f"{'':<12}{'compiled':^37}|{'python-chess':^37}|{'ratio':^14}")
    click.echo(f"{'position':<12}{'depth':>6}{'leaves':>11}{'bulk/s':>10}{'full/s':>10}|{'depth':>6}{'leaves':>11}"
               f"{'bulk/s':>10}{'full/s':>10}|{'bulk':>7}{'full':>7}")
    for r in rows:
        click.echo(f"{r.position.name:<12}{r.position.depth:>6}{r.bulk.nodes:>11}{r.bulk.per_second / 1e6:>9.1f}M"
                   f"{r.full.per_second / 1e6:>9.1f}M|{r.position.python_depth:>6}{r.python_full.nodes:>11}"
                   f"{r.python_bulk.per_second / 1e3:>9.0f}k{r.python_full.per_second / 1e3:>9.0f}k|"
                   f"{r.bulk.per_second / r.python_bulk.per_second:>6.0f}x"
                   f"{r.full.per_second / r.python_full.per_second:>6.0f}x")
    if stopped:
        interrupted(f"{len(rows)} of {len(PERFT_POSITIONS)} positions measured")
    if rows:
        def total(attr: str) -> float:
            return sum(getattr(r, attr).nodes for r in rows) / sum(getattr(r, attr).seconds for r in rows)
        click.echo(f"{'total':<12}{'':>17}{total('bulk') / 1e6:>9.1f}M{total('full') / 1e6:>9.1f}M|{'':>17}"
                   f"{total('python_bulk') / 1e3:>9.0f}k{total('python_full') / 1e3:>9.0f}k|"
                   f"{total('bulk') / total('python_bulk'):>6.0f}x{total('full') / total('python_full'):>6.0f}x")
    click.echo(f"leaves/s, best of {plural(repeat, 'compiled run')} and one python-chess run; targets: compiled "
               ">= 3M/s and >= 10x python-chess")
    mismatches = [f"{r.position.name}: {m}" for r in rows for m in r.mismatches]
    for line in mismatches:
        click.echo(f"MISMATCH {line}")
    if mismatches:
        click.echo(f"chess-endgame: error: {len(mismatches)} perft counts differ", err=True)
        sys.exit(1)
    click.echo("every count agrees: compiled = python-chess at its depth = the published counts")


@bench.command("startup")
@click.option("--runs", default=1, show_default=True, type=click.IntRange(1, 20),
              help="Runs of the start-ups (each run on a new empty cache).")
@click.option("--without-isready", is_flag=True,
              help="Also start on another empty cache with go sent straight after uciok, as a GUI that never "
                   "sends isready (a second compile: twice the time).")
@user_errors
def startup(runs: int, without_isready: bool) -> None:
    """Seconds from starting chess-endgame-uci to uciok and to readyok, and of the first go, on an empty
    numba cache (cold: the start-up compiles) and on the cache it left (warm); with --without-isready,
    also cold with go sent straight after uciok. NUMBA_CACHE_DIR points into a temporary directory: your
    cache is not touched."""
    rows: list[StartupRun] = []
    stopped = False
    total = (3 if without_isready else 2) * runs
    with _bar(total, "startup", "run") as bar:
        try:
            bench_startup(runs, without_isready, on_run=lambda row: (rows.append(row), bar.update(1)))
        except KeyboardInterrupt:
            stopped = True
        except RuntimeError as exc:
            fail(str(exc))
    click.echo(f"engine: {' '.join(engine_command())}; first go: position fen {GO_FEN}, go depth {GO_DEPTH}")
    click.echo(f"{'start':<28}{'uciok s':>9}{'readyok s':>11}{'first go s':>12}")
    for r in rows:
        ready = "-" if r.readyok is None else f"{r.readyok:.2f}"
        click.echo(f"{r.label:<28}{r.uciok:>9.2f}{ready:>11}{r.first_go:>12.2f}")
    click.echo("uciok and readyok: seconds from starting the process; first go: from go to bestmove")
    if stopped:
        interrupted(f"{len(rows)} of {total} start-ups measured")
