"""The training page's answers, as plain data: a new drill, the tables' word on a move and the program's reply.

Stateless: the page keeps the drill (its start FEN) and the moves played, and sends them with every request;
the server replays them (checking each is legal) and answers. The program's reply is seeded by the drill's
seed and the ply, so the same game gets the same replies.
"""

from __future__ import annotations

import random

import chess

from chess_endgame.tablebase.prober import Prober
from chess_endgame.train.defence import NoTablebaseMove
from chess_endgame.train.drill import (
    CLASSICS,
    DIFFICULTIES,
    Drill,
    DrillError,
    NotFound,
    from_fen,
    from_material,
    named,
)
from chess_endgame.train.session import Session

from .api import ApiError, board_from_query

#: Moves a request may carry (the 50-move rule and repetitions end a drill long before).
MAX_MOVES = 600
MAX_SEED = 2**31 - 1


def classics() -> list[dict]:
    """The named classics the page offers."""
    return [{"name": c.name, "goal": c.goal, "description": c.description} for c in CLASSICS.values()]


def new(query: dict, prober: Prober) -> dict:
    """A drill from ``classic``, ``material`` (with ``side`` and ``difficulty``) or ``fen``; ``seed``."""
    seed = _seed(query)
    try:
        if query.get("classic"):
            drill = named(query["classic"], prober)
        elif query.get("material"):
            side = query.get("side", "white")
            if side not in ("white", "black"):
                raise ApiError(400, "side is white or black")
            difficulty = query.get("difficulty", "medium")
            if difficulty not in DIFFICULTIES:
                raise ApiError(400, f"difficulty is one of {', '.join(DIFFICULTIES)}")
            material = query["material"].strip()
            if len(material) > 16 or "v" not in material.lower():
                raise ApiError(400, "material such as KQvKR")
            white, black = material.upper().split("V", 1)
            drill = from_material(f"{white}v{black}", prober, user=side == "white", difficulty=difficulty,
                                  rng=random.Random(seed), tries=1500)
        else:
            drill = from_fen(board_from_query(query.get("fen")).fen(), prober)
    except DrillError as exc:
        raise ApiError(404 if isinstance(exc, NotFound) else 400, str(exc)) from None
    return {**_drill(drill), "seed": seed}


def _drill(drill: Drill) -> dict:
    return {"name": drill.name, "fen": drill.fen, "goal": drill.goal, "description": drill.description,
            "side": "white" if drill.user == chess.WHITE else "black"}


def _seed(query: dict) -> int:
    text = query.get("seed", "0")
    if not (text.isascii() and text.isdigit()) or int(text) > MAX_SEED:
        raise ApiError(400, f"seed is a number from 0 to {MAX_SEED}")
    return int(text)


def _session(query: dict, prober: Prober) -> Session:
    """The drill of ``fen`` (its start) with ``moves`` (UCI, space or comma separated) played."""
    start = board_from_query(query.get("fen"))
    texts = query.get("moves", "").replace(",", " ").split()
    if len(texts) > MAX_MOVES:
        raise ApiError(400, f"at most {MAX_MOVES} moves")
    drill = Drill("drill", start.fen(), query.get("goal", "win"))
    session = Session(drill, prober, seed=_seed(query), tough=query.get("plain") != "1")
    for text in texts:
        try:
            move = chess.Move.from_uci(text)
        except ValueError:
            raise ApiError(400, f"not a UCI move: {text!r}") from None
        if session.over:
            raise ApiError(400, f"the drill is over ({session.result()}) before move {text}")
        if move not in session.board.legal_moves:
            raise ApiError(400, f"illegal move {text} in {session.board.fen()}")
        session.board.push(move)
    return session


def move(query: dict, prober: Prober) -> dict:
    """The tables' word on ``move`` (UCI) after the drill's moves, and the program's reply."""
    session = _session(query, prober)
    if session.over:
        raise ApiError(400, f"the drill is over ({session.result()}): no more moves")
    if session.board.turn != session.user:
        raise ApiError(400, "not the user's turn: the moves end with a move of the user's")
    try:
        played = session.board.parse_uci(query.get("move", ""))
    except ValueError:
        played = chess.Move.null()
    if not played:  # python-chess reads "0000" as the null move
        raise ApiError(400, f"not a legal move here: {query.get('move', '')!r}")
    try:
        feedback = session.play(played.uci())
    except NoTablebaseMove as exc:
        raise ApiError(404, f"the tables cannot answer: {exc}") from None
    reply = session.board.peek().uci() if feedback.reply is not None else None
    return {"feedback": feedback.as_dict(), "reply": reply, "fen": session.board.fen(), "over": session.over,
            "result": session.result()}


def hint(query: dict, prober: Prober) -> dict:
    """The tables' best move for the user after the drill's moves."""
    session = _session(query, prober)
    try:
        best = session.hint()
    except NoTablebaseMove as exc:
        raise ApiError(404, f"the tables cannot answer: {exc}") from None
    except ValueError as exc:
        raise ApiError(400, str(exc)) from None
    return {"move": best, "uci": session.board.parse_san(best).uci()}
