"""The tapered linear evaluation: symmetry, the terms, the phase and the scale factors, the weight file."""

from __future__ import annotations

import json
import random
from pathlib import Path

import chess
import numpy as np
import pytest

from chess_endgame.board import random_position
from chess_endgame.engine.core import features as core
from chess_endgame.engine.core import pawns
from chess_endgame.engine.core.features import TERMS
from chess_endgame.engine.core.position import bitboards
from chess_endgame.engine.evaluation import (
    FEATURES,
    INDEX,
    Evaluator,
    Weights,
    WeightsError,
    feature_matrix,
    features,
    load_weights,
    save_weights,
    terms,
)


def value(fen: str, name: str) -> float:
    """One term of a position, White's view."""
    return terms(chess.Board(fen))[0][TERMS.index(name)]


@pytest.fixture(scope="module")
def evaluator() -> Evaluator:
    return Evaluator()


def test_colour_symmetry(evaluator: Evaluator) -> None:
    rng = random.Random(7)
    for material in ("KRPvKR", "KQvKR", "KBNvK", "KPPvKP", "KRPPvKRP", "KQRBNPPvKQRNPPP"):
        for _ in range(20):
            board = random_position(material, rng)
            assert evaluator.evaluate(board) == evaluator.evaluate(board.mirror()), board.fen()


def test_start_position_is_balanced(evaluator: Evaluator) -> None:
    board = chess.Board()
    weights = evaluator.weights
    assert evaluator.evaluate(board) == round(weights.rows[weights.bucket_of(32)][0])  # the tempo of 32 men


def test_the_explanation_adds_up(evaluator: Evaluator) -> None:
    board = chess.Board("8/6k1/6p1/8/3R4/6P1/5PKr/8 b - - 0 1")  # Black a pawn down
    explained = evaluator.explain(board)
    assert [p.family for p in explained.parts][:3] == ["material", "pawns", "passers"]
    # Two rooks: mg 4/24; a rook ending a pawn up with every pawn on one wing is not scaled (it lost an SPRT at 3/4).
    assert explained.mg == pytest.approx(4 / 24) and explained.scale == 1.0
    assert round(explained.tempo + sum(p.total for p in explained.parts)) == evaluator.evaluate(board)
    material = explained.parts[0]
    assert material.terms == [("pawn", -1.0, evaluator.weights["pawn.mg"], evaluator.weights["pawn.eg"])]


def test_endgame_knowledge(evaluator: Evaluator) -> None:
    # Mop-up: the lone king is better off in the centre than in a corner.
    centre = chess.Board("8/8/8/4k3/8/8/8/R3K3 b - - 0 1")
    corner = chess.Board("7k/8/8/8/8/8/8/R3K3 b - - 0 1")
    assert evaluator.evaluate(centre) > evaluator.evaluate(corner)
    # KBN: the corner of the bishop's colour is the one to drive to (dark bishop: a1/h8).
    assert value("7k/8/8/8/8/8/8/2BNK3 w - - 0 1", "kbn_corner") > value("k7/8/8/8/8/8/8/2BNK3 w - - 0 1", "kbn_corner")
    # A rook against a minor piece, without pawns, is drawish; a rook against two pawns is not.
    assert value("4k3/8/8/8/8/8/2b5/R3K3 w - - 0 1", "drawish") > 0
    assert value("8/8/8/5P2/P5K1/3r4/2k5/8 w - - 0 1", "drawish") == 0
    # Winnability counts for the side ahead by a pawn or more, from White's view.
    ahead = "8/p4pk1/6p1/8/8/6P1/P4PK1/3R4 b - - 0 1"  # White a rook up, pawns on both wings
    assert [value(ahead, t) for t in ("win_lead", "win_pawns_ahead", "win_pawns_behind", "win_passers",
                                      "win_both_wings", "win_pawn_ending")] == [4, 3, 3, 0, 1, 0]
    assert [value(chess.Board(ahead).mirror().fen(), t) for t in ("win_lead", "win_both_wings")] == [-4, -1]
    assert value("8/8/4k3/8/8/3PK3/8/8 w - - 0 1", "win_pawn_ending") == 1
    assert value("8/8/4k3/8/8/3PK3/8/8 w - - 0 1", "win_passers") == 1
    assert value("4k3/8/8/8/8/8/2b5/2N1K3 w - - 0 1", "win_lead") == 0  # a knight for a bishop: even
    # Square rule: the king outside the pawn's square cannot catch it.
    assert value("7k/8/8/8/P7/8/8/4K3 b - - 0 1", "unstoppable") == 1
    assert value("8/8/2k5/8/P7/8/8/4K3 b - - 0 1", "unstoppable") == 0


def test_feature_matrix_is_side_to_move_view() -> None:
    white = chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")
    black = chess.Board("4k3/8/8/8/8/8/8/R3K3 b - - 0 1")
    m = feature_matrix([white, black])
    assert m.shape == (2, len(FEATURES))
    assert m[0, FEATURES.index("rook.eg")] == pytest.approx(22 / 24) == -m[1, FEATURES.index("rook.eg")]
    assert m[0, FEATURES.index("rook.mg")] == pytest.approx(2 / 24)
    assert m[0, 0] == m[1, 0] == 1  # tempo


def _random_boards(count: int, seed: int) -> list[chess.Board]:
    """Random endgames and positions from random games, both sides to move."""
    rng = random.Random(seed)
    materials = ("KBNvK", "KBPvKB", "KBPvK", "KPPvKP", "KRPvKR", "KQvKR", "KRvKB", "KNNvK", "KvK",
                 "KRPPvKRP", "KQRBNPPvKQRNPPP")
    boards = [random_position(materials[i % len(materials)], rng) for i in range(count // 2)]
    while len(boards) < count:
        board = chess.Board()
        for _ in range(rng.randint(0, 120)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        boards.append(board)
    return boards


def test_compiled_evaluation_equals_the_explained_one() -> None:
    rng = random.Random(3)
    random_weights = Weights(np.array([rng.uniform(-50, 50) for _ in FEATURES]))
    halves = Weights(np.array([rng.randint(-100, 100) / 2 for _ in FEATURES]))  # sums that land on .5
    # Three sets of weights, for 2-6 men, 7-20 and 21-32: each position is scored with its own.
    buckets = (6, 20)
    bucketed = Weights(np.array([rng.uniform(-50, 50) for _ in range(3 * len(FEATURES))]), buckets=buckets)
    boards = _random_boards(1000, seed=11)
    rows = feature_matrix(boards)
    seen = set()
    for evaluator in (Evaluator(), Evaluator(random_weights), Evaluator(halves), Evaluator(bucketed)):
        scratch = np.empty(core.SCRATCH_SIZE)
        keys, pawn_terms = core.new_pawn_table()
        for board, row in zip(boards, rows, strict=True):
            men = len(board.piece_map())
            w = evaluator.weights.rows[sum(men > b for b in evaluator.weights.buckets)]
            seen.add((evaluator.weights.buckets, sum(men > b for b in evaluator.weights.buckets)))
            total = float(np.dot(row[1:], w[1:]))
            compiled = core.evaluate(bitboards(board), int(board.turn), evaluator.matrix, scratch, keys, pawn_terms)
            explained = evaluator.explain(board)
            assert compiled == evaluator.evaluate(board) == explained.total, board.fen()
            weights = evaluator.weights
            assert explained.bucket == (weights.ranges()[weights.bucket_of(men)] if weights.buckets else "")
            # The feature vector is the evaluation's linear model: its dot product with the weights, rounded
            # (the compiled sum is reassociated, so a tie at .5 may round either way).
            assert abs(compiled - (w[0] + total)) <= 0.5 + 1e-9, board.fen()
            assert explained.tempo + sum(p.total for p in explained.parts) == pytest.approx(total + explained.tempo)
    assert {(buckets, 0), (buckets, 1), (buckets, 2)} <= seen  # every bucket was used
    assert bucketed.ranges() == ["2-6", "7-20", "21-32"]


def test_mirrored_positions_score_the_same_for_the_side_to_move() -> None:
    rng = random.Random(9)
    evaluator = Evaluator(Weights(np.array([rng.uniform(-50, 50) for _ in FEATURES])))
    for board in _random_boards(300, seed=4):
        raw, mg, scale = terms(board)
        mirrored, mg2, scale2 = terms(board.mirror())
        assert (mg, scale) == (mg2, scale2) and [-x for x in raw] == pytest.approx(mirrored, abs=1e-12), board.fen()
        assert evaluator.evaluate(board) == evaluator.evaluate(board.mirror()), board.fen()


@pytest.mark.parametrize(("fen", "scale"), [
    ("8/4kb2/8/3P4/2P5/4K3/3B4/8 w - - 0 1", 0.5),   # opposite-coloured bishops, White a pawn up
    ("4k3/8/8/8/8/8/2b5/R3K3 w - - 0 1", 0.25),       # KRvKB: no pawns, less than a rook up
    ("1k6/8/8/8/8/P7/8/2B1K3 w - - 0 1", 0.0),        # a dark bishop and the a-pawn: a8 is light
    ("6k1/5pp1/7p/8/8/6PP/5PPK/r6R w - - 0 1", 1.0),   # rooks, a pawn up, all on the king's side: not scaled
    ("1k6/8/8/8/8/P7/8/3BK3 w - - 0 1", 1.0),         # the right bishop
    ("8/8/8/5P2/P5K1/3r4/2k5/8 w - - 0 1", 1.0),       # KRvKPP: the rook's lead is in pieces, not scaled
    ("8/8/8/2q5/8/1PP5/1RK5/7k w - - 0 1", 1.0),       # KQvKRPP: a queen for a rook and two pawns, not scaled
    ("8/8/8/5k2/8/2PK4/8/r3B3 w - - 0 1", 0.25),       # KRvKBP: less than a rook up in pieces
])
def test_scale_factors_for_drawish_endings(fen: str, scale: float) -> None:
    assert terms(chess.Board(fen))[2] == scale
    assert terms(chess.Board(fen).mirror())[2] == scale


def test_a_scaled_ending_scores_near_a_draw(evaluator: Evaluator) -> None:
    # Opposite bishops a pawn up, KRvKB, the wrong rook pawn: the endgame part is scaled down.
    for fen in ("8/4kb2/8/3P4/2P5/4K3/3B4/8 w - - 0 1", "4k3/8/8/8/8/8/2b5/R3K3 w - - 0 1",
                "1k6/8/8/8/8/P7/8/2B1K3 w - - 0 1"):
        board = chess.Board(fen)
        explained = evaluator.explain(board)
        unscaled = sum(w_eg * v for p in explained.parts for _, v, _, w_eg in p.terms) * (1 - explained.mg)
        assert abs(sum(p.eg for p in explained.parts)) <= abs(unscaled) * explained.scale + 1e-6, fen


def _pawn_terms_alone(board: chess.Board) -> list[float]:
    keys, terms = core.new_pawn_table()
    bb = bitboards(board)
    return terms[pawns.pawn_entry(bb[9], bb[1], keys, terms)].tolist()


def test_pawn_table_collisions_keep_their_own_terms() -> None:
    keys, terms = core.new_pawn_table()
    rng = random.Random(5)
    seen: dict[int, chess.Board] = {}
    while True:  # two pawn structures with different terms in the same slot (birthday: a few hundred tries)
        board = random_position("KPPPvKPP", rng)
        bb = bitboards(board)
        slot = int(pawns.pawn_slot(bb[9], bb[1], keys.shape[0]))
        if slot in seen and _pawn_terms_alone(seen[slot]) != _pawn_terms_alone(board):
            first, second = seen[slot], board
            break
        seen[slot] = board
    out, expected = np.empty(len(FEATURES)), np.empty(len(FEATURES))
    for board in (first, second, first, second):
        bb = bitboards(board)
        maps = np.zeros(core.MAPS_SIZE, dtype=np.uint64)
        core.features_into(bb, int(board.turn), out, keys, terms, maps)
        core.features_into(bb, int(board.turn), expected, *core.new_pawn_table(), maps)
        assert out.tolist() == expected.tolist() == features(board), board.fen()
        assert (keys[slot, 0], keys[slot, 1]) == (bb[9], bb[1])


def _write(tmp_path: Path, weights: dict | list, version: int | None = 2, **more: object) -> str:
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"weights": weights} | ({} if version is None else {"version": version}) | more))
    return str(path)


def test_weight_file_must_match_the_terms(tmp_path: Path) -> None:
    saved = tmp_path / "saved.json"
    save_weights(load_weights(), str(saved))
    assert (load_weights(str(saved)).vector == load_weights().vector).all()
    good = json.loads(saved.read_text())["weights"][0]
    del good["men"]
    assert good["rook"] == [load_weights()["rook.mg"], load_weights()["rook.eg"]]
    missing = dict(good)
    del missing["rook"]
    with pytest.raises(WeightsError, match="missing rook"):
        load_weights(_write(tmp_path, missing))
    with pytest.raises(WeightsError, match="unknown queen_bonus"):
        load_weights(_write(tmp_path, dict(good, queen_bonus=[3, 3])))
    with pytest.raises(WeightsError, match=r"rook needs \[middlegame, endgame\] weights"):
        load_weights(_write(tmp_path, dict(good, rook=5)))
    for bad in (["five", 5], [int("9" * 400), 5]):  # a string; an integer no float holds
        with pytest.raises(WeightsError, match="finite number"):
            load_weights(_write(tmp_path, dict(good, rook=bad)))
    # A file of the first format (one weight a feature, no version) says what to do.
    with pytest.raises(WeightsError, match="version 1; this build reads versions 2 and 3.*chess-endgame tune"):
        load_weights(_write(tmp_path, {"tempo": 10, "pawn": 90}, version=None))
    # The version is a number: "3" is not 3 (the message had said "version 3 ...; this build reads ... 3").
    with pytest.raises(WeightsError, match="of version '3'; this build reads versions 2 and 3 \\(the number"):
        load_weights(_write(tmp_path, [good], version="3"))  # type: ignore[arg-type]
    # A weight too large for the evaluation's integer: refused (1e308 wrapped the total around).
    for bad in ([1e308, 5], [5, -2e6]):
        with pytest.raises(WeightsError, match="at most 1,000,000 centipawns"):
            load_weights(_write(tmp_path, dict(good, rook=bad)))
    # Version 2 (one set, no buckets) reads as one set for every position.
    assert (load_weights(_write(tmp_path, good)).vector == load_weights().rows[0]).all()
    # Version 3: a set for each bucket of men; the sets and the bounds must agree.
    other = dict(good, rook=[600, 700])
    two = load_weights(_write(tmp_path, [good, other], version=3, buckets=[10]))
    assert two.buckets == (10,) and two.ranges() == ["2-10", "11-32"]
    assert two.rows[1][INDEX["rook.eg"]] == 700 and two.rows[0][INDEX["rook.eg"]] == good["rook"][1]
    assert [row[INDEX["rook.mg"]] for row in two.by_men()[[2, 10, 11, 32]]] == [good["rook"][0]] * 2 + [600] * 2
    save_weights(two, str(saved))
    again = load_weights(str(saved))
    assert again.buckets == (10,) and (again.vector == two.vector).all()
    # A set's "men" label, where it has one, must be its bucket's.
    labelled = json.loads(saved.read_text())
    assert [one["men"] for one in labelled["weights"]] == ["2-10", "11-32"]
    labelled["buckets"] = [12]
    saved.write_text(json.dumps(labelled))
    mislabelled = r"labelled for 2-10, 11-32 men, but the buckets \[12\] make them 2-12, 13-32"
    with pytest.raises(WeightsError, match=mislabelled):
        load_weights(str(saved))
    with pytest.raises(WeightsError, match="1 bucket bound.* need 2 set"):
        load_weights(_write(tmp_path, [good], version=3, buckets=[10]))
    with pytest.raises(WeightsError, match="ascending men counts"):
        load_weights(_write(tmp_path, [good, good, good], version=3, buckets=[12, 8]))
    with pytest.raises(WeightsError, match="'buckets' must be a list"):
        load_weights(_write(tmp_path, [good, good], version=3, buckets="8"))
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(WeightsError, match="cannot read"):
        load_weights(str(tmp_path / "bad.json"))


def test_far_passers_count_the_kings_distances_and_an_open_path() -> None:
    def passer(fen: str) -> tuple[float, ...]:
        return tuple(value(fen, n) for n in ("passer_king_them", "passer_king_us", "passer_path"))

    # White's e6 pawn (four ranks advanced, weight 3 in a pure pawn ending), stop square e7. Distances
    # count up to 5: the black king on a1 is 6 away, the white one on e1 too.
    assert passer("8/8/4P3/8/8/8/8/k3K3 w - - 0 1") == (15, 15, 3)
    # The defending king next to the path: the stop square is attacked, the path is not open.
    assert passer("5k2/8/4P3/8/8/8/8/4K3 w - - 0 1") == (3, 15, 0)
    # A bishop watches e8 but not e7: half the path bonus.
    assert passer("8/8/4P3/8/b7/8/8/k3K3 w - - 0 1") == (15, 15, 1.5)
    # Blocked by the king: no path bonus; the same from Black's side is the negation.
    assert passer("8/4k3/4P3/8/8/8/8/4K3 b - - 0 1") == (0, 15, 0)
    assert passer("4k3/8/8/8/8/4p3/4K3/8 w - - 0 1") == (0, -15, 0)
    # A pawn on its third rank carries no weight.
    assert passer("8/8/8/8/8/4P3/8/k3K3 w - - 0 1") == (0, 0, 0)


def test_connected_passers_and_the_king_among_the_pawns() -> None:
    # Two passers side by side on the sixth (weight 3 each) support each other; apart they do not.
    assert value("8/8/3PP3/8/8/8/8/k3K3 w - - 0 1", "passer_connected") == 6
    assert value("8/8/2P1P3/8/8/8/8/k3K3 w - - 0 1", "passer_connected") == 0
    assert value("k3K3/8/8/8/8/3pp3/8/8 w - - 0 1", "passer_connected") == -6
    # The king among the pawns: mean distance of the enemy king to every pawn less the own king's.
    near = "8/8/8/8/3p4/2PK4/8/k7 w - - 0 1"  # c3, d4: White's king 1 and 1 away, Black's 2 and 3
    assert value(near, "king_pawns") == (2 + 3 - 1 - 1) / 2
    assert value(chess.Board(near).mirror().fen(), "king_pawns") == -1.5


def test_pawn_ending_knowledge_outside_passers_key_squares_opposition_and_a_blocked_square() -> None:
    def mirrored(fen: str, name: str) -> float:
        return value(chess.Board(fen).mirror().fen(), name)

    # Outside passer: White's a-pawn is 4+ files from Black's pawns (f, g, h), Black has no passer.
    outside = "8/5ppp/8/8/P7/8/5PPP/k5K1 w - - 0 1"
    assert value(outside, "outside_passer") == 4 and mirrored(outside, "outside_passer") == -4
    # Both sides with a passer two files from the enemy pawns: even.
    assert value("8/8/2p5/P2k4/8/8/8/K7 w - - 0 1", "outside_passer") == 0
    # Key squares of e3 are d5, e5 and f5: the white king on d5 holds one; on d4 it does not.
    assert value("8/8/8/3K4/8/4P3/8/5k2 w - - 0 1", "king_key_square") == 1
    assert value("8/8/8/8/3K4/4P3/8/5k2 w - - 0 1", "king_key_square") == 0
    assert mirrored("8/8/8/3K4/8/4P3/8/5k2 w - - 0 1", "king_key_square") == -1
    # A rook pawn's key squares are on the next file, on the last two ranks.
    assert value("8/1K6/8/P7/8/8/8/7k w - - 0 1", "king_key_square") == 1
    assert value("8/8/1K6/P7/8/8/8/7k w - - 0 1", "king_key_square") == 0
    # Not in a piece ending.
    assert value("8/8/8/3K4/8/4P3/8/5k1n w - - 0 1", "king_key_square") == 0
    # Opposition: kings facing with one square (or three, five) between; the side not to move has it.
    assert value("8/8/4k3/8/4K3/4P3/8/8 w - - 0 1", "opposition") == -1
    assert value("8/8/4k3/8/4K3/4P3/8/8 b - - 0 1", "opposition") == 1
    assert value("8/8/4k3/8/8/4K3/4P3/8 b - - 0 1", "opposition") == 0  # two squares between
    assert value("8/8/8/8/P7/8/k1K5/8 w - - 0 1", "opposition") == -1  # on a rank
    # Square rule with the king's way barred by its own pawn: from d5 only c6-b7-a8 reaches a8 in three
    # moves, and c6 holds a black pawn, so the a5 pawn (White to move) runs through.
    assert value("8/8/8/P2k4/8/8/8/K7 w - - 0 1", "unstoppable") == 0
    assert value("8/8/2p5/P2k4/8/8/8/K7 w - - 0 1", "unstoppable") == 1
    assert mirrored("8/8/2p5/P2k4/8/8/8/K7 w - - 0 1", "unstoppable") == -1
    assert value("8/8/2p5/P2k4/8/8/8/K7 b - - 0 1", "unstoppable") == 0  # Black moves first: Kc5-b6 is in time
