"""The Lichess tablebase API as a client speaks it: the server's URL, the query for a position, and the answer read
into WDL and DTZ (from the side to move, DTZ in plies) for the position and each of its moves."""

from __future__ import annotations

import json
import urllib.parse

import chess

from chess_endgame.tablebase.prober import NotCovered, NotCoveredError, Reason

#: Categories of the Lichess API and their sign (from the side to move of the position they describe).
CATEGORY_SIGN: dict[str, int | None] = {
    "win": 1, "syzygy-win": 1, "maybe-win": 1, "cursed-win": 1, "draw": 0,
    "blessed-loss": -1, "maybe-loss": -1, "syzygy-loss": -1, "loss": -1, "unknown": None,
}

#: Pieces the remote is asked about at most (Syzygy goes to 7; 8-piece answers carry no DTZ).
MAX_PIECES = 7


def check_url(url: str, what: str = "remote tablebase URL") -> str:
    """The server's base URL without a trailing ``/``; :exc:`ValueError` naming ``what`` unless it is
    http(s)://host[:port][/path] (a remote tablebase, a download mirror)."""
    text = url.strip()
    try:
        parts = urllib.parse.urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise ValueError(f"{what} {url!r} has a bad host or port: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{what} {url!r} is not http://HOST[:PORT][/PATH] or https://...")
    if parts.query or parts.fragment:
        raise ValueError(f"{what} {url!r} must not have a query or fragment")
    return text.rstrip("/")


def wdl_from_dtz(dtz: int) -> int:
    """The table's WDL (halfmove clock 0) of a DTZ50'' value: 0, +-2 within 100 plies, +-1 beyond."""
    if dtz == 0:
        return 0
    sign = 1 if dtz > 0 else -1
    return sign * (2 if abs(dtz) <= 100 else 1)


def position_key(board: chess.Board) -> str:
    """The cache key of a position: its EPD (placement, turn, castling, legal en passant; no clocks)."""
    return board.epd()


def query_fen(board: chess.Board) -> str:
    """The FEN sent to the server: the position with halfmove clock 0, as the tables assume."""
    return f"{board.epd()} 0 1"


class MalformedAnswer(Exception):
    """The server's answer is not a Lichess tablebase answer for the position asked."""


def parse_answer(board: chess.Board, data: object) -> dict[str, tuple[int, int]]:
    """(WDL, DTZ) by :func:`position_key` of the position and of each position after a legal move.

    ``data`` is the decoded JSON of ``/standard`` for ``board`` (sent with clock 0).
    Every legal move must be listed once. :exc:`MalformedAnswer` when the answer is not
    usable; a position the server does not know raises :exc:`NotCoveredError`.
    """
    if not isinstance(data, dict):
        raise MalformedAnswer("the answer is not a JSON object")
    answers: dict[str, tuple[int, int]] = {}
    root = _values(data, "the position")
    if root is None:
        raise NotCoveredError(NotCovered(Reason.REMOTE, "the server does not know this position (no DTZ)"))
    answers[position_key(board)] = root
    moves = data.get("moves")
    if not isinstance(moves, list):
        raise MalformedAnswer("no list of moves")
    legal = {m.uci(): m for m in board.legal_moves}
    seen: set[str] = set()
    for item in moves:
        if not isinstance(item, dict) or not isinstance(item.get("uci"), str):
            raise MalformedAnswer("a move without a UCI string")
        uci = item["uci"]
        if uci not in legal:
            raise MalformedAnswer(f"{uci[:10]!r} is not a legal move here")
        if uci in seen:
            raise MalformedAnswer(f"the move {uci} is listed twice")
        seen.add(uci)
        values = _values(item, f"the move {uci}")
        if values is None:
            raise NotCoveredError(NotCovered(Reason.REMOTE, f"the server gives no DTZ after {uci}"))
        board.push(legal[uci])
        try:
            answers[position_key(board)] = values
        finally:
            board.pop()
    if len(seen) != len(legal):
        raise MalformedAnswer(f"{len(legal) - len(seen)} legal moves missing")
    return answers


def _values(record: dict, what: str) -> tuple[int, int] | None:
    """(WDL, DTZ) of one record (a position or a move's position); None when the server does not know it."""
    category = record.get("category")
    if category not in CATEGORY_SIGN:
        raise MalformedAnswer(f"unknown category {str(category)[:20]!r} for {what}")
    dtz = record.get("dtz")
    sign = CATEGORY_SIGN[category]
    if sign is None or dtz is None:
        return None
    if not isinstance(dtz, int) or isinstance(dtz, bool) or abs(dtz) > 10000:
        raise MalformedAnswer(f"DTZ {str(dtz)[:20]!r} of {what} is not a number of plies")
    if sign and (dtz > 0) - (dtz < 0) != sign:
        raise MalformedAnswer(f"category {category} and DTZ {dtz} of {what} disagree")
    return wdl_from_dtz(dtz), dtz


def retry_after(headers: dict[str, str]) -> float | None:
    value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    try:
        return min(3600.0, max(0.0, float(value))) if value is not None else None
    except ValueError:
        return None


def error_text(body: bytes) -> str:
    """The error message of a 4xx answer: Lichess shape ``{"error": ...}``, or plain text (lila-tablebase)."""
    text = body[:300].decode("utf-8", "replace")
    try:
        data = json.loads(body)
        if isinstance(data, dict) and isinstance(data.get("error"), str):
            text = data["error"]
    except ValueError:
        pass
    return " ".join(text.split())[:120] or "no reason given"
