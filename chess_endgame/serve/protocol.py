"""The requests that never reach the application: aiohttp's HTTP parser refuses them first.

A request line or a header over the limits, too many headers, or bytes that are not HTTP are answered by
aiohttp itself, before any middleware runs: as ``text/plain`` with the request echoed in the body, and a
full traceback in the log for each. Here they get the API's JSON error, ``{"error": ...}``, with the status
the HTTP RFCs give (414 URI Too Long, 431 Request Header Fields Too Large, else 400), and one log line.

aiohttp has no public hook for these answers (they come from its connection handler's ``handle_error``),
so :class:`Runner` makes its server build connections of :class:`_Connection`, which answers them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from aiohttp import web, web_protocol
from aiohttp.http_exceptions import LineTooLong

log = logging.getLogger("chess_endgame.serve")

#: Limits of the request line and of one header line (bytes), and of the number of headers.
MAX_LINE = 4096
MAX_FIELD = 8190
MAX_HEADERS = 64
#: aiohttp's handler arguments for those limits.
HANDLER_ARGS = {"max_line_size": MAX_LINE, "max_field_size": MAX_FIELD, "max_headers": MAX_HEADERS}


def parse_error(status: int, exc: BaseException | None) -> tuple[int, str]:
    """The status and the message (which never repeats the request) for an error of aiohttp's own."""
    if isinstance(exc, LineTooLong):
        if str(exc.args[1]) == str(MAX_FIELD):
            return 431, f"a request header is over {MAX_FIELD} bytes"
        return 414, f"the request line is over {MAX_LINE} bytes"
    if exc is not None and "Too many headers" in str(exc):
        return 431, f"more than {MAX_HEADERS} request headers"
    if status >= 500:
        return 500, "internal error"
    return 400, "malformed HTTP request"


class _Connection(web_protocol.RequestHandler):
    """aiohttp's connection handler, answering its own errors in the API's JSON, with one log line."""

    __slots__ = ()

    def handle_error(self, request: Any, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        status, text = parse_error(status, exc)
        log.warning("bad request from %s: %d %s", request.remote, status, text)
        on_bad_request = getattr(self._manager, "on_bad_request", None)
        if on_bad_request is not None:
            on_bad_request()
        if request.writer.output_size > 0:  # a response has begun: nothing more can be said
            raise ConnectionError("a response was already under way")
        response = web.json_response({"error": text}, status=status)
        response.force_close()
        return response


class _Server(web.Server):
    """aiohttp's server, whose connections are :class:`_Connection`."""

    on_bad_request: Callable[[], None] | None = None

    def __call__(self) -> web_protocol.RequestHandler:
        return _Connection(self, loop=self._loop, **self._kwargs)


class Runner(web.AppRunner):
    """An :class:`aiohttp.web.AppRunner` whose server answers the parser's errors as JSON;
    ``on_bad_request`` is called for each (e.g. to count it)."""

    def __init__(self, app: web.Application, *, on_bad_request: Callable[[], None] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self._on_bad_request = on_bad_request

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        server.__class__ = _Server  # the same server; only the connections it makes differ
        server.on_bad_request = self._on_bad_request  # type: ignore[attr-defined]
        return server
