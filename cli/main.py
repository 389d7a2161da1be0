"""The ``chess-endgame`` command: a click group of subcommands."""

from __future__ import annotations

import os
import sys

import click

from chess_endgame.version import __version__

from .bench import bench
from .common import CommandGroup
from .evaluate import evaluate
from .match import match
from .play import best, play
from .probe import probe
from .review import review
from .serve import serve
from .suite import suite
from .tablebases import tablebases
from .train import train
from .tune import tune
from .uci import uci
from .warm import warm


@click.group(cls=CommandGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="chess-endgame")
def cli() -> None:
    """Chess endgame player: Syzygy tablebases where they reach, alpha-beta search beyond."""


cli.add_command(probe)
cli.add_command(tablebases)
cli.add_command(bench)
cli.add_command(best)
cli.add_command(play)
cli.add_command(evaluate)
cli.add_command(uci)
cli.add_command(suite)
cli.add_command(tune)
cli.add_command(serve)
cli.add_command(match)
cli.add_command(review)
cli.add_command(warm)
cli.add_command(train)


def main() -> None:
    """Console-script entry point."""
    try:
        cli(prog_name="chess-endgame")
    except BrokenPipeError:
        # The reader of our output went away (`| head`): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(141)
