"""Judging one move: from the tables' classes, or from evaluations as Lichess does.

Within the tables (:func:`tablebase_judgement`) the judgement compares the
class of the position before the move (its best move's class, from the
chooser) with the class of the move played (:func:`~..chooser.rank_move`),
both under the 50-move rule and the game's history, from the mover's view:

- a blunder (``??``, NAG 4) changes the theoretical result: win → draw or loss,
  draw → loss, and a cursed win given away (cursed win → draw or worse; the
  defender's mirror: a draw into a blessed loss);
- a dubious move (``?!``, NAG 6) keeps the result but spends the 50-move margin
  when it matters: the winner's move leaves fewer than ``tight`` plies before
  the 50-move draw where the best move left more, or brings a position back a
  second time (a third time draws); the loser's move lets the winner zero sooner where the best
  defence would have left the winner fewer than ``tight`` plies.

Beyond the tables (:func:`eval_judgement`) it is Lichess's rule (lila
``Advice.scala`` / ``WinPercent.scala``): centipawns, clamped to ±1000, map to
winning chances in [-1, 1] (python-chess's Lichess model: ``2 / (1 + exp(-0.00368208 cp)) - 1``); a drop of the
mover's chances by 0.3 is a blunder (``??``), 0.2 a mistake (``?``), 0.1 an
inaccuracy (``?!``); a forced mate lost or a mate allowed is judged by the
centipawns on the other side of it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import chess
import chess.engine
import chess.pgn

from chess_endgame.chooser import MoveClass, RankedMove
from chess_endgame.text import plural

#: Plies before the 50-move draw below which spending the margin matters (``?!``).
TIGHT_PLIES = 10
#: Lichess's centipawn ceiling: a mate counts as this much.
CP_CEILING = 1000


class Judgement(enum.Enum):
    """A move's judgement: the word Lichess uses, and its NAG."""

    BLUNDER = ("Blunder", chess.pgn.NAG_BLUNDER)
    MISTAKE = ("Mistake", chess.pgn.NAG_MISTAKE)
    DUBIOUS = ("Dubious", chess.pgn.NAG_DUBIOUS_MOVE)
    INACCURACY = ("Inaccuracy", chess.pgn.NAG_DUBIOUS_MOVE)

    @property
    def word(self) -> str:
        return self.value[0]

    @property
    def nag(self) -> int:
        return self.value[1]

    @property
    def symbol(self) -> str:
        return {chess.pgn.NAG_BLUNDER: "??", chess.pgn.NAG_MISTAKE: "?", chess.pgn.NAG_DUBIOUS_MOVE: "?!"}[self.nag]


class Outcome(enum.IntEnum):
    """What a tablebase class means for the game under the 50-move rule, best last."""

    LOSS = 0
    BLESSED_LOSS = 1
    DRAW = 2
    CURSED_WIN = 3
    WIN = 4

    @property
    def text(self) -> str:
        return self.name.lower().replace("_", " ")


def class_outcome(cls: MoveClass) -> Outcome:
    """A class's outcome: MAYBE_WIN counts as a win and MAYBE_LOSS as a loss (as the chooser's game result)."""
    if cls >= MoveClass.MAYBE_WIN:
        return Outcome.WIN
    if cls <= MoveClass.MAYBE_LOSS:
        return Outcome.LOSS
    return Outcome[cls.name]


def spare(move: RankedMove) -> int | None:
    """Plies left before the 50-move draw when ``move``'s side reaches its zeroing move (100 - s)."""
    return None if move.s is None else 100 - move.s


@dataclass(frozen=True)
class Verdict:
    judgement: Judgement | None
    #: Why, in words (empty when the move is fine).
    reason: str = ""


#: How a game ends at once in a draw (python-chess's terminations), in words.
DRAWN_BY = {chess.Termination.STALEMATE: "stalemate",
            chess.Termination.INSUFFICIENT_MATERIAL: "insufficient material",
            chess.Termination.THREEFOLD_REPETITION: "threefold repetition",
            chess.Termination.FIVEFOLD_REPETITION: "fivefold repetition",
            chess.Termination.FIFTY_MOVES: "the 50-move rule",
            chess.Termination.SEVENTYFIVE_MOVES: "the 75-move rule"}


def drawn_by(after: chess.Board) -> str | None:
    """Why the position after a move is a draw at once (stalemate, repetition, the 50-move rule,
    insufficient material), from :meth:`chess.Board.outcome` with draws claimed; None when it is not."""
    result = after.outcome(claim_draw=True)
    return DRAWN_BY.get(result.termination) if result is not None else None


def tablebase_judgement(best: RankedMove, played: RankedMove, *, repeats: bool = False,
                        tight: int = TIGHT_PLIES, draw: str | None = None) -> Verdict:
    """Judge ``played`` against the position's ``best`` move (both exact, mover's view).

    ``repeats``: the position after the move has occurred before (a third time draws). ``draw``: why
    the position after the move is a draw at once (:func:`drawn_by`), named in the reason.
    """
    before, after = class_outcome(best.cls), class_outcome(played.cls)
    if after < before:
        rule = ", a draw under the 50-move rule" if after in (Outcome.CURSED_WIN, Outcome.BLESSED_LOSS) else ""
        how = f" by {draw}" if draw and after == Outcome.DRAW else ""
        return Verdict(Judgement.BLUNDER, f"{before.text} → {after.text}{how}{rule}")
    if played.move == best.move or before not in (Outcome.WIN, Outcome.LOSS):
        return Verdict(None)
    left, best_left = spare(played), spare(best)
    if left is None or best_left is None:
        return Verdict(None)
    if before == Outcome.WIN:
        if left < best_left and left < tight:
            return Verdict(Judgement.DUBIOUS, f"keeps the win with {plural(max(left, 0), 'ply')} to spare before the "
                                              f"50-move draw; the best move kept {best_left}")
        if repeats:
            return Verdict(Judgement.DUBIOUS, "keeps the win but repeats a position: a third time is a draw")
    elif left > best_left and best_left < tight:
        return Verdict(Judgement.DUBIOUS, f"resists less: the winner now has {plural(left, 'ply')} to spare before the "
                                          f"50-move draw; the best defence left {max(best_left, 0)}")
    return Verdict(None)


def winning_chances(score: chess.engine.Score) -> float:
    """Lichess's winning chances in [-1, 1] of a score from one side's view: python-chess's Lichess model
    (:meth:`chess.engine.Cp.wdl`, ``model="lichess"``, which clamps at the ceiling), mates at ±ceiling.

    python-chess rounds the model to whole permille, so the chances move in steps of 0.002 where lila's
    float does not: a drop within 0.002 of a threshold (0.3, 0.2, 0.1) may fall on the other side of it
    than on Lichess."""
    mate = score.mate()
    if mate is not None:
        score = chess.engine.Cp(CP_CEILING if mate > 0 or (mate == 0 and score == chess.engine.MateGiven)
                                else -CP_CEILING)
    wdl = score.wdl(model="lichess")
    return (wdl.wins - wdl.losses) / 1000


def eval_judgement(before: chess.engine.Score, after: chess.engine.Score) -> Verdict:
    """Lichess's judgement of a move from the evaluations before and after it, both from the mover's view."""
    if before.mate() is None and after.mate() is None:
        drop = winning_chances(before) - winning_chances(after)
        for threshold, judgement in ((0.3, Judgement.BLUNDER), (0.2, Judgement.MISTAKE),
                                     (0.1, Judgement.INACCURACY)):
            if drop >= threshold:
                return Verdict(judgement, f"winning chances {_percent(before)} → {_percent(after)}")
        return Verdict(None)
    prev_mate, next_mate = before.mate(), after.mate()
    if prev_mate is None and next_mate is not None and next_mate < 0:
        return Verdict(_by_cp(-(before.score() or 0)), "checkmate is now unavoidable")
    if prev_mate is not None and prev_mate > 0 and (next_mate is None or next_mate < 0):
        return Verdict(_by_cp(after.score() if next_mate is None else 0), "lost forced checkmate sequence")
    return Verdict(None)


def _by_cp(cp: int | None) -> Judgement:
    """Lichess's mate advice: the centipawns on the other side of the mate decide (>999, >700, else)."""
    cp = cp or 0
    if cp > 999:
        return Judgement.INACCURACY
    if cp > 700:
        return Judgement.MISTAKE
    return Judgement.BLUNDER


def _percent(score: chess.engine.Score) -> str:
    return f"{50 + 50 * winning_chances(score):.0f}%"
