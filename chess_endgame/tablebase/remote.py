"""Remote probing: a prober that asks an HTTP server speaking the Lichess tablebase API.

:class:`RemoteProber` answers through the same interface as the local
:class:`~.prober.Prober` (:class:`~.prober.TablebaseProber`): WDL -2..2 and
DTZ in plies from the side to move, halfmove clock taken as 0. One request,
``GET {url}/standard?fen=FEN`` with the clock set to 0, answers the position and
every position one move later (the ``moves`` list); all of them go to a memory
cache and to a bounded SQLite file in the user's cache directory, so a position
is never asked twice and the chooser ranks a root from a single round trip.

Values come from the answer's ``dtz`` (DTZ50'' with rounding, as python-chess
gives it): WDL is 0 for DTZ 0, +-2 up to 100 plies, +-1 (cursed win, blessed
loss) beyond. The ``category`` only has to agree in sign; ``unknown``, a missing
DTZ, an unknown category, a missing or illegal move is no answer.

Rate limits: one request in flight, at least :attr:`RemoteProber.min_interval`
seconds between requests (more when the server says so with ``Retry-After``);
HTTP 429 stops requests for a minute; a timeout or a refused connection stops
them for a few seconds, doubling up to a minute while the server stays away.
Every failure raises :exc:`~.prober.NotCoveredError` with reason
:attr:`~.prober.Reason.REMOTE` and a message saying what happened, so the
player falls back to its search for that move; nothing here raises anything else.

The player asks the server only at the root of a move, through
:class:`RootProber` (the local tables first), and only when the clock allows the
round trip (:meth:`RemoteProber.request_timeout`); the searcher never does.
The HTTP client is aiohttp (the ``serve`` extra), run on a private event loop thread.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import concurrent.futures
import json
import os
import statistics
import threading
import time
from dataclasses import dataclass, field

import chess

from chess_endgame.tablebase.cache import DEFAULT_CACHE_ENTRIES, LRU, DiskCache
from chess_endgame.tablebase.lichess import (
    MAX_PIECES,
    MalformedAnswer,
    check_url,
    error_text,
    parse_answer,
    position_key,
    query_fen,
    retry_after,
)
from chess_endgame.tablebase.paths import user_directory
from chess_endgame.tablebase.prober import (
    NotCovered,
    NotCoveredError,
    ProberBase,
    ProbeResult,
    ProbeStats,
    Reason,
    TablebaseProber,
)
from chess_endgame.version import __version__

#: Seconds one request may take at most (lichess-bot's online tablebase timeout).
DEFAULT_TIMEOUT = 2.0
#: Seconds between two requests at least.
DEFAULT_MIN_INTERVAL = 0.1
#: Seconds without requests after HTTP 429 (the Lichess API asks for a full minute).
RATE_LIMIT_BACKOFF = 60.0
#: Seconds without requests after the first timeout or refused connection; doubles up to a minute.
FAILURE_BACKOFF = 5.0
#: Share of the time left on the game clock one round trip may take (lichess-bot: 2 s from 20 s).
CLOCK_SHARE = 0.1
#: Answers larger than this (bytes) are refused as malformed; a real one is below 60 KB.
MAX_ANSWER_BYTES = 1 << 20
#: Positions kept in memory, and positions the server could not answer (not asked again while kept).
MEMORY_ENTRIES = 65536
UNKNOWN_ENTRIES = 4096


def user_cache_dir() -> str:
    """The user's cache directory for this program (XDG on Linux, Library/Caches on macOS, LOCALAPPDATA)."""
    return user_directory("cache")


def default_cache_path() -> str:
    """Where the remote answers are kept: ``remote-tablebase.sqlite`` in :func:`user_cache_dir`."""
    return os.path.join(user_cache_dir(), "remote-tablebase.sqlite")


@dataclass
class RemoteStats:
    """What the remote prober did since it was made. Times in milliseconds."""

    requests: int = 0
    answered: int = 0
    failed: int = 0
    rate_limited: int = 0
    memory_hits: int = 0
    disk_hits: int = 0
    #: Round trips of answered requests (the last 100), ms.
    round_trips: collections.deque = field(default_factory=lambda: collections.deque(maxlen=100))
    last_problem: str | None = None

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.round_trips) if self.round_trips else None


class _Http:
    """aiohttp on a private event loop thread, for synchronous callers. Started on first use."""

    def __init__(self) -> None:
        try:
            import aiohttp
        except ImportError:
            raise ValueError("remote probing needs aiohttp: pip install 'chess-endgame[serve]'") from None
        self._aiohttp = aiohttp
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._session = None
        self._start_lock = threading.Lock()

    def _start(self) -> asyncio.AbstractEventLoop:
        with self._start_lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="remote-tablebase", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
                atexit.register(self.close)  # a program that never closes its prober still closes the session
            return self._loop

    def get(self, url: str, params: dict[str, str], timeout: float) -> tuple[int, dict[str, str], bytes]:
        """(status, headers, body) of a GET; :exc:`TimeoutError` after ``timeout`` s, :exc:`OSError` if unreachable."""
        future = asyncio.run_coroutine_threadsafe(self._get(url, params, timeout), self._start())
        try:
            return future.result(timeout + 0.5)
        except (TimeoutError, concurrent.futures.TimeoutError):
            future.cancel()
            raise TimeoutError from None
        except Exception as exc:  # noqa: BLE001 - aiohttp's errors, a reset connection, a bad header: unreachable
            cause = getattr(exc, "os_error", None)
            if isinstance(cause, ConnectionRefusedError):
                raise OSError("connection refused") from None
            raise OSError(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__) from None

    async def _get(self, url: str, params: dict[str, str], timeout: float) -> tuple[int, dict[str, str], bytes]:
        aiohttp = self._aiohttp
        if self._session is None:
            self._session = aiohttp.ClientSession(headers={"User-Agent": f"chess-endgame/{__version__}"})
        try:
            async with self._session.get(url, params=params, timeout=aiohttp.ClientTimeout(total=timeout),
                                         allow_redirects=False) as response:
                body = await response.content.read(MAX_ANSWER_BYTES + 1)
                return response.status, dict(response.headers), body
        except asyncio.TimeoutError:
            raise TimeoutError from None

    def close(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        atexit.unregister(self.close)
        if self._session is not None:
            try:
                asyncio.run_coroutine_threadsafe(self._session.close(), loop).result(2.0)
            except Exception:  # noqa: BLE001 - closing is best effort
                pass
        loop.call_soon_threadsafe(loop.stop)
        thread.join(2.0)
        if not thread.is_alive():
            loop.close()
        self._loop = self._thread = self._session = None


class RemoteProber(ProberBase):
    """A :class:`~.prober.TablebaseProber` on a server speaking the Lichess tablebase API.

    ``url`` is the server's base (``http://127.0.0.1:8000``; ``/standard`` is
    appended). ``timeout`` (seconds) caps each request; ``min_interval`` (seconds)
    separates requests; ``cache_path`` is the SQLite file (None: memory only);
    ``max_pieces`` caps the positions asked. Thread-safe: one request at a time.
    """

    def __init__(self, url: str, *, timeout: float = DEFAULT_TIMEOUT, min_interval: float = DEFAULT_MIN_INTERVAL,
                 cache_path: str | None = None, cache_entries: int = DEFAULT_CACHE_ENTRIES,
                 max_pieces: int = MAX_PIECES) -> None:
        self.url = check_url(url)
        self._http = _Http()
        self.timeout = timeout
        self.min_interval = min_interval
        self._largest = max_pieces
        self.probe_limit = max_pieces
        self.stats = ProbeStats()
        self.remote_stats = RemoteStats()
        self.cache = DiskCache(cache_path, cache_entries) if cache_path else None
        self._memory: LRU[str, tuple[int, int]] = LRU(MEMORY_ENTRIES)
        self._unknown: LRU[str, NotCovered] = LRU(UNKNOWN_ENTRIES)
        self._request_lock = threading.Lock()
        self._next_request = 0.0          # monotonic: no request starts before
        self._backoff_until = 0.0         # monotonic: no request before (429, server away)
        self._backoff_reason = ""
        self._failures = 0                # timeouts / refused connections in a row

    # -- the prober interface ---------------------------------------------------------------------

    @property
    def available(self) -> bool:
        return self.max_pieces >= 3

    def summary(self) -> str:
        return f"remote tablebase {self.url} (up to {self.max_pieces} pieces)"

    def covers(self, board: chess.Board) -> NotCovered | None:
        """Cheap pre-check, no request: None when the server may answer (or the answer is cached)."""
        if board.is_insufficient_material():
            return None
        pieces = board.occupied.bit_count()
        if pieces > self.max_pieces:
            return NotCovered(Reason.TOO_MANY_PIECES,
                              f"{pieces} pieces on the board, the remote tablebase is asked up to {self.max_pieces}")
        if board.castling_rights and board.clean_castling_rights():
            return NotCovered(Reason.CASTLING, "Syzygy tables do not cover positions with castling rights")
        return None

    def probe_wdl(self, board: chess.Board) -> int:
        """WDL of the side to move, -2..2 (halfmove clock 0). :raises NotCoveredError: no answer."""
        self.stats.wdl_probes += 1
        return self.lookup(board, self.timeout)[0]

    def probe_dtz(self, board: chess.Board) -> int:
        """DTZ of the side to move in plies (halfmove clock 0). :raises NotCoveredError: no answer."""
        self.stats.dtz_probes += 1
        return self.lookup(board, self.timeout)[1]

    def dtz_stored(self, board: chess.Board) -> bool:
        """Always True: a DTZ after one move is in the answer of the position before it (no cost to ask)."""
        return True

    def probe(self, board: chess.Board) -> ProbeResult | NotCovered:
        try:
            wdl, dtz = self.lookup(board, self.timeout)
        except NotCoveredError as exc:
            return exc.answer
        return ProbeResult(wdl, dtz)

    def clear_cache(self) -> None:
        """Forget the answers held in memory (the disk cache stays)."""
        self._memory.clear()
        self._unknown.clear()

    def close(self) -> None:
        self._http.close()
        if self.cache is not None:
            self.cache.close()

    # -- answers -------------------------------------------------------------------------------------

    def cached(self, board: chess.Board) -> bool:
        """Whether the position is answered without a request (memory or disk cache)."""
        key = position_key(board)
        return key in self._memory or self._from_disk(key) is not None

    def lookup(self, board: chess.Board, timeout: float) -> tuple[int, int]:
        """(WDL, DTZ) of ``board`` from the caches, else from one request of at most ``timeout`` seconds
        (0: caches only). :raises NotCoveredError: with what went wrong."""
        key = position_key(board)
        hit = self._memory.get(key)
        if hit is not None:
            self.stats.cache_hits += 1
            self.stats.tbhits += 1
            self.remote_stats.memory_hits += 1
            return hit
        if board.is_insufficient_material():
            return 0, 0
        known = self._unknown.get(key)
        if known is not None:
            raise NotCoveredError(known)
        not_covered = self.covers(board)
        if not_covered is not None:
            raise NotCoveredError(not_covered)
        hit = self._from_disk(key)
        if hit is not None:
            self.stats.tbhits += 1
            self.remote_stats.disk_hits += 1
            self._remember({key: hit})
            return hit
        if timeout <= 0:
            raise NotCoveredError(NotCovered(Reason.REMOTE, "not cached, and no time for a round trip"))
        answers = self._ask(board, key, timeout)
        self.stats.tbhits += 1
        return answers[key]

    def _from_disk(self, key: str) -> tuple[int, int] | None:
        return self.cache.get(self.url, key) if self.cache is not None else None

    def _remember(self, answers: dict[str, tuple[int, int]]) -> None:
        self._memory.update(answers)

    def _ask(self, board: chess.Board, key: str, timeout: float) -> dict[str, tuple[int, int]]:
        """One request under the rate limits; the answers are remembered. :raises NotCoveredError:"""
        give_up = time.monotonic() + timeout
        if not self._request_lock.acquire(timeout=timeout):
            raise self._failed("another request is still in flight", count=False)
        try:
            now = time.monotonic()
            if now < self._backoff_until:
                raise self._failed(f"{self._backoff_reason}; no requests for {self._backoff_until - now:.0f} s more",
                                   count=False)
            wait = self._next_request - now
            if wait > 0:
                if now + wait >= give_up:
                    raise self._failed("the rate limit leaves no time for a request", count=False)
                time.sleep(wait)
            left = give_up - time.monotonic()
            self._next_request = time.monotonic() + self.min_interval
            answers = self._request(board, key, left)
        finally:
            self._request_lock.release()
        self._remember(answers)
        if self.cache is not None:
            self.cache.put(self.url, answers)
        return answers

    def _request(self, board: chess.Board, key: str, timeout: float) -> dict[str, tuple[int, int]]:
        stats = self.remote_stats
        stats.requests += 1
        start = time.monotonic()
        try:
            status, headers, body = self._http.get(f"{self.url}/standard", {"fen": query_fen(board)}, timeout)
        except TimeoutError:
            self._away("timed out")
            raise self._failed(f"no answer within {timeout:.2f} s") from None
        except OSError as exc:
            self._away("unreachable")
            raise self._failed(f"cannot reach the server: {exc}") from None
        elapsed_ms = (time.monotonic() - start) * 1000
        self._failures = 0
        retry_seconds = retry_after(headers)
        if retry_seconds:
            self._next_request = max(self._next_request, time.monotonic() + retry_seconds)
        if status == 429:
            stats.rate_limited += 1
            self._backoff_until = time.monotonic() + max(RATE_LIMIT_BACKOFF, retry_seconds or 0.0)
            self._backoff_reason = "rate-limited by the server (HTTP 429)"
            raise self._failed(f"rate-limited (HTTP 429); no requests for {RATE_LIMIT_BACKOFF:.0f} s")
        if status in (400, 404):
            answer = (NotCovered(Reason.INVALID_POSITION, f"the server refuses the position (HTTP 400: "
                                                          f"{error_text(body)})") if status == 400 else
                      NotCovered(Reason.REMOTE, f"the server does not cover the position (HTTP 404: "
                                                f"{error_text(body)})"))
            self._unknown.put(key, answer)
            stats.failed += 1
            stats.last_problem = answer.message
            raise NotCoveredError(answer)
        if status != 200:
            raise self._failed(f"HTTP {status} from the server")
        if len(body) > MAX_ANSWER_BYTES:
            raise self._failed("malformed answer: larger than 1 MB")
        try:
            answers = parse_answer(board.copy(stack=False), json.loads(body))
        except (ValueError, UnicodeDecodeError) as exc:  # json.JSONDecodeError is a ValueError
            raise self._failed(f"malformed answer: not JSON ({str(exc)[:60]})") from None
        except MalformedAnswer as exc:
            raise self._failed(f"malformed answer: {exc}") from None
        except NotCoveredError as exc:
            self._unknown.put(key, exc.answer)
            stats.failed += 1
            stats.last_problem = exc.answer.message
            raise
        stats.answered += 1
        stats.round_trips.append(elapsed_ms)
        return answers

    def _away(self, what: str) -> None:
        """The server did not answer: no requests for a while (5 s, doubling up to a minute)."""
        self._failures += 1
        pause = min(RATE_LIMIT_BACKOFF, FAILURE_BACKOFF * 2 ** (self._failures - 1))
        self._backoff_until = time.monotonic() + pause
        self._backoff_reason = f"the server {what} {self._failures} time{'s' if self._failures > 1 else ''} in a row"

    def _failed(self, message: str, *, count: bool = True) -> NotCoveredError:
        if count:
            self.remote_stats.failed += 1
        self.remote_stats.last_problem = message
        return NotCoveredError(NotCovered(Reason.REMOTE, message))

    # -- time -------------------------------------------------------------------------------------------

    def request_timeout(self, *, clock_left: float | None, due_in: float | None) -> float:
        """Seconds one request may take at a root now; 0 when the clock leaves no time for a round trip.

        ``clock_left``: seconds left on the game clock (None: no clock); ``due_in``:
        seconds until the move is due (None: no time limit). A request gets at most
        :attr:`timeout`, half the time until the move is due (the other half is the
        searcher's if the server fails) and :data:`CLOCK_SHARE` of the clock
        (lichess-bot: a 2 s timeout from 20 s on); it is not made when that is less
        than twice the median round trip measured so far (20 ms before any).
        """
        budget = self.timeout
        if due_in is not None:
            budget = min(budget, due_in / 2)
        if clock_left is not None:
            budget = min(budget, clock_left * CLOCK_SHARE)
        median = self.remote_stats.median_ms
        needed = 2 * median / 1000 if median is not None else 0.02
        return budget if budget >= needed else 0.0


class RootProber:
    """The prober of one root decision: the local tables where they answer, the remote server elsewhere.

    Each request to the server takes at most ``timeout`` seconds (0: cached
    answers only). The player makes one per move, at the root only; its searcher
    keeps the local prober.
    """

    def __init__(self, local: TablebaseProber, remote: RemoteProber, timeout: float | None = None) -> None:
        self.local = local
        self.remote = remote
        self.timeout = remote.timeout if timeout is None else timeout
        self.stats = local.stats
        self.max_pieces = max(local.max_pieces, remote.max_pieces)
        #: True once an answer came from the server (or its cache) rather than the local tables.
        self.used_remote = False

    @property
    def available(self) -> bool:
        return self.local.available or self.remote.available

    def summary(self) -> str:
        return f"{self.local.summary()} {self.remote.summary()}"

    def covers(self, board: chess.Board) -> NotCovered | None:
        local = self.local.covers(board)
        if local is None:
            return None
        remote = self.remote.covers(board)
        return None if remote is None else local

    def _values(self, board: chess.Board, local_probe) -> int | tuple[int, int]:
        """The local answer (an int) where the local tables cover ``board``, else the server's (WDL, DTZ)."""
        if self.local.covers(board) is None:
            try:
                return local_probe(board)
            except NotCoveredError:  # a missing or corrupt local table: the server may know
                if self.remote.covers(board) is not None:
                    raise
        values = self.remote.lookup(board, self.timeout)
        self.used_remote = True  # once answered: an unreachable server answered nothing
        return values

    def probe_wdl(self, board: chess.Board) -> int:
        values = self._values(board, self.local.probe_wdl)
        return values if isinstance(values, int) else values[0]

    def probe_dtz(self, board: chess.Board) -> int:
        values = self._values(board, self.local.probe_dtz)
        return values if isinstance(values, int) else values[1]

    def dtz_stored(self, board: chess.Board) -> bool:
        return self.local.dtz_stored(board) if self.local.covers(board) is None else True

    def probe(self, board: chess.Board) -> ProbeResult | NotCovered:
        try:
            return ProbeResult(self.probe_wdl(board), self.probe_dtz(board))
        except NotCoveredError as exc:
            return exc.answer

    def close(self) -> None:
        """Nothing to do: the local prober and the remote one belong to the caller."""
