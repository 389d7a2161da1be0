"""What every command of ``chess-endgame`` promises, checked by walking the whole click tree.

Sweeps over all commands and options, so that a new command or option cannot
bring back a bug class fixed once: click's multi-line usage errors, options
without help, tracebacks on bad files or engines.
"""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from chess_endgame_cli.main import cli


def leaf_commands(group: click.Group = cli, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    """(name path, command) of every runnable command, e.g. (("tablebases", "download"), <Command>)."""
    found = []
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            found += leaf_commands(command, path + (name,))
        else:
            found.append((path + (name,), command))
    return found


COMMANDS = leaf_commands()


def options(command: click.Command) -> list[click.Option]:
    return [p for p in command.params if isinstance(p, click.Option) and not p.hidden]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def assert_one_line_error(code: int, out: str, err: str, *words: str) -> None:
    """Exit 2, nothing on stdout, exactly one ``chess-endgame: error:`` line on stderr naming ``words``."""
    assert code == 2, (code, out, err)
    assert out == "", out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("chess-endgame: error: "), err
    assert "Traceback" not in err and "Usage:" not in err
    for word in words:
        assert word in lines[0], (word, err)


def bad_values(option: click.Option) -> list[str]:
    """Values click itself must reject for ``option`` (wrong type, out of range, not a choice)."""
    kind = option.type
    if isinstance(kind, click.Choice):
        return ["no-such-choice"]
    values = []
    if isinstance(kind, (click.types.IntParamType, click.types.FloatParamType)):
        values.append("not-a-number")
    if isinstance(kind, click.types._NumberRangeBase):
        if kind.min is not None:
            values.append(str(kind.min - 1))
        if kind.max is not None:
            values.append(str(kind.max + 1))
    return values


VALUE_CASES = [(path, option.opts[0], value) for path, command in COMMANDS for option in options(command)
               if not option.is_flag for value in bad_values(option)]


def test_the_sweep_sees_every_command() -> None:
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"probe", "best", "play", "eval", "suite", "tune", "uci", "tablebases download",
            "bench search"} <= names
    assert len(VALUE_CASES) > 30


@pytest.mark.parametrize(("path", "name", "value"), VALUE_CASES,
                         ids=[f"{' '.join(p)} {n} {v}" for p, n, v in VALUE_CASES])
def test_bad_option_values_give_one_line(path: tuple[str, ...], name: str, value: str) -> None:
    assert_one_line_error(*run(*path, name, value), name)


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=[" ".join(p) for p, _ in COMMANDS])
def test_unknown_options_give_one_line(path: tuple[str, ...]) -> None:
    assert_one_line_error(*run(*path, "--no-such-option"), "--no-such-option", " ".join(path))


@pytest.mark.parametrize("path", [p for p, c in COMMANDS if any(a.required for a in c.params
                                                                     if isinstance(a, click.Argument))],
                         ids=lambda p: " ".join(p))
def test_missing_arguments_give_one_line(path: tuple[str, ...]) -> None:
    assert_one_line_error(*run(*path), "missing argument")


def test_unknown_command_gives_one_line() -> None:
    assert_one_line_error(*run("no-such-command"), "no-such-command")
    assert_one_line_error(*run("bench", "no-such-benchmark"), "no-such-benchmark")
