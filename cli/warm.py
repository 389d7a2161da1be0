"""``chess-endgame warm``: compile the search core once (numba's cache), so that later starts are quick."""

from __future__ import annotations

import time

import click

from chess_endgame.engine.core import jit
from chess_endgame.engine.warm import cache_directory, default_jobs
from chess_endgame.engine.warm import warm as run

from .common import syzygy_path_option, user_errors


@click.command()
@syzygy_path_option
@click.option("--jobs", type=click.IntRange(1), default=default_jobs(), show_default="2 where "
              "the machine has two cores or more",
              help="Processes that compile at once where the cache lacks the search: with 2, a second one "
                   "compiles the compiled prober and the evaluation's features while this one compiles the "
                   "search (its steps are printed last; more than 2 do as 2).")
@user_errors
def warm(syzygy_path: str | None, jobs: int) -> None:
    """Compile the search core and write numba's cache (run once after installing; the README's set-up
    does). The first run compiles (a minute or two); later runs load the cache in about a second.

    Runs every compiled entry point through public APIs: a perft of the move generator, the
    evaluation's features, depth-3 searches of an endgame and a middlegame, and one that probes the
    tables (when tables are found). Prints each step's seconds, and the total wall time.
    """
    start = time.perf_counter()
    def report(what: str, outcome: float | str) -> None:
        click.echo(f"{what:<40}" + (f"{outcome:>8.2f} s" if isinstance(outcome, float) else f"skipped ({outcome})"))

    run(syzygy_path, on_step=report, jobs=jobs)
    total = time.perf_counter() - start
    click.echo(f"{'total':<40}{total:>8.2f} s")
    if not jit.COMPILED:
        click.echo("numba is missing or NUMBA_DISABLE_JIT is set: the core runs as plain Python, nothing to cache")
    elif cache := cache_directory():
        click.echo(f"numba {jit.numba.__version__}: compiled, or loaded from the cache where it was there; "
                   f"cache: {cache}")
    else:
        click.echo(f"numba {jit.numba.__version__}: compiled without a cache (no writable cache directory; set "
                   "NUMBA_CACHE_DIR): every start compiles again")
