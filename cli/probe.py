"""``chess-endgame probe``: the position's WDL/DTZ and every legal move ranked."""

from __future__ import annotations

import chess
import click

from chess_endgame.chooser import Choice, RankedMove, choose
from chess_endgame.tablebase.prober import NotCovered, category
from chess_endgame.tablebase.remote import RootProber

from .common import (
    fail,
    load_prober,
    load_remote,
    position_arguments,
    position_from,
    prober_option,
    remote_tablebase_option,
    syzygy_path_option,
)
from .outputs import echo_json


def move_record(board: chess.Board, entry: RankedMove) -> dict:
    """JSON record of a ranked move (values from the mover's view)."""
    return {
        "uci": entry.uci,
        "san": board.san(entry.move),
        "wdl": entry.wdl,
        "dtz": entry.dtz,
        "category": category(entry.wdl),
        "class": entry.cls.name,
        "distance": entry.distance,
        "zeroing": entry.zeroing,
        "checkmate": entry.checkmate,
        "stalemate": entry.stalemate,
    }


def choice_record(board: chess.Board, choice: Choice) -> dict:
    return {
        "fen": board.fen(),
        "wdl": choice.root_wdl,
        "dtz": choice.root_dtz,
        "category": category(choice.root_wdl),
        "halfmove_clock": choice.halfmove_clock,
        "class": choice.result.name,
        "moves": [move_record(board, m) for m in choice.moves],
    }


def _flags(entry: RankedMove) -> str:
    flags = [name for name, on in (("checkmate", entry.checkmate), ("stalemate", entry.stalemate),
                                   ("zeroing", entry.zeroing)) if on]
    return ",".join(flags)


def print_choice(board: chess.Board, choice: Choice) -> None:
    side = "White" if board.turn == chess.WHITE else "Black"
    click.echo(board.fen())
    click.echo(f"{side} to move: {category(choice.root_wdl)} (WDL {choice.root_wdl}, DTZ {choice.root_dtz}); "
               f"halfmove clock {choice.halfmove_clock}: {choice.result.name}")
    if not choice.moves:
        click.echo("no legal moves: " + ("checkmate" if board.is_check() else "stalemate"))
        return
    click.echo(f"{'#':>3}  {'move':<8}{'uci':<7}{'class':<13}{'D':>5}{'wdl':>5}{'dtz':>6}  "
               f"{'after the move':<15}{'flags'}")
    for rank, entry in enumerate(choice.moves, 1):
        dtz = "-" if entry.dtz is None else str(entry.dtz)
        distance = "-" if entry.distance is None else str(entry.distance)
        click.echo(f"{rank:>3}  {board.san(entry.move):<8}{entry.uci:<7}{entry.cls.name:<13}{distance:>5}"
                   f"{entry.wdl:>5}{dtz:>6}  {category(entry.wdl):<15}{_flags(entry)}".rstrip())


def not_covered_message(answer: NotCovered) -> str:
    return f"the tables cannot answer this position: {answer.message}"


@click.command()
@position_arguments
@click.option("--json", "as_json", is_flag=True, help="Print JSON (stable keys) instead of a table.")
@click.option("--no-50-move-rule", "no_rule50", is_flag=True,
              help="Count cursed wins as wins and blessed losses as losses (Syzygy50MoveRule false).")
@syzygy_path_option
@prober_option
@remote_tablebase_option
def probe(position: tuple[str, ...], moves: bool, as_json: bool, no_rule50: bool,
          syzygy_path: str | None, backend: str | None, remote_tablebase: str | None) -> None:
    """Probe FEN: WDL, DTZ and category from the side to move, then every legal move, best first.

    Values after a move are from the mover's view. The halfmove clock of the FEN
    and the game moves (--moves) decide each move's class (WIN, MAYBE_WIN,
    CURSED_WIN, DRAW, BLESSED_LOSS, MAYBE_LOSS, LOSS).
    """
    board = position_from(position, moves)
    remote = load_remote(remote_tablebase)
    with load_prober(syzygy_path, backend=backend) as prober:
        tables = prober if remote is None else RootProber(prober, remote)
        choice = choose(board, tables, rule50=not no_rule50, full=True)  # type: ignore[arg-type]
    if remote is not None:
        remote.close()
        if isinstance(tables, RootProber) and tables.used_remote:
            trips = remote.remote_stats.round_trips
            how = f"in {trips[-1]:.0f} ms" if trips else "from the cache"
            click.echo(f"chess-endgame: answered by the remote tablebase {remote.url} {how}", err=True)
    if isinstance(choice, NotCovered):
        fail(not_covered_message(choice))
    if as_json:
        echo_json(choice_record(board, choice))
    else:
        print_choice(board, choice)
