"""Shared pieces of the CLI: error reporting, the --syzygy-path option, positions."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import chess
import click

from chess_endgame.player import DEFAULT_MOVETIME_MS, Player, PlayerOptions
from chess_endgame.position import PositionError, parse_position
from chess_endgame.tablebase import HOW_TO_GET_TABLES, Prober, resolve_path

F = TypeVar("F", bound=Callable[..., Any])

#: Exit code for bad input (like click's usage errors).
EXIT_USAGE = 2


class UserError(click.ClickException):
    """A one-line error for the user; exit code 2."""

    exit_code = EXIT_USAGE

    def show(self, file: Any = None) -> None:
        click.echo(f"chess-endgame: error: {self.format_message()}", err=True)


def fail(message: str) -> NoReturn:
    raise UserError(message)


def user_errors(func: F) -> F:
    """Turn known bad-input exceptions into one line on stderr and exit code 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except BrokenPipeError:
            raise  # the reader went away (e.g. `| head`): not the user's error
        except (PositionError, ValueError, OSError) as exc:
            fail(str(exc))

    return wrapper  # type: ignore[return-value]


def syzygy_path_option(func: F) -> F:
    return click.option(
        "--syzygy-path", metavar="DIRS", default=None,
        help="Syzygy directories, separated by the OS path separator (default: $SYZYGY_PATH, "
             "else the checkout's tablebases/).")(func)


def load_prober(syzygy_path: str | None, *, required: bool = False, **kwargs: int) -> Prober:
    """A prober on the chosen path; warns about missing directories the user named.

    With ``required`` a path without any table is an error (exit 2) that says how
    to get tables.
    """
    explicit = syzygy_path or os.environ.get("SYZYGY_PATH")
    path = resolve_path(syzygy_path)
    prober = Prober(path, **kwargs)
    if explicit:
        for directory, problem in prober.files.bad_directories.items():
            click.echo(f"chess-endgame: warning: Syzygy directory {directory}: {problem}", err=True)
    if required and not prober.available:
        fail(f"no Syzygy tables found in {path}; {HOW_TO_GET_TABLES}")
    return prober


def board_from(fen: str, moves: tuple[str, ...]) -> chess.Board:
    """The position after ``moves`` from ``fen`` (``startpos`` allowed); exit 2 on bad input."""
    if fen.strip() == "startpos":
        fen = chess.STARTING_FEN
    try:
        return parse_position(fen, _split_moves(moves))
    except PositionError as exc:
        fail(str(exc))


def _split_moves(tokens: tuple[str, ...]) -> list[str]:
    """UCI moves from the tokens after the FEN: ``--moves e2e4 e7e5`` (also ``--moves=a,b``)."""
    moves: list[str] = []
    seen_flag = False
    for token in tokens:
        if token == "--moves":
            seen_flag = True
            continue
        if token.startswith("--moves="):
            seen_flag, token = True, token.split("=", 1)[1]
        elif token.startswith("-"):
            fail(f"no such option: {token}")
        if not seen_flag:
            fail(f"unexpected argument {token!r} after the FEN (quote the FEN; moves go after --moves)")
        moves.extend(token.replace(",", " ").split())
    return moves


def position_arguments(func: F) -> F:
    """``FEN [--moves M1 M2 ...]``: the FEN, then the game's moves in UCI."""
    func = click.argument("moves", nargs=-1, metavar="[--moves M1 M2 ...]")(func)
    return click.argument("fen")(func)


#: Commands taking ``--moves M1 M2 ...`` must let unknown tokens reach the moves argument.
POSITION_CONTEXT = {"ignore_unknown_options": True}


def limit_options(func: F) -> F:
    """--movetime/--depth/--nodes: how long the player may think per move."""
    func = click.option("--nodes", type=click.IntRange(1, None), default=None, help="Search at most N nodes.")(func)
    func = click.option("--depth", type=click.IntRange(1, 128), default=None, help="Search to depth N.")(func)
    return click.option("--movetime", type=click.IntRange(1, None), default=None, metavar="MS",
                        help=f"Think MS milliseconds (default {DEFAULT_MOVETIME_MS} when no limit is given).")(func)


def search_limits(movetime: int | None, depth: int | None, nodes: int | None) -> dict[str, int | None]:
    if movetime is None and depth is None and nodes is None:
        movetime = DEFAULT_MOVETIME_MS
    return {"movetime": movetime, "depth": depth, "nodes": nodes}


def make_player(syzygy_path: str | None, *, hash_mb: int = 16, faster_mate: bool = True) -> Player:
    """The project's player on the chosen tables (a warning for missing directories the user named)."""
    return Player(load_prober(syzygy_path), options=PlayerOptions(hash_mb=hash_mb, faster_mate=faster_mate))


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2))

