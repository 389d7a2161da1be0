"""Getting the official Syzygy files from a mirror, each checked against the official checksums before it is kept.

The standard library's HTTP client (urllib) fetches them, so ``tablebases download`` works without the
``[serve]`` extra that brings aiohttp (the remote prober's and the server's HTTP library)."""

from __future__ import annotations

import http.client
import os
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field

from chess_endgame.tablebase.files import verify_file

DEFAULT_MIRROR = "https://tablebase.sesse.net/syzygy/3-4-5/"


OTHER_MIRRORS = ("https://tablebase.lichess.ovh/tables/standard/3-4-5/",)


#: Where the known mirrors keep the 6-piece WDL and DTZ files (their 3-4-5 directory holds only those).
SIX_PIECE_DIRECTORIES = {
    DEFAULT_MIRROR: ("https://tablebase.sesse.net/syzygy/6-WDL/", "https://tablebase.sesse.net/syzygy/6-DTZ/"),
    OTHER_MIRRORS[0]: ("https://tablebase.lichess.ovh/tables/standard/6-wdl/",
                       "https://tablebase.lichess.ovh/tables/standard/6-dtz/"),
}


def file_url(mirror: str, filename: str) -> str:
    """The URL of ``filename`` on ``mirror``: a known mirror keeps 6-piece files in directories of their
    own; any other mirror is taken to hold every file it serves in one directory."""
    base = mirror if mirror.endswith("/") else mirror + "/"
    name, ext = os.path.splitext(filename)
    if len(name) - 1 == 6 and base in SIX_PIECE_DIRECTORIES:
        base = SIX_PIECE_DIRECTORIES[base][ext == ".rtbz"]
    return base + filename


class DownloadError(Exception):
    """A download failed (network, server or a bad file); the message says which and why."""


class FileUnavailable(DownloadError):
    """The mirror refused one file (an HTTP error status such as 404); the others may still come."""


@dataclass
class DownloadResult:
    downloaded: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    #: Files that failed their checks after the download (deleted): name -> problem.
    failed: dict[str, str] = field(default_factory=dict)
    #: Files the mirror refused: name -> why.
    unavailable: dict[str, str] = field(default_factory=dict)
    #: Files that were present but bad, and were fetched again: name -> what was wrong.
    replaced: dict[str, str] = field(default_factory=dict)
    bytes: int = 0
    #: The network failure that stopped the download (the next run resumes), or None.
    stopped: str | None = None
    #: Ctrl-C stopped it (the file in transfer stays as .part, to resume).
    interrupted: bool = False


def _file_problem(path: str, checksums: dict[str, str] | None) -> str | None:
    """What ``tablebases verify`` (without --deep) finds wrong with the file, or None."""
    problems = verify_file(path, checksums=checksums).problems
    return "; ".join(problems) if problems else None


def fetch(url: str, target: str, *, timeout: float = 30.0,
          on_bytes: Callable[[int, int | None], None] | None = None) -> int:
    """Download ``url`` to ``target + '.part'`` (resuming it with an HTTP Range) and rename to target.

    ``on_bytes(n, total)`` is called as data arrives. Returns the bytes
    transferred. Raises :exc:`DownloadError` with a clear message on failure,
    leaving the ``.part`` file for the next attempt to resume.
    """
    part = target + ".part"
    have = os.path.getsize(part) if os.path.exists(part) else 0
    request = urllib.request.Request(url, headers={"User-Agent": "chess-endgame"})
    if have:
        request.add_header("Range", f"bytes={have}-")
    transferred = 0
    try:
        try:
            response = urllib.request.urlopen(request, timeout=timeout)
        except urllib.error.HTTPError as exc:
            if exc.code == 416 and have:
                # Range not satisfiable: the .part is already complete (or bad); finish or restart.
                os.replace(part, target)
                return 0
            raise
        with response:
            total = response.headers.get("Content-Length")
            total = int(total) if total and total.isascii() and total.isdigit() else None
            if have and response.status == 206:
                mode = "ab"
                if total is not None:
                    total += have
            else:
                mode, have = "wb", 0
            if on_bytes:
                on_bytes(have, total)
            with open(part, mode) as out:
                while True:
                    chunk = response.read(1 << 16)
                    if not chunk:
                        break
                    out.write(chunk)
                    transferred += len(chunk)
                    if on_bytes:
                        on_bytes(len(chunk), total)
            if total is not None and os.path.getsize(part) < total:
                raise DownloadError(f"{url}: connection closed after {os.path.getsize(part)} of "
                                    f"{total} bytes; run the command again to resume")
    except urllib.error.HTTPError as exc:
        raise FileUnavailable(f"{url}: the mirror answered HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise DownloadError(f"cannot reach {url}: {exc.reason}; check the network or try "
                            f"another --mirror") from None
    except (http.client.HTTPException, ConnectionError, TimeoutError) as exc:
        raise DownloadError(f"{url}: transfer interrupted ({type(exc).__name__}: {exc}); run the "
                            f"command again to resume") from None
    os.replace(part, target)
    return transferred


def download(files: list[str], dest: str, *, mirror: str = DEFAULT_MIRROR,
             checksums: dict[str, str] | None = None, timeout: float = 30.0,
             on_start: Callable[[str], None] | None = None,
             on_bytes: Callable[[int, int | None], None] | None = None,
             on_done: Callable[[str, str], None] | None = None) -> DownloadResult:
    """Download ``files`` (names like ``KQvK.rtbw``) from ``mirror`` into ``dest``.

    Files already present are kept when ``tablebases verify`` finds them sound
    (header, size, python-chess opens them, the embedded checksum when
    ``checksums`` lists it); a bad one is fetched again. Each new file is
    written as ``.part``, resumed with HTTP Range after an interruption,
    renamed into place atomically and checked the same way; a file that
    fails its checks is deleted and reported in ``failed``, and one that a
    Ctrl-C stops before its check ends goes back to ``.part`` (so every table
    file left in ``dest`` was checked, and each new one is in ``downloaded``). A file the mirror
    refuses (HTTP 404, ...) goes to ``unavailable`` and the others still come.
    A network failure stops the download (``stopped``), as does Ctrl-C
    (``interrupted``): what was done is in the result, the next run resumes.
    """
    os.makedirs(dest, exist_ok=True)
    result = DownloadResult()
    #: The last file fetch() was asked for: if a Ctrl-C finds it in place but not in ``downloaded``, its check
    #: had not ended.
    fetched: str | None = None
    try:
        for filename in files:
            try:
                target = os.path.join(dest, filename)
                if os.path.exists(target):
                    problem = _file_problem(target, checksums)
                    if problem is None:
                        result.present.append(filename)
                        if on_done:
                            on_done(filename, "present")
                        continue
                    os.remove(target)
                    result.replaced[filename] = problem
                if on_start:
                    on_start(filename)
                fetched = target
                try:
                    result.bytes += fetch(file_url(mirror, filename), target, timeout=timeout, on_bytes=on_bytes)
                except FileUnavailable as exc:
                    result.unavailable[filename] = str(exc)
                    if on_done:
                        on_done(filename, "unavailable")
                    continue
                problem = _file_problem(target, checksums)
                if problem:
                    os.remove(target)
                    result.failed[filename] = problem
                    if on_done:
                        on_done(filename, f"bad: {problem}")
                    continue
                result.downloaded.append(filename)
                if on_done:
                    on_done(filename, "downloaded")
            except OSError as exc:  # the destination itself: a directory in the way, no permission, a full disk
                result.failed[filename] = f"cannot write {target}: {exc.strerror or exc}"
                if on_done:
                    on_done(filename, f"bad: {result.failed[filename]}")
    except DownloadError as exc:
        result.stopped = str(exc)
    except KeyboardInterrupt:
        result.interrupted = True
        if fetched and os.path.basename(fetched) not in result.downloaded and os.path.exists(fetched):
            os.replace(fetched, fetched + ".part")
    return result
