"""``chess-endgame best`` and ``chess-endgame play``: the player's move, and whole games."""

from __future__ import annotations

import sys

import chess
import click

from chess_endgame.engine.player import Player, PlayerOptions
from chess_endgame.engine.result import Limits, score_json, uci_words
from chess_endgame.play.engines import EngineError, ExternalEngine, PlayerEngine, limit
from chess_endgame.play.game import GameRecord, PlayedMove, TablebaseAgent, play_game
from chess_endgame.tablebase.prober import category
from chess_endgame.tablebase.remote import RootProber
from chess_endgame.text import plural

from .common import (
    EngineCommand,
    OutputFile,
    board_from,
    fail,
    interrupted,
    limit_options,
    make_player,
    one_stdout,
    position_arguments,
    position_from,
    remote_tablebase_option,
    search_limits,
    syzygy_path_option,
)
from .outputs import STDOUT, echo_json, kept_at, open_output


@click.command()
@position_arguments
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON {fen, move, san, source, class, dtz, wdl, score, distance, pv} instead of the text.")
@click.option("--no-faster-mate", is_flag=True, help="Pure DTZ choice at tablebase roots (no mate search).")
@limit_options
@syzygy_path_option
@remote_tablebase_option
def best(position: tuple[str, ...], moves: bool, as_json: bool, no_faster_mate: bool, movetime: int | None,
         depth: int | None, nodes: int | None, syzygy_path: str | None, remote_tablebase: str | None) -> None:
    """The move to play in FEN: from the tablebases when they cover it, else from the search.

    The halfmove clock comes from the FEN; --moves gives the game so far, so
    repetitions count.
    """
    board = position_from(position, moves)
    if not any(board.legal_moves):
        fail(f"no legal move in {board.fen()}: " + ("checkmate" if board.is_check() else "stalemate"))
    player = make_player(syzygy_path, faster_mate=not no_faster_mate, remote_tablebase=remote_tablebase)
    player.options.root_dtz = True
    decision = player.decide(board, Limits(**search_limits(movetime, depth, nodes)))
    player.set_remote(None)
    move = decision.move
    assert move is not None
    wdl = decision.choice.root_wdl if decision.choice else None
    dtz = decision.choice.root_dtz if decision.choice else None
    record = {
        "fen": board.fen(), "move": move.uci(), "san": board.san(move), "source": decision.source,
        "class": decision.cls.name if decision.cls else None, "dtz": dtz, "wdl": wdl,
        "score": score_json(decision.score), "distance": decision.distance,
        "pv": [m.uci() for m in decision.pv], "notes": decision.notes,
        "depth": decision.depth, "nodes": decision.nodes, "time_ms": decision.time_ms,
        "tables": None if decision.not_covered is None else decision.not_covered.message,
    }
    if as_json:
        echo_json(record)
        return
    click.echo(f"best move: {record['san']} ({record['move']})")
    click.echo(f"source:    {decision.source}")
    if decision.cls is not None:
        click.echo(f"class:     {decision.cls.name} (distance {plural(decision.distance, 'ply')}); position: "
                   f"{category(wdl)} WDL {wdl} DTZ {dtz}")
    else:
        click.echo(f"search:    depth {decision.depth}, {decision.nodes} nodes, {decision.time_ms} ms")
        if decision.not_covered is not None:
            click.echo(f"tables:    {decision.not_covered.message}")
    score = "none (stopped before the first move was searched)"
    if decision.score is not None:
        score = uci_words(decision.score)
    click.echo(f"score:     {score}")
    click.echo(f"pv:        {_san_line(board, decision.pv)}")
    for note in decision.notes:
        click.echo(f"note:      {note}")


def _san_line(board: chess.Board, moves: list[chess.Move]) -> str:
    try:
        return board.variation_san(moves)
    except ValueError:
        return " ".join(m.uci() for m in moves)


@click.command()
@click.argument("fen")
@click.option("--opponent", default="tablebase", show_default=True, type=EngineCommand(),
              metavar="tablebase|self|'UCI COMMAND'",
              help="Who plays the other side: the tablebase defender (longest resistance), this engine, "
                   "or any UCI engine command line (e.g. /usr/games/stockfish).")
@click.option("--max-plies", default=300, show_default=True, type=click.IntRange(1, 5000), metavar="PLIES",
              help="End the game unfinished after this many plies (half-moves).")
@click.option("--pgn", "pgn_path", type=OutputFile(), default=None,
              help="Write the game as PGN to FILE (every move's tablebase class as a comment); -: standard "
                   "output, the moves then go to stderr.")
@click.option("--no-faster-mate", is_flag=True, help="Pure DTZ play at tablebase roots.")
@limit_options
@syzygy_path_option
@remote_tablebase_option
def play(fen: str, opponent: str, max_plies: int, pgn_path: str | None, no_faster_mate: bool,
         movetime: int | None, depth: int | None, nodes: int | None, syzygy_path: str | None,
         remote_tablebase: str | None) -> None:
    """Play FEN out: this engine for the side to move against --opponent; adjudicate and print the moves."""
    board = board_from(fen, ())
    err = one_stdout({"--pgn": pgn_path})
    player = make_player(syzygy_path, faster_mate=not no_faster_mate, remote_tablebase=remote_tablebase)
    limits = limit(**search_limits(movetime, depth, nodes))
    ours = PlayerEngine(player, limits)
    if opponent == "self":
        # Its own player (its own hash) on the same tables: the moves alternate, and the missing directories are
        # named once.
        theirs = PlayerEngine(Player(player.prober, options=PlayerOptions(faster_mate=not no_faster_mate)), limits)
        theirs.player.set_remote(player.remote)  # one server connection, one request at a time
    elif opponent == "tablebase":
        defender = player.prober if player.remote is None else RootProber(player.prober, player.remote)
        theirs = TablebaseAgent(defender, PlayerEngine(player, limits))  # type: ignore[arg-type]
    else:
        try:
            theirs = ExternalEngine(opponent, {}, limits)
        except EngineError as exc:
            fail(str(exc))
    white, black = (ours, theirs) if board.turn == chess.WHITE else (theirs, ours)

    played: list[PlayedMove] = []

    def show(after: chess.Board, move: PlayedMove) -> None:
        played.append(move)
        number = after.fullmove_number - (1 if after.turn == chess.WHITE else 0)
        dots = "." if after.turn == chess.BLACK else "..."
        click.echo(f"{number}{dots} {move.san:<8} {move.comment}", err=err)

    stopped: BaseException | None = None
    try:
        record = play_game(board, white, black, max_plies=max_plies, prober=player.prober, on_move=show)
    except (KeyboardInterrupt, EngineError) as exc:
        # Keep the game so far: the moves are printed, the PGN gets them with result "*".
        stopped = exc
        record = GameRecord(board.fen(), white.name, black.name, played, "*",
                            "engine error" if isinstance(exc, EngineError) else "interrupted")
    finally:
        theirs.close()
        player.set_remote(None)
    click.echo(f"result: {record.result} ({record.termination}) after {plural(record.plies, 'ply')}", err=err)
    kept_in = pgn_path
    if pgn_path:
        with open_output(pgn_path) as f:
            f.write(record.pgn())
        kept_in = kept_at(pgn_path)  # open_output named the file it went to instead, if any
        if not err and kept_in == pgn_path:
            click.echo(f"PGN written to {pgn_path}", err=True)
    if isinstance(stopped, EngineError):
        fail(str(stopped))
    if stopped is not None:
        if not record.plies:
            interrupted("no move was played")
        where = " and in " + kept_in if kept_in and kept_in != STDOUT else ""
        interrupted(f"the {plural(record.plies, 'ply')} played {'is' if record.plies == 1 else 'are'} above{where}")
    sys.exit(0)
