"""numba's ``njit`` as the core uses it, or a plain-Python stand-in when numba is missing.

Compiled functions are cached on disk (``cache=True``) and release the GIL
(``nogil=True``) so that a UCI thread can serve ``stop`` and ``isready`` while the
search runs. numba writes its cache to the first writable of: ``NUMBA_CACHE_DIR``,
the package's ``__pycache__`` directories, the user cache directory
(``~/.cache/numba`` on Linux, or ``$XDG_CACHE_HOME/numba``). Where none is writable
numba refuses ``cache=True``; the functions are then compiled without a cache (at
every start, which takes seconds) and one line on stderr says how to keep them.

numba stamps a cached function with the hash of its own source file only, so a change in a
function it calls from another file (the evaluation, which the tree compiles into itself) would
leave the old machine code in the cache. Here every file of the core is stamped with the digest of
all of them (:func:`sources_digest`): any change to the core recompiles all of it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import time
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

#: The directory of the core's source files.
CORE_DIR = os.path.dirname(os.path.abspath(__file__))


def sources_digest(directory: str = CORE_DIR) -> bytes:
    """SHA-256 of the ``.py`` files of ``directory``: their names and contents, in name order."""
    digest = hashlib.sha256()
    for name in sorted(os.listdir(directory)):
        if name.endswith(".py"):
            with open(os.path.join(directory, name), "rb") as f:
                digest.update(name.encode() + b"\0" + f.read() + b"\0")
    return digest.digest()


def _stamp_the_core_as_one() -> None:
    """Give every cache locator numba tries a subclass whose stamp for a file of the core is
    :func:`sources_digest` (numba's own: that file's hash). Other files keep numba's stamp."""
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)  # public from 0.61
    if impl is None or not getattr(impl, "_locator_classes", None):
        return
    core_digest = functools.cache(sources_digest)  # read when numba first loads or saves an entry, not at import

    def stamped(locator: type) -> type:
        def get_source_stamp(self):
            py_file = getattr(self, "_py_file", None)
            if py_file and os.path.dirname(os.path.abspath(py_file)) == CORE_DIR:
                return core_digest()
            return locator.get_source_stamp(self)

        return type(locator.__name__, (locator,), {"get_source_stamp": get_source_stamp, "__module__": __name__})

    impl._locator_classes = [stamped(locator) for locator in impl._locator_classes]


if numba is not None:
    _stamp_the_core_as_one()


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


if COMPILED:
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    @intrinsic
    def cycles(typingctx):
        """The processor's cycle counter (LLVM's ``readcyclecounter``: the time-stamp counter on x86), to time
        short stretches of compiled code; calibrate it against a clock to get seconds."""

        def codegen(context, builder, signature, args):
            function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(64), []),
                                                      "llvm.readcyclecounter")
            return builder.call(function, [])

        return types.uint64(), codegen
else:
    def cycles() -> int:
        """Nanoseconds of a monotonic clock (what stands for the cycle counter without numba)."""
        return time.perf_counter_ns()


@njit
def read_cycles():
    """:func:`cycles`, callable from Python."""
    return cycles()


@functools.cache
def cycles_per_second() -> float:
    """How fast :func:`cycles` counts, measured once against ``time.perf_counter`` over 50 ms."""
    read_cycles()  # compiled before the clock starts
    start, first = time.perf_counter(), read_cycles()
    time.sleep(0.05)
    return (int(read_cycles()) - int(first)) / (time.perf_counter() - start)
