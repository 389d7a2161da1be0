"""Reviewing played games: where the result was thrown away, and the moves that kept it.

:mod:`.reviewer` evaluates every position through the player service and
judges every move (:mod:`.judge`: the tables' classes within them, Lichess's
winning-chances rule beyond); :mod:`.games` reads PGN databases and reviews
them through the batch runner; :mod:`.annotate` writes the annotated PGN, the
summary and JSON; :mod:`.curve` draws the evaluation curve as SVG.
"""

from chess_endgame.pgn import PgnError, PgnGame, Skipped, read_games
from chess_endgame.review.annotate import annotated_game, annotated_pgn, record, summary
from chess_endgame.review.curve import curve_svg
from chess_endgame.review.games import ReviewSpec, review_games
from chess_endgame.review.judge import Judgement
from chess_endgame.review.reviewer import DEFAULT_NODES, GameReview, MoveReview, Reviewer, ReviewOptions

__all__ = ["DEFAULT_NODES", "GameReview", "Judgement", "MoveReview", "PgnError", "PgnGame", "ReviewOptions",
           "ReviewSpec", "Reviewer", "Skipped", "annotated_game", "annotated_pgn", "curve_svg", "read_games",
           "record", "review_games", "summary"]
