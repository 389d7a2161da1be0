"""Where a command's output goes: files and standard output written so that nothing is lost when writing fails
(the disk full, the directory gone, the pipe closed): what could not be written is kept in a file of the
temporary directory, named on stderr, and the command exits 1 (:class:`.common.CommandGroup`)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from typing import Any, TextIO

import click

#: The file name that means standard output.
STDOUT = "-"


def stdout_broken(exc: OSError) -> bool:
    """Whether ``exc`` came from printing a command's text (``click.echo``): standard output failed."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code is click.echo.__code__:
            return True
        tb = tb.tb_next
    return False


def fallback_path(path: str) -> str:
    """A new file in the temporary directory for what could not be written to ``path`` (same suffix)."""
    handle, fallback = tempfile.mkstemp(prefix="chess-endgame-", suffix=os.path.splitext(path)[1] or ".txt")
    os.close(handle)
    return fallback


class _KeptWriter(io.StringIO):
    """Text written to a file (or to standard output, ``path`` ``-``) and kept in memory too, so that a failing
    disk or a closed pipe loses nothing."""

    def __init__(self, path: str, newline: str | None) -> None:
        super().__init__(newline=newline)
        self.problem: str | None = None
        self._file: TextIO | None = None
        self._stdout = path == STDOUT
        if self._stdout:
            self._file = sys.stdout
            return
        try:
            self._file = open(path, "w", encoding="utf-8", newline=newline)  # noqa: SIM115 - closed in finish()
        except OSError as exc:
            self.problem = exc.strerror or str(exc)

    def write(self, text: str) -> int:
        if self._file is not None:
            try:
                self._file.write(text)
            except OSError as exc:
                self._give_up(exc)
        return super().write(text)

    def flush(self) -> None:
        if self._file is not None:
            try:
                self._file.flush()
            except OSError as exc:
                self._give_up(exc)

    def finish(self) -> None:
        if self._file is not None:
            try:
                self._file.flush() if self._stdout else self._file.close()
            except OSError as exc:
                self._give_up(exc)
            self._file = None

    def _give_up(self, exc: OSError) -> None:
        self.problem = exc.strerror or str(exc)
        if self._stdout:
            silence_stdout()
        else:
            with contextlib.suppress(OSError):
                self._file.close()  # type: ignore[union-attr]
        self._file = None


def silence_stdout() -> None:
    """Standard output failed (a full disk, a closed pipe): point it at the null device, so that what is still
    in its buffer is not written again, with an error, as Python exits (Python's own advice for a closed pipe)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


#: Outputs that could not be written where asked, and where they went instead (the command then exits 1).
MOVED_OUTPUTS: list[tuple[str, str]] = []


@contextlib.contextmanager
def open_output(path: str, *, newline: str | None = None) -> Iterator[TextIO]:
    """``path`` opened for writing text (UTF-8); ``-`` is standard output (left open).

    If the file (or standard output) cannot be written after all (the disk filled up, the directory went away
    since the check before the work, the pipe was closed), what was written goes to a file in the temporary
    directory instead, one line on stderr names it, the command goes on with its other outputs, and it exits 1
    at the end.
    """
    writer = _KeptWriter(path, newline)
    try:
        yield writer  # type: ignore[misc]
    finally:
        writer.finish()
        if writer.problem is not None:
            fallback = fallback_path(".txt" if path == STDOUT else path)
            with open(fallback, "w", encoding="utf-8", newline=newline) as f:
                f.write(writer.getvalue())
            shown = "standard output" if path == STDOUT else path
            click.echo(f"chess-endgame: error: cannot write {shown}: {writer.problem}; it is in {fallback} instead",
                       err=True)
            MOVED_OUTPUTS.append((path, fallback))


def kept_at(path: str) -> str:
    """Where :func:`open_output` wrote what was asked for ``path``: ``path``, or the file of the temporary
    directory it went to instead (and named)."""
    return next((fallback for asked, fallback in reversed(MOVED_OUTPUTS) if asked == path), path)


def written(path: str) -> bool:
    """Whether :func:`open_output` wrote ``path`` where asked: the one to say "written to" after."""
    return kept_at(path) == path


def echo_json(data: Any) -> None:
    """``data`` as JSON on standard output (kept in a file if standard output cannot be written)."""
    with open_output(STDOUT) as f:
        f.write(json.dumps(data, indent=2) + "\n")

