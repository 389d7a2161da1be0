"""The tuner: the fitter on synthetic data, labels, the quiet filter, the command, the match, self-play labels."""

from __future__ import annotations

import random
from pathlib import Path

import chess
import numpy as np
import pytest
from click.testing import CliRunner

from chess_endgame.board import is_quiet
from chess_endgame.engine.core.features import planar
from chess_endgame.engine.evaluation import FEATURES, load_weights
from chess_endgame.play.starts import play_match, starting_positions
from chess_endgame.tablebase.prober import Prober
from chess_endgame.tuning import data, fit, gate, labels
from chess_endgame_cli.main import cli


def _synthetic(seed: int, n: int = 40000) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    rng = np.random.default_rng(seed)
    x = np.column_stack([np.ones(n), rng.integers(-2, 3, n), rng.normal(0, 3, n), rng.integers(0, 2, n),
                         rng.normal(0, 10, n)])
    w_true = np.array([15.0, 300.0, 40.0, -120.0, 8.0])
    k = 0.004
    p = 1 / (1 + np.exp(-k * (x @ w_true)))
    y = (rng.random(n) < p).astype(float)  # sampled wins and losses
    return x, y, w_true, k


def test_fitter_recovers_known_weights() -> None:
    x, y, w_true, k = _synthetic(1)
    fitted = fit.fit(x, y, np.zeros(5), k, l2=0.0, steps=100)
    assert np.allclose(fitted, w_true, rtol=0.1, atol=6.0), fitted
    # And k, for fixed true weights.
    assert fit.fit_k(x, y, w_true) == pytest.approx(k, rel=0.1)


def test_soft_labels_and_frozen_weights() -> None:
    x, _, w_true, k = _synthetic(2)
    y = 1 / (1 + np.exp(-k * (x @ w_true)))  # exact probabilities as soft labels
    start = np.array([0.0, 250.0, 0.0, 0.0, 0.0])
    frozen = np.array([False, False, False, True, False])
    fitted = fit.fit(x, y, start, k, l2=0.0, frozen=frozen, steps=100)
    assert fitted[3] == 0.0 and abs(fitted[1] - 300) < 40
    assert fit.log_loss(x, y, fitted, k) < fit.log_loss(x, y, start, k)
    # A strong pull keeps the weights at the start.
    pulled = fit.fit(x, y, start, k, l2=10.0)
    assert np.allclose(pulled, start, atol=1.0)


def test_labels_and_quiet_positions() -> None:
    assert [data.label(w) for w in (2, 1, 0, -1, -2)] == [1.0, 0.5, 0.5, 0.5, 0.0]
    assert [data.label(w, cursed_as_draws=False) for w in (1, -1)] == [1.0, 0.0]
    assert is_quiet(chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1"))
    assert not is_quiet(chess.Board("4k3/8/8/8/8/8/r7/R3K3 w - - 0 1"))  # a capture pending
    assert not is_quiet(chess.Board("4k3/8/8/8/8/8/8/4K2r w - - 0 1"))   # in check


def test_accuracy_counts_only_decisive_positions() -> None:
    x = np.array([[1.0, 1.0], [1.0, -1.0], [1.0, 1.0]])
    y = np.array([1.0, 0.0, 0.5])
    assert fit.sign_accuracy(x, y, np.array([0.0, 100.0])) == 1.0
    assert fit.sign_accuracy(x, y, np.array([0.0, -100.0])) == 0.0


def test_tune_command_writes_loadable_weights(syzygy_path: str, tmp_path: Path) -> None:
    out = tmp_path / "w.json"
    result = CliRunner().invoke(cli, ["tune", "--per-material", "20", "--output", str(out)])
    assert result.exit_code == 0, result.stderr
    assert "held-out log-loss" in result.stdout and "tuned weights" in result.stdout
    weights, shipped = load_weights(str(out)), load_weights()
    assert weights.buckets == shipped.buckets and weights.source.startswith("tuned")  # the start's buckets
    assert list(weights.as_dict()) == shipped.names() and weights.names()[:len(FEATURES)] == [
        f"{name} [{weights.ranges()[0]} men]" if weights.buckets else name for name in FEATURES]
    refused = CliRunner().invoke(cli, ["tune", "--install", "--match-games", "10"])
    assert refused.exit_code == 2 and "--match-games 100" in refused.stderr


def test_learn_fits_only_the_terms_asked_for(syzygy_path: str, tmp_path: Path) -> None:
    mask = fit.learnt_features(["passer_king_*", "tempo"])
    learnt = [name for name, m in zip(FEATURES, mask, strict=True) if m]
    assert learnt == ["tempo"] + [f"{t}.{p}" for t in ("passer_king_them", "passer_king_us") for p in ("mg", "eg")]
    with pytest.raises(ValueError, match="no evaluation term matches nope"):
        fit.learnt_features(["pawn", "nope"])
    out = tmp_path / "w.json"
    result = CliRunner().invoke(cli, ["tune", "--per-material", "20", "--learn", "passed_*", "--learn", "pawn",
                                      "--output", str(out)])
    assert result.exit_code == 0, result.stderr
    assert "or not in --learn" in result.stdout
    start, tuned = load_weights(), load_weights(str(out))
    moved = {name for name, a, b in zip(start.names(), start.vector, tuned.vector, strict=True) if a != b}
    assert moved and all(name.startswith(("passed_", "pawn.")) for name in moved), moved
    refused = CliRunner().invoke(cli, ["tune", "--per-material", "10", "--learn", "nope*"])
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr.strip() == "chess-endgame: error: no evaluation term matches nope* (the terms are the " \
                                     "names in a weight file)"


def test_match_plays_both_colours(prober: Prober) -> None:
    starts = starting_positions(3, seed=4)
    assert all(6 <= chess.popcount(b.occupied) <= 10 and b.is_valid() for b in starts)
    hand = load_weights()
    result = play_match(hand, hand, games=4, nodes=300, seed=4, prober=prober, max_plies=20)
    assert result.games == 4 and result.wins + result.draws + result.losses == 4
    # Every start is played twice, the first weight set taking White once and Black once.
    by_start: dict[str, list[bool]] = {}
    for fen, first_white, _ in result.record:
        by_start.setdefault(fen, []).append(first_white)
    assert list(by_start.values()) == [[True, False], [True, False]]
    assert [fen for fen in by_start] == [b.fen() for b in starting_positions(2, seed=4)]


# -- labels beyond the tables: self-play games ----------------------------------------------


@pytest.fixture(scope="module")
def selfplay_run(prober: Prober) -> labels.LabelSet:
    """A tiny self-play labelling run: 3 games at 100 nodes a move."""
    return labels.selfplay_labels(prober, load_weights(), 3, nodes=100, seed=5, per_game=6)


def test_selfplay_labels_come_from_six_pieces_up(selfplay_run: labels.LabelSet) -> None:
    run = selfplay_run
    assert len(run) > 0 and run.finished_games + run.unfinished == 3
    assert all(n >= 6 for n in run.piece_counts())
    assert set(run.labels) <= {0.0, 0.5, 1.0} and set(run.games) <= {0, 1, 2}
    assert all(is_quiet(b) and b.is_valid() for b in run.boards)
    # Every position of a game carries that game's result; the label is the side to move's view of it.
    by_game: dict[int, set[float]] = {}
    for i, game in enumerate(run.games):
        by_game.setdefault(game, set()).add(run.white_score(i))
    assert all(len(scores) == 1 for scores in by_game.values())
    assert len(by_game) <= run.finished_games  # a finished game may give no quiet position of 6+ pieces


def test_selfplay_games_are_the_same_in_two_processes(prober: Prober, selfplay_run: labels.LabelSet) -> None:
    two = labels.selfplay_labels(prober, load_weights(), 3, nodes=100, seed=5, per_game=6, jobs=2)
    assert [b.fen() for b in two.boards] == [b.fen() for b in selfplay_run.boards]
    assert two.labels == selfplay_run.labels and two.games == selfplay_run.games


def test_selfplay_games_in_a_range_of_pieces(prober: Prober) -> None:
    run = labels.selfplay_labels(prober, load_weights(), 2, nodes=100, seed=6, per_game=4, min_pieces=15,
                                 max_pieces=16)
    # The starts have 15 or 16 pieces and a game only loses men: every sample has 15 or 16.
    assert len(run) > 0 and all(15 <= n <= 16 for n in run.piece_counts())
    default = labels.selfplay_labels(prober, load_weights(), 2, nodes=100, seed=6, per_game=4)
    assert [b.fen() for b in default.boards] != [b.fen() for b in run.boards]


def test_random_materials_are_balanced_and_in_range() -> None:
    rng = random.Random(3)
    counts = []
    for _ in range(300):
        material = labels.random_material(rng)
        white, black = material.split("v")
        counts.append(len(white) + len(black))
        assert abs(white.count("P") - black.count("P")) <= 1
        assert sorted(white.replace("P", "").replace("N", "B")) == sorted(black.replace("P", "").replace("N", "B"))
    assert min(counts) == labels.MIN_PIECES and max(counts) == labels.MAX_PIECES


def test_split_by_game_keeps_each_game_on_one_side() -> None:
    games = [g for g in range(40) for _ in range(g % 7 + 1)]
    held = labels.split_by_game(games, 0.2, seed=1)
    out = {g for g, h in zip(games, held, strict=True) if h}
    assert out.isdisjoint({g for g, h in zip(games, held, strict=True) if not h}) and len(out) == 8
    assert (held == labels.split_by_game(games, 0.2, seed=1)).all()
    assert labels.split_by_game([0, 0, 1], 0.2, seed=1).sum() in (1, 2)  # two games: one each side
    assert not labels.split_by_game([4, 4], 0.2, seed=1).any()


def test_label_file_round_trips(selfplay_run: labels.LabelSet, tmp_path: Path) -> None:
    path = tmp_path / "labels.epd"
    with open(path, "w", encoding="utf-8") as f:
        labels.write_labels(selfplay_run, f, ["a header line"])
    back = labels.read_labels(str(path))
    assert [b.fen() for b in back.boards] == [b.fen() for b in selfplay_run.boards]
    assert back.labels == selfplay_run.labels and back.games == selfplay_run.games
    # Any EPD with c9 results reads too; a line without a game number is a game of its own.
    other = tmp_path / "quiet-labeled.epd"
    other.write_text('8/2k5/8/8/3K4/8/3R4/8 b - - c9 "1-0";\n8/2k5/8/8/3K4/8/3R4/8 w - - c9 "1/2-1/2";\n')
    read = labels.read_labels(str(other))
    assert read.labels == [0.0, 0.5] and len(set(read.games)) == 2
    other.write_text('8/2k5/8/8/3K4/8/3R4/8 b - - c9 "1-0";\n8/2k5/8/8/3K4/8/3R4/8 w - - bm Rd1;\n')
    with pytest.raises(ValueError, match=r"quiet-labeled.epd:2: no game result"):
        labels.read_labels(str(other))


def test_several_label_files_keep_their_games_apart(tmp_path: Path) -> None:
    one, two = tmp_path / "one.epd", tmp_path / "two.epd"
    one.write_text('8/2k5/8/8/3K4/8/3R4/8 b - - c9 "1-0"; game 0;\n8/2k5/8/8/3K4/8/3R4/8 w - - c9 "1-0"; game 0;\n'
                   '8/2k5/8/8/3K4/8/3R4/8 w - - c9 "1/2-1/2"; game 7;\n')
    two.write_text('8/2k5/8/8/3K4/8/3R4/8 w - - c9 "0-1"; game 0; ce -250;\n8/2k5/8/8/3K4/8/3R4/8 b - - c9 "1-0";\n')
    both = labels.read_label_files([str(one), str(two)])
    assert both.games == [0, 0, 1, 2, 3] and both.labels == [0.0, 1.0, 0.5, 0.0, 0.0]
    assert both.scores[3] == -250.0 and both.results == {"1-0": 2, "1/2-1/2": 1, "0-1": 1}


def test_sample_weights_count_rows_and_sources() -> None:
    x, y, _, k = _synthetic(4, n=3000)
    twice = fit.fit(np.vstack([x, x[:1000]]), np.concatenate([y, y[:1000]]), np.zeros(5), k, l2=1e-4)
    weighted = fit.fit(x, y, np.zeros(5), k, l2=1e-4, sample_weight=np.r_[np.full(1000, 2.0), np.ones(2000)])
    assert np.allclose(twice, weighted, rtol=1e-6, atol=1e-6)
    w = data.source_weights(np.array([True] * 10 + [False] * 90), 0.5)
    assert w[:10].sum() == pytest.approx(w[10:].sum()) and w.mean() == pytest.approx(1.0)
    assert (data.source_weights(np.zeros(5, dtype=bool), 0.5) == 1).all()


def test_install_needs_every_held_out_group_better() -> None:
    groups = [fit.GroupFigures("tables", 100, 0.40, 0.38, 0.9, 0.9),
              fit.GroupFigures("self-play, 6-12 pieces", 50, 0.60, 0.62, 0.7, 0.7),
              fit.GroupFigures("self-play, 13+ pieces", 0, *[float("nan")] * 4)]
    report = fit.Report(0.004, 0.5, 0.5, 0.4, 0.4, 0.9, 0.9, 100, 20, groups)
    assert gate.reasons_not_to_install(report, 0.55, 100) == [
        "held-out log-loss is not better on self-play, 6-12 pieces"]
    groups[1] = fit.GroupFigures("self-play, 6-12 pieces", 50, 0.60, 0.58, 0.7, 0.7)
    assert gate.reasons_not_to_install(report, 0.55, 100) == []


def test_tune_with_selfplay_labels_and_the_label_file(syzygy_path: str, tmp_path: Path) -> None:
    out, cache = tmp_path / "w.json", tmp_path / "labels.epd"
    args = ["tune", "--per-material", "10", "--selfplay-nodes", "100", "--seed", "5"]
    first = CliRunner().invoke(cli, [*args, "--selfplay-games", "3", "--labels-out", str(cache), "--output", str(out)])
    assert first.exit_code == 0, first.stderr
    assert "self-play, 6-12 pieces" in first.stdout and "held out, by source" in first.stdout
    assert len(labels.read_labels(str(cache))) > 0
    weights = out.read_text()
    again = CliRunner().invoke(cli, [*args, "--labels", str(cache), "--output", str(out)])
    assert again.exit_code == 0, again.stderr
    assert out.read_text() == weights  # the same fit, without replaying the games


def test_label_searches_score_positions_the_same_in_any_process(prober: Prober,
                                                                selfplay_run: labels.LabelSet) -> None:
    run = labels.LabelSet()
    for i, board in enumerate(selfplay_run.boards[:6]):
        run.add_position(board, selfplay_run.white_score(i), selfplay_run.games[i])
    run.scores[1] = 12.0  # already scored: not searched again
    assert run.unscored == [0, 2, 3, 4, 5]
    seen: list[int] = []
    assert labels.score_positions(prober, load_weights(), run, 300, progress=seen.append) == 5
    assert run.unscored == [] and run.scores[1] == 12.0 and sum(seen) == 5
    again = labels.LabelSet(list(run.boards), list(run.labels), list(run.games), [np.nan] * len(run))
    labels.score_positions(prober, load_weights(), again, 300, jobs=2)
    assert again.scores[:1] + again.scores[2:] == run.scores[:1] + run.scores[2:]
    # A won position scores for the side to move, a lost one against it; a mate in n is MATE_CP - n.
    up = labels.LabelSet()
    up.add_position(chess.Board("6k1/5ppp/8/8/8/8/5PPP/3QR1K1 w - - 0 1"), 1.0, 0)
    up.add_position(chess.Board("6k1/5ppp/8/8/8/8/5PPP/3QR1K1 b - - 0 1"), 1.0, 1)
    up.add_position(chess.Board("6k1/5ppp/8/8/8/8/5PPP/4R1K1 w - - 0 1"), 1.0, 2)
    labels.score_positions(prober, load_weights(), up, 2000)
    assert up.scores[0] == labels.MATE_CP - 1 and up.scores[1] < -500 and up.scores[2] > 300


def test_scores_blend_with_results_by_their_share() -> None:
    x = np.zeros((3, 2))
    part = data.Dataset(x, np.array([1.0, 0.5, 0.0]), ["selfplay"] * 3, score=np.array([0.0, np.nan, 400.0]))
    blended = part.blended(0.005, 0.25)
    p = 1 / (1 + np.exp(-0.005 * 400))
    assert blended.y == pytest.approx([0.75 * 1.0 + 0.25 * 0.5, 0.5, 0.25 * p])
    assert part.blended(0.005, 0.0) is part and part.y[0] == 1.0  # the original labels are kept
    both = data.Dataset.concat([part, data.Dataset(x[:2], np.array([1.0, 0.0]), ["KQvK"] * 2)])
    assert np.isnan(both.score[3:]).all() and both.take(np.array([0, 2])).score.tolist() == [0.0, 400.0]


@pytest.mark.parametrize("stop", ["backend", "ctrl-c"])
def test_selfplay_stopped_before_any_game_leaves_the_labels_file_as_it_was(syzygy_path: str, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch,
                                                                          stop: str) -> None:
    """A cluster node without the tables (the batch fails as it starts), or Ctrl-C, before any game is played:
    --labels-out keeps what it held (it was emptied to a header)."""
    from chess_endgame.batch.protocol import BackendError

    def stopped(*args: object, **kwargs: object) -> None:
        raise BackendError("on node 10.0.0.7 (worker-3): the tables are missing") if stop == "backend" \
            else KeyboardInterrupt

    monkeypatch.setattr(labels, "selfplay_labels", stopped)
    kept = tmp_path / "labels.epd"
    kept.write_text("# labels of an earlier run\n")
    result = CliRunner().invoke(cli, ["tune", "--per-material", "10", "--selfplay-games", "2", "--labels-out",
                                      str(kept), "--output", str(tmp_path / "w.json")])
    assert kept.read_text() == "# labels of an earlier run\n"
    if stop == "backend":
        assert result.exit_code == 2 and "on node 10.0.0.7 (worker-3)" in result.stderr
    else:
        assert result.exit_code == 130
        assert f"0 of 2 self-play games played; nothing was written; {kept} was left as it was" in result.stderr


def test_label_files_keep_scores(selfplay_run: labels.LabelSet, tmp_path: Path) -> None:
    run = labels.LabelSet()
    for i, board in enumerate(selfplay_run.boards[:3]):
        run.add_position(board, selfplay_run.white_score(i), selfplay_run.games[i], [35.0, np.nan, -10000.0][i])
    path = tmp_path / "scored.epd"
    with open(path, "w", encoding="utf-8") as f:
        labels.write_labels(run, f)
    back = labels.read_labels(str(path))
    assert back.scores[0] == 35.0 and np.isnan(back.scores[1]) and back.scores[2] == -10000.0
    for ce in ('"lots"', "9" * 400):  # a string; a number no float holds
        path.write_text(f'8/2k5/8/8/3K4/8/3R4/8 b - - c9 "1-0"; ce {ce};\n')
        with pytest.raises(ValueError, match=r"scored.epd:1: the ce opcode must be a number"):
            labels.read_labels(str(path))


def test_tune_scores_a_label_file_and_blends(syzygy_path: str, tmp_path: Path,
                                               selfplay_run: labels.LabelSet) -> None:
    source, scored, out = tmp_path / "labels.epd", tmp_path / "scored.epd", tmp_path / "w.json"
    with open(source, "w", encoding="utf-8") as f:
        labels.write_labels(selfplay_run, f)
    args = ["tune", "--per-material", "10", "--seed", "5", "--output", str(out)]
    first = CliRunner().invoke(cli, [*args, "--labels", str(source), "--score-nodes", "200",
                                     "--labels-out", str(scored)])
    assert first.exit_code == 0, first.stderr
    assert f"scored {len(selfplay_run)} positions by 200-node searches" in first.stdout
    assert "with a search score, their label 50% its win probability" in first.stdout
    read = labels.read_labels(str(scored))
    assert read.unscored == [] and [b.fen() for b in read.boards] == [b.fen() for b in selfplay_run.boards]
    blended = out.read_text()
    plain = CliRunner().invoke(cli, [*args, "--labels", str(scored), "--score-share", "0"])
    assert plain.exit_code == 0 and "with a search score" not in plain.stdout
    assert out.read_text() != blended  # the scores moved the fit


@pytest.mark.parametrize(("extra", "words"), [
    (["--selfplay-games", "2", "--labels", "LABELS"], "not both"),
    (["--labels", "LABELS", "--labels-out", "OUT"], "--score-nodes"),
    (["--score-share", "1.5"], "--score-share"),
    (["--labels-out", "OUT"], "--selfplay-games"),
    (["--labels", "BAD"], "BAD"),
    (["--selfplay-share", "1"], "--selfplay-share"),
    (["--jobs", "0"], "--jobs"),
    (["--selfplay-games", "-1"], "--selfplay-games"),
    (["--selfplay-pieces", "13-20"], "--selfplay-games"),
    (["--selfplay-games", "2", "--selfplay-pieces", "5-20"], "--selfplay-pieces"),
    (["--selfplay-games", "2", "--selfplay-pieces", "14-13"], "--selfplay-pieces"),
    (["--selfplay-games", "2", "--selfplay-pieces", "13-21"], "--selfplay-pieces"),
    (["--selfplay-games", "2", "--selfplay-pieces", "13"], "--selfplay-pieces"),
    (["--selfplay-games", "2", "--labels-out", "-", "--output", "-"], "standard output"),
    # The weights written over the labels: refused before any work (they were lost).
    (["--labels", "LABELS", "--output", "LABELS"], "is the --labels file too"),
    (["--selfplay-games", "2", "--labels-out", "OUT", "--output", "OUT"], "is the --labels-out file too"),
    (["--seed", "-1"], "--seed"),  # it played every game first, then failed without naming the option
])
def test_bad_selfplay_options_give_one_line(syzygy_path: str, tmp_path: Path, extra: list[str], words: str) -> None:
    good, bad = tmp_path / "labels.epd", tmp_path / "bad.epd"
    good.write_text('8/2k5/8/8/3K4/8/3R4/8 b - - c9 "1-0";\n')
    bad.write_text("not an EPD line\n")
    names = {"LABELS": str(good), "OUT": str(tmp_path / "out.epd"), "BAD": str(bad)}
    words = names.get(words, words)
    result = CliRunner().invoke(cli, ["tune", "--per-material", "10", *[names.get(a, a) for a in extra]])
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("chess-endgame: error: ") and words in lines[0], result.stderr


def test_the_fit_recovers_a_known_evaluation_from_its_labels() -> None:
    """Labels from a known tapered evaluation of real positions (its win probabilities): the fit from zero
    learns an evaluation that predicts them as well as the true one and scores the positions as it does.
    (Single weights need not match: a piece's material and its piece-square table add up to the same.)"""
    from chess_endgame.board import random_position
    from chess_endgame.engine.evaluation import feature_matrix

    rng = random.Random(4)
    materials = ("KRPvKR", "KQPvKQ", "KRPPvKRP", "KBPPvKNP", "KQRPPvKQRP", "KRBNPPPvKRBNPP", "KPPPvKPP")
    boards = [random_position(materials[i % len(materials)], rng) for i in range(6000)]
    x = feature_matrix(boards)
    names = list(FEATURES)
    w_true = np.zeros(len(names))
    for name, value in (("tempo", 10), ("pawn.mg", 80), ("pawn.eg", 110), ("knight.mg", 320), ("knight.eg", 300),
                        ("bishop.mg", 330), ("bishop.eg", 320), ("rook.mg", 480), ("rook.eg", 540),
                        ("queen.mg", 950), ("queen.eg", 1000), ("passed_free.eg", 30), ("doubled.eg", -20)):
        w_true[names.index(name)] = value
    k = 0.004
    y = 1 / (1 + np.exp(-k * (x @ w_true)))
    fitted = fit.fit(x, y, np.zeros(len(names)), k, l2=0.0, steps=60)
    assert fit.log_loss(x, y, fitted, k) == pytest.approx(fit.log_loss(x, y, w_true, k), abs=1e-9)
    assert np.abs(x @ fitted - x @ w_true).max() < 0.01  # centipawns


def test_buckets_fit_a_set_of_weights_for_each_range_of_men(syzygy_path: str, tmp_path: Path) -> None:
    """``--buckets 3``: one set of weights for 2-3 men, another for 4-32, each fitted on its own positions
    (the embedded tables give 3- and 4-man ones); the file keeps both and the evaluation uses each where it
    belongs."""
    from chess_endgame.engine.evaluation import Evaluator

    out = tmp_path / "w.json"
    result = CliRunner().invoke(cli, ["tune", "--per-material", "40", "--buckets", "3", "--output", str(out)])
    assert result.exit_code == 0, result.stderr
    assert "[2-3 men]" in result.stdout and "[4-32 men]" in result.stdout
    tuned = load_weights(str(out))
    assert tuned.buckets == (3,) and "2 buckets of men (2-3 4-32)" in tuned.source
    few, many = tuned.rows
    shipped = load_weights().rows[0]  # the shipped set of 2-3 and 4-12 men (every set, with one)
    assert (few != many).any() and (few != shipped).any() and (many != shipped).any()
    evaluator = Evaluator(tuned)
    three, four = chess.Board("8/8/4k3/8/8/3KR3/8/8 w - - 0 1"), chess.Board("8/8/4k3/8/8/3KR3/7P/8 w - - 0 1")
    assert evaluator.explain(three).bucket == "2-3" and evaluator.explain(four).bucket == "4-32"
    compiled = planar(np.array([few, many]))  # the layout the compiled evaluation reads
    assert (evaluator.matrix[3] == compiled[0]).all() and (evaluator.matrix[4] == compiled[1]).all()
    # A one-set fit from the bucketed file: --buckets none.
    again = tmp_path / "one.json"
    result = CliRunner().invoke(cli, ["tune", "--per-material", "40", "--weights", str(out), "--buckets", "none",
                                      "--output", str(again)])
    assert result.exit_code == 0, result.stderr
    assert load_weights(str(again)).buckets == ()
    # --learn-buckets: only the 4-32 set is fitted, the 2-3 one keeps the start weights.
    result = CliRunner().invoke(cli, ["tune", "--per-material", "40", "--buckets", "3", "--learn-buckets", "4-32",
                                      "--output", str(again)])
    assert result.exit_code == 0, result.stderr
    assert "or not in --learn-buckets" in result.stdout
    assert load_weights(str(again)).source.endswith(f", 4-32 fitted, the others from {load_weights().source}")
    few, many = load_weights(str(again)).rows
    assert (few == shipped).all() and (many != shipped).any()


def test_nothing_to_fit_is_an_error_not_a_false_source(syzygy_path: str, tmp_path: Path) -> None:
    """A bucket without positions or only mating guides to learn: one line, no weight file that claims a fit."""
    for args, words in ((["--learn-buckets", "13-32"], "fewer than 100 training positions in the buckets asked "
                                                        "for (13-32 men: 0)"),
                        (["--learn", "mop_edge"], "the terms of --learn are mating guides")):
        out = tmp_path / "w.json"
        result = CliRunner().invoke(cli, ["tune", "--per-material", "10", *args, "--output", str(out)])
        assert result.exit_code == 2 and f"nothing to fit: {words}" in result.stderr, result.stderr
        assert not out.exists()


@pytest.mark.parametrize("args, words", [
    (["--buckets", "8,4"], "ascending men counts"),
    (["--buckets", "eight"], "--buckets takes men counts"),
    (["--buckets", "1"], "ascending men counts"),
    (["--buckets", "32"], "ascending men counts"),
    (["--buckets", "8", "--learn-buckets", "9-20"], "no bucket of men 9-20 (the buckets: 2-8 9-32)"),
    (["--buckets", "none", "--learn-buckets", "2-8"], "no bucket of men 2-8 (the buckets: 2-32)"),
])
def test_bad_buckets_give_one_line(syzygy_path: str, args: list[str], words: str) -> None:
    result = CliRunner().invoke(cli, ["tune", "--per-material", "10", *args])
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("chess-endgame: error: ") and words in lines[0], result.stderr


def test_a_weight_file_that_cannot_be_written_is_not_said_written(syzygy_path: str) -> None:
    result = CliRunner().invoke(cli, ["tune", "--per-material", "10", "--output", "/dev/full"])
    assert result.exit_code == 1 and "cannot write /dev/full" in result.stderr, result.stderr
    assert "weights written" not in result.stdout + result.stderr
