"""Servers on 127.0.0.1 for the serve and remote-probing tests, each on its own event loop thread.

:func:`serving` runs the project's ``serve`` application; :func:`misbehaving`
runs a fake tablebase server that answers 429, 500, garbage, slowly or not at
all, and records every request it gets.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from aiohttp import web

from chess_endgame.serve.app import ServeConfig, Server, start
from chess_endgame.tablebase.prober import Prober


@contextmanager
def _on_thread(make_runner: Callable[[], object]) -> Iterator[int]:
    """Run ``await make_runner()`` (returning (runner, port)) on a fresh loop thread; yield the port."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    box: dict = {}

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            box["runner"], box["port"] = loop.run_until_complete(make_runner())
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread
            box["error"] = exc
            started.set()
            return
        started.set()
        loop.run_forever()
        loop.run_until_complete(box["runner"].cleanup())
        pending = asyncio.all_tasks(loop)  # handlers still asleep (a silent server's)
        for task in pending:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert started.wait(20), "the server did not start"
    if "error" in box:
        raise box["error"]
    try:
        yield box["port"]
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(20)


@contextmanager
def serving(prober: Prober, config: ServeConfig | None = None) -> Iterator[str]:
    """The project's server on the local tables of ``prober``; yields its base URL."""
    server = Server(prober, config)
    with _on_thread(lambda: start(server, "127.0.0.1", 0)) as port:
        yield f"http://127.0.0.1:{port}"


@dataclass
class FakeLog:
    """What the fake server saw: request times (monotonic), FENs asked, most requests at once."""

    times: list[float] = field(default_factory=list)
    fens: list[str] = field(default_factory=list)
    in_flight: int = 0
    most_in_flight: int = 0


@contextmanager
def misbehaving(mode: str, *, delay: float = 3.0, answer: object = None,
                retry_after: str | None = None) -> Iterator[tuple[str, FakeLog]]:
    """A fake server for ``GET /standard``. Modes: ``429``, ``500``, ``garbage`` (not JSON), ``json``
    (``answer`` as JSON, status 200), ``slow`` (``answer`` after ``delay`` s), ``silent`` (never answers)."""
    log = FakeLog()

    async def standard(request: web.Request) -> web.StreamResponse:
        log.times.append(time.monotonic())
        log.fens.append(request.query.get("fen", ""))
        log.in_flight += 1
        log.most_in_flight = max(log.most_in_flight, log.in_flight)
        try:
            headers = {"Retry-After": retry_after} if retry_after else {}
            if mode == "429":
                return web.Response(status=429, text="Too Many Requests", headers=headers)
            if mode == "500":
                return web.Response(status=500, text="Internal Server Error", headers=headers)
            if mode == "garbage":
                return web.Response(status=200, body=b"\x00\xffnot json at all{", content_type="application/json")
            if mode in ("slow", "silent"):
                await asyncio.sleep(delay if mode == "slow" else 3600)
            return web.Response(status=200, text=json.dumps(answer), content_type="application/json")
        finally:
            log.in_flight -= 1

    async def make() -> tuple[web.AppRunner, int]:
        app = web.Application()
        app.router.add_get("/standard", standard)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return runner, runner.addresses[0][1]

    with _on_thread(make) as port:
        yield f"http://127.0.0.1:{port}", log
