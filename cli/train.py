"""``chess-endgame train MATERIAL|FEN|NAME``: play an endgame drill in the terminal against tough perfect defence."""

from __future__ import annotations

import json
import random
import re
import sys

import chess
import click

from chess_endgame.tablebase.paths import HOW_TO_GET_TABLES
from chess_endgame.text import plural
from chess_endgame.train.defence import NoTablebaseMove
from chess_endgame.train.drill import CLASSICS, DIFFICULTIES, WIN, Drill, DrillError, from_fen, from_material, named
from chess_endgame.train.session import KEPT, SPENT, Feedback, Session

from .common import fail, load_prober, syzygy_path_option

MATERIAL = re.compile(r"^K[QRBNP]*vK[QRBNP]*$", re.IGNORECASE)
HELP_LINE = "moves in SAN (Qd4) or UCI (d1d4); undo, hint, board, quit"


def _drill(target: str, side: str | None, difficulty: str, seed: int | None, prober: object) -> Drill:
    if "/" in target:
        return from_fen(target, prober)  # type: ignore[arg-type]
    if MATERIAL.match(target):
        white, black = target.upper().split("V")
        user = chess.WHITE if side in (None, "white") else chess.BLACK
        return from_material(f"{white}v{black}", prober, user=user, difficulty=difficulty,  # type: ignore[arg-type]
                             rng=random.Random(seed))
    return named(target, prober)  # type: ignore[arg-type]


def _say(feedback: Feedback) -> list[str]:
    lines = []
    if feedback.verdict == KEPT and feedback.move.endswith("#"):
        lines.append(f"{feedback.move}: checkmate")
    elif feedback.verdict == KEPT:
        margin = f", {plural(feedback.spare, 'ply')} to spare before the 50-move draw" \
            if feedback.spare is not None else ""
        lines.append(f"{feedback.move}: {feedback.after} kept{margin}")
    elif feedback.verdict == SPENT:
        lines.append(f"{feedback.move}?! {feedback.reason}")
    else:
        lines.append(f"{feedback.move}?? {feedback.reason}")
    if feedback.verdict != KEPT:
        lines.append(f"  best was {feedback.best}: {' '.join(feedback.line)} (undo to try again)")
    if feedback.reply is not None:
        lines.append(f"  reply: {feedback.reply}")
    return lines


@click.command()
@click.argument("target", metavar="MATERIAL|FEN|NAME")
@click.option("--side", type=click.Choice(["white", "black"]), default=None,
              help="With a MATERIAL: the side you play (default white).")
@click.option("--difficulty", type=click.Choice(list(DIFFICULTIES)), default="medium", show_default=True,
              help="With a MATERIAL: easy, medium or hard (for a win, the plies the tables need to the next "
                   "zeroing move: 1-12, 13-40, 41-100; to hold a draw, fewer moves that hold).")
@click.option("--seed", type=int, default=None, help="Seed of the random position and the defence's choices "
                                                      "(same seed, same drill).")
@click.option("--plain", is_flag=True, help="The usual tablebase defence (longest DTZ) instead of the tough one.")
@click.option("--json", "as_json", is_flag=True,
              help="For scripts: read commands from standard input, print one JSON object a line.")
@syzygy_path_option
def train(target: str, side: str | None, difficulty: str, seed: int | None, plain: bool, as_json: bool,
          syzygy_path: str | None) -> None:
    """Play an endgame drill against tough perfect defence, with the tables' word on every move.

    MATERIAL (KQvKR, White's pieces first) draws a random position of that material for --side at
    --difficulty; FEN plays that position (the side to move is yours); NAME is a classic: """
    prober = load_prober(syzygy_path, required=True)
    try:
        drill = _drill(target, side, difficulty, seed, prober)
    except DrillError as exc:
        fail(f"{exc}; {HOW_TO_GET_TABLES}" if "missing" in str(exc) else str(exc))
    session = Session(drill, prober, seed=seed or 0, tough=not plain)
    out = _Json() if as_json else _Text(session)
    out.start(session)
    try:
        for line in sys.stdin if as_json else _prompts(session):
            command = line.strip()
            word = command.lower()  # the commands in any case; a move keeps its own (b4 is not B4)
            if not command:
                continue
            if word == "quit":
                break
            if word == "undo":
                out.event("undo", taken=session.undo(), fen=session.board.fen())
            elif word == "hint":
                try:
                    out.event("hint", move=session.hint())
                except ValueError as exc:  # the drill is over
                    out.event("error", message=str(exc))
            elif word == "board":
                out.event("board", fen=session.board.fen())
            else:
                try:
                    feedback = session.play(command)
                except ValueError as exc:
                    out.event("error", message=str(exc))
                    continue
                out.move(feedback, session)
            if session.over:
                if session.summary().success:
                    break
                out.event("over", result=session.result(), fen=session.board.fen())
    except NoTablebaseMove as exc:
        out.event("error", message=f"the tables cannot answer: {exc}")
    except KeyboardInterrupt:
        pass
    out.end(session)
    prober.close()


train.help = (train.help or "") + ", ".join(c.name for c in CLASSICS.values()) + "."


def _prompts(session: Session):
    while True:
        try:
            yield input("undo or quit: " if session.over else "your move: ")
        except EOFError:
            return


class _Text:
    def __init__(self, session: Session) -> None:
        self.session = session

    def start(self, session: Session) -> None:
        drill = session.drill
        side = "White" if session.user == chess.WHITE else "Black"
        goal = "win" if drill.goal == WIN else "hold the draw"
        click.echo(f"{drill.name}: you play {side}, {goal}. {drill.description}".rstrip())
        click.echo(f"({HELP_LINE})")
        self.board()

    def board(self) -> None:
        click.echo(self.session.board.unicode(borders=True, empty_square="·", orientation=self.session.user))

    def event(self, kind: str, **data: object) -> None:
        if kind == "undo":
            click.echo("taken back" if data["taken"] else "nothing to take back")
            self.board()
        elif kind == "hint":
            click.echo(f"hint: {data['move']}")
        elif kind == "board":
            self.board()
        elif kind == "over":
            click.echo(f"{data['result']}: the goal is missed (undo to try again, quit to stop)")
        else:
            click.echo(str(data["message"]))

    def move(self, feedback: Feedback, session: Session) -> None:
        for line in _say(feedback):
            click.echo(line)
        if not session.over:
            self.board()

    def end(self, session: Session) -> None:
        s = session.summary()
        if s.result == "playing":
            click.echo(f"stopped after {plural(s.moves, 'move')}; {s.errors} threw the result away")
            return
        self.board()
        shortest = f" (the tables' own line: {s.shortest})" if s.shortest is not None else ""
        click.echo(f"{s.result}: {'goal reached' if s.success else 'goal missed'}; {plural(s.moves, 'move')}"
                   f"{shortest}, {plural(s.errors, 'error')}, {s.seconds:.0f} s")


class _Json:
    def start(self, session: Session) -> None:
        drill = session.drill
        self.event("start", name=drill.name, fen=drill.fen, goal=drill.goal, description=drill.description,
                   side="white" if session.user == chess.WHITE else "black")

    def event(self, kind: str, **data: object) -> None:
        click.echo(json.dumps({"event": kind, **data}))

    def move(self, feedback: Feedback, session: Session) -> None:
        self.event("move", **feedback.as_dict(), fen=session.board.fen())

    def end(self, session: Session) -> None:
        self.event("end", **session.summary().as_dict(), fen=session.board.fen())
