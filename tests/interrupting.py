"""Pressing Ctrl-C at a real ``chess-endgame`` process once it is at work, as a terminal would."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import signal
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Callable
from typing import IO

from .conftest import EXECUTABLE

#: (stdout so far, stderr so far, seconds since the start) -> whether to press Ctrl-C now.
Ready = Callable[[str, str, float], bool]


def interrupt(args: list[str], ready: Ready, *, timeout: float = 120,
              terminal: bool = False) -> tuple[int, str, str]:
    """Run ``chess-endgame ARGS``, send SIGINT once ``ready``, and return (exit code, stdout, stderr).

    ``terminal``: standard error is a pseudo-terminal (80 columns), as a user's is, so the progress bars show.
    """
    out: list[str] = []
    err: list[str] = []
    if terminal:
        primary, secondary = pty.openpty()
        fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        proc = subprocess.Popen([EXECUTABLE, *args], stdout=subprocess.PIPE, stderr=secondary, text=True)
        os.close(secondary)
        stderr = os.fdopen(primary, "r", errors="replace")
    else:
        proc = subprocess.Popen([EXECUTABLE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        stderr = proc.stderr

    def read(stream: IO[str], into: list[str]) -> None:
        try:
            into.extend(iter(lambda: stream.read(1), ""))  # by character: progress bars end in a carriage return
        except OSError:  # the pseudo-terminal's end once the program has exited
            pass

    readers = [threading.Thread(target=read, args=(stream, into), daemon=True)
               for stream, into in ((proc.stdout, out), (stderr, err))]
    for reader in readers:
        reader.start()
    start = time.monotonic()
    try:
        while not ready("".join(out), "".join(err), time.monotonic() - start):
            assert proc.poll() is None, f"finished before Ctrl-C: {''.join(out)}{''.join(err)}"
            assert time.monotonic() - start < timeout, "never got to work"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    for reader in readers:
        reader.join(timeout=10)
    if terminal:
        stderr.close()
    return code, "".join(out), "".join(err)


def after(seconds: float) -> Ready:
    return lambda out, err, elapsed: elapsed >= seconds


def after_output(text: str, seconds: float) -> Ready:
    """Ready ``seconds`` after ``text`` appeared on stdout."""
    seen: list[float] = []

    def ready(out: str, err: str, elapsed: float) -> bool:
        if text in out and not seen:
            seen.append(elapsed)
        return bool(seen) and elapsed >= seen[0] + seconds

    return ready


def progress_shows(desc: str, done: int) -> Ready:
    """Ready once the progress bar ``desc`` (on a terminal) counts at least ``done`` items done."""
    pattern = re.compile(rf"{re.escape(desc)}:.*?(\d+)/\d+")
    return lambda out, err, elapsed: any(int(n) >= done for n in pattern.findall(err))
