"""``chess-endgame match``: Elo figures, clocks, real short matches, misbehaving engines, bad input, Ctrl-C."""

from __future__ import annotations

import io
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import pytest
from chess.engine import Cp, Mate

from chess_endgame.play import elo, engines
from chess_endgame.play.contestant import open_judge
from chess_endgame.play.engines import EngineError, ExternalEngine
from chess_endgame.play.game import Clock, GameRecord
from chess_endgame.play.match import run_match
from chess_endgame.play.spec import EngineConfig, MatchSpec, TimeControl
from chess_endgame.play.starts import NoBalancedStarts, balanced_starts, default_judge, is_balanced, starting_positions
from chess_endgame.tablebase.paths import resolve_path

from .conftest import require_tables, run

BIN = Path(sys.executable).parent
OURS = str(BIN / "chess-endgame-uci")
STOCKFISH = "/usr/games/stockfish" if os.path.exists("/usr/games/stockfish") else shutil.which("stockfish")
FAKE = f"{sys.executable} {Path(__file__).parent / 'fake_engine.py'}"
#: 8 pieces: beyond the tables, so games are played, not adjudicated at once.
FEN = "8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1"
needs_stockfish = pytest.mark.skipif(STOCKFISH is None, reason="Stockfish is not installed (.ci/run installs it)")


def read_pgn(text: str) -> list[chess.pgn.Game]:
    games, stream = [], io.StringIO(text)
    while (game := chess.pgn.read_game(stream)) is not None:
        assert not game.errors, game.errors
        games.append(game)
    return games


# -- the figures -----------------------------------------------------------------------------------


def test_elo_of_known_scores() -> None:
    assert elo.elo(0.5) == 0.0 and math.copysign(1, elo.elo(0.5)) == 1.0
    assert elo.elo(0.75) == pytest.approx(400 * math.log10(3))  # 3 points to 1: 190.85
    assert elo.elo(1.0) == math.inf and elo.elo(0.0) == -math.inf


def test_trinomial_margin_on_known_numbers() -> None:
    # +50 =0 -50: s = 0.5, per-game sd 0.5, se 0.05; 95%: s in [0.402, 0.598] -> +-69.0 Elo.
    value, margin = elo.trinomial(50, 0, 50)
    assert value == 0.0 and margin == pytest.approx(68.99, abs=0.01)
    # +60 =20 -20: s = 0.7, variance (60*.09 + 20*.04 + 20*.49)/100 = 0.16, se 0.04;
    # s in [0.6216, 0.7784] -> Elo [86.2, 218.3]: 147.2 +- 66.0.
    value, margin = elo.trinomial(60, 20, 20)
    assert value == pytest.approx(147.19, abs=0.01) and margin == pytest.approx(66.01, abs=0.01)
    # More draws, same score: a smaller margin.
    assert elo.trinomial(25, 50, 25)[1] < elo.trinomial(50, 0, 50)[1]
    assert elo.trinomial(0, 10, 0) == (0.0, 0.0) and elo.trinomial(3, 0, 0)[1] == math.inf


def test_pentanomial_margin_and_los() -> None:
    # Pairs 2, 1, 1, 0 (of 2 points): mean 0.5, variance 0.125, se sqrt(0.125/4) = 0.1768;
    # s in [0.1535, 0.8465] -> +-296.6 Elo.
    value, margin = elo.pentanomial([2, 1, 1, 0])
    assert value == 0.0 and margin == pytest.approx(296.6, abs=0.2)
    assert elo.likelihood_of_superiority(10, 10) == 0.5
    assert elo.likelihood_of_superiority(10, 0) == pytest.approx(0.99922, abs=1e-5)
    estimate = elo.estimate(6, 3, 1, [2, 1.5, 1, 1.5, 1])
    assert estimate.score == 0.75 and estimate.pairs == 5 and estimate.pair_margin is not None


def test_time_controls_and_clocks() -> None:
    assert TimeControl.parse("10+0.1") == TimeControl(10, 0.1)
    assert TimeControl.parse("40/60") == TimeControl(60, 0, 40)
    assert TimeControl.parse(".5+.05") == TimeControl(0.5, 0.05)
    assert [str(TimeControl.parse(t)) for t in ("10+0.1", "40/60", "5", "40/60+1")] == ["10+0.1", "40/60", "5",
                                                                                       "40/60+1"]
    for bad in ("", "10+", "abc", "0+0.1", "0/10", "-1+0", "10+0.1+1"):
        with pytest.raises(ValueError):
            TimeControl.parse(bad)
    clock = Clock(1.0, 0.1)
    assert clock.punch(chess.WHITE, 0.4) and clock.remaining[chess.WHITE] == pytest.approx(0.7)
    assert clock.pgn_clock(chess.WHITE) == "[%clk 0:00:00.7]" and clock.moves_to_go(chess.WHITE) is None
    assert not clock.punch(chess.WHITE, 0.71)  # the flag falls
    assert Clock(1.0, margin=0.05).punch(chess.BLACK, 1.04)  # within the margin
    repeating = Clock(60, moves=2)
    assert repeating.moves_to_go(chess.BLACK) == 2
    repeating.punch(chess.BLACK, 10)
    assert repeating.moves_to_go(chess.BLACK) == 1
    repeating.punch(chess.BLACK, 10)
    assert repeating.remaining[chess.BLACK] == pytest.approx(100) and repeating.moves_to_go(chess.BLACK) == 2


def test_balanced_starts_are_seeded_and_balanced(prober) -> None:
    starts = balanced_starts(3, seed=2, prober=prober)
    assert [b.fen() for b in starts] == [b.fen() for b in balanced_starts(3, seed=2, prober=prober)]
    assert all(6 <= chess.popcount(b.occupied) <= 10 and b.turn == chess.WHITE for b in starts)
    # The tuner's unfiltered starts stay as they were.
    assert [b.fen() for b in starting_positions(2, seed=4)][0] == "8/8/4r1PK/1p6/8/6k1/8/5R2 w - - 0 1"
    # A dead draw: the default judge (BALANCE_NODES nodes) sees the rook ending reach drawn 5-piece tables, 0.00.
    require_tables(prober, "KRPvKR")
    judge = default_judge(prober)
    assert judge.evaluate(chess.Board("K7/6p1/8/8/3r3R/4k2P/8/8 w - - 0 1")) == Cp(0)


class Tables:
    """A prober's face as balanced_starts sees it: tables up to ``max_pieces`` pieces."""

    available = True

    def __init__(self, max_pieces: int) -> None:
        self.max_pieces = max_pieces


def test_no_start_is_one_the_tables_cover() -> None:
    starts = balanced_starts(10, seed=3, prober=Tables(6), judge=ScriptedJudge([Cp(20)] * 10))
    assert len(starts) == 10 and all(chess.popcount(b.occupied) >= 7 for b in starts)  # no KRPvKRP
    with_5 = balanced_starts(10, seed=3, prober=Tables(5), judge=ScriptedJudge([Cp(20)] * 10))
    assert sorted(chess.popcount(b.occupied) for b in with_5)[0] == 6
    with pytest.raises(NoBalancedStarts, match="cover every start material"):
        balanced_starts(1, seed=3, prober=Tables(10), judge=ScriptedJudge([Cp(20)]))


def test_a_judge_that_does_not_answer_is_stopped() -> None:
    judge = ExternalEngine(f"{FAKE} hang", {}, chess.engine.Limit(nodes=1), stall_seconds=0.5)
    try:
        start = time.monotonic()
        with pytest.raises(EngineError, match="did not answer within 0.5 s"):
            judge.evaluate(chess.Board(FEN))
        assert time.monotonic() - start < 5
    finally:
        judge.close()


def test_a_start_is_balanced_within_150_cp_and_not_a_draw() -> None:
    kept = [Cp(1), Cp(-1), Cp(150), Cp(-150), Cp(37)]
    refused = [None, Cp(0), Cp(151), Cp(-151), Cp(2000), Mate(3), Mate(-1), Mate(0)]
    assert all(is_balanced(score) for score in kept)
    assert not any(is_balanced(score) for score in refused)
    assert is_balanced(Cp(300), max_cp=300) and not is_balanced(Cp(301), max_cp=300)
    # The tuner's self-play starts take a 0.00 too, and never a mate or a missing score (its own copy of this
    # rule read .mate of a score that could be None).
    assert is_balanced(Cp(0), refuse_draws=False) and is_balanced(Cp(-150), refuse_draws=False)
    assert not any(is_balanced(score, refuse_draws=False) for score in (None, Cp(151), Mate(2), Mate(-2)))
    # An unbalanced window: one side or the other ahead by 90 to 200 cp.
    assert all(is_balanced(score, 200, min_cp=90) for score in (Cp(90), Cp(-90), Cp(200), Cp(-137)))
    assert not any(is_balanced(score, 200, min_cp=90) for score in (Cp(89), Cp(-89), Cp(0), Cp(201), Mate(5), None))


class ScriptedJudge:
    """Scores the candidates in turn from a list; records each call."""

    def __init__(self, scores: list[Cp | Mate | None]) -> None:
        self.scores, self.calls = list(scores), []

    def new_position(self) -> None:
        self.calls.append("new")

    def evaluate(self, board: chess.Board) -> Cp | Mate | None:
        self.calls.append(board.fen())
        return self.scores.pop(0)


def test_the_judge_decides_which_starts_are_kept() -> None:
    judge = ScriptedJudge([Cp(0), Mate(4), Cp(40), Cp(-900), None, Cp(-120), Cp(5)])
    starts = balanced_starts(2, seed=7, judge=judge)
    judged = judge.calls[1::2]
    assert judge.calls == [x for fen in judged for x in ("new", fen)]  # a fresh position every time
    assert len(judged) == 6 and len(set(judged)) == 6 and judge.scores == [Cp(5)]  # it stopped once it had two
    assert [b.fen() for b in starts] == [judged[2], judged[5]]
    assert [b.fen() for b in starts] == [b.fen() for b in balanced_starts(2, seed=7, judge=ScriptedJudge(
        [Cp(0), Mate(4), Cp(40), Cp(-900), None, Cp(-120)]))]  # seeded


def test_an_unbalanced_window_keeps_only_starts_one_side_leads() -> None:
    judge = ScriptedJudge([Cp(40), Cp(-120), Cp(300), Cp(95), Cp(-89), Mate(2), Cp(-200)])
    starts = balanced_starts(3, seed=7, judge=judge, min_cp=90, max_cp=200)
    judged = judge.calls[1::2]
    assert len(judged) == 7 and judge.scores == []
    assert [b.fen() for b in starts] == [judged[1], judged[3], judged[6]]


def test_a_judge_that_keeps_no_unbalanced_start_says_what_it_looked_for() -> None:
    judge = ScriptedJudge([Cp(30)] * 1000)
    with pytest.raises(NoBalancedStarts, match="kept 0 of 300 random starts .* 90 to 200 cp for one side"):
        balanced_starts(1, seed=7, judge=judge, min_cp=90, max_cp=200)


def test_a_match_from_unbalanced_starts(syzygy_path: str, prober) -> None:
    code, out, err = run("match", "--engine", FAKE, "--engine", FAKE, "--nodes", "1", "--games", "4",
                         "--max-plies", "2", "--balance-nodes", "2000", "--balance-window", "60:150",
                         "--syzygy-path", syzygy_path, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["meta"]["starts"].startswith("2 unbalanced (60-150 cp) endgame starts (seed 1; judged by this ")
    assert data["meta"]["balance"]["min_cp"] == 60 and data["meta"]["balance"]["max_cp"] == 150
    starts = list(dict.fromkeys(g["start"] for g in data["games"]))
    judge = default_judge(prober, 2000)
    for fen in starts:  # the judge, at a node limit, says the same again: one side 60 to 150 cp ahead
        judge.new_position()
        score = judge.evaluate(chess.Board(fen))
        assert score is not None and score.score() is not None and 60 <= abs(score.score()) <= 150, (fen, score)
    balanced = json.loads(run("match", "--engine", FAKE, "--engine", FAKE, "--nodes", "1", "--games", "2",
                              "--max-plies", "2", "--balance-nodes", "2000", "--syzygy-path", syzygy_path,
                              "--json")[1])
    assert balanced["meta"]["balance"]["min_cp"] == 0 and balanced["meta"]["starts"].startswith("1 balanced ")
    wide = json.loads(run("match", "--engine", FAKE, "--engine", FAKE, "--nodes", "1", "--games", "2",
                          "--max-plies", "2", "--balance-nodes", "2000", "--balance-window", "0:300",
                          "--syzygy-path", syzygy_path, "--json")[1])
    assert wide["meta"]["starts"].startswith("1 balanced (0-300 cp) endgame start (seed 1")


# -- real matches ----------------------------------------------------------------------------------


def check_match(out: str, pgn_text: str, games: int, names: tuple[str, str]) -> dict:
    """The JSON and the PGN agree: every game played, colours alternating, results as reported."""
    data = json.loads(out)
    summary = data["summary"]
    assert summary["wins"] + summary["draws"] + summary["losses"] == summary["games"] == games
    records = data["games"]
    assert [g["round"] for g in records] == list(range(1, games + 1))
    for g in records:
        first_white = g["round"] % 2 == 1
        assert g["first_white"] == first_white
        assert (g["white"], g["black"]) == (names if first_white else names[::-1])
    assert records[0]["start"] == records[1]["start"]  # each start with both colours
    pgn = sorted(read_pgn(pgn_text), key=lambda game: int(game.headers["Round"]))
    assert len(pgn) == games
    for game, record in zip(pgn, records, strict=True):
        assert game.headers["White"] == record["white"] and game.headers["Result"] == record["result"]
        assert game.board().fen() == record["start"] and len(list(game.mainline_moves())) == record["plies"]
    assert summary["illegal_moves"] == 0 and summary["time_losses"] == 0
    return data


@pytest.mark.slow
def test_our_engine_against_itself(syzygy_path: str, tmp_path: Path) -> None:
    pgn = tmp_path / "games.pgn"
    code, out, err = run(
        "match", "--engine", OURS, "--engine", "self", "--nodes", "200", "--games", "4", "--name1", "A",
        "--name2", "B", "--pgn", str(pgn), "--json")
    assert code == 0, err
    data = check_match(out, pgn.read_text(), 4, ("A", "B"))
    assert all(e["tables"] and e["avg_nodes"] for e in data["summary"]["engines"])
    # The tables the match shares: the test tables, and the embedded 3-4-piece set beneath them.
    assert data["meta"]["syzygy_path"] == resolve_path(syzygy_path)


@pytest.mark.slow
@needs_stockfish
def test_against_stockfish_at_depth_1_in_two_jobs(syzygy_path: str) -> None:
    code, out, err = run(
        "match", "--engine", "self", "--engine", STOCKFISH, "--depth", "1", "--games", "4", "--jobs", "2",
        "--pgn", "-", "--max-plies", "120")
    assert code == 0, err
    assert "Elo difference: " in err and " vs Stockfish" in err and ": 4 games at depth 1; " in err
    games = read_pgn(out)
    assert sorted(int(g.headers["Round"]) for g in games) == [1, 2, 3, 4]
    assert all(g.headers["Black" if int(g.headers["Round"]) % 2 else "White"].startswith("Stockfish") for g in games)


@pytest.mark.slow
@needs_stockfish
def test_stockfish_keeps_to_a_tiny_clock(syzygy_path: str, tmp_path: Path) -> None:
    pgn = tmp_path / "clocked.pgn"
    # Two games at once are four engines on CI's two cores: Stockfish's default 10 ms Move Overhead lost it a
    # game on time once the compiled search used its full share, so it gets what a GUI on a busy machine sets.
    code, out, err = run(
        "match", "--engine", STOCKFISH, "--engine", "self", "--option1", "Move Overhead=100", "--tc", "1+0.02",
        "--games", "2", "--jobs", "2", "--pgn", str(pgn), "--json", "--max-plies", "150")
    assert code == 0, err
    data = json.loads(out)
    assert data["summary"]["engines"][0]["time_losses"] == 0 and data["summary"]["games"] == 2
    assert data["meta"]["time_control"] == "1+0.02"
    text = pgn.read_text()
    assert "[%clk 0:00:" in text and '[TimeControl "1+0.02"]' in text


# -- engines that misbehave ------------------------------------------------------------------------


HALF_SECOND = TimeControl(0.5)


def fake_match(mode: str, tc: TimeControl | None = HALF_SECOND, games: int = 2):
    spec = MatchSpec((EngineConfig(f"{FAKE} {mode}"), EngineConfig(f"{FAKE} normal")), (FEN,), games, tc,
                     chess.engine.Limit(depth=1), tb_adjudication=False, max_plies=40)
    outcome = run_match(spec)
    assert not outcome.errors and len(outcome.games) == games
    return outcome, outcome.summary()


def test_pgn_termination_takes_the_standards_words() -> None:
    def tag(result: str, termination: str, forfeit: str = "") -> str:
        record = GameRecord(FEN, "a", "b", result=result, termination=termination, forfeit=forfeit)
        game = chess.pgn.read_game(io.StringIO(record.pgn()))
        assert game.comment == termination  # no move played: our words are the game's comment
        return game.headers["Termination"]

    assert [tag("1-0", "checkmate"), tag("1/2-1/2", "threefold repetition"), tag("1/2-1/2", "50-move rule")] == \
        ["normal"] * 3
    assert [tag("1-0", "tablebase win"), tag("1/2-1/2", "adjudicated draw after 40 plies")] == ["adjudication"] * 2
    assert [tag("0-1", "time forfeit by a", "time"), tag("0-1", "illegal move e2e5 by a", "illegal"),
            tag("0-1", "forfeit by a: the engine process died", "engine")] == \
        ["time forfeit", "rules infraction", "abandoned"]
    assert [tag("*", "interrupted"), tag("*", "max plies")] == ["unterminated"] * 2


def test_a_slow_engine_loses_on_time() -> None:
    outcome, summary = fake_match("slow:0.3")
    assert summary["engines"][0]["time_losses"] == 2 and summary["losses"] == 2
    assert all(g.record.termination == "time forfeit by fake slow" for g in outcome.games)
    game = chess.pgn.read_game(io.StringIO(outcome.games[0].record.pgn()))
    assert game.headers["Termination"] == "time forfeit"  # the PGN standard's words; ours close the game text
    assert game.end().comment.endswith("time forfeit by fake slow")


def test_an_engine_starting_up_is_waited_for_before_its_clock_runs() -> None:
    # It answers readyok and its first move 1 s after it started; the game's clock is 0.5 s.
    outcome, summary = fake_match("warming:1")
    assert summary["time_losses"] == 0 and summary["draws"] == 2


def test_an_engine_that_never_gets_ready_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engines, "READY_TIMEOUT", 0.5)
    with pytest.raises(EngineError, match=r"sent no readyok within 0.5 s"):
        ExternalEngine(f"{FAKE} warming:30", {}, chess.engine.Limit(depth=1))


def test_an_engine_that_dies_while_starting_up_is_an_error(tmp_path: Path) -> None:
    script = tmp_path / "dies.sh"  # uciok, then it exits at isready
    script.write_text('while read l; do case "$l" in uci) echo "id name dies"; echo uciok;; '
                      'isready) exit 0;; esac; done\n')
    code, out, err = run("match", "--engine", f"/bin/sh {script}", "--engine", FAKE, "--games", "2", "--movetime", "50")
    assert code == 2 and out == ""
    assert err.strip() == f"chess-endgame: error: the engine '/bin/sh {script}' died while starting up: " \
        "engine process died unexpectedly (exit code: 0)"


def test_a_hung_engine_loses_on_time_and_is_restarted() -> None:
    start = time.monotonic()
    outcome, summary = fake_match("hang", TimeControl(0.2))
    assert summary["time_losses"] == 2 and summary["losses"] == 2
    assert time.monotonic() - start < 10  # stopped a second after its clock ran out, not waited for


def test_a_crashing_engine_forfeits_and_is_restarted() -> None:
    outcome, summary = fake_match("crash:2", None)
    assert summary["engines"][0]["crashes"] == 2 and summary["losses"] == 2
    assert "the engine process died" in outcome.games[1].record.termination
    assert "[Termination \"abandoned\"]" in outcome.games[1].record.pgn()


def test_an_illegal_move_loses() -> None:
    outcome, summary = fake_match("illegal", None)
    assert summary["illegal_moves"] == 2 and summary["engines"][0]["illegal_moves"] == 2
    assert outcome.games[0].record.termination.startswith("illegal move ")
    assert "[Termination \"rules infraction\"]" in outcome.games[0].record.pgn()


def test_starts_from_an_openings_file(tmp_path: Path) -> None:
    epd = tmp_path / "starts.epd"
    epd.write_text(f"# one start\n{FEN.rsplit(' ', 2)[0]} id \"rook ending\";\n")
    code, out, err = run(
        "match", "--engine", FAKE, "--engine", f"{FAKE} slow:0.01", "--openings", str(epd), "--games", "3",
        "--movetime", "50", "--json", "--no-tb-adjudication", "--max-plies", "10")
    assert code == 0, err
    data = json.loads(out)
    assert {g["start"] for g in data["games"]} == {FEN} and [g["first_white"] for g in data["games"]] == [
        True, False, True]
    assert data["meta"]["starts"].startswith("1 start from ") and data["summary"]["draws"] == 3


# -- bad input -------------------------------------------------------------------------------------


def one_line_error(code: int, out: str, err: str, *words: str) -> None:
    assert code == 2 and out == "", (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("chess-endgame: error: "), err
    for word in words:
        assert word in lines[0], (word, err)


@pytest.mark.parametrize(("args", "words"), [
    (["--engine", "self"], ["two engines", "got 1"]),
    ([], ["two engines", "got 0"]),
    (["--engine", "self", "--engine", "self", "--tc", "10+"], ["--tc", "[MOVES/]SECONDS[+INCREMENT]"]),
    (["--engine", "self", "--engine", "self", "--tc", "0+0"], ["--tc", "no time"]),
    (["--engine", "self", "--engine", "self", "--tc", ""], ["--tc", "not of the form"]),
    (["--engine", "self", "--engine", "self", "--sprt", "elo0=-200000 elo1=0 model=logistic"],
     ["--sprt: elo0 must be within -1000..1000"]),
    (["--engine", "self", "--engine", "self", "--tc", "9" * 400], ["--tc", "too long"]),
    (["--engine", "self", "--engine", "self", "--games", "0"], ["--games", "0"]),
    (["--engine", "self", "--engine", "self", "--tc", "1+0", "--depth", "2"], ["one of --tc"]),
    (["--engine", "self", "--engine", "self", "--option1", "Hash"], ["--option1", "NAME=VALUE"]),
    (["--engine", "self", "--engine", "self", "--option2", "NoSuchOption=1", "--games", "1"], ["NoSuchOption"]),
    (["--engine", "self", "--engine", "/nonexistent/engine"], ["/nonexistent/engine"]),
    (["--engine", "self", "--engine", "self", "--json", "--pgn", "-"], ["standard output"]),
    (["--engine", "self", "--engine", "self", "--balance-option", "Threads=1"], ["needs --balance-engine"]),
    (["--engine", "self", "--engine", "self", "--balance-engine", "self", "--balance-option", "Hash"],
     ["--balance-option", "NAME=VALUE"]),
    (["--engine", "self", "--engine", "self", "--balance-engine", "/nonexistent/judge"],
     ["--balance-engine", "/nonexistent/judge"]),
    (["--engine", "self", "--engine", "self", "--balance-engine", "self", "--balance-option", "NoSuchOption=1"],
     ["--balance-engine", "NoSuchOption"]),
    (["--engine", "self", "--engine", "self", "--balance-nodes", "0"], ["--balance-nodes", "0"]),
    (["--engine", "self", "--engine", "self", "--sprt", "elo0=5 elo1=0"], ["--sprt", "elo1 (0) must be greater"]),
    (["--engine", "self", "--engine", "self", "--sprt", "elo0=0"], ["--sprt", "elo0 and elo1 are required"]),
    (["--engine", "self", "--engine", "self", "--sprt", "elo0=0 elo1=5 alpha=0.7"], ["--sprt", "alpha"]),
    (["--engine", "self", "--engine", "self", "--sprt", "elo0=0 elo1=x"], ["--sprt", "elo1 must be a number"]),
    (["--engine", "self", "--engine", "self", "--sprt", "elo0=0 elo1=5", "--games", "7"], ["even number"]),
    (["--engine", "self", "--engine", "self", "--starts", "0"], ["--starts", "0"]),
    (["--engine", "self", "--engine", "self", "--balance-window", "200:90"], ["--balance-window 200:90", "MIN <="]),
    (["--engine", "self", "--engine", "self", "--balance-window", "90"], ["--balance-window 90", "MIN:MAX"]),
    (["--engine", "self", "--engine", "self", "--balance-window", "a:b"], ["--balance-window a:b", "MIN:MAX"]),
    (["--engine", "self", "--engine", "self", "--balance-window", "-5:100"], ["--balance-window -5:100", "0 <="]),
    # fake_engine.py scores every position 0.00, a draw: it keeps no start.
    (["--engine", "self", "--engine", "self", "--balance-engine", FAKE, "--games", "2"],
     ["balanced starts", "kept 0 of 150"]),
])
def test_bad_input_gives_one_line(args: list[str], words: list[str]) -> None:
    one_line_error(*run("match", *args), *words)


def test_a_bad_openings_file_gives_one_line(tmp_path: Path) -> None:
    epd = tmp_path / "bad.epd"
    epd.write_text(f"{FEN}\nnot a position\n")
    one_line_error(*run("match", "--engine", "self", "--engine", "self", "--openings", str(epd)), f"{epd}:2")
    epd.write_text(f"{FEN}\n")
    for judge in (["--balance-engine", "self"], ["--balance-nodes", "5000"], ["--balance-window", "90:200"]):
        one_line_error(*run("match", "--engine", "self", "--engine", "self", "--openings", str(epd), *judge),
                       "cannot be used with --openings")


@needs_stockfish
def test_stockfish_judges_the_starts(syzygy_path: str) -> None:
    code, out, err = run(
        "match", "--engine", FAKE, "--engine", FAKE, "--nodes", "1", "--games", "4", "--max-plies", "4",
        "--balance-engine", STOCKFISH, "--balance-option", "Threads=1", "--balance-nodes", "20000",
        "--syzygy-path", syzygy_path, "--json")
    assert code == 0, err
    meta = json.loads(out)["meta"]
    assert meta["starts"].startswith("2 balanced endgame starts (seed 1; judged by Stockfish ")
    assert "at 20000 nodes" in meta["starts"]
    assert meta["balance"]["command"] == STOCKFISH and meta["balance"]["options"] == {"Threads": "1"}
    assert meta["balance"]["nodes"] == 20000 and meta["balance"]["judge"].startswith("Stockfish")
    starts = list(dict.fromkeys(g["start"] for g in json.loads(out)["games"]))
    assert len(starts) == 2
    spec = MatchSpec((EngineConfig(FAKE), EngineConfig(FAKE)), (), 2, syzygy_path=syzygy_path)
    judge = open_judge(EngineConfig(STOCKFISH, (("Threads", "1"),)), spec, 20000)
    try:
        for fen in starts:  # Stockfish at a node limit on one thread says the same again
            judge.new_position()
            score = judge.evaluate(chess.Board(fen))
            assert is_balanced(score), (fen, score)
    finally:
        judge.close()


# -- Ctrl-C ----------------------------------------------------------------------------------------


def _ignore_ctrl_c() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def interrupted_match(tmp_path: Path, *args: str, games: int, sig: int = signal.SIGINT, code: int = 130,
                      ignore_ctrl_c: bool = False) -> tuple[str, str, list[chess.pgn.Game]]:
    """A fake-engine match from one start, stopped by ``sig`` (Ctrl-C) once ``games`` games are in its PGN: exit
    ``code``, and (stdout, stderr, the games of the PGN). ``ignore_ctrl_c``: started with SIGINT ignored, as a
    script's background job is."""
    pgn = tmp_path / "partial.pgn"
    proc = subprocess.Popen([str(BIN / "chess-endgame"), "match", "--engine", FAKE, "--engine", FAKE,
                             "--movetime", "20", "--openings", str(write_fen(tmp_path)), "--max-plies", "6",
                             "--pgn", str(pgn), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_ignore_ctrl_c if ignore_ctrl_c else None)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (not pgn.exists() or pgn.read_text().count("[Event ") < games):
        time.sleep(0.1)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == code, (out, err)
    return out, err, read_pgn(pgn.read_text())


def test_ctrl_c_reports_and_keeps_the_finished_games(syzygy_path: str, tmp_path: Path) -> None:
    out, err, games = interrupted_match(tmp_path, "--games", "1000", games=2)
    assert 2 <= len(games) < 1000
    assert f"{len(games)} games at movetime 20 ms" in out and "result (fake normal #1's view)" in out
    assert f"interrupted; {len(games)} of 1000 games finished" in err


def test_sigterm_ends_a_match_as_ctrl_c_does(syzygy_path: str, tmp_path: Path) -> None:
    # kill, timeout and service managers send SIGTERM: the games and the report are kept all the same.
    out, err, games = interrupted_match(tmp_path, "--games", "1000", games=2, sig=signal.SIGTERM)
    assert 2 <= len(games) < 1000
    assert f"{len(games)} games at movetime 20 ms" in out
    assert f"interrupted; {len(games)} of 1000 games finished" in err


def test_sigterm_still_ends_a_match_that_ignores_ctrl_c(syzygy_path: str, tmp_path: Path) -> None:
    # A script's background job ignores SIGINT: there SIGTERM is not turned into one, and ends the program.
    out, err, games = interrupted_match(tmp_path, "--games", "1000", games=2, sig=signal.SIGTERM,
                                        code=-signal.SIGTERM, ignore_ctrl_c=True)
    assert len(games) >= 2 and "interrupted" not in err


def test_ctrl_c_keeps_the_sprt_so_far(syzygy_path: str, tmp_path: Path) -> None:
    out, err, games = interrupted_match(tmp_path, "--sprt", "elo0=0 elo1=5", games=4)
    pairs = len(games) // 2
    # Equal engines: every pair 1 point; the report holds the test as it stood.
    assert f"after {pairs} pair{'s' if pairs != 1 else ''}: inconclusive" in out, out
    assert f"pentanomial (pairs scoring 0, 0.5, 1, 1.5, 2): 0 0 {pairs} 0 0" in out
    assert "the SPRT is inconclusive" in err and "of 20000 games finished" in err


def test_ctrl_c_while_a_finished_game_is_handed_over_waits_until_it_is() -> None:
    """The race behind a report that counted one game more than the PGN held: Ctrl-C between
    counting a game and writing it."""
    from chess_endgame.play.match import _ctrl_c_deferred

    handed_over = []
    with pytest.raises(KeyboardInterrupt):
        with _ctrl_c_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # Python runs the handler here; it must not raise yet
            handed_over.append("written")
    assert handed_over == ["written"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def write_fen(tmp_path: Path) -> Path:
    path = tmp_path / "fen.epd"
    path.write_text(FEN + "\n")
    return path


#: Fast SPRT matches: this project at 300 nodes a move against an engine that plays its first legal move.
SPRT_GAME = ["--nodes", "300", "--starts", "2", "--balance-nodes", "2000", "--max-plies", "80", "--json"]


@pytest.mark.parametrize(("first", "second", "decision"), [("self", "weak", "H1"), ("weak", "self", "H0")])
def test_sprt_stops_when_the_test_decides(first: str, second: str, decision: str, syzygy_path: str) -> None:
    engines = {"self": "self", "weak": f"{FAKE} normal"}
    code, out, err = run("match", "--engine", engines[first], "--engine", engines[second],
                         "--sprt", "elo0=0 elo1=200 model=logistic", *SPRT_GAME)
    assert code == 0, err
    data = json.loads(out)
    sprt, summary = data["summary"]["sprt"], data["summary"]
    assert sprt["decision"] == decision and sprt["verdict"] == {"H1": "passed", "H0": "failed"}[decision]
    assert (sprt["llr"] >= sprt["upper"]) if decision == "H1" else (sprt["llr"] <= sprt["lower"])
    # Every complete pair is counted, and with one game at a time none starts after the pair that decided.
    assert sum(sprt["pentanomial"]) == sprt["pairs"] and summary["games"] == 2 * sprt["pairs"]
    assert summary["games"] < 40 and data["meta"]["sprt"] == "elo0=0 elo1=200 alpha=0.05 beta=0.05 model=logistic"
    assert sprt["pentanomial"][4 if decision == "H1" else 0] == sprt["pairs"]


def test_sprt_cap_on_games_is_inconclusive_and_reported(syzygy_path: str) -> None:
    code, out, err = run("match", "--engine", "self", "--engine", f"{FAKE} normal", "--sprt", "elo0=0 elo1=5",
                         "--games", "4", *SPRT_GAME[:-1])
    assert code == 0, err
    assert "after 2 pairs: inconclusive" in out and "pentanomial (pairs scoring 0, 0.5, 1, 1.5, 2): 0 0 0 0 2" in out
    assert "LLR " in out and "(-2.94, 2.94)" in out


def test_saved_starts_are_read_back_by_openings(syzygy_path: str, tmp_path: Path) -> None:
    saved = tmp_path / "starts.fen"
    code, out, err = run("match", "--engine", f"{FAKE} normal", "--engine", f"{FAKE} normal", "--games", "2",
                         "--starts", "3", "--balance-nodes", "2000", "--nodes", "1", "--save-starts", str(saved),
                         "--json")
    assert code == 0, err
    fens = saved.read_text().splitlines()
    assert len(fens) == 3 and all(chess.Board(fen).is_valid() for fen in fens)
    code, out, err = run("match", "--engine", f"{FAKE} normal", "--engine", f"{FAKE} normal", "--games", "6",
                         "--openings", str(saved), "--nodes", "1", "--json")
    assert code == 0, err
    assert [g["start"] for g in json.loads(out)["games"]][::2] == fens
    one_line_error(*run("match", "--engine", "self", "--engine", "self", "--openings", str(saved), "--starts", "2"),
                   "--starts", "--openings")


def test_a_match_lost_outright_reports_minus_infinite_elo(tmp_path: Path) -> None:
    """No point scored: the Elo difference is -inf (cutechess-cli's figure), not a bare inf."""
    code, out, err = run("match", "--engine", f"{FAKE} illegal", "--engine", f"{FAKE} normal",
                         "--openings", str(write_fen(tmp_path)), "--nodes", "1", "--games", "2")
    assert code == 0, err
    assert "score 0.0%" in out and "Elo difference: -inf +/- inf (95%, trinomial); " in out, out
    assert "over 1 pair;" in out, out
