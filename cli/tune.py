"""``chess-endgame tune``: fit the evaluation weights to tablebase labels, check them, install them."""

from __future__ import annotations

import sys

import click
import numpy as np
from tqdm import tqdm

from chess_endgame import tune as tuning
from chess_endgame.evaluation import Weights, WeightsError, load_weights, save_weights
from chess_endgame.match import MatchResult, play_match

from .common import (
    STDOUT,
    OutputFile,
    fail,
    interrupted,
    load_prober,
    one_stdout,
    open_output,
    syzygy_path_option,
    user_errors,
)


def _bar(total: int, desc: str, unit: str) -> tqdm:
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True, disable=None, leave=False)


@click.command()
@click.option("--per-material", default=1500, show_default=True, type=click.IntRange(10, 10**6),
              help="Quiet random positions per material the tables cover (both colour orientations).")
@click.option("--seed", default=1, show_default=True, type=int,
              help="Seed of the random positions, the held-out split and the match (same seed, same run).")
@click.option("--pgn", "pgn_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Also learn from the games of a PGN file, labelled with their results.")
@click.option("--pgn-per-game", default=5, show_default=True, type=click.IntRange(1, 1000),
              help="Quiet positions sampled per PGN game.")
@click.option("--cursed-as-wins", is_flag=True, help="Label cursed wins / blessed losses as wins / losses "
                                                      "(default: draws, as the 50-move rule makes them).")
@click.option("--l2", default=1e-6, show_default=True, type=click.FloatRange(0, None),
              help="L2 pull towards the current weights, per unit of each feature's variance (0: none).")
@click.option("--holdout", default=0.2, show_default=True, type=click.FloatRange(0.05, 0.5), metavar="SHARE",
              help="Share of the positions held out to test the fit (0.2: 20%).")
@click.option("--weights", "start_path", type=click.Path(dir_okay=False), default=None,
              help="Weights to start from and compare with (default: the shipped ones).")
@click.option("--output", default="tuned-weights.json", show_default=True, type=OutputFile(),
              help="Write the tuned weight file (JSON) to FILE (-: standard output, the report then goes to "
                   "stderr).")
@click.option("--match-games", default=0, show_default=True, type=click.IntRange(0, 10000), metavar="GAMES",
              help="Then play this many self-play games, tuned against the starting weights (0: none).")
@click.option("--match-nodes", default=1500, show_default=True, type=click.IntRange(100, 10**7), metavar="NODES",
              help="Search nodes per move in the match.")
@click.option("--install", is_flag=True,
              help="Replace the shipped weights when the tuned ones are better on held-out data and do not "
                   "lose a match of at least 100 games.")
@syzygy_path_option
@user_errors
def tune(per_material: int, seed: int, pgn_path: str | None, pgn_per_game: int, cursed_as_wins: bool, l2: float,
         holdout: float, start_path: str | None, output: str, match_games: int, match_nodes: int, install: bool,
         syzygy_path: str | None) -> None:
    """Learn the linear evaluation's weights from tablebase WDL labels (logistic model, numpy)."""
    err = one_stdout({"--output": output})

    def say(text: str) -> None:
        click.echo(text, err=err)

    if install and output == STDOUT:
        fail("--install copies the --output file into the package: give a file name, not -")
    if install and match_games < tuning.MIN_MATCH_GAMES:
        fail(f"--install needs --match-games {tuning.MIN_MATCH_GAMES} or more: the tuned weights must not lose "
             "a real match")
    try:
        start = load_weights(start_path) if start_path else load_weights()
    except WeightsError as exc:
        fail(str(exc))
    prober = load_prober(syzygy_path, required=True)
    extra = tuning.pgn_positions(pgn_path, pgn_per_game, seed) if pgn_path else ([], [], [])
    materials = tuning.covered_materials(prober)
    with _bar(len(materials), "sampling", "material") as bar:
        boards, labels, sources = tuning.tablebase_positions(
            prober, per_material, seed, cursed_as_draws=not cursed_as_wins, progress=bar.update)
    boards, labels, sources = boards + extra[0], labels + extra[1], sources + extra[2]
    if len(boards) < 100:
        fail(f"only {len(boards)} quiet positions could be labelled; more tables are needed")
    data = tuning.dataset(boards, labels, sources)
    train, held = data.split(holdout, seed)
    k = tuning.fit_k(train.x, train.y, start.vector)
    frozen = tuning.frozen_features(train.x)
    with _bar(50, "fitting", "step") as bar:
        tuned = tuning.fit(train.x, train.y, start.vector, k, l2=l2, frozen=frozen, progress=bar.update)
    report = tuning.evaluate_fit(train, held, start.vector, tuned, k)
    say(f"positions: {report.train_size} train, {report.holdout_size} held out "
               f"({len(materials)} materials{', PGN ' + pgn_path if pgn_path else ''}; seed {seed})")
    say(f"scale: P(win) = sigmoid({k:.5f} * h), h in centipawns")
    say(f"{'':<16}{'train log-loss':>16}{'held-out log-loss':>19}{'held-out sign':>15}")
    say(f"{'start weights':<16}{report.hand_train:>16.4f}{report.hand_holdout:>19.4f}"
        f"{100 * report.hand_sign:>14.1f}%")
    say(f"{'tuned weights':<16}{report.tuned_train:>16.4f}{report.tuned_holdout:>19.4f}"
        f"{100 * report.tuned_sign:>14.1f}%")
    changed = sorted(zip(start.as_dict(), start.vector, tuned, strict=True), key=lambda t: -abs(t[2] - t[1]))
    say("largest changes: " + ", ".join(f"{n} {a:.1f}->{b:.1f}" for n, a, b in changed[:6]))
    say("kept (too little support in the sample): "
        + (", ".join(n for n, f in zip(start.as_dict(), frozen, strict=True) if f) or "none"))
    weights = Weights(np.round(tuned, 3), f"tuned: seed {seed}, {report.train_size} positions, k {k:.5f}")
    with open_output(output) as f:
        save_weights(weights, f, comment="Weights fitted by chess-endgame tune to tablebase WDL labels.")
    if not err:
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
        reasons = tuning.reasons_not_to_install(report, score, match_games)
        if reasons:
            say(f"shipped weights kept: {'; '.join(reasons)}")
        else:
            say(f"installed as the shipped weights ({tuning.install(output)})")
