"""The HTTP server on aiohttp: the Lichess tablebase API and the web explorer.

Routes (all GET; HEAD too):

- ``/standard?fen=FEN`` and ``/standard/mainline?fen=FEN``: the Lichess tablebase
  API (:mod:`.api`), from the local tables, moves ranked by the chooser;
- ``/``: the web explorer (``static/``), which uses ``/api/position?fen=``,
  ``/api/search?fen=&movetime=MS`` and ``/board.svg?fen=&orientation=&lastmove=&selected=``;
- ``/health`` (and ``/monitor``): readiness and counters, JSON.

Errors are JSON, ``{"error": "..."}``: 400 for a bad request
(bad FEN, illegal position, a bad parameter), 404 for a position the tables do
not cover and unknown paths, 405 for other methods, 503 when a request runs out
of time or every searcher is busy. Probes and searches run in thread pools, off
the event loop, each under a time limit; the number of searches at once is
bounded, and so are the request line, headers, body and FEN. Static files are
read from the package once, by name, never from a path in the request.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import importlib.resources
import ipaddress
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import chess
import chess.svg
from aiohttp import web

from chess_endgame.engine.player import Player, PlayerOptions
from chess_endgame.engine.result import Limits
from chess_endgame.serve import api, drills
from chess_endgame.serve.protocol import HANDLER_ARGS, Runner
from chess_endgame.tablebase.prober import Prober
from chess_endgame.version import __version__

log = logging.getLogger("chess_endgame.serve")

#: Files of the explorer, served by these names only.
STATIC_FILES = {"index.html": "text/html", "explorer.js": "text/javascript", "explorer.css": "text/css",
                "train.html": "text/html", "train.js": "text/javascript"}
#: The pages (the rest are their scripts and style).
PAGES = ("index.html", "train.html")
#: Bytes of a body at most (only GETs are served; the request line and header limits are in .protocol).
MAX_BODY = 16 * 1024

_SECURITY_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
_PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
}


@dataclass
class ServeConfig:
    """Limits of the server. Times in seconds unless the name says ms."""

    #: Time limit of one probe request (/standard, /standard/mainline, /api/position).
    request_timeout: float = 10.0
    #: Search time of /api/search when the request does not say, and the most it may ask for (ms).
    search_ms: int = 1000
    max_search_ms: int = 5000
    #: Searches at once (one searcher each); more wait up to ``queue_timeout`` s, then get 503.
    max_searches: int = 2
    queue_timeout: float = 10.0
    #: Threads that probe the tables, and requests that may wait for one (more get 503 at once).
    probe_threads: int = 4
    max_waiting: int = 256


def is_loopback(host: str) -> bool:
    """Whether ``host`` only listens on this machine (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Server:
    """The application's state: the prober, the thread pools, the searchers and the counters."""

    def __init__(self, prober: Prober, config: ServeConfig | None = None) -> None:
        self.prober = prober
        self.config = config or ServeConfig()
        c = self.config
        self.probe_pool = concurrent.futures.ThreadPoolExecutor(c.probe_threads, thread_name_prefix="probe")
        self.search_pool = concurrent.futures.ThreadPoolExecutor(c.max_searches, thread_name_prefix="search")
        self.players = [Player(prober, options=PlayerOptions(hash_mb=16)) for _ in range(c.max_searches)]
        self._free: asyncio.Queue[Player] | None = None
        self.started = time.time()
        self.requests = 0
        self.errors = 0
        self.searches_running = 0
        self.probes_waiting = 0
        self.static = {name: importlib.resources.files(__package__).joinpath("static", name).read_bytes()
                       for name in STATIC_FILES}

    # -- application ---------------------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._middleware], client_max_size=MAX_BODY, handler_args=HANDLER_ARGS)
        routes = [("/standard", self.standard), ("/standard/mainline", self.mainline), ("/health", self.health),
                  ("/monitor", self.health), ("/", self.index), ("/static/{name}", self.static_file),
                  ("/board.svg", self.board_svg), ("/api/position", self.position), ("/api/search", self.search),
                  ("/train", self.train_page), ("/api/train/classics", self.train_classics),
                  ("/api/train/new", self.train_new), ("/api/train/move", self.train_move),
                  ("/api/train/hint", self.train_hint)]
        for path, handler in routes:
            app.router.add_get(path, handler)
        app.on_startup.append(self._startup)
        app.on_cleanup.append(self._cleanup)
        return app

    def count_bad_request(self) -> None:
        """A request the HTTP parser refused (see :mod:`.protocol`): counted as a request and an error."""
        self.requests += 1
        self.errors += 1

    async def _startup(self, app: web.Application) -> None:
        self._free = asyncio.Queue()
        for player in self.players:
            self._free.put_nowait(player)

    async def _cleanup(self, app: web.Application) -> None:
        self.probe_pool.shutdown(wait=False, cancel_futures=True)
        self.search_pool.shutdown(wait=False, cancel_futures=True)

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Callable) -> web.StreamResponse:
        self.requests += 1
        try:
            response = await handler(request)
        except api.ApiError as exc:
            response = _error(exc.status, exc.message)
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            response = _error(exc.status, exc.reason.lower())
            for name in ("Allow",):
                if name in exc.headers:
                    response.headers[name] = exc.headers[name]
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - a bug: logged, answered without a traceback
            log.exception("error handling %s", request.path_qs[:200])
            response = _error(500, "internal error")
        if response.status >= 400:
            self.errors += 1
        response.headers.update(_SECURITY_HEADERS)
        if request.path.startswith("/standard"):
            response.headers["Access-Control-Allow-Origin"] = "*"
        return response

    async def _in_pool(self, function: Callable[..., Any], *args: Any) -> Any:
        """``function(*args)`` on a probe thread, within the request time limit (503 past it)."""
        loop = asyncio.get_running_loop()
        timeout = self.config.request_timeout
        if self.probes_waiting >= self.config.max_waiting:
            raise api.ApiError(503, f"busy: {self.probes_waiting} requests waiting; try again")
        self.probes_waiting += 1
        try:
            return await asyncio.wait_for(loop.run_in_executor(self.probe_pool, functools.partial(function, *args)),
                                          timeout)
        except asyncio.TimeoutError:
            raise api.ApiError(503, f"no answer within {timeout:g} s") from None
        finally:
            self.probes_waiting -= 1

    # -- the Lichess API -----------------------------------------------------------------------------

    async def standard(self, request: web.Request) -> web.Response:
        board = api.board_from_query(request.query.get("fen"))
        return web.json_response(await self._in_pool(api.standard, board, self.prober))

    async def mainline(self, request: web.Request) -> web.Response:
        board = api.board_from_query(request.query.get("fen"))
        return web.json_response(await self._in_pool(api.mainline, board, self.prober))

    async def health(self, request: web.Request) -> web.Response:
        files = self.prober.files
        return web.json_response({
            "status": "ok" if self.prober.available else "no tables",
            "version": __version__,
            "tables": {"wdl": len(files.wdl), "dtz": len(files.dtz), "max_pieces": self.prober.max_pieces,
                       "complete_pieces": files.complete_pieces},
            "searches": {"running": self.searches_running, "max": self.config.max_searches},
            "requests": self.requests, "errors": self.errors, "uptime_s": round(time.time() - self.started, 1),
        })

    # -- the explorer --------------------------------------------------------------------------------

    async def index(self, request: web.Request) -> web.Response:
        return self._static("index.html")

    async def static_file(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in STATIC_FILES or name in PAGES:
            raise api.ApiError(404, "no such file")
        return self._static(name)

    def _static(self, name: str) -> web.Response:
        response = web.Response(body=self.static[name], content_type=STATIC_FILES[name], charset="utf-8")
        if name in PAGES:
            response.headers.update(_PAGE_HEADERS)
        response.headers["Cache-Control"] = "no-cache"
        return response

    # -- the training page (stateless: see .drills) ---------------------------------------------------------

    async def train_page(self, request: web.Request) -> web.Response:
        return self._static("train.html")

    async def train_classics(self, request: web.Request) -> web.Response:
        return web.json_response(drills.classics())

    async def train_new(self, request: web.Request) -> web.Response:
        return web.json_response(await self._in_pool(drills.new, dict(request.query), self.prober))

    async def train_move(self, request: web.Request) -> web.Response:
        return web.json_response(await self._in_pool(drills.move, dict(request.query), self.prober))

    async def train_hint(self, request: web.Request) -> web.Response:
        return web.json_response(await self._in_pool(drills.hint, dict(request.query), self.prober))

    async def board_svg(self, request: web.Request) -> web.Response:
        query = request.query
        board = api.board_from_query(query.get("fen"))
        orientation = query.get("orientation", "white")
        if orientation not in ("white", "black"):
            raise api.ApiError(400, "orientation is white or black")
        lastmove = _move(query.get("lastmove"), "lastmove")
        fill = {}
        if query.get("selected"):
            try:
                fill[chess.parse_square(query["selected"])] = "#20a0ff80"
            except ValueError:
                raise api.ApiError(400, "selected is a square such as e2") from None
        svg = chess.svg.board(board, orientation=orientation == "white", lastmove=lastmove, fill=fill,
                              check=board.king(board.turn) if board.is_check() else None)
        response = web.Response(text=svg, content_type="image/svg+xml")
        response.headers["Cache-Control"] = "public, max-age=3600"
        return response

    async def position(self, request: web.Request) -> web.Response:
        board = api.board_from_query(request.query.get("fen"))
        return web.json_response(await self._in_pool(api.explore, board, self.prober))

    async def search(self, request: web.Request) -> web.Response:
        """The player's move and line (the searcher beyond the tables), at most ``max_search_ms``."""
        c = self.config
        board = api.board_from_query(request.query.get("fen"))
        text = request.query.get("movetime", str(c.search_ms))
        if not (text.isascii() and text.isdigit()) or not 10 <= int(text) <= c.max_search_ms:
            raise api.ApiError(400, f"movetime is a number of ms from 10 to {c.max_search_ms}")
        if not any(board.legal_moves):
            raise api.ApiError(400, f"no legal move: {api.status(board)}")
        movetime = int(text)
        assert self._free is not None
        try:
            player = await asyncio.wait_for(self._free.get(), c.queue_timeout)
        except asyncio.TimeoutError:
            raise api.ApiError(503, f"busy: {c.max_searches} searches running; try again") from None
        limits = Limits(movetime=movetime)
        self.searches_running += 1
        future = asyncio.get_running_loop().run_in_executor(self.search_pool, player.decide, board, limits)
        free = self._free

        def release(_: object) -> None:  # the searcher goes back only when its thread is done with it
            self.searches_running -= 1
            free.put_nowait(player)

        future.add_done_callback(release)
        try:
            decision = await asyncio.wait_for(asyncio.shield(future), movetime / 1000 + c.request_timeout)
        except asyncio.TimeoutError:
            limits.stop.set()
            raise api.ApiError(503, "the search did not finish in time") from None
        return web.json_response(api.search_record(board, decision))


def _move(text: str | None, name: str) -> chess.Move | None:
    if not text:
        return None
    try:
        return chess.Move.from_uci(text)
    except ValueError:
        raise api.ApiError(400, f"{name} is a UCI move such as e2e4") from None


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


async def start(server: Server, host: str = "127.0.0.1", port: int = 0) -> tuple[Runner, int]:
    """Start serving on ``host``:``port`` (0: a free port); returns the runner and the port bound."""
    runner = Runner(server.app(), access_log=None, handle_signals=False, shutdown_timeout=5.0,
                    on_bad_request=server.count_bad_request)
    await runner.setup()
    site = web.TCPSite(runner, host, port, reuse_address=True)
    await site.start()
    bound = port
    for address in runner.addresses:
        if isinstance(address, tuple):
            bound = address[1]
            break
    return runner, bound


def run(server: Server, host: str, port: int, on_ready: Callable[[int], None]) -> None:
    """Serve until interrupted (Ctrl-C); ``on_ready(port)`` is called once listening."""

    async def main() -> None:
        runner, bound = await start(server, host, port)
        on_ready(bound)
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
