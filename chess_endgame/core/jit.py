"""numba's ``njit`` as the core uses it, or a plain-Python stand-in when numba is missing.

Compiled functions are cached on disk (``cache=True``) and release the GIL
(``nogil=True``) so that a UCI thread can serve ``stop`` and ``isready`` while the
search runs. When the package directory is not writable numba falls back to its
own user cache directory; ``NUMBA_CACHE_DIR`` overrides both.
"""

from __future__ import annotations

import os
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


def njit(func):
    """Compile ``func`` with numba (cached, GIL released), or return it unchanged without numba."""
    if numba is None:
        return func
    return numba.njit(cache=True, nogil=True)(func)
