"""``chess-endgame bench ...``: benchmarks that print their figures."""

from __future__ import annotations

import click

from chess_endgame import bench as benchmarks
from chess_endgame.tablebase import resolve_path

from .common import syzygy_path_option, user_errors


@click.group()
def bench() -> None:
    """Speed benchmarks on fixed, seeded workloads."""


@bench.command("probe")
@syzygy_path_option
@click.option("--positions", default=300, show_default=True, type=click.IntRange(10, 100000),
              help="Random positions per material (KQvKR, KRPvK, KRPvKR).")
@click.option("--seed", default=1, show_default=True, type=int)
@click.option("--repeat", default=5, show_default=True, type=click.IntRange(1, 100),
              help="Timed runs per figure; the best is kept.")
@user_errors
def probe(syzygy_path: str | None, positions: int, seed: int, repeat: int) -> None:
    """WDL and DTZ probes per second: the prober against raw python-chess."""
    path = resolve_path(syzygy_path)
    result = benchmarks.bench_probe(path, per_material=positions, seed=seed, repeat=repeat)
    click.echo(f"tables: {path}")
    click.echo(f"workload: {result.positions} random positions (seed {seed}); game replay of "
               f"{result.replay_probes} probes, cache hit rate {result.replay_hit_rate:.0%}")
    click.echo(f"{'workload':<26}{'probes':>8}{'python-chess/s':>16}{'prober/s':>12}{'ratio':>8}")
    for label, raw, ours in result.rows:
        click.echo(f"{label:<26}{raw.probes:>8}{raw.per_second:>16,.0f}{ours.per_second:>12,.0f}"
                   f"{ours.per_second / raw.per_second:>8.2f}")
