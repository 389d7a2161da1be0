"""The ``chess-endgame`` console script's entry point: it loads the program, then runs it.

Loading (numpy, numba, click and every command) takes a moment; a Ctrl-C then would end in Python's
traceback, or be lost inside a library that catches everything while it imports. Here it ends like a
Ctrl-C at work: one line on stderr and exit status 130.

A Ctrl-C can also be swallowed at work: when it lands while a library runs Python code for C (numba's
linker calls back into Python through ctypes), the KeyboardInterrupt is only reported as "Exception
ignored", and the program would run on. Such a Ctrl-C is pressed again for the user. And a Ctrl-C
while numba compiles waits until it is done (:func:`~chess_endgame.engine.core.jit.hold_ctrl_c_while_compiling`).

SIGTERM (``kill``, ``timeout``, a service manager's stop) ends the program as a Ctrl-C does, so that what is done
is kept: the match's games and report, the suite's positions. Where Ctrl-C is ignored (a script's background
job) or not Python's to handle, SIGTERM ends the program at once, as it would without this.

Only the standard library's lightest modules are imported here, so that all this is in place 25 ms after
the start (Python's own start-up before that cannot be helped).
"""

from __future__ import annotations

import importlib
import signal
import sys
from collections.abc import Callable
from types import FrameType, ModuleType

STARTING = "\nchess-endgame: interrupted while starting; nothing was done\n"
#: Seconds before a swallowed Ctrl-C is pressed again: the library's C code returns first.
AGAIN_AFTER = 0.01


def main() -> None:
    """Import :mod:`chess_endgame_cli.main` and run its ``main``."""
    sys.unraisablehook = _pass_interrupts_on(sys.unraisablehook)
    ours = signal.getsignal(signal.SIGINT) is signal.default_int_handler  # not when ignored, or someone else's
    pressed: list[bool] = []
    program: ModuleType | None = None

    def ctrl_c(signum: int, frame: FrameType | None) -> None:
        pressed.append(True)
        if program is None:  # loaded: the press is seen below, and nothing raises between here and there
            raise KeyboardInterrupt

    if ours:
        signal.signal(signal.SIGINT, ctrl_c)
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _terminate)
    try:
        program = importlib.import_module("chess_endgame_cli.main")
        importlib.import_module("chess_endgame.engine.core.jit").hold_ctrl_c_while_compiling()
    except BaseException as exc:  # a Ctrl-C, or what a library made of it (RuntimeError from __set_name__, ...)
        if not (pressed or isinstance(exc, KeyboardInterrupt)):
            raise
    finally:
        if ours:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    if pressed or program is None:  # raised, or caught and dropped by the code it landed in
        sys.stderr.write(STARTING)
        sys.exit(130)
    program.main()


def _terminate(signum: int, frame: FrameType | None) -> None:
    """SIGTERM: a Ctrl-C, while Python handles Ctrl-C; else the default end (a process that set Ctrl-C aside)."""
    if callable(signal.getsignal(signal.SIGINT)):
        signal.raise_signal(signal.SIGINT)
    else:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.raise_signal(signal.SIGTERM)


def _pass_interrupts_on(hook: Callable[[sys.UnraisableHookArgs], object]) -> Callable[[sys.UnraisableHookArgs], None]:
    """An unraisable hook that presses a swallowed Ctrl-C again, and hands anything else to ``hook``."""

    def unraisable(report: sys.UnraisableHookArgs) -> None:
        if isinstance(report.exc_value, KeyboardInterrupt):
            import threading  # loaded long before: a hook needs it only once the program runs

            # Not from here: the handler would run inside this hook, where it is lost again. To the main thread,
            # as a terminal's Ctrl-C: it wakes a sleep or a wait there.
            again = threading.Timer(AGAIN_AFTER, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT))
            again.daemon = True
            again.start()
            return
        hook(report)

    return unraisable
