"""Drills: their starts and goals, the tough defence, the feedback on every move, the terminal front end."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import chess
import pytest

from chess_endgame.chooser import MoveClass, choose
from chess_endgame.tablebase.prober import Prober
from chess_endgame.train.defence import keeping_replies, plain_move, tough_move
from chess_endgame.train.drill import CLASSICS, DRAW, WIN, DrillError, from_fen, from_material, goal_of, named
from chess_endgame.train.session import KEPT, SPENT, THROWN_AWAY, Session

from .conftest import require_pieces, run

EXECUTABLE = [sys.executable, "-m", "chess_endgame"]


@pytest.mark.parametrize("name", sorted(CLASSICS))
def test_every_classic_has_the_goal_the_tables_give(name: str, prober: Prober) -> None:
    classic = CLASSICS[name]
    require_pieces(prober, chess.Board(classic.fen))
    drill = named(name, prober)
    assert drill.goal == classic.goal == goal_of(chess.Board(classic.fen), prober)


def test_a_material_drill_is_quiet_and_in_its_difficulty_band(prober: Prober) -> None:
    rng = random.Random(4)
    for difficulty, (low, high) in (("easy", (1, 12)), ("hard", (41, 100))):
        drill = from_material("KQvKR", prober, difficulty=difficulty, rng=rng)
        board = drill.board
        assert drill.goal == WIN and board.turn == chess.WHITE
        assert low <= prober.probe_dtz(board) <= high and prober.probe_wdl(board) == 2
        assert not any(board.is_capture(m) for m in board.legal_moves)
    drill = from_material("KPvK", prober, user=chess.BLACK, difficulty="hard", rng=rng)
    choice = choose(drill.board, prober, full=True)
    assert drill.goal == DRAW and drill.user == chess.BLACK and choice.result == MoveClass.DRAW
    assert 1 <= sum(m.cls == MoveClass.DRAW for m in choice.moves) <= 2  # hard: few moves hold


def test_bad_drills_say_why(prober: Prober) -> None:
    with pytest.raises(DrillError, match="no classic named"):
        named("Réti", prober)
    with pytest.raises(DrillError, match="lost for the side to move"):
        from_fen("8/8/8/8/8/2k5/8/K1q5 w - - 0 1", prober)  # Ka2 only, then mated: nothing to train
    with pytest.raises(DrillError, match="difficulty"):
        from_material("KQvK", prober, difficulty="brutal")


def _hardness(board: chess.Board, move: chess.Move, prober: Prober) -> tuple[bool, int]:
    obvious, keeping = keeping_replies(board, move, prober)
    return obvious > 0, keeping  # a winning capture or promotion among the replies: the easiest of all


def test_the_tough_defence_resists_longest_then_leaves_the_fewest_winning_replies(prober: Prober) -> None:
    rng = random.Random(8)
    for _ in range(12):
        board = from_material("KQvKR", prober, difficulty="hard", rng=rng).board
        board.push(plain_move(board, prober))  # now the defender (Black) to move
        choice = choose(board, prober, full=True)
        candidates = choice.best_class_moves()
        move = tough_move(board, prober, random.Random(1))
        assert move in [m.move for m in candidates]  # never worse than the tables allow
        longest = max(m.s for m in candidates)
        chosen = next(m for m in candidates if m.move == move)
        assert chosen.s == longest  # the longest resistance, as the plain defence
        assert _hardness(board, move, prober) == min(_hardness(board, m.move, prober) for m in candidates
                                                     if m.s == longest)


def test_feedback_names_a_thrown_away_win_and_the_best_move(prober: Prober) -> None:
    """KQvK: Qf7 stalemates (win thrown away); the tables' best, Qg7#... is named; undo takes it back."""
    board = chess.Board("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1")
    session = Session(from_fen(board.fen(), prober), prober)
    assert session.hint() in ("Qf8#", "Qc8#", "Qb8#", "Qa8#", "Qd8#", "Qe8#", "Qh1#", "Qh3#", "Qf7")
    feedback = session.play("Qf7")
    assert feedback.verdict == THROWN_AWAY and "stalemate" in feedback.reason
    assert feedback.before == "win" and feedback.after == "draw" and feedback.best.endswith("#")
    assert feedback.reply is None and session.over and session.result() == "drawn"
    assert session.summary().success is False and session.summary().errors == 1
    assert session.undo() and not session.over and session.board.fen() == board.fen()
    feedback = session.play(session.hint())
    assert feedback.verdict == KEPT and session.result() == "won" and session.summary().success


def test_spending_the_50_move_margin_is_named(prober: Prober) -> None:
    """KQvK with the clock so high that the best move leaves a few plies to spare: a slower move that still wins
    spends the margin (?!), named with the plies it leaves."""
    rng = random.Random(6)
    while True:
        board = from_material("KQvK", prober, difficulty="easy", rng=rng).board
        board.halfmove_clock = 96 - prober.probe_dtz(board)
        choice = choose(board, prober, full=True)
        wins = sorted((m for m in choice.moves if m.cls == MoveClass.WIN), key=lambda m: m.s or 0)
        if len(wins) >= 2 and wins[-1].s > wins[0].s:
            break
    session = Session(from_fen(board.fen(), prober), prober)
    feedback = session.play(wins[-1].uci)
    assert feedback.verdict == SPENT and "50-move draw" in feedback.reason and feedback.after == "win"
    assert feedback.spare == 100 - wins[-1].s and feedback.best == board.san(choice.best.move)


def test_a_drill_followed_by_the_hints_is_won_in_the_tables_own_number_of_moves(prober: Prober) -> None:
    session = Session(from_material("KQvK", prober, rng=random.Random(2)), prober, seed=3)
    while not session.over:
        assert session.play(session.hint()).verdict == KEPT
    summary = session.summary()
    assert summary.result == "won" and summary.success and summary.errors == 0
    assert summary.moves == summary.shortest


def test_train_json_plays_a_drill_from_a_script(syzygy_path: str) -> None:
    """The terminal front end for scripts: commands on stdin, one JSON object a line."""
    fen = "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1"
    proc = subprocess.run([*EXECUTABLE, "train", fen, "--json", "--syzygy-path", syzygy_path],
                          input="Qz9\nhint\nQf7\nhint\nundo\nQf8\n", capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [e["event"] for e in events] == ["start", "error", "hint", "move", "over", "error", "over", "undo", "move",
                                            "end"]
    assert events.pop(5) == {"event": "error", "message": "the drill is over"}  # a hint after the end
    assert events.pop(5) == events[4]  # and the end said again
    assert events[0]["goal"] == "win" and events[0]["side"] == "white"
    assert "not a legal move" in events[1]["message"]
    assert events[3]["verdict"] == THROWN_AWAY and "stalemate" in events[3]["reason"]
    assert events[4]["result"] == "drawn"
    assert events[5]["taken"] is True and events[5]["fen"] == fen
    assert events[6]["verdict"] == KEPT and events[7]["result"] == "won" and events[7]["success"] is True


def test_train_in_the_terminal_shows_the_board_and_the_feedback(syzygy_path: str) -> None:
    proc = subprocess.run([*EXECUTABLE, "train", "opposition", "--syzygy-path", syzygy_path],
                          input="Kf8\nundo\nKf7\nquit\n", capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("Opposition: you play Black, hold the draw.") and "♚" in out
    assert "Kf8?? draw → loss" in out and "best was Kf7" in out and "taken back" in out
    assert "Kf7: draw kept" in out and "stopped after 1 move;" in out


def test_train_refuses_bad_targets_in_one_line(syzygy_path: str, tmp_path) -> None:
    for args, words in ((["Réti"], "no classic named"), (["KQvK", "--difficulty", "brutal"], "invalid value"),
                        (["not/a/fen"], "not a FEN")):
        code, out, err = run("train", *args, "--syzygy-path", syzygy_path)
        assert code == 2 and out == "" and words in err and err.count("\n") == 1, err
    code, out, err = run("train", "KRPvKR", "--syzygy-path", str(tmp_path))  # the embedded 3-4-piece set only
    assert code == 2 and "KRPvKR" in err and "tablebases download" in err and err.count("\n") == 1, err


def test_the_training_api_answers_and_refuses_bad_input(prober: Prober) -> None:
    """/api/train/*: a drill, the word on a move with the program's reply, a hint; bad input a 4xx JSON error."""
    from .tbserver import serving
    from .test_serve import get_json

    fen = "7k/8/6K1/8/8/8/8/5Q2_w_-_-_0_1"
    with serving(prober) as url:
        status, drill = get_json(f"{url}/api/train/new?material=KQvK&difficulty=easy&seed=5")
        assert status == 200 and drill["goal"] == "win" and drill["side"] == "white" and drill["seed"] == 5
        assert get_json(f"{url}/api/train/new?material=KQvK&difficulty=easy&seed=5")[1] == drill  # seeded
        status, classics = get_json(f"{url}/api/train/classics")
        assert status == 200 and {c["name"] for c in classics} == {c.name for c in CLASSICS.values()}
        status, answer = get_json(f"{url}/api/train/move?fen={fen}&move=f1f7")
        assert status == 200 and answer["feedback"]["verdict"] == THROWN_AWAY and answer["over"]
        assert answer["feedback"]["best"] == "Qf8#" and answer["result"] == "drawn" and answer["reply"] is None
        status, answer = get_json(f"{url}/api/train/move?fen={fen}&move=g6f6")
        after = chess.Board(fen.replace("_", " "))
        after.push_uci("g6f6")
        assert status == 200 and chess.Move.from_uci(answer["reply"]) in after.legal_moves and not answer["over"]
        after.push_uci(answer["reply"])
        assert answer["fen"] == after.fen() and answer["feedback"]["verdict"] == KEPT
        status, hint = get_json(f"{url}/api/train/hint?fen={fen}")
        assert status == 200 and hint == {"move": "Qf8#", "uci": "f1f8"}
        for query, status_expected, words in (
                ("new?material=KXvK", 400, "material"), ("new?material=KQvK&difficulty=brutal", 400, "difficulty"),
                ("new?material=KQvK&side=red", 400, "side"), ("new?classic=Nope", 404, "no classic"),
                ("new?material=KQvK&seed=-1", 400, "seed"), (f"move?fen={fen}&move=f1f9", 400, "not a legal move"),
                (f"move?fen={fen}&moves=f1a8&move=f1f8", 400, "illegal move"),
                (f"move?fen={fen}&moves=f1f9&move=f1f8", 400, "not a UCI move"),
                (f"move?fen={fen}&moves=f1f2&move=h8g8", 400, "not the user's turn"),
                ("move?move=f1f8", 400, "missing fen"), ("new?material=KRPvKRB", 404, "KRPvKRB"),
                ("new?material=KQvK&seed=%C2%B2", 400, "seed"),
                ("new?material=KPPPPPPPPPvK", 400, "could not place"),
                ("move?fen=8/8/8/8/8/8/8/K1k5_w_-_-_0_1&move=a1a2", 400, "the drill is over"),
                (f"move?fen={fen}&move=0000", 400, "not a legal move"),
                ("move?fen=7k/8/8/8/8/8/p7/1Q2K3_w_-_-_99_60&moves=b1c1,a2a1q&move=c1a1", 400,
                 "the drill is over (drawn) before move a2a1q"),
                ("hint?fen=7k/8/8/8/8/8/8/KQ6_w_-_-_0_1&moves=b1c1", 400, "not the user's turn"),
                # A move after the user's own move ended the drill: the drill is over, whoever's turn it is.
                (f"move?fen={fen}&moves=f1f8&move=f1f8", 400, "the drill is over (won): no more moves"),
                # Beyond the tables: 404 for a hint as for a move (the hint said 400).
                ("hint?fen=rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR_w_KQkq_-_0_1", 404,
                 "the tables cannot answer"),
                ("move?fen=rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR_w_KQkq_-_0_1&move=e2e4", 404,
                 "the tables cannot answer")):
            status, answer = get_json(f"{url}/api/train/{query}")
            assert status == status_expected and words in answer["error"], (query, status, answer)


def test_a_drill_is_not_over_while_the_user_can_still_win_at_a_clock_of_99(prober: Prober) -> None:
    # python-chess's claim_draw=True would end it here (any quiet move reaches 100); the capture zeroes and wins.
    fen = "4k3/8/8/8/8/3p4/8/3QK3 w - - 99 80"
    session = Session(from_fen(fen, prober), prober)
    assert session.drill.goal == WIN and not session.over and session.result() == "playing"
    feedback = session.play("Qxd3")
    assert feedback.verdict == KEPT and not session.over


def test_the_null_move_is_not_a_move(prober: Prober) -> None:
    """python-chess reads "--" and "0000" as the null move: a drill refuses them like any illegal text."""
    session = Session(from_fen("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", prober), prober)
    for text in ("--", "0000", "Z0", "@@@@"):
        with pytest.raises(ValueError, match="not a legal move here"):
            session.play(text)
    assert not session.feedback and session.board.fen() == "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1"


def test_a_move_the_defender_answers_with_a_third_repetition_throws_the_win_away(prober: Prober) -> None:
    session = Session(from_fen("7k/8/8/8/8/8/8/KQ6 w - - 0 1", prober), prober)
    for move in ("b1c1", "h8g8", "c1b1", "g8h8", "b1c2", "h8g7"):
        session.board.push_uci(move)
    feedback = session.play("c2b1")
    assert feedback.verdict == THROWN_AWAY and feedback.after == "draw" and "threefold" in feedback.reason
    assert session.over and session.result() == "drawn"


def test_hints_only_on_the_users_turn_of_a_game_going_on(prober: Prober) -> None:
    session = Session(from_fen("7k/8/8/8/8/8/8/KQ6 w - - 0 1", prober), prober)
    session.board.push_uci("b1c1")
    with pytest.raises(ValueError, match="not the user's turn"):
        session.hint()
    over = Session(from_fen("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", prober), prober)
    over.play("Qf7")  # stalemate
    with pytest.raises(ValueError, match="the drill is over"):
        over.hint()


def test_no_margin_is_told_after_mate(prober: Prober) -> None:
    session = Session(from_fen("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", prober), prober)
    feedback = session.play("Qf8#")
    assert feedback.verdict == KEPT and feedback.spare is None and session.result() == "won"


def test_no_margin_is_told_for_a_cursed_win_or_a_blessed_loss(prober: Prober) -> None:
    session = Session(from_fen("8/8/8/3k4/8/8/8/K6r w - - 90 80", prober), prober)  # lost, but blessed at 90
    feedback = session.play("Kb2")
    assert feedback.after == "blessed loss" and feedback.spare is None


@pytest.mark.parametrize(("fen", "why"), [("7k/8/6K1/8/8/8/8/5Q2 w - - 100 80", "50-move rule"),
                                          ("8/8/8/8/8/8/8/K1k5 w - - 0 1", "insufficient material"),
                                          ("7k/8/6K1/8/8/8/8/5Q2 w - - 150 80", "75-move rule")])
def test_a_start_that_is_already_over_is_no_drill(prober: Prober, fen: str, why: str) -> None:
    with pytest.raises(DrillError, match=f"already over \\({why}\\)"):
        from_fen(fen, prober)


def test_the_draw_defence_leaves_the_fewest_holding_replies(prober: Prober) -> None:
    """Where the program can only draw, every draw resists alike: it plays one that leaves the user the fewest
    replies that hold (it had played the first in UCI order)."""
    rng = random.Random(4)
    checked = 0
    for _ in range(8):
        drill = from_material("KRvKB", prober, user=chess.BLACK, difficulty="hard", rng=rng)
        board = drill.board
        board.push(plain_move(board, prober))  # the user's move; now the program (White) to move
        choice = choose(board, prober, full=True)
        candidates = choice.best_class_moves()
        if choice.result != MoveClass.DRAW or len(candidates) < 2:
            continue
        move = tough_move(board, prober, random.Random(1))
        hardest = min(_hardness(board, m.move, prober) for m in candidates)
        assert _hardness(board, move, prober) == hardest
        checked += 1
    assert checked >= 3, checked


def test_train_commands_in_any_case_and_the_queen_against_rook_classic(syzygy_path: str) -> None:
    proc = subprocess.run([*EXECUTABLE, "train", "QvR", "--json", "--syzygy-path", syzygy_path],
                          input="HINT\nQuit\n", capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert events[0]["fen"] == CLASSICS["qvr"].fen and [e["event"] for e in events] == ["start", "hint", "end"]
