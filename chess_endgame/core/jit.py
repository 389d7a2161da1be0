"""numba's ``njit`` as the core uses it, or a plain-Python stand-in when numba is missing.

Compiled functions are cached on disk (``cache=True``) and release the GIL
(``nogil=True``) so that a UCI thread can serve ``stop`` and ``isready`` while the
search runs. numba writes its cache to the first writable of: ``NUMBA_CACHE_DIR``,
the package's ``__pycache__`` directories, the user cache directory
(``~/.cache/numba`` on Linux, or ``$XDG_CACHE_HOME/numba``). Where none is writable
numba refuses ``cache=True``; the functions are then compiled without a cache (at
every start, which takes seconds) and one line on stderr says how to keep them.
"""

from __future__ import annotations

import os
import sys
import warnings

try:
    import numba
except ImportError:  # pragma: no cover - exercised by installs without numba
    numba = None

#: True when the core runs compiled (numba present and ``NUMBA_DISABLE_JIT`` unset).
COMPILED = numba is not None and os.environ.get("NUMBA_DISABLE_JIT", "0") in ("", "0")

if not COMPILED:
    # Plain numpy scalars warn where machine integers wrap silently (Zobrist keys, bit tricks).
    warnings.filterwarnings("ignore", message="overflow encountered", category=RuntimeWarning)


#: False once numba found no writable cache directory (the functions then compile at every start).
CACHED = True


def njit(func):
    """Compile ``func`` with numba (cached, GIL released), or return it unchanged without numba.

    ``error_model="numpy"``: integer division does not test for a zero divisor (the core never
    divides by zero), which spares a branch in the hot loop."""
    global CACHED
    if numba is None:
        return func
    if CACHED:
        try:
            return numba.njit(cache=True, nogil=True, error_model="numpy")(func)
        except RuntimeError as exc:  # "cannot cache function ...: no locator available": nowhere to write
            if "cannot cache" not in str(exc):
                raise
            CACHED = False
            sys.stderr.write("chess-endgame: numba can write its cache nowhere (the package directory and "
                             "~/.cache are read-only); compiling at every start (set NUMBA_CACHE_DIR to a "
                             "writable directory to keep the compiled code)\n")
    return numba.njit(nogil=True, error_model="numpy")(func)
