"""The answers of the HTTP server, as plain data: the Lichess tablebase API and the explorer's.

No HTTP here (that is :mod:`.app`); every function takes a parsed request and
returns a JSON-ready dict or raises :exc:`ApiError` with the status to send.

``/standard`` follows lila-tablebase field for field. The moves are ranked by
the project's chooser (50-move rule and the FEN's halfmove clock included); a
move's fields describe the position after it, from the side to move there, as
Lichess does (a winning move has category ``loss`` and a negative ``dtz``).
Categories: the chooser's classes WIN, MAYBE_WIN, CURSED_WIN, DRAW, BLESSED_LOSS,
MAYBE_LOSS, LOSS are ``win``, ``syzygy-win`` (DTZ rounding may make it a draw),
``cursed-win``, ``draw``, ``blessed-loss``, ``syzygy-loss``, ``loss``; ``maybe-win``,
``maybe-loss`` and ``unknown`` (Lichess's partial 8-piece tables) never occur.
Fields we cannot fill are sent as ``null`` as Lichess does: ``dtm``, ``dtw``,
``dtc`` always; ``precise_dtz`` except for draws (python-chess does not say
whether a DTZ value was rounded).
"""

from __future__ import annotations

import chess

from chess_endgame.board import PositionError, parse_fen
from chess_endgame.chooser import Choice, MoveClass, RankedMove, choose, rank_move
from chess_endgame.engine.player import Decision
from chess_endgame.engine.result import score_json
from chess_endgame.tablebase.prober import NotCovered, NotCoveredError, Reason, TablebaseProber

#: Longest FEN accepted (a legal FEN has at most about 90 characters).
MAX_FEN_LENGTH = 128
#: Plies of a mainline at most (the 50-move rule ends it much sooner between zeroing moves).
MAX_MAINLINE = 1000

CATEGORY = {MoveClass.WIN: "win", MoveClass.MAYBE_WIN: "syzygy-win", MoveClass.CURSED_WIN: "cursed-win",
            MoveClass.DRAW: "draw", MoveClass.BLESSED_LOSS: "blessed-loss", MoveClass.MAYBE_LOSS: "syzygy-loss",
            MoveClass.LOSS: "loss"}
#: A category from the other side's view.
NEGATED = {"win": "loss", "syzygy-win": "syzygy-loss", "maybe-win": "maybe-loss", "cursed-win": "blessed-loss",
           "draw": "draw", "blessed-loss": "cursed-win", "maybe-loss": "maybe-win", "syzygy-loss": "syzygy-win",
           "loss": "win", "unknown": "unknown"}


class ApiError(Exception):
    """A request the server refuses: HTTP ``status`` with ``{"error": message}`` (lila-tablebase's are plain text)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def board_from_query(fen: str | None) -> chess.Board:
    """The position of a ``fen`` query parameter (underscores for spaces allowed, as Lichess allows)."""
    if fen is None or not fen.strip():
        raise ApiError(400, "missing fen (e.g. ?fen=8/6k1/4K3/6B1/8/8/5N2/8_w_-_-_0_1)")
    if len(fen) > MAX_FEN_LENGTH:
        raise ApiError(400, f"fen too long: {len(fen)} characters, at most {MAX_FEN_LENGTH}")
    try:
        return parse_fen(fen.replace("_", " "))
    except PositionError as exc:
        raise ApiError(400, str(exc)) from None


def not_covered_error(answer: NotCovered) -> ApiError:
    """404 for what the tables do not cover (too many pieces, castling, missing tables), 400 for an invalid position."""
    return ApiError(400 if answer.reason is Reason.INVALID_POSITION else 404, answer.message)


def ranked(board: chess.Board, prober: TablebaseProber) -> Choice:
    """Every legal move ranked with its DTZ (the chooser, ``full``); :exc:`ApiError` when not covered."""
    choice = choose(board, prober, full=True)  # type: ignore[arg-type]
    if isinstance(choice, NotCovered):
        raise not_covered_error(choice)
    return choice


def _position_fields(board: chess.Board, *, category: str, dtz: int | None) -> dict:
    return {
        "checkmate": board.is_checkmate(),
        "stalemate": board.is_stalemate(),
        "variant_win": False,
        "variant_loss": False,
        "insufficient_material": board.is_insufficient_material(),
        "dtz": dtz,
        "precise_dtz": 0 if dtz == 0 else None,
        "dtm": None,
        "dtw": None,
        "dtc": None,
        "category": category,
    }


def _move(board: chess.Board, entry: RankedMove) -> dict:
    move = entry.move
    record = {"uci": move.uci(), "san": board.san(move), "zeroing": entry.zeroing,
              "conversion": board.is_capture(move) or move.promotion is not None}
    board.push(move)
    try:
        record.update(_position_fields(board, category=NEGATED[CATEGORY[entry.cls]],
                                       dtz=None if entry.dtz is None else -entry.dtz))
    finally:
        board.pop()
    return record


def standard(board: chess.Board, prober: TablebaseProber) -> dict:
    """``GET /standard``: the position and every legal move, best first (lila-tablebase's fields)."""
    choice = ranked(board, prober)
    record = _position_fields(board, category=CATEGORY[choice.result], dtz=choice.root_dtz)
    record["moves"] = [_move(board, entry) for entry in choice.moves]
    return record


def mainline(board: chess.Board, prober: TablebaseProber) -> dict:
    """``GET /standard/mainline``: the chooser's best moves until mate, a draw or the 50-move rule.

    Empty for a drawn position; ``winner`` is ``"w"``/``"b"`` when the line ends in
    mate, else null (the 50-move draw is claimed as soon as it can be).
    """
    try:
        not_covered = prober.covers(board)
        if not_covered is not None:
            raise not_covered_error(not_covered)
        dtz = prober.probe_dtz(board)
        steps = []
        line = board.copy(stack=False)
        while dtz != 0 and line.halfmove_clock < 100 and len(steps) < MAX_MAINLINE and not line.is_game_over():
            choice = choose(line, prober)  # type: ignore[arg-type]
            if isinstance(choice, NotCovered):
                raise not_covered_error(choice)
            best = choice.best
            if best is None:
                break
            san = line.san(best.move)
            line.push(best.move)
            step_dtz = prober.probe_dtz(line)
            steps.append({"uci": best.move.uci(), "san": san, "dtz": step_dtz,
                          "precise_dtz": 0 if step_dtz == 0 else None})
    except NotCoveredError as exc:
        raise not_covered_error(exc.answer) from None
    winner = None
    if line.is_checkmate():
        winner = "b" if line.turn == chess.WHITE else "w"
    return {"dtz": dtz, "precise_dtz": 0 if dtz == 0 else None, "mainline": steps, "winner": winner}


def status(board: chess.Board) -> str | None:
    """Why the game is over (or may be claimed drawn) in ``board``, in words; None while it goes on."""
    if board.is_checkmate():
        return "checkmate"
    if board.is_stalemate():
        return "stalemate"
    if board.is_insufficient_material():
        return "draw by insufficient material"
    if board.halfmove_clock >= 100:
        return "the 50-move rule: a draw can be claimed"
    return None


def explore(board: chess.Board, prober: TablebaseProber) -> dict:
    """``GET /api/position``: what the web explorer shows, values from the side to move's view.

    Every legal move with the FEN after it and, where the tables reach, its
    class, category and DTZ after the move (mover's view, as ``chess-endgame
    probe`` prints), best first; beyond the tables the moves in SAN order and
    ``not_covered`` says why (the page then asks ``/api/search``): a move whose
    position the tables do cover (a capture into them) still gets its class,
    the others ``beyond`` with the reason.
    """
    choice = choose(board, prober, full=True)  # type: ignore[arg-type]
    record: dict = {"fen": board.fen(), "turn": "white" if board.turn == chess.WHITE else "black",
                    "status": status(board), "tablebase": isinstance(choice, Choice), "verdict": None,
                    "not_covered": choice.message if isinstance(choice, NotCovered) else None}
    if isinstance(choice, Choice):
        record["verdict"] = {"category": CATEGORY[choice.result], "class": choice.result.name,
                             "wdl": choice.root_wdl, "dtz": choice.root_dtz,
                             "halfmove_clock": choice.halfmove_clock}
        entries: list[tuple[chess.Move, RankedMove | None]] = [(m.move, m) for m in choice.moves]
    else:
        entries = sorted(((m, None) for m in board.legal_moves), key=lambda item: board.san(item[0]))
    moves = []
    for move, entry in entries:
        item = {"uci": move.uci(), "san": board.san(move), "from": chess.square_name(move.from_square),
                "to": chess.square_name(move.to_square),
                "promotion": chess.piece_symbol(move.promotion) if move.promotion else None}
        if entry is None and isinstance(choice, NotCovered):
            try:  # beyond the tables, a capture may still lead into them
                entry = rank_move(board, move, prober)  # type: ignore[arg-type]
            except NotCoveredError as exc:
                item["beyond"] = exc.answer.message
        if entry is not None:
            item.update({"class": entry.cls.name, "category": CATEGORY[entry.cls], "dtz": entry.dtz,
                         "distance": entry.distance, "zeroing": entry.zeroing, "checkmate": entry.checkmate,
                         "stalemate": entry.stalemate})
        board.push(move)
        item["fen"] = board.fen()
        board.pop()
        moves.append(item)
    record["moves"] = moves
    return record


def search_record(board: chess.Board, decision: Decision) -> dict:
    """``GET /api/search``: the player's move, evaluation (side to move) and best line."""
    score = decision.score
    line = []
    temp = board.copy(stack=False)
    for move in decision.pv:
        if not temp.is_legal(move):
            break
        line.append({"uci": move.uci(), "san": temp.san(move)})
        temp.push(move)
    return {
        "fen": board.fen(),
        "source": decision.source,
        "move": decision.move.uci() if decision.move else None,
        "san": board.san(decision.move) if decision.move else None,
        "score": score_json(score),
        "class": decision.cls.name if decision.cls else None,
        "depth": decision.depth,
        "nodes": decision.nodes,
        "time_ms": decision.time_ms,
        "pv": line,
        "not_covered": decision.not_covered.message if decision.not_covered else None,
    }
