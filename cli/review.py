"""``chess-endgame review``: annotate played games from the tables and the searcher."""

from __future__ import annotations

import functools
import os
import sys
import time

import click
from tqdm import tqdm

from chess_endgame.batch.protocol import BackendError
from chess_endgame.review import (
    DEFAULT_NODES,
    GameReview,
    Judgement,
    PgnError,
    ReviewOptions,
    ReviewSpec,
    Skipped,
    annotated_pgn,
    curve_svg,
    read_games,
    record,
    review_games,
    summary,
)
from chess_endgame.review.judge import TIGHT_PLIES
from chess_endgame.tablebase.prober import Prober
from chess_endgame.tablebase.remote import RemoteProber, default_cache_path
from chess_endgame.text import plural

from .common import (
    OutputDirectory,
    OutputFile,
    batch_backend,
    cluster_option,
    fail,
    interrupted,
    load_prober,
    load_remote,
    one_stdout,
    remote_tablebase_option,
    syzygy_path_option,
    worker_syzygy_path,
)
from .outputs import STDOUT, echo_json, open_output


def _print_summary(data: dict, *, err: bool) -> None:
    click.echo(f"game {data['number']}: {data['white']} - {data['black']} {data['result']}, "
               f"{plural(data['plies'], 'ply')}", err=err)
    entry = data["entered_tables"]
    if entry is not None:
        where = "at the start" if entry["ply"] == 0 else f"after ply {entry['ply']}"
        click.echo(f"  tables {where}: {entry['material']}, {entry['class']} for {entry['turn'].capitalize()} to move "
                   f"({entry['result']})", err=err)
    else:
        click.echo("  never within the tables", err=err)
    for blunder in data["blunders"]:
        best = f"; {blunder['best']} was best" if blunder["best"] else ""
        what = "result thrown away" if blunder["source"] == "tablebase" else "blunder (search)"
        click.echo(f"  {what}: {blunder['move']}?? ({blunder['reason']}){best}", err=err)
    for color in ("white", "black"):
        kept = data["kept"][color]
        if kept["won"]:
            click.echo(f"  {color.capitalize()} kept the win with {kept['kept']} of {plural(kept['won'], 'move')}",
                       err=err)
    per_side = {color: [plural(n, word) for word, n in data["counts"][color].items() if n]
                for color in ("white", "black")}
    counts = "; ".join(f"{color.capitalize()}: {', '.join(words)}" for color, words in per_side.items() if words)
    click.echo(f"  flagged: {counts or 'nothing'}", err=err)


@click.command()
@click.argument("pgn_file", metavar="GAMES.pgn")
@click.option("--movetime", type=click.IntRange(1, None), default=None, metavar="MS",
              help="Beyond the tables: think MS milliseconds per position.")
@click.option("--nodes", type=click.IntRange(1, None), default=None, metavar="NODES",
              help=f"Beyond the tables: search NODES nodes per position (default {DEFAULT_NODES} when no "
                   "limit is given).")
@click.option("--depth", type=click.IntRange(1, 128), default=None, metavar="PLIES",
              help="Beyond the tables: search to this depth in plies per position.")
@click.option("--output", "pgn_out", type=OutputFile(), default=None,
              help="Write the annotated PGN to FILE (-: standard output, the default without --json).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the review as JSON ({meta, games, skipped}) on standard output instead of the PGN.")
@click.option("--svg", "svg_dir", type=OutputDirectory(), default=None, metavar="DIR",
              help="Write each game's evaluation curve to DIR/game-N.svg (the directory is made if needed).")
@click.option("--jobs", default=1, show_default=True, type=click.IntRange(1, 64), metavar="PROCESSES",
              help="Games in parallel processes.")
@click.option("--margin", default=TIGHT_PLIES, show_default=True, type=click.IntRange(0, 100), metavar="PLIES",
              help="Within the tables, a move that keeps the result is ?! when it leaves fewer than PLIES plies "
                   "before the 50-move draw where the best move left more.")
@cluster_option
@syzygy_path_option
@remote_tablebase_option
def review(pgn_file: str, movetime: int | None, nodes: int | None, depth: int | None, pgn_out: str | None,
           as_json: bool, svg_dir: str | None, jobs: int, margin: int, cluster: str | None,
           syzygy_path: str | None, remote_tablebase: str | None) -> None:
    """Review the games of GAMES.pgn (- reads standard input): every move judged, the PGN annotated.

    Within the tables each move's class before and after it (50-move rule and
    the game's history included): ?? when it changes the result, ?! when it
    spends the 50-move margin where that matters, with the best move and its
    line. Beyond them the searcher's evaluation, judged as Lichess does
    (inaccuracy ?!, mistake ?, blunder ??). The text summary goes to stdout, or
    to stderr when the PGN or JSON is printed there.
    """
    if sum(x is not None for x in (movetime, depth, nodes)) > 1:
        fail("give one of --movetime, --depth, --nodes")
    if remote_tablebase and (jobs > 1 or cluster):
        fail("--remote-tablebase runs with --jobs 1: one request in flight to the server")
    if pgn_out is None and not as_json:
        pgn_out = STDOUT
    err = one_stdout({"--json": as_json, "--output": pgn_out})
    try:
        games, skipped = read_games(pgn_file)
    except PgnError as exc:
        fail(str(exc))
    in_file = len(games) + len(skipped)
    if not games:
        first = skipped[0]
        fail(f"no game to review in {pgn_file}: {len(skipped)} bad, the first (game {first.number}, line "
             f"{first.line}): {first.error}")
    for bad in skipped:
        click.echo(f"chess-endgame: skipped game {bad.number} (line {bad.line}): {bad.error}", err=True)
    load_prober(syzygy_path).close()  # warns once about directories that are not there
    remote = load_remote(remote_tablebase)  # exit 2 now when the server cannot be used at all
    if remote is not None:
        remote.close()
    tables = worker_syzygy_path(syzygy_path)
    backend = batch_backend(jobs, cluster, tables)
    spec = ReviewSpec(functools.partial(Prober, tables),
                      ReviewOptions(movetime=movetime, nodes=nodes, depth=depth, tight_plies=margin),
                      None if remote_tablebase is None else
                      functools.partial(RemoteProber, remote_tablebase, cache_path=default_cache_path()))
    bar = tqdm(total=len(games), desc="review", unit="game", file=sys.stderr, dynamic_ncols=True, disable=None)
    flagged = {"blunders": 0}

    def progress(result: GameReview | Skipped) -> None:
        if isinstance(result, Skipped):
            bar.write(f"chess-endgame: skipped game {result.number} (line {result.line}): {result.error}",
                      file=sys.stderr)
        else:
            flagged["blunders"] += sum(m.judgement is Judgement.BLUNDER for m in result.moves)
            bar.set_postfix(blunders=flagged["blunders"])
        bar.update(1)

    start = time.monotonic()
    batch = review_games(games, spec, backend=backend, on_result=progress)
    bar.close()
    reviews = [r for r in batch.results if isinstance(r, GameReview)]
    skipped += [r for r in batch.results if isinstance(r, Skipped)]
    seconds = time.monotonic() - start
    # Stopped (Ctrl-C, or the batch failing as it started) before a game was done: an existing output file is left
    # as it was, not emptied.
    keep = bool(reviews) or not (batch.interrupted or batch.error is not None)
    if pgn_out is not None and keep:
        with open_output(pgn_out) as f:
            for game in reviews:
                f.write(annotated_pgn(game))
    if svg_dir is not None:
        for game in reviews:
            with open_output(os.path.join(svg_dir, f"game-{game.number}.svg")) as f:
                f.write(curve_svg(game))
    if as_json and (keep or batch.interrupted):
        used = spec.options.limits()  # the default budget when none was given
        meta = {"file": pgn_file, "games": in_file, "reviewed": len(reviews), "skipped": len(skipped),
                "interrupted": batch.interrupted,
                "limits": {"movetime": used.movetime, "nodes": used.nodes, "depth": used.depth},
                "jobs": min(backend.slots, len(games)),
                **({"cluster": {"address": cluster, "actors": backend.slots}} if cluster else {}),
                "retried": [{"number": games[i].number, "why": why} for i, why in sorted(batch.retried.items())],
                "seconds": round(seconds, 2)}
        echo_json({"meta": meta, "games": [record(r) for r in reviews],
                   "skipped": [{"number": s.number, "line": s.line, "error": s.error}
                               for s in sorted(skipped, key=lambda s: s.number)]})
    if keep:
        for game in reviews:
            _print_summary(summary(game), err=err)
        click.echo(f"reviewed {len(reviews)} of {plural(in_file, 'game')} in {seconds:.1f} s"
                   + (f"; {len(skipped)} skipped" if skipped else ""), err=err)
    for i, why in sorted(batch.retried.items()):
        click.echo(f"chess-endgame: retried game {games[i].number}: {why}", err=True)
    if isinstance(batch.error, BackendError):
        fail(str(batch.error))
    if batch.error is not None:
        fail(f"the review stopped: {type(batch.error).__name__}: {batch.error}")
    if batch.interrupted:
        interrupted(f"the outputs hold the {plural(len(reviews), 'game')} reviewed" if reviews else
                    "no game was reviewed to the end; the outputs were left as they were")
    if not reviews and skipped:  # as when no game of the file could be read: nothing reviewed is an error
        first = min(skipped, key=lambda s: s.number)
        fail(f"no game reviewed in {pgn_file}: {len(skipped)} skipped, the first (game {first.number}, line "
             f"{first.line}): {first.error}")
