"""``chess-endgame suite``: run EPD / Lichess puzzle suites with this engine or any UCI engine."""

from __future__ import annotations

import os
import sys

import chess
import click
from tqdm import tqdm

from chess_endgame.batch.protocol import BackendError
from chess_endgame.engine.player import DEFAULT_MOVETIME_MS
from chess_endgame.play.engines import EngineError, limit
from chess_endgame.suite import EngineSpec, Summary, load_files, run_items, summarize, write_csv, write_json
from chess_endgame.suite.items import Item
from chess_endgame.text import plural

from .common import (
    EngineCommand,
    OutputFile,
    batch_backend,
    cluster_option,
    fail,
    interrupted,
    limit_options,
    one_stdout,
    remote_tablebase_option,
    syzygy_path_option,
    uci_options,
    worker_syzygy_path,
)
from .outputs import STDOUT, open_output


def _percent(part: int, whole: int) -> str:
    """Rounded down: 199 of 200 is 99%, not 100%."""
    return f" {100 * part // whole}%" if whole else ""


def _print_summary(summary: Summary, items: int, *, err: bool) -> None:
    header = f"{'':<28}{'positions':>10}{'solved':>15}{'TB-verified':>16}{'mean s':>8}{'mean depth':>11}{'nodes':>12}"

    def line(row) -> str:
        solved = f"{row.solved}/{row.judged}" + _percent(row.solved, row.judged)
        tb = f"{row.tb_correct}/{row.tb_covered}" + _percent(row.tb_correct, row.tb_covered)
        text = (f"{row.label[:27]:<28}{row.total:>10}{solved:>15}{tb:>16}{row.mean_seconds:>8.2f}"
                f"{row.mean_depth:>11.1f}{row.nodes:>12}")
        if row.played:
            text += f"  play {row.play_ok}/{row.played}"
        return text

    click.echo(header, err=err)
    for row in summary.by_file:
        click.echo(line(row), err=err)
    if len(summary.by_file) > 1:
        click.echo(line(summary.total), err=err)
    click.echo("by operation:", err=err)
    for row in summary.by_operation:
        click.echo(line(row), err=err)
    if summary.total.total < items:
        click.echo(f"not run: {items - summary.total.total} of {plural(items, 'position')}", err=err)


def _san(fen: str, moves: list[str]) -> str:
    """The solver's moves in SAN (UCI where they do not replay)."""
    board = chess.Board(fen)
    out = []
    for uci in moves:
        try:
            move = chess.Move.from_uci(uci)
            out.append(board.san(move))
            board.push(move)
        except (ValueError, AssertionError):
            out.append(uci)
    return " ".join(out) or "no move"


def _expected(item: Item, result) -> str:
    """What the failed operations asked for, as the suite's file says it (SAN for moves)."""
    board = chess.Board(item.fen)
    parts = []
    for op, ok in result.checks.items():
        if ok is not False:
            continue
        wanted = item.ops.get(op) if item.kind == "epd" else None
        if op in ("bm", "am") and wanted:
            parts.append(f"{op} " + " ".join(board.san(chess.Move.from_uci(m)) for m in wanted))
        elif op == "puzzle":
            parts.append("the line " + _san(item.fen, item.solution))
        else:
            parts.append(f"{op} {wanted}")
    return "; ".join(parts)


def _print_failed(results: list, items: list[Item], *, err: bool) -> None:
    """After the summary: every position the solver failed, with what it played and what was expected."""
    failed = sorted((r for r in results if r.solved is False or (r.play and r.play.get("ok") is False)),
                    key=lambda r: r.index)
    if not failed:
        return
    click.echo(f"failed ({len(failed)}):", err=err)
    for result in failed:
        item = items[result.index]
        if result.solved is not False:  # solved, but the play-out missed its result
            play = result.play
            click.echo(f"  {os.path.basename(item.file)}:{item.line} {item.id}: played out to {play['result']} "
                       f"({play['termination']}, {plural(play['plies'], 'ply')}), expected {play['expected']}",
                       err=err)
            continue
        tables = f"; the tables: {result.tb_move_class}, best {result.tb_best_class}" if result.tb_move_class else ""
        played = result.moves
        if item.kind == "puzzle":  # the solver's moves with the puzzle's replies between them
            played = [m for i, mine in enumerate(result.moves) for m in (mine, *item.solution[2 * i + 1:2 * i + 2])]
            played = played[:2 * len(result.moves) - 1]
        click.echo(f"  {os.path.basename(item.file)}:{item.line} {item.id}: played {_san(item.fen, played)}, "
                   f"expected {_expected(item, result)}{tables}", err=err)


@click.command()
@click.argument("files", nargs=-1, required=True)
@limit_options
@click.option("--engine", "engine_command", default=None, type=EngineCommand(), metavar="'UCI COMMAND'",
              help="Run any UCI engine (e.g. /usr/games/stockfish) instead of this project's player.")
@click.option("--option", "engine_options", multiple=True, metavar="NAME=VALUE",
              help="A UCI option for --engine (repeatable).")
@click.option("--jobs", default=1, show_default=True, type=click.IntRange(1, 64), metavar="PROCESSES",
              help="Positions in parallel processes, one engine each.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the run as JSON ({meta, summary, positions}) instead of the summary table.")
@click.option("--output", "json_out", type=OutputFile(), default=None,
              help="Write the run as JSON ({meta, summary, positions}) to FILE (-: standard output).")
@click.option("--csv", "csv_out", type=OutputFile(), default=None,
              help="Write one CSV row per position to FILE (-: standard output).")
@click.option("--play", is_flag=True, help="Also play each position out against the defender "
                                            "(tablebase where covered, else the same engine).")
@click.option("--theme", default=None, metavar="THEME",
              help="Only Lichess puzzles with this theme (e.g. endgame); EPD positions are all run.")
@click.option("--limit", "max_items", type=click.IntRange(1, None), default=None, metavar="POSITIONS",
              help="Only the first POSITIONS positions.")
@cluster_option
@syzygy_path_option
@remote_tablebase_option
def suite(files: tuple[str, ...], movetime: int | None, depth: int | None, nodes: int | None,
          engine_command: str | None, engine_options: tuple[str, ...], jobs: int, as_json: bool,
          json_out: str | None, csv_out: str | None, play: bool, theme: str | None, max_items: int | None,
          cluster: str | None, syzygy_path: str | None, remote_tablebase: str | None) -> None:
    """Run the suites in FILE... (EPD with bm/am/dm/wdl/dtz, or Lichess puzzle CSV) and score them.

    Every position within the tables is also checked against them: the move is
    correct when it is of the root's best class (the chooser's rules).
    """
    if sum(x is not None for x in (movetime, depth, nodes)) > 1:
        fail("give one of --movetime, --depth, --nodes")
    if engine_options and not engine_command:
        fail("--option sets options of an --engine; the built-in player takes --syzygy-path and the limits")
    if remote_tablebase and engine_command:
        fail("--remote-tablebase is for the built-in player; give an --engine its own option (e.g. SyzygyRemote)")
    if remote_tablebase and (jobs > 1 or cluster):
        fail("--remote-tablebase runs with --jobs 1: one request in flight to the server")
    err = one_stdout({"--json": as_json, "--output": json_out, "--csv": csv_out})
    if movetime is None and depth is None and nodes is None:
        movetime = DEFAULT_MOVETIME_MS
    loaded = load_files(list(files), theme=theme)
    load_errors = loaded.errors
    if len(load_errors) == len(files):  # nothing to run: one line, the reason (or how many files failed)
        fail(str(load_errors[0]) if len(files) == 1 else
             f"no readable suite among the files given: {'; '.join(str(e) for e in load_errors)}")
    for error in load_errors:
        click.echo(f"chess-endgame: error: {error}", err=True)
    for path, line, message in loaded.skipped:
        click.echo(f"chess-endgame: skipped {path}:{line}: {message}", err=True)
    items: list[Item] = loaded.items[:max_items] if max_items else loaded.items
    if not items:
        fail("no positions to run" + (f" with theme {theme!r}" if theme else ""))
    tables = worker_syzygy_path(syzygy_path)
    spec = EngineSpec(engine_command, uci_options(engine_options, "--option"), limit(movetime, depth, nodes),
                      tables, play, remote_tablebase=remote_tablebase)
    backend = batch_backend(jobs, cluster, tables)
    bar = tqdm(total=len(items), desc="suite", unit="pos", file=sys.stderr, dynamic_ncols=True, disable=None)
    counts = {"solved": 0, "judged": 0}

    def progress(result) -> None:
        if result.solved is not None:
            counts["judged"] += 1
            counts["solved"] += result.solved
        bar.set_postfix(solved=f"{counts['solved']}/{counts['judged']}")
        bar.update(1)

    try:
        outcome = run_items(items, spec, jobs=jobs, backend=backend, on_result=progress)
    except (EngineError, BackendError) as exc:
        bar.close()
        fail(str(exc))
    bar.close()
    if not as_json:
        _print_summary(summarize(outcome.results), len(items), err=err)
        _print_failed(outcome.results, items, err=err)
    meta = {"files": list(files), "engine": engine_command or "chess-endgame", "limits":
            {"movetime": movetime, "depth": depth, "nodes": nodes},
            "jobs": min(backend.slots, len(items)), "positions": len(items),
            "interrupted": outcome.interrupted}
    if cluster:
        meta["cluster"] = {"address": cluster, "actors": backend.slots}
    meta["retried"] = [{"index": i, "id": ident, "why": why} for i, ident, why in outcome.retried]
    for path in ([STDOUT] if as_json else []) + ([json_out] if json_out else []):
        with open_output(path) as f:
            write_json(outcome.results, f, meta=meta)
    if csv_out:
        with open_output(csv_out, newline="") as f:
            write_csv(outcome.results, f)
    for _, ident, why in outcome.retried:
        click.echo(f"chess-endgame: retried {ident}: {why}", err=True)
    for error in outcome.errors:
        click.echo(f"chess-endgame: engine error: {error}", err=True)
    if outcome.interrupted:
        interrupted("the summary and the outputs hold the positions done")
    sys.exit(1 if outcome.errors or load_errors else 0)
