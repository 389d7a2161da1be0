"""A reviewed game as an annotated PGN, as a summary, and as JSON data.

The PGN is the game as read, its main line annotated as Lichess writes it: a
``[%eval ...]`` tag on every move (the position after it, White's view: pawns
with two decimals, or ``#N`` for a mate), the judgement's NAG (``$4`` ??,
``$2`` ?, ``$6`` ?!), a comment ("Blunder. Kc5 was best.") and the best line as
a variation. Existing move assessments and evaluations are replaced; other
comments are kept.
"""

from __future__ import annotations

import io
import re

import chess
import chess.engine
import chess.pgn

from chess_endgame.review.judge import Judgement
from chess_endgame.review.reviewer import GameReview, MoveReview

#: NAGs that assess a move ($1..$6): replaced by the review's own.
MOVE_ASSESSMENTS = frozenset(range(1, 7))
ANNOTATOR = "chess-endgame review"
#: The sentences :func:`comment` and :func:`entry_comment` write: taken out of a game this review annotated
#: before, so that reviewing its output again replaces them rather than adding a second copy.
_OWN_WORDS = re.compile(r"(?:(?:Blunder|Mistake|Dubious|Inaccuracy)\.(?: \S+ was best\.)?(?: (?:Tablebase|Search): "
                        r"[^{}]*?\.(?=\s|$))?|Tablebase [KQRBNPv]+: [A-Z_]+ for (?:White|Black) to move \([^)]*\)\.)")


def comment(move: MoveReview) -> str:
    """The words the review adds to ``move`` (empty when it is fine)."""
    if move.judgement is None:
        return ""
    text = f"{move.judgement.word}."
    if move.best is not None:
        text += f" {move.best} was best."
    if move.reason:
        text += f" {'Tablebase' if move.source == 'tablebase' else 'Search'}: {move.reason}."
    return text


def entry_comment(review: GameReview) -> str:
    """The tables' verdict where the game entered them."""
    entry = review.entered
    if entry is None:
        return ""
    return f"Tablebase {entry.material}: {entry.cls} for {entry.turn.capitalize()} to move ({entry.result})."


def annotated_game(review: GameReview) -> chess.pgn.Game:
    """The game as read, with the review's evaluations, NAGs, comments and best lines."""
    game = chess.pgn.read_game(io.StringIO(review.pgn))
    assert game is not None
    again = game.headers.get("Annotator") == ANNOTATOR  # this review's output reviewed once more
    game.headers["Annotator"] = ANNOTATOR
    if again:
        game.comment = _without_own_words(game.comment)
    if review.entered is not None and review.entered.ply == 0:
        game.comment = _join(game.comment, entry_comment(review))
    node: chess.pgn.GameNode = game
    for move in review.moves:
        parent = node
        node = node.next()  # type: ignore[assignment]
        assert node is not None and node.move.uci() == move.uci, (move.ply, move.uci)
        node.nags -= MOVE_ASSESSMENTS
        node.set_eval(None)
        node.comment = _without_own_words(node.comment) if again else node.comment.strip()
        if move.eval is not None:
            node.set_eval(move.eval)
        node.comment = _join(node.comment, comment(move))
        if move.judgement is not None:
            node.nags.add(move.judgement.nag)
            if move.line:
                _add_line(parent, move.line)
        if review.entered is not None and review.entered.ply == move.ply:
            node.comment = _join(node.comment, entry_comment(review))
    return game


def annotated_pgn(review: GameReview) -> str:
    """:func:`annotated_game` as PGN text, ending in a blank line."""
    out = io.StringIO()
    print(annotated_game(review), file=out, end="\n\n")
    return out.getvalue()


def _add_line(parent: chess.pgn.GameNode, line: list[str]) -> None:
    """``line`` as a variation of ``parent``, following the variations already there (the player's own line, or
    the review's from before) rather than adding the same moves twice."""
    board = parent.board()
    node = parent
    for san in line:
        move = board.parse_san(san)
        node = node.variation(move) if node.has_variation(move) else node.add_variation(move)
        board.push(move)


def _without_own_words(text: str) -> str:
    return " ".join(_OWN_WORDS.sub("", text).split())


def _join(*parts: str) -> str:
    return " ".join(p for p in parts if p)


# -- summary and JSON ----------------------------------------------------------------------


def summary(review: GameReview) -> dict:
    """Per game: who threw the result away where, the moves that kept the win, and counts per side.

    ``kept[color]`` counts that side's tablebase-judged moves from a won position
    (``won``) and those that kept the win (``kept``); ``counts[color]`` the
    judgements by word.
    """
    blunders = [m for m in review.moves if m.judgement is Judgement.BLUNDER]
    kept = {color: {"won": 0, "kept": 0} for color in ("white", "black")}
    counts = {color: {j.word.lower(): 0 for j in Judgement} for color in ("white", "black")}
    for move in review.moves:
        if move.judgement is not None:
            counts[move.color][move.judgement.word.lower()] += 1
        if move.source == "tablebase" and move.before in ("WIN", "MAYBE_WIN"):
            kept[move.color]["won"] += 1
            kept[move.color]["kept"] += move.after in ("WIN", "MAYBE_WIN")
    entry = review.entered
    return {
        "number": review.number,
        "white": review.headers.get("White", "?"),
        "black": review.headers.get("Black", "?"),
        "result": review.headers.get("Result", "*"),
        "plies": len(review.moves),
        "entered_tables": None if entry is None else {
            "ply": entry.ply, "material": entry.material, "turn": entry.turn, "class": entry.cls,
            "result": entry.result},
        "thrown_away": _move_record(blunders[0]) if blunders else None,
        "blunders": [_move_record(m) for m in blunders],
        "kept": kept,
        "counts": counts,
        "seconds": round(review.seconds, 3),
    }


def score_record(score: chess.engine.PovScore | None) -> dict | None:
    """``{"cp": n}`` or ``{"mate": n}`` from White's view: ``n`` moves to mate, negative when White is mated;
    mate on the board is ``{"mate": 0, "mated": "white"}`` (or ``"black"``), since 0 has no sign."""
    if score is None:
        return None
    white = score.white()
    if white.is_mate():
        mate = white.mate()
        if mate == 0:  # python-chess: MateGiven (White has mated) is above every score, Mate(-0) below
            return {"mate": 0, "mated": "black" if white > chess.engine.Cp(0) else "white"}
        return {"mate": mate}
    return {"cp": white.score()}


def _move_record(move: MoveReview) -> dict:
    return {
        "ply": move.ply, "move": move.label, "color": move.color, "san": move.san, "uci": move.uci,
        "source": move.source, "before": move.before, "after": move.after,
        "judgement": None if move.judgement is None else move.judgement.word.lower(),
        "nag": None if move.judgement is None else move.judgement.nag,
        "reason": move.reason or None, "best": move.best, "line": move.line, "eval": score_record(move.eval),
    }


def record(review: GameReview) -> dict:
    """The whole review as JSON data: the summary, and every move."""
    data = summary(review)
    data["start_eval"] = score_record(review.start_eval)
    data["moves"] = [_move_record(m) for m in review.moves]
    return data
