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
all of them (:func:`sources_digest`): any change to the core recompiles all of it. numba also reads a
stale index before it compares stamps, and an index that names a type the new sources no longer have (a
class moved between modules) would stop it with an error; such an index is read as empty instead
(:func:`_stale_index_is_empty`), so the code recompiles.
"""

from __future__ import annotations

import functools
import hashlib
import operator
import os
import pickle
import signal
import sys
import threading
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


def _stale_index_is_empty() -> None:
    """Make numba read a cache index it cannot unpickle (it names a class or module that is gone, or is cut
    short) as an empty one: the functions compile again and the index is rewritten, as for any stale entry."""
    from numba.core import caching

    cache_file = getattr(caching, "IndexDataCacheFile", None)
    load = getattr(cache_file, "_load_index", None)
    if load is None:  # another numba's layout: its own behaviour stands
        return

    def load_index(self):
        try:
            return load(self)
        except (AttributeError, ImportError, EOFError, pickle.UnpicklingError):
            return {}

    cache_file._load_index = load_index


def _saves_may_fail() -> None:
    """Make a cache save that fails (a full disk, a quota, a directory made read-only since numba chose it, a lock
    the file system refuses) leave the function compiled and uncached, with one line on stderr, instead of failing
    the compile that made it: the whole of numba's save (its check of the directory, the lock below, the files)."""
    from numba.core import caching

    cache = getattr(caching, "Cache", None)
    save = getattr(cache, "save_overload", None)
    if save is None:  # another numba's layout: its own behaviour stands
        return
    told: set[str] = set()  # once a directory

    def save_or_say(self, sig, data):
        try:
            return save(self, sig, data)
        except OSError as exc:
            where = getattr(self, "_cache_path", "numba's cache directory")
            if where not in told:
                told.add(where)
                sys.stderr.write(f"chess-endgame: numba could not save compiled code in {where} "
                                 f"({exc.strerror or exc}); running it uncached, compiled again at the next start "
                                 f"(free space there, or set NUMBA_CACHE_DIR to another directory)\n")
            return None

    cache.save_overload = save_or_say


def _saves_take_turns() -> bool:
    """Make numba's cache saves take turns between processes (an exclusive lock on a file beside the index);
    True once they do. numba names a new entry's data file by the first number the index it has just read does
    not use: two processes compiling different signatures of one function at once (two engines started together
    on an empty cache, or ``chess-endgame warm --jobs 2``) could both take the same number, and the index one of
    them wrote would then name the code the other wrote there. Under the lock each save reads the index the
    last one wrote. Without ``fcntl`` (Windows) saves stay numba's own."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return False
    from numba.core import caching

    cache_file = getattr(caching, "IndexDataCacheFile", None)
    save = getattr(cache_file, "save", None)
    if save is None:  # another numba's layout: its own behaviour stands
        return False

    def save_in_turn(self, key, data):
        try:
            handle = open(os.path.join(self._cache_path, "save.lock"), "a")
        except OSError:  # the directory cannot take the lock file: numba's own save (it will fail or not alone)
            return save(self, key, data)
        with handle:
            fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
            return save(self, key, data)

    cache_file.save = save_in_turn
    return True


#: True where numba's cache saves take turns between processes (:func:`_saves_take_turns`).
SAVES_TAKE_TURNS = False

if numba is not None:
    _stamp_the_core_as_one()
    _stale_index_is_empty()
    _saves_may_fail()
    SAVES_TAKE_TURNS = _saves_take_turns()

if COMPILED:
    from numba.experimental import structref

    class StructProxy(structref.StructRefProxy):
        """numba's proxy of a structref, whose numba type is read without running Python code.

        numba's own ``_numba_type_`` is a Python property. Its dispatcher reads it from C at every call and clears
        any error it raises: a Ctrl-C that Python delivers inside it is lost, and the program runs on (measured:
        45 of 1,000 presses over a loop of table probes). The same value through :func:`operator.attrgetter` runs
        no Python code, so the Ctrl-C is delivered just after the call instead."""

        _numba_type_ = property(operator.attrgetter("_type"))


#: The modules of the core whose compiled functions take bitboards, arrays and the core's structs of arrays
#: (:mod:`.structs`) from their callers and never allocate an array, return one or set a struct's field: they
#: are compiled without numba's reference counting (NRT). With it, every array argument, and every array read
#: from a struct, is counted at entry and at exit, an atomic operation each time, and that was a fifth of the
#: search's time (measured with ``perf``). The caller holds its arrays for the whole call, so no count is
#: needed. A function of these modules that does allocate, or that Python calls to start a search, says
#: ``@njit(refcounted=True)``; ``tests/test_core_jit.py`` checks that none of the others returns an array.
BORROWING_MODULES = frozenset({"bits", "features", "history", "masks", "movegen", "ordering", "pawns", "position",
                               "quiescence", "scale", "transposition", "tree", "treestate"})


def njit(func=None, *, reassociate=False, refcounted=None):
    """Compile ``func`` with numba (cached, GIL released), or return it unchanged without numba.

    ``error_model="numpy"``: integer division does not test for a zero divisor (the core never
    divides by zero), which spares a branch in the hot loop. ``@njit(reassociate=True)`` lets the
    compiler reorder float sums (LLVM's ``reassoc`` and ``nsz`` flags, nothing else of fast-math), so that
    it can vectorise a long sum; the result may then differ from the left-to-right sum in its last bits.
    ``refcounted`` (default: not for the functions of :data:`BORROWING_MODULES`) keeps numba's reference
    counting of arrays."""
    global CACHED
    if func is None:
        return lambda f: njit(f, reassociate=reassociate, refcounted=refcounted)
    if numba is None:
        return func
    options = {"nogil": True, "error_model": "numpy"}
    if reassociate:
        options["fastmath"] = {"reassoc", "nsz"}
    if refcounted is None:
        refcounted = func.__module__.rsplit(".", 1)[-1] not in BORROWING_MODULES
    options["_nrt"] = refcounted  # said even when True: a function that does not say inherits it from its caller
    if CACHED:
        try:
            return numba.njit(cache=True, **options)(func)
        except RuntimeError as exc:  # "cannot cache function ...: no locator available": nowhere to write
            if "cannot cache" not in str(exc):
                raise
            CACHED = False
            chosen = os.environ.get("NUMBA_CACHE_DIR")
            where = ("NUMBA_CACHE_DIR " + chosen + ", " if chosen else "") + \
                "the package directory and ~/.cache are read-only"
            sys.stderr.write(f"chess-endgame: numba can write its cache nowhere ({where}); compiling at every start "
                             "(set NUMBA_CACHE_DIR to a writable directory to keep the compiled code)\n")
    return numba.njit(**options)(func)


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


#: What a Ctrl-C held by :func:`hold_ctrl_c_while_compiling` writes on stderr, once.
HELD = "chess-endgame: Ctrl-C noted; it stops the program once numba has finished compiling (seconds, a minute " \
       "on a first run)\n"


def hold_ctrl_c_while_compiling() -> None:
    """From now on, a Ctrl-C that comes while numba compiles or loads machine code (while it holds its compiler
    lock, in the main thread) waits until numba is done, then arrives as usual.

    A KeyboardInterrupt raised in the middle leaves numba's and LLVM's objects half made: the program then
    crashed on its way out (a segmentation fault, a double free) after the Ctrl-C at the right moment of the
    first probes. Only where Python's default handler is installed; a program's own handler is left alone.
    """
    if numba is None:
        return
    from numba.core import event

    class Hold(event.Listener):
        depth = 0
        pressed = False

        def on_start(self, ev: event.Event) -> None:
            if threading.current_thread() is not threading.main_thread():
                return
            if self.depth == 0:
                if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
                    return
                self.pressed = False
                signal.signal(signal.SIGINT, self.press)
            self.depth += 1

        def on_end(self, ev: event.Event) -> None:
            if threading.current_thread() is not threading.main_thread() or self.depth == 0:
                return
            self.depth -= 1
            if self.depth == 0:
                signal.signal(signal.SIGINT, signal.default_int_handler)
                if self.pressed:  # delivered to the main thread: it raises at its next step, outside numba's lock
                    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

        def press(self, signum: int, frame: object) -> None:
            if not self.pressed:
                sys.stderr.write(HELD)
            self.pressed = True

    event.register("numba:compiler_lock", Hold())
