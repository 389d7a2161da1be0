"""Ctrl-C held off: the one place that takes SIGINT over for a while, so that work in progress ends cleanly."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def sigint_deferred(on_signal: Callable[[], None]) -> Iterator[bool]:
    """Inside the block, Ctrl-C (SIGINT) calls ``on_signal`` instead of raising KeyboardInterrupt at once.

    Only in the main thread and only while Python's default handler is installed (a program that set its own
    keeps it); the block gets True when it took the signal over. Python's default handler is back when the
    block ends: the caller decides what a Ctrl-C that came meanwhile does (the search stops at its next check
    and raises; a match finishes handing over the game, then raises).
    """
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield False
        return
    signal.signal(signal.SIGINT, lambda signum, frame: on_signal())
    try:
        yield True
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
