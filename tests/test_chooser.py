"""The root move chooser: docs/chooser.md's positions, clock variants, properties, play-outs."""

from __future__ import annotations

import random

import chess
import pytest

from chess_endgame.board import random_position
from chess_endgame.chooser import Choice, MoveClass, choose, classify, has_repeated, rank_move
from chess_endgame.engine.player import Player, PlayerOptions
from chess_endgame.play.engines import PlayerEngine
from chess_endgame.play.game import TablebaseAgent, play_game
from chess_endgame.tablebase.prober import NotCovered, Prober, Reason

from .conftest import require_tables

W, MW, CW, D, BL, ML, L = (MoveClass.WIN, MoveClass.MAYBE_WIN, MoveClass.CURSED_WIN, MoveClass.DRAW,
                           MoveClass.BLESSED_LOSS, MoveClass.MAYBE_LOSS, MoveClass.LOSS)


def ranked(prober: Prober, fen: str, moves: list[str] = (), **kwargs: object) -> Choice:
    board = chess.Board(fen)
    for uci in moves:
        board.push_uci(uci)
    choice = choose(board, prober, full=True, **kwargs)
    assert isinstance(choice, Choice), choice
    return choice


def sans(fen: str, choice: Choice, cls: MoveClass) -> set[str]:
    board = chess.Board(fen)
    return {board.san(m.move) for m in choice.moves if m.cls == cls}


KBNK = "8/6k1/4K3/6B1/8/8/5N2/8 w - - {clock} 1"


def test_kbnk_winning_moves_and_clock(prober: Prober) -> None:
    require_tables(prober, "KBNvK")
    fen = KBNK.format(clock=0)
    choice = ranked(prober, fen)
    assert (choice.root_wdl, choice.root_dtz) == (2, 20)
    fastest = {"Kf5", "Be7", "Bf6+", "Ne4", "Nh3", "Nd3"}
    assert {chess.Board(fen).san(m.move) for m in choice.moves if m.distance == 20} == fastest
    # At clock 79 exactly these still win; the rest are cursed now.
    at79 = ranked(prober, KBNK.format(clock=79))
    assert sans(KBNK.format(clock=79), at79, W) == fastest and at79.result == W
    # At clock 81 the position is a 50-move draw (cursed), and one of the fastest is still played.
    at81 = ranked(prober, KBNK.format(clock=81))
    assert at81.result == CW and at81.root_wdl == 2
    assert chess.Board(KBNK.format(clock=81)).san(at81.best.move) in fastest
    assert choose(chess.Board(KBNK.format(clock=81)), prober).best.cls == CW


def test_longest_resistance_and_the_clock(prober: Prober) -> None:
    require_tables(prober, "KBNvK")
    fen = "8/2K5/4B3/3N4/8/8/4k3/8 b - - {clock} 1"
    choice = ranked(prober, fen.format(clock=0))
    assert (choice.root_wdl, choice.root_dtz, choice.result) == (-2, -53, L)
    assert chess.Board(fen.format(clock=0)).san(choice.best.move) == "Kd3"
    at48 = ranked(prober, fen.format(clock=48))
    assert sans(fen.format(clock=48), at48, BL) == {"Kd3"} and at48.result == BL


def test_cursed_win_and_blessed_loss(prober: Prober) -> None:
    require_tables(prober, "KBBvKN")
    cursed = ranked(prober, "7b/8/6b1/8/5Nk1/4K3/8/8 b - - 0 1")
    assert (cursed.root_wdl, cursed.root_dtz, cursed.result) == (1, 109, CW)
    white = "7b/8/6b1/8/5Nk1/4K3/8/8 w - - 0 1"
    draw = ranked(prober, white)
    assert draw.root_wdl == 0 and sans(white, draw, D) == {"Nxg6"}
    blessed = ranked(prober, "7b/7b/8/8/5Nk1/4K3/8/8 w - - 0 1")
    assert (blessed.root_wdl, blessed.root_dtz, blessed.result) == (-1, -108, BL)
    # Without the 50-move rule, cursed wins are wins and blessed losses losses.
    assert ranked(prober, "7b/8/6b1/8/5Nk1/4K3/8/8 b - - 0 1", rule50=False).result == W
    assert ranked(prober, "7b/7b/8/8/5Nk1/4K3/8/8 w - - 0 1", rule50=False).result == L


@pytest.mark.parametrize("fen, move", [
    ("8/8/8/k2Pp3/8/8/8/4K3 w - e6 0 2", "dxe6"),
    ("8/8/8/8/2pP4/2K5/4k3/8 b - d3 0 1", "cxd3"),
])
def test_en_passant_is_the_only_win(prober: Prober, fen: str, move: str) -> None:
    require_tables(prober, "KPvKP")
    choice = ranked(prober, fen)
    assert sans(fen, choice, W) == {move} and choice.result == W


def test_mate_and_stalemates(prober: Prober) -> None:
    fen = "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1"
    choice = ranked(prober, fen)
    board = chess.Board(fen)
    assert board.san(choice.best.move) == "Qf8#" and choice.best.checkmate and choice.best.distance == 1
    stalemates = {board.san(m.move) for m in choice.moves if m.stalemate}
    assert stalemates == {"Qf7", "Qc4"}
    assert all(m.cls == D for m in choice.moves if m.stalemate)


def test_drawn_rook_ending(prober: Prober) -> None:
    fen = "8/5k1r/8/8/6K1/8/8/R7 w - - 0 1"
    choice = ranked(prober, fen)
    assert choice.result == D
    assert {chess.Board(fen).san(m.move) for m in choice.moves if m.cls.losing} == {"Rg1", "Rh1"}


def test_not_covered(prober: Prober) -> None:
    answer = choose(chess.Board("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1"), prober)
    assert isinstance(answer, NotCovered) and answer.reason is Reason.CASTLING
    bare = choose(chess.Board("8/8/8/4k3/8/8/8/4K3 w - - 0 1"), Prober(None))
    assert isinstance(bare, Choice) and bare.result == D


def test_c99_non_zeroing_moves_draw(prober: Prober) -> None:
    fen = "8/8/8/4k3/8/8/4K3/4R3 w - - 99 80"
    choice = ranked(prober, fen)
    assert choice.result == D and all(m.cls == D for m in choice.moves)


@pytest.mark.parametrize("clock, win, loss", [(99, W, L), (100, CW, BL), (150, CW, BL)])
def test_zeroing_from_clock_100_comes_too_late(prober: Prober, clock: int, win: MoveClass, loss: MoveClass) -> None:
    """At clock 99 a capture still resets the count before the draw can be claimed; from 100 the draw is already
    there, so the capture's win is cursed and the losing side's pawn push blessed (as Lichess and Stockfish rank
    them); a quiet move is a draw either way."""
    winning = ranked(prober, f"8/8/8/4k3/8/8/8/rQK5 w - - {clock} 80")
    assert winning.result == win and winning.moves[0].uci == "b1a1" and winning.moves[0].cls == win
    assert all(m.cls == D for m in winning.moves[1:])
    losing = ranked(prober, f"k7/8/8/8/8/p7/8/1Q2K3 b - - {clock} 80")
    push = next(m for m in losing.moves if m.uci == "a3a2")
    assert push.cls == loss and losing.result == D


def test_threefold_in_history(prober: Prober) -> None:
    fen = "8/8/8/4k3/8/8/4K3/4R3 w - - 0 1"
    shuffle = ["e2d2", "e5d5", "d2e2", "d5e5"] * 2
    choice = ranked(prober, fen, shuffle)
    repeat = next(m for m in choice.moves if m.uci == "e2d2")
    assert repeat.cls == D and choice.best.cls == W and choice.best.uci != "e2d2"
    board = chess.Board(fen)
    for uci in shuffle:
        board.push_uci(uci)
    assert has_repeated(board) and not has_repeated(chess.Board(fen))


def test_a_win_that_lets_the_loser_repeat_a_third_time_is_a_draw(prober: Prober) -> None:
    """After Qb1 the position after Kh8 would stand for the third time: Black replies so and claims. The move is
    a draw; the other winning moves stay wins (and a loser's moves are not judged by what the winner may repeat)."""
    fen = "7k/8/8/8/8/8/8/KQ6 w - - 0 1"
    history = ["b1c1", "h8g8", "c1b1", "g8h8", "b1c2", "h8g7"]
    choice = ranked(prober, fen, history)
    back = next(m for m in choice.moves if m.uci == "c2b1")
    assert back.cls == D and back.distance == 0
    assert choice.best.cls == W and sum(m.cls == D for m in choice.moves) < len(choice.moves) // 2
    fresh = ranked(prober, "7k/8/8/8/8/8/8/KQ6 w - - 0 1", ["b1c1", "h8g8", "c1c2", "g8h8"])
    assert next(m for m in fresh.moves if m.uci == "c2b1").cls == W  # no position there has occurred twice


def test_a_deadline_never_trades_a_win_for_a_draw(prober: Prober) -> None:
    # With no time for DTZ probes, only the queen moves that hang it are exact (draws); the
    # unresolved winning moves are still preferred.
    board = chess.Board("8/8/8/4k3/8/8/8/KQ6 w - - 0 1")
    rushed = choose(board, prober, deadline=0.0)
    assert isinstance(rushed, Choice) and not rushed.complete
    assert rushed.best.worst >= CW and rushed.result >= CW
    assert prober.probe_wdl(_after(board, rushed.best.move)) == -2  # the move keeps the win
    # Given time, the choice is complete and exact.
    relaxed = choose(board, prober)
    assert relaxed.complete and relaxed.best.exact and relaxed.result == W


def _after(board: chess.Board, move: chess.Move) -> chess.Board:
    child = board.copy()
    child.push(move)
    return child


def test_classify_boundaries() -> None:
    assert classify(30, 99) == W and classify(30, 100) == MW and classify(30, 101) == CW and classify(101, 101) == CW
    assert classify(-30, 99) == L and classify(-30, 100) == ML and classify(-30, 101) == BL
    assert classify(0, 0) == D
    assert classify(30, 120, rule50=False) == W and classify(-130, 130, rule50=False) == L


def _random_boards(prober: Prober, count: int, seed: int) -> list[chess.Board]:
    materials = [m for m in ("KQvK", "KRvK", "KPvK", "KQvKR", "KRvKB", "KPvKP", "KBNvK", "KRPvKR", "KBPvKB",
                             "KQPvKQ", "KBBvKN", "KNNvKP")
                 if chess.syzygy.normalize_tablename(m) in prober.files.dtz]
    rng = random.Random(seed)
    boards = []
    while len(boards) < count:
        board = random_position(rng.choice(materials), rng)
        board.halfmove_clock = rng.randrange(100)
        if any(board.legal_moves):
            boards.append(board)
    return boards


def test_property_best_class_and_50_move_safety(prober: Prober) -> None:
    for board in _random_boards(prober, 300, seed=11):
        economical = choose(board, prober)
        complete = choose(board, prober, full=True)
        assert isinstance(economical, Choice) and isinstance(complete, Choice)
        best = economical.best
        # The chosen move is of the best class (the complete ranking's first class); the economical
        # ranking (root DTZ, candidates refuted by one reply) picks the very move the complete one does.
        assert best.exact and best.cls == complete.moves[0].cls == economical.result, board.fen()
        assert best.move == complete.best.move, board.fen()
        assert all(best.cls >= m.cls for m in complete.moves)
        # A WIN is never chosen when its 50-move distance exceeds 99, and the safest one is chosen:
        # a mate, else the smallest 50-move distance of all the winning moves.
        if best.cls == W:
            assert best.distance + (0 if best.checkmate or best.zeroing else board.halfmove_clock) <= 99
            wins = [m for m in complete.moves if m.cls == W]
            assert best.checkmate or not any(m.checkmate for m in wins), board.fen()
            assert best.checkmate or best.s == min(m.s for m in wins), board.fen()
        # The chosen move of a drawn root never loses.
        if economical.result == D:
            assert not best.cls.losing
        # A single move's rank agrees with the whole ranking.
        assert rank_move(board, best.move, prober).cls == best.cls


@pytest.mark.parametrize("fen", [
    "8/6k1/4K3/6B1/8/8/5N2/8 w - - 0 1",          # KBNvK, DTZ 20
    "k7/8/8/8/8/8/8/2KB1N2 w - - 0 1",            # KBNvK: the lone king in the wrong corner
])
def test_kbnk_converted_against_the_defender(prober: Prober, fen: str) -> None:
    require_tables(prober, "KBNvK")
    board = chess.Board(fen)
    assert prober.probe_wdl(board) == 2
    player = Player(prober, options=PlayerOptions(faster_mate_nodes=3000))
    record = play_game(board, PlayerEngine(player, chess.engine.Limit(nodes=3000)), TablebaseAgent(prober),
                       max_plies=200)
    assert (record.result, record.termination) == ("1-0", "checkmate")
    assert all(not m.comment or "CURSED" not in m.comment for m in record.moves)


@pytest.mark.slow
def test_krpkr_converted_against_the_defender(prober: Prober) -> None:
    require_tables(prober, "KRPvKR")
    rng = random.Random(5)
    converted = 0
    starts = []
    while len(starts) < 2:
        board = random_position("KRPvKR", rng, turn=chess.WHITE)
        if prober.probe_wdl(board) == 2 and prober.probe_dtz(board) > 20:
            starts.append(board)
    for board in starts:
        player = Player(prober, options=PlayerOptions(faster_mate_nodes=2000))
        record = play_game(board, PlayerEngine(player, chess.engine.Limit(nodes=2000)), TablebaseAgent(prober),
                           max_plies=300, prober=prober)
        converted += record.result == "1-0"
        assert record.termination != "50-move rule"
    assert converted == len(starts)


def test_at_clock_99_the_draws_that_would_still_win_come_first(prober: Prober) -> None:
    """Every quiet move draws by the 50-move rule here, but the rook left to be taken throws the win away if
    the draw is not claimed: the moves that would still win come first (they were in UCI order: Kd7 first), and
    the player plays one."""
    board = chess.Board("4K3/8/7k/6R1/8/8/8/8 w - - 99 1")
    for full in (False, True):
        moves = choose(board, prober, full=full).moves
        assert {m.cls for m in moves} == {MoveClass.DRAW}
        wdls = [m.wdl for m in moves]
        assert wdls == sorted(wdls, reverse=True) and wdls[0] == 2 and 0 in wdls
    decision = Player(prober).decide(board)
    after = board.copy()
    after.push(decision.move)
    assert prober.probe_wdl(after) == -2, board.san(decision.move)
