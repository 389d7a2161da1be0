"""A local HTTP mirror for download tests: serves a directory on 127.0.0.1 with Range support.

``cut_after`` makes the first response for each named file stop after that many
bytes (the connection is closed mid-transfer), as a flaky network would;
``delay`` makes every response wait that many seconds, as a slow one would.
"""

from __future__ import annotations

import http.server
import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class _Handler(http.server.BaseHTTPRequestHandler):
    root: str
    cut_after: dict[str, int]
    delay: float
    log: list[tuple[str, str | None]]

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        name = os.path.basename(self.path)
        path = os.path.join(self.root, name)
        range_header = self.headers.get("Range")
        self.log.append((name, range_header))
        time.sleep(self.delay)
        if not os.path.isfile(path):
            self.send_error(404, "not found")
            return
        data = open(path, "rb").read()
        start = 0
        match = re.fullmatch(r"bytes=(\d+)-", range_header or "")
        if match:
            start = int(match.group(1))
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        cut = self.cut_after.pop(name, None)
        if cut is not None:
            self.wfile.write(body[:cut])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve(root: str, cut_after: dict[str, int] | None = None, delay: float = 0.0) -> Iterator[tuple[str, list]]:
    """Yield (base URL, request log) of a mirror serving ``root``."""
    log: list[tuple[str, str | None]] = []
    handler = type("Handler", (_Handler,), {"root": root, "cut_after": dict(cut_after or {}), "delay": delay,
                                            "log": log})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/syzygy/", log
    finally:
        server.shutdown()
        server.server_close()
