"""``chess-endgame match``: two UCI engines play a match from endgame starts; W/D/L, score, Elo."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Sequence

import chess
import click
from click.core import ParameterSource
from tqdm import tqdm

from chess_endgame.play.contestant import open_judge
from chess_endgame.play.engines import EngineError, limit
from chess_endgame.play.match import GameResult, MatchOutcome, close_engines, open_engines, run_match, verdict
from chess_endgame.play.spec import DEFAULT_MAX_PLIES, SELF, EngineConfig, MatchSpec, TimeControl
from chess_endgame.play.sprt import Sprt, SprtBounds
from chess_endgame.play.starts import BALANCE_NODES, BALANCED_CP, NoBalancedStarts, balanced_starts, read_openings
from chess_endgame.text import plural

from .common import (
    EngineCommand,
    OutputFile,
    fail,
    interrupted,
    load_prober,
    one_stdout,
    syzygy_path_option,
    uci_options,
)
from .outputs import echo_json, open_output, written

#: The clock when no limit is given: the project's target for matches.
DEFAULT_TC = "10+0.1"
#: With --sprt: the cap on games when --games is not given, and the most distinct random starts by default.
SPRT_MAX_GAMES = 20000
SPRT_STARTS = 500


def _signed(value: float | None, score: float) -> str:
    """An Elo figure; None (no finite estimate) is -inf or +inf by the score, as cutechess-cli prints them."""
    if value is None:
        return "-inf" if score < 0.5 else "+inf" if score > 0.5 else "-"
    return f"{value:+.1f}"


def _margin(value: float | None) -> str:
    return "inf" if value is None else f"{value:.1f}"


def _report(outcome: MatchOutcome, starts: str, jobs: int, *, err: bool) -> None:
    def say(text: str = "") -> None:
        click.echo(text, err=err)

    first, second = outcome.names
    s = outcome.summary()
    say(f"{first} vs {second}: {plural(s['games'], 'game')} at {outcome.time_control}; {starts}; "
        f"{plural(jobs, 'job')}")
    if not s["games"]:
        say("no game finished")
        return
    say(f"result ({first}'s view): +{s['wins']} ={s['draws']} -{s['losses']}, score "
        f"{100 * s['score']:.1f}%")
    pent = (f"; pentanomial +/- {_margin(s['elo_margin_pentanomial'])} over {plural(s['pairs'], 'pair')}"
            if s["pairs"] else "")
    say(f"Elo difference: {_signed(s['elo'], s['score'])} +/- {_margin(s['elo_margin'])} (95%, trinomial){pent}; "
        f"LOS {100 * s['los']:.1f}%")
    if s["sprt"] is not None:
        t = s["sprt"]
        llr = round(t["llr"], 2) + 0.0  # + 0.0: no -0.00
        say(f"SPRT elo0={t['elo0']:g} elo1={t['elo1']:g} alpha={t['alpha']:g} beta={t['beta']:g} ({t['model']} Elo): "
            f"LLR {llr:.2f} ({t['lower']:.2f}, {t['upper']:.2f}) after {plural(t['pairs'], 'pair')}: "
            + {"passed": "H1 accepted, passed", "failed": "H0 accepted, failed"}.get(t["verdict"], "inconclusive"))

        def figure(value: float | None, margin: float | None) -> str:  # "-": no estimate yet (no spread)
            return "-" if value is None or margin is None else f"{value:+.1f} +/- {margin:.1f}"

        say(f"pentanomial (pairs scoring 0, 0.5, 1, 1.5, 2): {' '.join(map(str, t['pentanomial']))}; "
            f"Elo {figure(t['elo'], t['elo_margin'])}, normalized Elo {figure(t['nelo'], t['nelo_margin'])} (95%)")
    colours = s["first_engine_as"]
    say("; ".join(f"as {c}: +{v['wins']} ={v['draws']} -{v['losses']}" for c, v in colours.items()))
    say("terminations: " + ", ".join(f"{kind} {count}" for kind, count in s["terminations"].items()))
    width = max(24, *(len(e["name"]) + 2 for e in s["engines"]))
    say(f"{'engine':<{width}}{'tables':>7}{'moves':>7}{'avg depth':>10}{'avg nodes':>11}{'avg s':>8}"
        f"{'time losses':>13}{'illegal':>9}{'crashes':>9}")
    for e in s["engines"]:
        depth = "-" if e["avg_depth"] is None else f"{e['avg_depth']:.1f}"
        nodes = "-" if e["avg_nodes"] is None else f"{e['avg_nodes']}"
        seconds = "-" if e["avg_seconds"] is None else f"{e['avg_seconds']:.3f}"
        say(f"{e['name']:<{width}}{'yes' if e['tables'] else 'no':>7}{e['moves']:>7}{depth:>10}{nodes:>11}"
            f"{seconds:>8}{e['time_losses']:>13}{e['illegal_moves']:>9}{e['crashes']:>9}")


def _json(outcome: MatchOutcome, starts: str, balance: dict | None, jobs: int, games: int) -> dict:
    spec = outcome.spec
    meta = {
        "engines": [{"name": name, "command": config.command_line, "options": dict(config.options), "tables": tables}
                    for name, config, tables in zip(outcome.names, spec.engines, outcome.tables, strict=True)],
        "time_control": outcome.time_control, "games": games, "starts": starts, "balance": balance, "jobs": jobs,
        "tb_adjudication": spec.tb_adjudication, "syzygy_path": spec.syzygy_path or None,
        "max_plies": spec.max_plies, "time_margin_ms": round(spec.time_margin * 1000),
        "interrupted": outcome.interrupted, "errors": outcome.errors,
        "sprt": None if outcome.sprt is None else str(outcome.sprt.bounds),
    }
    records = [{"round": g.round, "white": g.record.white, "black": g.record.black, "first_white": g.first_white,
                "start": g.record.start_fen, "result": g.record.result, "termination": g.record.termination,
                "plies": g.record.plies, "points": g.points} for g in outcome.games]
    return {"meta": meta, "summary": outcome.summary(), "games": records}


@click.command()
@click.option("--engine", "engines", multiple=True, type=EngineCommand(), metavar="'UCI COMMAND'|self",
              help="An engine of the match; give it twice. A UCI command line (e.g. /usr/games/stockfish, "
                   "../prev/.venv/bin/chess-endgame-uci) or self: this project's engine, run as a UCI process by "
                   "this Python. Results are from the first engine's view.")
@click.option("--option1", multiple=True, metavar="NAME=VALUE",
              help="A UCI option of the first engine (repeatable), e.g. --option1 Hash=64.")
@click.option("--option2", multiple=True, metavar="NAME=VALUE",
              help="A UCI option of the second engine (repeatable), e.g. --option2 Threads=1.")
@click.option("--name1", default=None, metavar="NAME",
              help="The first engine's name in the report and the PGN (default: its UCI id name).")
@click.option("--name2", default=None, metavar="NAME",
              help="The second engine's name in the report and the PGN (default: its UCI id name).")
@click.option("--tc", default=None, metavar="[MOVES/]SECONDS[+INC]",
              help=f"Clocks: SECONDS seconds for the game (or for every MOVES moves) plus INC seconds a move, kept "
                   f"as a GUI keeps them; a side whose clock runs out loses. Default {DEFAULT_TC} when no "
                   "--movetime, --depth or --nodes is given.")
@click.option("--movetime", type=click.IntRange(1, None), default=None, metavar="MS",
              help="Instead of clocks: MS milliseconds a move.")
@click.option("--depth", type=click.IntRange(1, 128), default=None, metavar="PLIES",
              help="Instead of clocks: search every move to this depth in plies.")
@click.option("--nodes", type=click.IntRange(1, None), default=None, metavar="NODES",
              help="Instead of clocks: search NODES nodes a move.")
@click.option("--games", default=100, show_default=True, type=click.IntRange(1, 100000), metavar="GAMES",
              help="Games to play; each start is played twice, colours reversed. With --sprt: the most games "
                   f"(an even number; default {SPRT_MAX_GAMES}), after which the test ends inconclusive.")
@click.option("--sprt", "sprt_bounds", default=None, metavar="'elo0=E0 elo1=E1 [alpha=A beta=B model=M]'",
              help="Play game pairs until a sequential probability ratio test decides between H0 (the first "
                   "engine is E0 Elo stronger) and H1 (E1 stronger), with the pentanomial model over pairs, as "
                   "fishtest: alpha and beta default to 0.05, model to normalized Elo (or logistic).")
@click.option("--starts", "start_count", default=None, type=click.IntRange(1, 100000), metavar="N",
              help="Distinct random start positions to draw and judge (default one a pair; with --sprt at most "
                   f"{SPRT_STARTS}); the pairs go round them in order.")
@click.option("--save-starts", default=None, type=OutputFile(), metavar="FILE",
              help="Write the starts as FEN lines to FILE (-: standard output), for a later --openings FILE.")
@click.option("--seed", default=1, show_default=True, type=int,
              help="Seed of the random balanced starts (same seed, same starts).")
@click.option("--openings", type=click.Path(exists=True, dir_okay=False), default=None, metavar="EPD",
              help="Take the starts from this EPD or FEN file (one position a line, in order, each played twice, "
                   "from the top again when the games need more) instead of random balanced 6- to 10-piece "
                   "endgames.")
@click.option("--balance-engine", default=None, type=EngineCommand(), metavar="'UCI COMMAND'|self",
              help="Judge the balance of the random starts with this UCI engine (e.g. /usr/games/stockfish, "
                   "with the match's tables) instead of this project's search in-process.")
@click.option("--balance-option", multiple=True, metavar="NAME=VALUE",
              help="A UCI option of the --balance-engine (repeatable), e.g. --balance-option Threads=1.")
@click.option("--balance-nodes", default=BALANCE_NODES, show_default=True, type=click.IntRange(1, None),
              metavar="NODES", help="Nodes the judge searches per candidate start; a start is kept when it "
                                    f"scores within --balance-window (+/-{BALANCED_CP} cp) and not 0.00 (a dead "
                                    "draw).")
@click.option("--balance-window", default=None, metavar="MIN:MAX",
              help=f"Keep a random start when the judge scores it MIN to MAX cp for one side or the other "
                   f"(default 0:{BALANCED_CP}, balanced; a 0.00, a draw the judge found, is never kept). An "
                   "unbalanced window such as 90:200, as fishtest's UHO books, ends more game pairs won and drawn "
                   "instead of drawn twice: an SPRT decides sooner.")
@click.option("--jobs", default=1, show_default=True, type=click.IntRange(1, 64), metavar="GAMES",
              help="Games played at once, each by its own pair of engine processes (at most one per core).")
@click.option("--max-plies", default=DEFAULT_MAX_PLIES, show_default=True,
              type=click.IntRange(1, 5000), metavar="PLIES", help="Adjudicate a game a draw after this many plies.")
@click.option("--tb-adjudication/--no-tb-adjudication", default=True, show_default=True,
              help="End a game with the tables' verdict as soon as they cover its position.")
@click.option("--engine-tables/--no-engine-tables", default=True, show_default=True,
              help="Set SyzygyPath of the engines that have it to the match's tables (no: to <empty>); an "
                   "--option1/--option2 SyzygyPath=... wins.")
@click.option("--time-margin", default=0, show_default=True, type=click.IntRange(0, 60000), metavar="MS",
              help="Milliseconds a side may overrun its clock before it loses on time (cutechess's timemargin).")
@click.option("--pgn", "pgn_path", type=OutputFile(), default=None,
              help="Write the games as PGN to FILE as they finish (-: standard output, the report then goes to "
                   "stderr).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the match as JSON ({meta, summary, games}) instead of the report.")
@syzygy_path_option
def match(engines: tuple[str, ...], option1: tuple[str, ...], option2: tuple[str, ...], name1: str | None,
          name2: str | None, tc: str | None, movetime: int | None, depth: int | None, nodes: int | None, games: int,
          sprt_bounds: str | None, start_count: int | None, save_starts: str | None, seed: int, openings: str | None,
          balance_engine: str | None, balance_option: tuple[str, ...], balance_nodes: int,
          balance_window: str | None, jobs: int, max_plies: int, tb_adjudication: bool, engine_tables: bool,
          time_margin: int, pgn_path: str | None, as_json: bool,
          syzygy_path: str | None) -> None:
    """Play a match between two UCI engines from endgame starts; report W/D/L, score and Elo.

    Each start is played twice with colours reversed; the tables adjudicate as
    soon as they cover a position. With --sprt the match runs until the test
    decides (or the cap on games). Ctrl-C stops the match and reports (and
    writes) the games finished and the test so far (exit 130).
    """
    context = click.get_current_context()
    bounds = None
    if sprt_bounds is not None:
        try:
            bounds = SprtBounds.parse(sprt_bounds)
        except ValueError as exc:
            fail(f"--sprt: {str(exc).removeprefix('SPRT: ')}")
        if context.get_parameter_source("games") == ParameterSource.DEFAULT:
            games = SPRT_MAX_GAMES
        if games % 2:
            fail(f"--games {games}: an SPRT plays game pairs; give an even number")
    if start_count is not None and openings:
        fail("--starts draws random starts; --openings takes them from a file")
    try:
        opening_boards = read_openings(openings) if openings else None
    except ValueError as exc:
        fail(f"--openings: {exc}")
    nodes_given = context.get_parameter_source("balance_nodes") != ParameterSource.DEFAULT
    if openings and (balance_engine or balance_option or nodes_given or balance_window):
        fail("--balance-engine, --balance-option, --balance-nodes and --balance-window judge random starts; they "
             "cannot be used with --openings")
    min_cp, max_cp = 0, BALANCED_CP
    if balance_window is not None:
        try:
            min_cp, max_cp = parse_window(balance_window)
        except ValueError as exc:
            fail(f"--balance-window {balance_window}: {exc}")
    if balance_option and not balance_engine:
        fail("--balance-option needs --balance-engine")
    judge_config = (EngineConfig(balance_engine, uci_options(balance_option, "--balance-option"))
                    if balance_engine else None)
    if len(engines) != 2:
        fail(f"a match needs two engines (--engine CMD --engine CMD, {SELF} for this project's); got {len(engines)}")
    if sum(x is not None for x in (tc, movetime, depth, nodes)) > 1:
        fail("give one of --tc, --movetime, --depth, --nodes")
    try:
        clocked = movetime is None and depth is None and nodes is None
        clock = TimeControl.parse(DEFAULT_TC if tc is None else tc) if clocked else None
    except ValueError as exc:
        fail(f"--tc: {exc}")
    err = one_stdout({"--pgn": pgn_path, "--json": as_json, "--save-starts": save_starts})
    configs = (EngineConfig(engines[0], uci_options(option1, "--option1"), name1),
               EngineConfig(engines[1], uci_options(option2, "--option2"), name2))
    prober = load_prober(syzygy_path)
    tables = os.pathsep.join(prober.files.directories) if prober.available else ""
    spec = MatchSpec(configs, (), games, clock, limit(movetime, depth, nodes), tables, tb_adjudication,
                     engine_tables, max_plies, time_margin / 1000)
    try:
        pairs = open_engines(spec, jobs)  # an engine that cannot start fails before the starts
    except EngineError as exc:
        fail(str(exc))
    try:
        balance = None
        if opening_boards is not None:
            boards = opening_boards
            starts_text = f"{len(boards)} start{'s' if len(boards) > 1 else ''} from {openings}"
        else:
            judge = None
            if judge_config is not None:
                try:
                    judge = open_judge(judge_config, spec, balance_nodes)
                except EngineError as exc:
                    fail(f"--balance-engine: {exc}")
            wanted = start_count or ((games + 1) // 2 if bounds is None else min((games + 1) // 2, SPRT_STARTS))
            judged: list[chess.Board] = []
            try:
                with tqdm(total=wanted, desc="starts", unit="start", file=sys.stderr,
                          dynamic_ncols=True, disable=None, leave=False) as bar:
                    def kept(board: chess.Board) -> None:
                        judged.append(board)
                        bar.update()

                    boards = balanced_starts(wanted, seed, prober, judge=judge, nodes=balance_nodes,
                                             progress=kept, min_cp=min_cp, max_cp=max_cp)
            except (EngineError, NoBalancedStarts) as exc:
                fail(f"balanced starts: {exc}")
            except KeyboardInterrupt:
                if save_starts and judged:
                    _write_starts(save_starts, [b.fen() for b in judged])
                    interrupted(f"no game played; {plural(len(judged), 'start')} judged so far, written to "
                                f"{save_starts}")
                interrupted(f"no game played; {plural(len(judged), 'start')} judged so far"
                            + (" (--save-starts keeps them)" if judged else ""))
            finally:
                if judge is not None:
                    judge.close()
            by = judge.name if judge is not None else "this project's search"
            balance = {"judge": by, "command": judge_config.command_line if judge_config else None,
                       "options": dict(judge_config.options) if judge_config else {}, "nodes": balance_nodes,
                       "min_cp": min_cp, "max_cp": max_cp, "seed": seed}
            kind = "unbalanced" if min_cp > 0 else "balanced"
            if (min_cp, max_cp) != (0, BALANCED_CP):
                kind += f" ({min_cp}-{max_cp} cp)"
            starts_text = (f"{len(boards)} {kind} endgame start{'s' if len(boards) > 1 else ''} (seed {seed}; "
                           f"judged by {by} at {balance_nodes} nodes)")
        starts_text += ", each played with both colours"
        spec = dataclasses.replace(spec, starts=tuple(b.fen() for b in boards))
        if save_starts:
            _write_starts(save_starts, spec.starts)
    except BaseException:
        close_engines(pairs)
        raise
    _run(spec, pairs, starts_text, balance, jobs, pgn_path, as_json, err, None if bounds is None else Sprt(bounds))


def _write_starts(path: str, fens: Sequence[str]) -> None:
    """``--save-starts``: a FEN a line, the book that ``--openings`` reads back."""
    with open_output(path) as f:
        f.write("".join(f"{fen}\n" for fen in fens))


def parse_window(text: str) -> tuple[int, int]:
    """``MIN:MAX`` centipawns (0 <= MIN <= MAX <= 10000), the scores for one side that keep a start.

    :raises ValueError: with what is wrong, for the one-line error."""
    low, sep, high = text.partition(":")
    try:
        if not sep:
            raise ValueError
        window = int(low), int(high)
    except ValueError:
        raise ValueError("give MIN:MAX in centipawns, e.g. 90:200") from None
    if not 0 <= window[0] <= window[1] <= 10000:
        raise ValueError("MIN and MAX must satisfy 0 <= MIN <= MAX <= 10000")
    return window


def _run(spec: MatchSpec, pairs: list, starts_text: str, balance: dict | None, jobs: int, pgn_path: str | None,
         as_json: bool, err: bool, sprt: Sprt | None) -> None:
    bar = tqdm(total=spec.games, desc="sprt" if sprt else "match", unit="game", file=sys.stderr, dynamic_ncols=True,
               disable=None)
    score = {"w": 0, "d": 0, "l": 0}

    def progress(game: GameResult, pgn=None) -> None:
        score["w" if game.points == 1 else "l" if game.points == 0 else "d"] += 1
        done = sum(score.values())
        line = f"+{score['w']} ={score['d']} -{score['l']} {100 * (score['w'] + score['d'] / 2) / done:.1f}%"
        if sprt is not None:
            line += (f" LLR {sprt.llr:.2f} ({sprt.bounds.lower:.2f}, {sprt.bounds.upper:.2f}) "
                     f"{sprt.pentanomial.pairs} pairs {verdict(sprt.decision)}")
        bar.set_postfix_str(line)
        bar.update(1)
        if pgn is not None:
            pgn.write(game.pgn(time_control))
            pgn.write("\n")
            pgn.flush()

    time_control = str(spec.tc) if spec.tc is not None else "-"
    if pgn_path:
        with open_output(pgn_path) as pgn:
            outcome = run_match(spec, jobs=len(pairs), pairs=pairs, on_game=lambda game: progress(game, pgn),
                                sprt=sprt)
    else:
        outcome = run_match(spec, jobs=len(pairs), pairs=pairs, on_game=progress, sprt=sprt)
    bar.close()
    if as_json:
        echo_json(_json(outcome, starts_text, balance, jobs, spec.games))
    else:
        _report(outcome, starts_text, jobs, err=err)
    if pgn_path and pgn_path != "-" and not err and written(pgn_path):
        click.echo(f"PGN written to {pgn_path}", err=True)
    for error in outcome.errors:
        click.echo(f"chess-endgame: engine error: {error}", err=True)
    if outcome.interrupted:
        interrupted(f"{len(outcome.games)} of {plural(spec.games, 'game')} finished; the report and the PGN hold them"
                    + ("; the SPRT is inconclusive" if sprt is not None and not sprt.done else ""))
    sys.exit(1 if outcome.errors else 0)
