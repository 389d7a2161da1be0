"""Shared pieces of the CLI: error reporting, the --syzygy-path option, positions."""

from __future__ import annotations

import functools
import math
import os
import shlex
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeVar

import chess
import click
from click.core import ParameterSource

from chess_endgame.batch.protocol import Backend, BackendError
from chess_endgame.batch.runner import choose_backend
from chess_endgame.board import PositionError, parse_position
from chess_endgame.engine.player import DEFAULT_MOVETIME_MS, Player, PlayerOptions
from chess_endgame.tablebase.lichess import check_url
from chess_endgame.tablebase.paths import HOW_TO_GET_TABLES, resolve_path, split_path
from chess_endgame.tablebase.prober import Prober
from chess_endgame.tablebase.remote import RemoteProber, default_cache_path

from .outputs import MOVED_OUTPUTS, STDOUT, silence_stdout, stdout_broken

F = TypeVar("F", bound=Callable[..., Any])

#: Exit code for bad input (like click's usage errors).
EXIT_USAGE = 2
#: Exit code after Ctrl-C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130


def error_line(exc: click.ClickException) -> str:
    """The one line every error prints: ``chess-endgame: error: <message>``.

    Click's usage errors ("Invalid value for '--depth': ...") get the command's
    ``--help`` as a hint instead of click's usage block.
    """
    message = " ".join(exc.format_message().split())
    if isinstance(exc, click.UsageError):
        if len(message) > 1 and message[0].isupper() and message[1].islower():
            message = message[0].lower() + message[1:]
        message = message.rstrip(".")
        if exc.ctx is not None:
            message += f" (see '{exc.ctx.command_path} --help')"
    return f"chess-endgame: error: {message}"


class UserError(click.ClickException):
    """A one-line error for the user; exit code 2."""

    exit_code = EXIT_USAGE

    def show(self, file: Any = None) -> None:
        click.echo(error_line(self), err=True)


def fail(message: str) -> NoReturn:
    raise UserError(message)


def uci_options(pairs: tuple[str, ...], flag: str) -> tuple[tuple[str, str], ...]:
    """``NAME=VALUE`` options of a UCI engine given with ``flag`` (repeatable), as (name, value) pairs."""
    parsed = []
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            fail(f"{flag} takes NAME=VALUE, got {pair!r}")
        parsed.append((name.strip(), value.strip()))
    return tuple(parsed)


def interrupted(what: str) -> NoReturn:
    """After Ctrl-C: say what was kept, in one line on stderr, and exit 130."""
    click.echo(f"chess-endgame: interrupted; {what}", err=True)
    sys.exit(EXIT_INTERRUPTED)


class CommandGroup(click.Group):
    """The top-level group: one error format for every command, and exit 130 on Ctrl-C.

    Every click error (a bad option value, a missing argument, an unknown
    option) and every :class:`UserError` prints one line on stderr and exits
    with its code (2 for bad usage); Ctrl-C that no command handled exits 130.
    """

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        MOVED_OUTPUTS.clear()
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except SystemExit as exc:
            code = exc.code
        except click.exceptions.NoArgsIsHelpError as exc:
            exc.show()  # no command given: the help text, as click prints it
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            click.echo(error_line(exc), err=True)
            sys.exit(exc.exit_code)
        except (click.Abort, KeyboardInterrupt):
            interrupted("nothing was kept")
        except OSError as exc:
            if not stdout_broken(exc):
                raise
            silence_stdout()
            click.echo(f"chess-endgame: error: cannot write standard output: {exc.strerror or exc}", err=True)
            sys.exit(1)
        except Exception as exc:
            if not caused_by_ctrl_c(exc):
                raise
            interrupted("nothing was kept")
        code = code if isinstance(code, int) else 0
        sys.exit(1 if code == 0 and MOVED_OUTPUTS else code)  # an output went elsewhere: not a success


def caused_by_ctrl_c(exc: BaseException) -> bool:
    """Whether a Ctrl-C is behind ``exc``: C code that Python interrupted may report another error with the
    KeyboardInterrupt as its cause (numba's dispatcher: "SystemError: ... returned a result with an exception
    set"; a class body: "RuntimeError: Error calling __set_name__")."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__
    return False


def user_errors(func: F) -> F:
    """Turn known bad-input exceptions into one line on stderr and exit code 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except BrokenPipeError:
            raise  # the reader went away (e.g. `| head`): not the user's error
        except (PositionError, ValueError, OSError) as exc:
            if caused_by_ctrl_c(exc):
                raise
            fail(str(exc))

    return wrapper  # type: ignore[return-value]


class FiniteFloatRange(click.FloatRange):
    """click's FloatRange without NaN and infinity, which it lets through (a comparison with NaN is false, and
    a range open above takes infinity)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


class EngineCommand(click.ParamType):
    """A UCI engine's command line (shell words, e.g. ``/usr/games/stockfish``); refused when empty.

    Whether the program is a UCI engine shows only when it starts:
    :func:`chess_endgame.play.engines.start_uci` says so in one line within seconds.
    """

    name = "UCI command"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            words = shlex.split(str(value))
        except ValueError as exc:
            self.fail(f"cannot parse the engine command {value!r}: {exc}", param, ctx)
        if not words:
            self.fail("the UCI engine command is empty", param, ctx)
        return str(value)


def writable_file(path: str) -> str | None:
    """Why ``path`` cannot be written (None: it can), found by doing it: an existing file is opened for
    appending (its content untouched), a new one is created and removed. Permission bits say nothing to
    root, and a read-only or virtual file system (/sys, /proc, a full disk) only says no when asked."""
    if os.path.isdir(path):
        return f"{path} is a directory"
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        return f"the directory {directory} does not exist"
    try:
        if os.path.exists(path):
            with open(path, "a", encoding="utf-8"):
                pass
        else:
            with open(path, "x", encoding="utf-8"):
                pass
            os.remove(path)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def writable_directory(path: str) -> str | None:
    """Why files cannot be written into the directory ``path`` (None: they can), found by making it (with
    its parents, as the command will) and writing a probe file in it."""
    if os.path.exists(path) and not os.path.isdir(path):
        return f"{path} is not a directory"
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".chess-endgame-probe-"):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


class OutputFile(click.ParamType):
    """A file the command will write (``-``: standard output), checked before any work starts by creating it
    (:func:`writable_file`), so that a long run never ends in "cannot write". Write it with
    :func:`open_output`.
    """

    name = "FILE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        path = os.fspath(value)
        if path != STDOUT and (problem := writable_file(path)) is not None:
            self.fail(f"cannot write {path}: {problem}", param, ctx)
        return path


class OutputDirectory(click.ParamType):
    """A directory the command will write files into, checked before any work starts by making it and
    writing a probe file in it (:func:`writable_directory`)."""

    name = "DIR"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        path = os.fspath(value)
        if (problem := writable_directory(path)) is not None:
            self.fail(f"cannot write into {path}: {problem}", param, ctx)
        return path


def one_stdout(outputs: dict[str, str | bool | None]) -> bool:
    """Whether some output goes to standard output (exit 2 when more than one would).

    ``outputs``: option name (``--pgn``) -> its file, or True for a flag such as
    ``--json`` that prints to standard output. With one of them on standard
    output, the command's text report goes to stderr.
    """
    on_stdout = [name for name, value in outputs.items() if value is True or value == STDOUT]
    if len(on_stdout) > 1:
        fail(f"only one output can go to standard output, not {' and '.join(on_stdout)}")
    return bool(on_stdout)


def syzygy_path_option(func: F) -> F:
    return click.option(
        "--syzygy-path", metavar="DIRS", default=None,
        help="Syzygy directories, separated by the OS path separator (default: $SYZYGY_PATH, else the "
             "per-user directory); the embedded 3-4-piece tables answer for what they lack.")(func)


def prober_option(func: F) -> F:
    return click.option(
        "--prober", "backend", type=click.Choice(["compiled", "python-chess"]), default=None,
        help="The tablebase prober: compiled (the default with numba) or python-chess's (the reference).")(func)


def warn_bad_directories(syzygy_path: str | None, bad: dict[str, str]) -> None:
    """A warning on stderr for each tables directory that cannot be read, where the user named the path
    (``--syzygy-path`` or ``$SYZYGY_PATH``; the default directories may well be absent)."""
    if syzygy_path or os.environ.get("SYZYGY_PATH"):
        for directory, problem in bad.items():
            click.echo(f"chess-endgame: warning: Syzygy directory {directory}: {problem}", err=True)


def load_prober(syzygy_path: str | None, *, required: bool = False, **kwargs: object) -> Prober:
    """A prober on the chosen path; warns about missing directories the user named.

    With ``required`` a path without any table is an error (exit 2) that says how
    to get tables.
    """
    path = resolve_path(syzygy_path)
    prober = Prober(path, **kwargs)  # type: ignore[arg-type]
    warn_bad_directories(syzygy_path, prober.files.bad_directories)
    if required and not prober.available:
        fail(f"no Syzygy tables found in {path}; {HOW_TO_GET_TABLES}")
    return prober


def board_from(fen: str, moves: Sequence[str] = ()) -> chess.Board:
    """The position after ``moves`` (UCI) from ``fen`` (``startpos`` allowed); exit 2 on bad input."""
    if fen.strip() == "startpos":
        fen = chess.STARTING_FEN
    try:
        return parse_position(fen, moves)
    except PositionError as exc:
        fail(str(exc))


def split_position(tokens: Sequence[str], moves_flag: bool) -> tuple[str, list[str]]:
    """(FEN, UCI moves) from the words of :func:`position_arguments`.

    Without ``--moves`` the only word is the FEN. With it, the word that holds a
    ``/`` (or is ``startpos``) is the FEN, before or after the moves; every other
    word is a move (``e2e4``, also ``e2e4,e7e5``), in the order given.
    """
    if not tokens:
        fail("no FEN given")
    if not moves_flag:
        if len(tokens) > 1:
            fail(f"unexpected argument {tokens[1]!r} after the FEN (quote the FEN; moves go after --moves)")
        return tokens[0], []
    fens = [i for i, token in enumerate(tokens) if "/" in token or token.strip() == "startpos"]
    if len(fens) != 1:
        fail("no FEN among the arguments (a FEN has 8 ranks separated by '/'; or startpos)" if not fens
             else f"two FENs given: {tokens[fens[0]]!r} and {tokens[fens[1]]!r}")
    after = tokens[fens[0] + 1] if fens[0] + 1 < len(tokens) else ""
    if after in ("w", "b"):
        fail(f"unexpected argument {after!r} after the FEN (quote the FEN: it is one argument)")
    moves = [m for i, token in enumerate(tokens) if i != fens[0] for m in token.replace(",", " ").split()]
    return tokens[fens[0]], moves


def position_arguments(func: F) -> F:
    """``FEN [--moves M1 M2 ...]``: the FEN and the game's moves from it in UCI, in either order.

    The command gets ``position`` (the words) and ``moves`` (the flag); pass them
    to :func:`position_from`.
    """
    func = click.option("--moves", "moves", is_flag=True,
                        help="The game so far, from FEN: UCI moves (e2e4 e7e5 e1g1 e7e8q) as the words after "
                             "--moves; FEN may come before or after them. Repetitions and the halfmove clock "
                             "count them.")(func)
    return click.argument("position", nargs=-1, required=True, metavar="FEN [--moves M1 M2 ...]")(func)


def position_from(position: Sequence[str], moves: bool) -> chess.Board:
    """The board of :func:`position_arguments`' words; exit 2 on bad input."""
    return board_from(*split_position(position, moves))


def limit_options(func: F) -> F:
    """--movetime/--depth/--nodes: how long the player may think per move."""
    func = click.option("--nodes", type=click.IntRange(1, None), default=None, metavar="NODES",
                        help="Search at most NODES nodes per move.")(func)
    func = click.option("--depth", type=click.IntRange(1, 128), default=None, metavar="PLIES",
                        help="Search to this depth in plies per move.")(func)
    return click.option("--movetime", type=click.IntRange(1, None), default=None, metavar="MS",
                        help=f"Think MS milliseconds per move (default {DEFAULT_MOVETIME_MS} when no limit is "
                             "given).")(func)


def search_limits(movetime: int | None, depth: int | None, nodes: int | None) -> dict[str, int | None]:
    if movetime is None and depth is None and nodes is None:
        movetime = DEFAULT_MOVETIME_MS
    return {"movetime": movetime, "depth": depth, "nodes": nodes}


def make_player(syzygy_path: str | None, *, hash_mb: int = 16, faster_mate: bool = True,
                remote_tablebase: str | None = None) -> Player:
    """The project's player on the chosen tables (a warning for missing directories the user named),
    asking ``remote_tablebase`` at the root where they do not reach."""
    player = Player(load_prober(syzygy_path), options=PlayerOptions(hash_mb=hash_mb, faster_mate=faster_mate))
    player.set_remote(load_remote(remote_tablebase))
    return player


class RemoteURL(click.ParamType):
    """The base URL of a server speaking the Lichess tablebase API (``http://127.0.0.1:8000``)."""

    name = "URL"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            return check_url(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def remote_tablebase_option(func: F) -> F:
    return click.option(
        "--remote-tablebase", metavar="URL", type=RemoteURL(), default=None,
        help="Where the local tables do not reach, ask this server speaking the Lichess tablebase API (e.g. "
             "http://127.0.0.1:8000 from `chess-endgame serve`), at the root only; answers are cached in the "
             "user's cache directory.")(func)


def load_remote(url: str | None) -> RemoteProber | None:
    """A remote prober on ``url`` with the disk cache (None without a URL); exit 2 when it cannot be used."""
    if url is None:
        return None
    try:
        return RemoteProber(url, cache_path=default_cache_path())
    except ValueError as exc:
        fail(str(exc))


def cluster_option(func: F) -> F:
    """``--cluster ADDRESS``: the batch commands' work on Ray actors instead of local processes."""
    return click.option(
        "--cluster", metavar="ADDRESS", default=None,
        help="Run on a Ray cluster instead of local processes: auto (the cluster started on this machine with "
             "`ray start --head`), ray://HOST:PORT (a remote one, through Ray Client) or HOST:PORT (its head "
             "node). One Ray actor per --jobs, else one per CPU of the cluster; every node needs the tables at "
             "the same path. Needs the cluster extra: pip install -e \".[cluster]\".")(func)


def worker_syzygy_path(syzygy_path: str | None) -> str:
    """The Syzygy path the batch workers get: :func:`resolve_path`'s, each directory made absolute (a Ray
    actor runs in another directory, on another machine)."""
    return os.pathsep.join(os.path.abspath(d) for d in split_path(resolve_path(syzygy_path)))


def batch_backend(jobs: int, cluster: str | None, syzygy_path: str) -> Backend:
    """The batch runner's back end for ``--jobs`` and ``--cluster``: with ``--cluster`` and no ``--jobs``,
    one actor per CPU of the cluster, each checking that the tables of ``syzygy_path`` (the workers' path)
    are on its node. Exit 2 with one line when the cluster cannot be used (Ray missing, nothing at the
    address)."""
    ctx = click.get_current_context(silent=True)
    given = ctx is not None and ctx.get_parameter_source("jobs") not in (None, ParameterSource.DEFAULT)
    try:
        return choose_backend(jobs if cluster is None or given else None, cluster,
                              tables=syzygy_path if cluster else None)
    except BackendError as exc:
        fail(str(exc))
