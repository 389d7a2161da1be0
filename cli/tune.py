"""``chess-endgame tune``: fit the evaluation weights to tablebase (and self-play) labels, check them, install
them."""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Callable, Iterator

import click
import numpy as np
from tqdm import tqdm

from chess_endgame.batch.protocol import Backend, BackendError
from chess_endgame.engine.evaluation import Weights, WeightsError, load_weights, save_weights
from chess_endgame.play.starts import MatchResult, play_match
from chess_endgame.tablebase.prober import Prober
from chess_endgame.tuning import data, gate, labels, pipeline
from chess_endgame.tuning.fit import learnt_features

from .common import (
    FiniteFloatRange,
    OutputFile,
    batch_backend,
    cluster_option,
    fail,
    interrupted,
    load_prober,
    one_stdout,
    syzygy_path_option,
    user_errors,
    worker_syzygy_path,
)
from .outputs import STDOUT, open_output, written

#: How many of the weights the fit kept the report names.
KEPT_SHOWN = 8


def _bar(total: int, desc: str, unit: str) -> tqdm:
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True, disable=None, leave=False)


def _figure(value: float, spec: str, unit: str = "") -> str:
    """A figure, or "-" when there is none (no position, or no decisive one for the sign)."""
    return "-" if math.isnan(value) else f"{value:{spec}}{unit}"


@contextlib.contextmanager
def _keeping(bar: tqdm, write: Callable[[], None], done: Callable[[], str], found: Callable[[], int]) -> Iterator[None]:
    """Run a labelling step; when a worker fails or Ctrl-C stops it, write what it found (where ``found()`` says it
    found anything: an existing file is not emptied), then say so (the error in one line; ``done()`` for Ctrl-C,
    exit 130)."""
    try:
        yield
    except BackendError as exc:
        bar.close()
        if found():
            write()
        fail(str(exc))
    except KeyboardInterrupt:
        bar.close()
        if found():
            write()
        interrupted(done())


def _kept(labels_out: str | None, found: int, what: str) -> str:
    """How a stopped labelling step left ``--labels-out``."""
    if labels_out and found:
        return f"{what} written to {labels_out}"
    return f"nothing was written{f'; {labels_out} was left as it was' if labels_out else ''}"


def _write_labels(played: labels.LabelSet, labels_out: str | None, header: str) -> None:
    if labels_out:
        with open_output(labels_out) as f:
            labels.write_labels(played, f, [header])


def _buckets(text: str) -> tuple[int, ...]:
    """``--buckets``: ``none`` or men counts separated by commas, ascending."""
    if text.strip().lower() == "none":
        return ()
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise ValueError(f"--buckets takes men counts separated by commas (8,12) or 'none', not {text!r}") from None


def _piece_range(text: str) -> tuple[int, int]:
    """``--selfplay-pieces``: ``MIN-MAX``, kings and pawns counted, within the self-play starts' 6-20."""
    low, dash, high = text.partition("-")
    try:
        first, last = int(low), int(high)
    except ValueError:
        first = last = 0
    if not dash or not labels.MIN_PIECES <= first <= last <= labels.MAX_PIECES:
        raise click.BadParameter(f"takes MIN-MAX pieces, kings and pawns counted (13-20), with "
                                 f"{labels.MIN_PIECES} <= MIN <= MAX <= {labels.MAX_PIECES}, not {text!r}")
    return first, last


def _play(prober: Prober, start: Weights, games: int, nodes: int, per_game: int, score_nodes: int, seed: int,
          pieces: tuple[int, int], backend: Backend, labels_out: str | None, say: Callable[[str], None],
          err: bool) -> labels.LabelSet:
    """Play the self-play games (a progress bar), write their labels; Ctrl-C keeps the games played."""
    played = labels.LabelSet()

    def write() -> None:
        scored = f", scored by {score_nodes}-node searches" if score_nodes else ""
        _write_labels(played, labels_out, f"chess-endgame tune self-play labels: "
                      f"{played.finished_games + played.unfinished} games of {pieces[0]}-{pieces[1]} pieces, "
                      f"{nodes} nodes a move{scored}, seed {seed}, weights: {start.source}")

    with _bar(games, "self-play", "game") as bar:
        def progress(game: labels.GameLabels) -> None:
            bar.set_postfix(positions=len(played))
            bar.update(1)

        def lost(number: int, why: str) -> None:
            click.echo(f"chess-endgame: self-play game {number}: {why}", err=True)

        def found() -> int:
            return played.finished_games + played.unfinished

        with _keeping(bar, write, lambda: f"{found()} of {games} self-play games played; "
                      + _kept(labels_out, found(), "their labels are"), found):
            labels.selfplay_labels(prober, start, games, nodes=nodes, seed=seed, per_game=per_game,
                                     min_pieces=pieces[0], max_pieces=pieces[1], score_nodes=score_nodes,
                                     backend=backend, into=played, progress=progress, lost=lost)
    write()
    if labels_out and not err and written(labels_out):
        say(f"self-play labels written to {labels_out}")
    return played


def _score(prober: Prober, start: Weights, played: labels.LabelSet, score_nodes: int, backend: Backend,
           labels_path: str, labels_out: str | None, say: Callable[[str], None], err: bool) -> None:
    """Search the positions of a label file that have no score (a progress bar), write the scored file; Ctrl-C and
    a failure keep the scores found."""
    missing = len(played.unscored)

    def write() -> None:
        _write_labels(played, labels_out, f"chess-endgame tune labels of {labels_path}, scored by {score_nodes}-node "
                      f"searches, weights: {start.source}")

    with _bar(missing, "scoring", "position") as bar:
        def found() -> int:
            return missing - len(played.unscored)

        with _keeping(bar, write, lambda: f"{found()} of {missing} positions scored; "
                      + _kept(labels_out, found(), "the labels are"), found):
            labels.score_positions(prober, start, played, score_nodes, backend=backend, progress=bar.update)
    write()
    say(f"scored {missing} positions by {score_nodes}-node searches"
        + (f"; labels written to {labels_out}" if labels_out and not err else ""))


def _describe_selfplay(played: labels.LabelSet, n_train: int, n_held: int, held_games: int,
                       labels_path: str | None, nodes: int, share: float, score_share: float,
                       say: Callable[[str], None]) -> None:
    r = played.results
    games = played.finished_games + played.unfinished
    where = f"from {labels_path}" if labels_path else f"{games} games at {nodes} nodes a move"
    cut = f", {played.unfinished} cut at the ply limit" if played.unfinished else ""
    say(f"self-play {where} (White +{r['1-0']} ={r['1/2-1/2']} -{r['0-1']}{cut}): {len(played)} positions, "
        f"{n_train} train, {n_held} held out ({held_games} game{'' if held_games == 1 else 's'})")
    if len(played):
        say(f"fit weights: self-play positions {100 * share:.0f}% of the loss, table positions "
            f"{100 * (1 - share):.0f}%")
        scored = len(played) - len(played.unscored)
        if scored and score_share:
            say(f"self-play labels: {scored} positions with a search score, their label {100 * score_share:.0f}% "
                f"its win probability and {100 * (1 - score_share):.0f}% the game's result (the held-out groups "
                "below by piece count: results only)")


def _distinct_files(output: str, labels_out: str | None, labels_paths: tuple[str, ...]) -> None:
    """Exit 2 when the weights would be written over the labels read or written (the same file twice)."""
    def same(a: str, b: str) -> bool:
        if STDOUT in (a, b):
            return False
        try:
            return os.path.samefile(a, b)
        except OSError:  # one is not there yet
            return os.path.abspath(a) == os.path.abspath(b)

    for name, other in [("--labels-out", labels_out)] + [("--labels", path) for path in labels_paths]:
        if other is not None and same(output, other):
            fail(f"--output {output} is the {name} file too: the weights would be written over the labels")


@click.command()
@click.option("--per-material", default=1500, show_default=True, type=click.IntRange(10, 10**6),
              help="Quiet random positions per material the tables cover (both colour orientations).")
@click.option("--seed", default=1, show_default=True, type=click.IntRange(0, 2**32 - 1),
              help="Seed of the random positions, the held-out split and the match (same seed, same run).")
@click.option("--pgn", "pgn_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Also learn from the games of a PGN file, labelled with their results.")
@click.option("--pgn-per-game", default=5, show_default=True, type=click.IntRange(1, 1000),
              help="Quiet positions sampled per PGN game.")
@click.option("--cursed-as-wins", is_flag=True, help="Label cursed wins / blessed losses as wins / losses "
                                                      "(default: draws, as the 50-move rule makes them).")
@click.option("--l2", default=1e-6, show_default=True, type=FiniteFloatRange(0, None),
              help="L2 pull towards the current weights, per unit of each feature's variance (0: none).")
@click.option("--holdout", default=0.2, show_default=True, type=FiniteFloatRange(0.05, 0.5), metavar="SHARE",
              help="Share of the positions held out to test the fit (0.2: 20%).")
@click.option("--learn", "learn", multiple=True, metavar="TERM",
              help="Learn only the weights of the terms matching TERM (a name or a shell pattern, 'passer_*'; "
                   "repeat it for more), keeping every other weight at the start weights (default: learn all).")
@click.option("--buckets", "buckets_text", default=None, metavar="MEN,...",
              help="Fit a set of weights for each bucket of men on the board (kings and pawns counted), given by "
                   "their upper bounds: 8,12 fits three sets, for 2-8, 9-12 and 13-32 men; 'none' fits one set "
                   "(default: the start weights' buckets).")
@click.option("--learn-buckets", "learn_buckets", multiple=True, metavar="MEN",
              help="Fit only the bucket of these men (as the output names them: 13-32; repeat it for more), "
                   "keeping every other bucket at the start weights (default: fit every bucket).")
@click.option("--weights", "start_path", type=click.Path(dir_okay=False), default=None,
              help="Weights to start from and compare with (default: the shipped ones).")
@click.option("--output", default="tuned-weights.json", show_default=True, type=OutputFile(),
              help="Write the tuned weight file (JSON) to FILE (-: standard output, the report then goes to "
                   "stderr).")
@click.option("--match-games", default=0, show_default=True, type=click.IntRange(0, 10000), metavar="GAMES",
              help="Then play this many self-play games, tuned against the starting weights (0: none).")
@click.option("--match-nodes", default=1500, show_default=True, type=click.IntRange(100, 10**7), metavar="NODES",
              help="Search nodes per move in the match.")
@click.option("--selfplay-games", default=0, show_default=True, type=click.IntRange(0, 10**6), metavar="GAMES",
              help="Also learn from quiet positions of this many self-play games of the start weights (of "
                   "--selfplay-pieces), labelled by each game's result (0: none).")
@click.option("--selfplay-pieces", "selfplay_pieces", default=f"{labels.MIN_PIECES}-{labels.MAX_PIECES}",
              show_default=True, metavar="MIN-MAX", callback=lambda ctx, param, value: _piece_range(value),
              help="Pieces on the board (kings and pawns counted) of the self-play starts and of the positions "
                   "sampled from their games: 13-20 spends every game on the larger endings.")
@click.option("--selfplay-nodes", default=labels.SELFPLAY_NODES, show_default=True, type=click.IntRange(50, 10**7),
              metavar="NODES", help="Search nodes per move in the self-play games.")
@click.option("--selfplay-per-game", default=labels.PER_GAME, show_default=True, type=click.IntRange(1, 1000),
              metavar="N", help="Quiet positions sampled per self-play game, at most.")
@click.option("--selfplay-share", default=data.SELFPLAY_SHARE, show_default=True,
              type=FiniteFloatRange(0, 1, min_open=True, max_open=True), metavar="SHARE",
              help="Share of the fit's loss carried by the self-play positions, the table positions carrying "
                   "the rest (0.5: half each).")
@click.option("--score-nodes", default=0, show_default=True, type=click.IntRange(0, 10**7), metavar="NODES",
              help="Also label each self-play position with a search of this many nodes of its own (0: none); "
                   "with --labels, the positions the file gives no score (ce) are searched.")
@click.option("--score-share", default=data.SCORE_SHARE, show_default=True, type=FiniteFloatRange(0, 1),
              metavar="SHARE", help="Share of a scored self-play position's label taken from its search's "
                                    "win probability, the game's result giving the rest (0: results only).")
@click.option("--labels", "labels_paths", type=click.Path(exists=True, dir_okay=False), multiple=True,
              metavar="EPD", help="Self-play labels from a file of --labels-out (or any EPD with c9 results) "
                                  "instead of playing games; repeat it to fit from several files.")
@click.option("--labels-out", default=None, type=OutputFile(),
              help="Write the self-play labels to FILE (EPD, c9 result, game number, ce score) for a later "
                   "--labels.")
@click.option("--jobs", default=1, show_default=True, type=click.IntRange(1, 64), metavar="N",
              help="Play the self-play games in N processes (the same games as with 1); with --cluster, on N "
                   "Ray actors.")
@cluster_option
@click.option("--install", is_flag=True,
              help="Replace the shipped weights when the tuned ones are better on held-out data and do not "
                   "lose a match of at least 100 games.")
@syzygy_path_option
@user_errors
def tune(per_material: int, seed: int, pgn_path: str | None, pgn_per_game: int, cursed_as_wins: bool, l2: float,
         holdout: float, learn: tuple[str, ...], buckets_text: str | None, learn_buckets: tuple[str, ...],
         start_path: str | None, output: str,
         match_games: int, match_nodes: int, selfplay_games: int, selfplay_nodes: int,
         selfplay_pieces: tuple[int, int], selfplay_per_game: int, selfplay_share: float, score_nodes: int,
         score_share: float, labels_paths: tuple[str, ...],
         labels_out: str | None, jobs: int, cluster: str | None, install: bool, syzygy_path: str | None) -> None:
    """Learn the linear evaluation's weights from tablebase WDL labels and self-play results (logistic model)."""
    labels_path = ", ".join(labels_paths) or None
    err = one_stdout({"--output": output, "--labels-out": labels_out})
    _distinct_files(output, labels_out, labels_paths)

    def say(text: str) -> None:
        click.echo(text, err=err)

    if install and output == STDOUT:
        fail("--install copies the --output file into the package: give a file name, not -")
    if install and match_games < gate.MIN_MATCH_GAMES:
        fail(f"--install needs --match-games {gate.MIN_MATCH_GAMES} or more: the tuned weights must not lose "
             "a real match")
    if labels_path and selfplay_games:
        fail("give --labels FILE or --selfplay-games N, not both")
    if labels_out and not (selfplay_games or (labels_path and score_nodes)):
        fail("--labels-out writes the labels of self-play games: give --selfplay-games N too (or --labels FILE "
             "with --score-nodes N)")
    if selfplay_pieces != (labels.MIN_PIECES, labels.MAX_PIECES) and not selfplay_games:
        fail("--selfplay-pieces chooses the pieces of the self-play games: give --selfplay-games N too")
    if cluster and not selfplay_games:
        fail("--cluster plays the self-play games on Ray: give --selfplay-games N too")
    try:
        start = load_weights(start_path) if start_path else load_weights()
        learnt_features(learn)
        buckets = None if buckets_text is None else _buckets(buckets_text)
        pipeline.bucketed_start(start, buckets, learn_buckets)  # checks them before the sampling
    except (WeightsError, ValueError) as exc:
        fail(str(exc))
    prober = load_prober(syzygy_path, required=True)
    extra = data.pgn_positions(pgn_path, pgn_per_game, seed) if pgn_path else ([], [], [])
    played = labels.read_label_files(labels_paths) if labels_paths else None
    backend = batch_backend(jobs, cluster, worker_syzygy_path(syzygy_path))
    if selfplay_games:
        played = _play(prober, start, selfplay_games, selfplay_nodes, selfplay_per_game, score_nodes, seed,
                       selfplay_pieces, backend, labels_out, say, err)
    elif played is not None and score_nodes:
        _score(prober, start, played, score_nodes, backend, labels_path, labels_out, say, err)
    kept = f"the self-play labels are written to {labels_out}; " if labels_out else ""
    materials = data.covered_materials(prober)
    try:
        sets = len(start.buckets if buckets is None else buckets) + 1
        with _bar(len(materials), "sampling", "material") as sampling, \
                _bar(50 * sets, "fitting", "step") as fitting:
            run = pipeline.fit_weights(prober, start, per_material=per_material, seed=seed, holdout=holdout, l2=l2,
                                       cursed_as_draws=not cursed_as_wins, buckets=buckets,
                                       learn_buckets=learn_buckets, extra=extra, played=played,
                                       selfplay_share=selfplay_share, score_share=score_share,
                                       table_name="tables and PGN" if pgn_path else "tables", learn=learn,
                                       sampling=sampling.update, fitting=fitting.update)
    except pipeline.TooFewPositions as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        if not kept:
            raise
        interrupted(kept + "no weights were written")
    report, k, tuned, frozen = run.report, run.k, run.tuned, run.frozen
    n_self, n_self_held, held_games = run.selfplay_train, run.selfplay_held, run.held_games
    say(f"positions: {report.train_size - n_self} train, {report.holdout_size - n_self_held} held out "
        f"({len(materials)} materials{', PGN ' + pgn_path if pgn_path else ''}; seed {seed})")
    if played is not None:
        _describe_selfplay(played, n_self, n_self_held, held_games, labels_path, selfplay_nodes, selfplay_share,
                           score_share, say)
    say(f"scale: P(win) = sigmoid({k:.5f} * h), h in centipawns")
    say(f"{'':<16}{'train log-loss':>16}{'held-out log-loss':>19}{'held-out sign':>15}")
    say(f"{'start weights':<16}{report.hand_train:>16.4f}{report.hand_holdout:>19.4f}"
        f"{100 * report.hand_sign:>14.1f}%")
    say(f"{'tuned weights':<16}{report.tuned_train:>16.4f}{report.tuned_holdout:>19.4f}"
        f"{100 * report.tuned_sign:>14.1f}%")
    if report.groups:
        say(f"{'held out, by source':<26}{'positions':>10}{'start loss':>12}{'tuned loss':>12}"
            f"{'start sign':>12}{'tuned sign':>12}")
        for g in report.groups:
            say(f"{g.name:<26}{g.size:>10}" + "".join(f"{_figure(v, '.4f'):>12}" for v in (g.hand_loss, g.tuned_loss))
                + "".join(f"{_figure(100 * v, '.1f', '%'):>12}" for v in (g.hand_sign, g.tuned_sign)))
    compared = run.start
    changed = sorted(zip(compared.names(), compared.vector, tuned, strict=True), key=lambda t: -abs(t[2] - t[1]))
    say("largest changes: " + ", ".join(f"{n} {a:.1f}->{b:.1f}" for n, a, b in changed[:6]))
    held_back = [n for n, f in zip(compared.names(), frozen, strict=True) if f]
    shown = ", ".join(held_back[:KEPT_SHOWN]) + (f" and {len(held_back) - KEPT_SHOWN} more"
                                                 if len(held_back) > KEPT_SHOWN else "")
    say(f"kept at the start weights (too little support in the sample, or mating guides"
        f"{', or not in --learn' if learn else ''}{', or not in --learn-buckets' if learn_buckets else ''}): "
        f"{len(held_back)} of "
        f"{len(compared.vector)}" + (f": {shown}" if held_back else ""))
    positions = f"{report.train_size} positions" + (f" ({n_self} self-play)" if n_self else "")
    sets = f", {len(compared.buckets) + 1} buckets of men ({' '.join(compared.ranges())})" if compared.buckets else ""
    if learn_buckets:
        sets += f", {' '.join(learn_buckets)} fitted, the others from {start.source}"
    weights = Weights(np.round(tuned, 3), f"tuned: seed {seed}, {positions}, k {k:.5f}{sets}", compared.buckets)
    with open_output(output) as f:
        save_weights(weights, f, comment="Weights fitted by chess-endgame tune to tablebase WDL labels"
                     + (" and self-play game results." if n_self else "."))
    if not err and written(output):
        say(f"weights written to {output}")

    score = None
    if match_games:
        done = MatchResult()
        with _bar(match_games, "match", "game") as bar:
            def progress(result: MatchResult) -> None:
                nonlocal done
                done = result
                bar.set_postfix(score=f"{result.score:.3f}")
                bar.update(1)

            try:
                play_match(weights, start, games=match_games, nodes=match_nodes, seed=seed, prober=prober,
                           progress=progress)
            except KeyboardInterrupt:
                bar.close()
                say(f"match stopped after {done.games} of {match_games} games: +{done.wins} ={done.draws} "
                    f"-{done.losses}" + (f", score {done.score:.3f}" if done.games else ""))
                interrupted("the tuned weights are written; nothing was installed")
        score = done.score
        say(f"match, tuned against start weights, {match_nodes} nodes a move: +{done.wins} ={done.draws} "
            f"-{done.losses} of {done.games}, score {score:.3f}")
    if install:
        reasons = gate.reasons_not_to_install(report, score, match_games)
        if reasons:
            say(f"shipped weights kept: {'; '.join(reasons)}")
        else:
            say(f"installed as the shipped weights ({gate.install(output)})")
