"""Under the clock: a tablebase root always plays the best class, depth 1 is always searched,
the TT respects the halfmove clock, and the player never reports a score no search produced."""

from __future__ import annotations

import random
import time

import chess
import pytest

from chess_endgame.board import random_position
from chess_endgame.chooser import Choice, choose
from chess_endgame.engine.player import Player
from chess_endgame.engine.result import Limits
from chess_endgame.engine.search import EXACT, MATE, MATE_BOUND, TB_BOUND, TB_WIN, Searcher, load_compiled
from chess_endgame.engine.timeman import budget
from chess_endgame.tablebase.prober import Prober

MIDDLEGAME = "2rq1rk1/pp1bppbp/3p1np1/4n3/3NP3/1BN1BP2/PPPQ2PP/2KR3R w - - 0 12"


def clock_limits(time_left: int, overhead: int = 10) -> Limits:
    """The limits UCI sets for ``go wtime time_left`` (sudden death)."""
    b = budget(time_left, 0, None, overhead)
    now = time.monotonic()
    return Limits(soft_deadline=now + b.soft / 1000, deadline=now + b.hard / 1000,
                  clock_deadline=now + b.clock / 1000)


def test_a_tablebase_root_under_a_short_clock_plays_the_only_win(prober: Prober) -> None:
    board = chess.Board("8/8/3k4/8/8/8/4r3/K5Q1 w - - 90 60")
    # Load the compiled prober and read the tables' headers before the clock starts, as the UCI engine's warm-up
    # does before its readyok: run first in a process, the test otherwise spent its 200 ms clock on them (0.5-0.8 s)
    # and got an incomplete ranking.
    Player(prober).decide(board)
    for time_left in (200, 500):
        prober.clear_cache()
        decision = Player(prober).decide(board, clock_limits(time_left))
        assert decision.move == chess.Move.from_uci("g1d1"), time_left


def test_sweep_tablebase_roots_under_short_clocks_keep_the_best_class(prober: Prober) -> None:
    """Every shared material, clocks 0..99, a 150 ms game clock: always the complete ranking's best class."""
    rng = random.Random(7)
    materials = sorted(prober.files.wdl)
    player = Player(prober)
    checked = 0
    for material in materials:
        for _ in range(2):
            board = random_position(material, rng)
            board.halfmove_clock = rng.randrange(100)
            if not any(board.legal_moves):
                continue
            prober.clear_cache()
            decision = player.decide(board, clock_limits(150))
            complete = choose(board, prober, full=True)
            assert isinstance(complete, Choice)
            assert decision.cls == complete.moves[0].cls, board.fen()
            checked += 1
    assert checked >= 1.8 * len(materials)  # two a material, less the few without a legal move


def test_depth_one_is_always_finished_before_a_deadline() -> None:
    board = chess.Board(MIDDLEGAME)
    searched = Searcher().search(board, Limits(depth=1))
    for time_left in (400, 1000):  # a hard stop of a few ms, a clock with room for depth 1 even on a loaded CI
        result = Searcher().search(board, clock_limits(time_left))
        # Depth 1 complete: its score stands, unless a deeper, unfinished iteration changed the move (then the score
        # that move proved, a lower bound).
        changed = result.best_move != result.lines[0][1][0]
        assert result.depth >= 1 and result.score is not None, time_left
        assert result.bound == ("lowerbound" if changed else None), time_left
    # A deadline already past, and a move time of 1 ms: still a full depth 1 (the compiled search may
    # also get into depth 2 within the millisecond and play a move that iteration proved better).
    now = time.monotonic()
    for limits in (Limits(deadline=now - 1, soft_deadline=now - 1), Limits(movetime=1)):
        result = Searcher().search(board, limits)
        assert result.depth >= 1 and result.score is not None and result.best_move in board.legal_moves
        if result.depth == 1:
            assert result.lines[0][1][0] == searched.best_move  # depth 1 itself is the same search


def test_the_clock_itself_is_never_overrun() -> None:
    board = chess.Board(MIDDLEGAME)
    load_compiled()  # as the UCI engine does at start-up: deadlines taken before a search don't pay for set-up
    start = time.monotonic()
    result = Searcher().search(board, Limits(clock_deadline=start + 0.002, deadline=start))
    assert time.monotonic() - start < 0.15  # 2 ms asked; a machine 3x slower than this one still meets it
    assert result.best_move in board.legal_moves


@pytest.mark.parametrize("nodes", [1, 2, 5, 40])
def test_no_score_that_no_search_produced(nodes: int) -> None:
    """A node limit inside depth 1: no score, or the score a searched root move proved (a lower bound)."""
    board = chess.Board(MIDDLEGAME)
    result = Searcher().search(board, Limits(nodes=nodes))
    assert result.nodes == nodes and result.depth == 0 and result.best_move in board.legal_moves
    if result.score is not None:
        assert result.bound == "lowerbound"
        board.push(result.best_move)
        reference = Searcher().search(board, Limits(depth=1))  # the reply's view after that move
        assert reference.score is not None


def test_sweep_small_limits_answer_with_a_searched_move() -> None:
    rng = random.Random(3)
    fens = [MIDDLEGAME, "8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1", chess.STARTING_FEN,
            "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4"]
    for fen in fens:
        board = chess.Board(fen)
        for _ in range(4):
            limits = rng.choice([clock_limits(rng.randrange(150, 400)), Limits(movetime=rng.randrange(1, 20))])
            result = Searcher().search(board, limits)
            assert result.depth >= 1 and result.score is not None, (fen, limits)
            # An exact score, or (an unfinished iteration found another move) a lower bound that move proved.
            changed = result.best_move != result.lines[0][1][0]
            assert result.bound == ("lowerbound" if changed else None), (fen, limits)


# -- the transposition table and the halfmove clock --------------------------------------------

def _tt_probe_at(fen: str, clock: int, stored_depth: int, stored_score: int) -> int:
    """The value a non-PV node returns for ``fen`` at halfmove ``clock`` when the TT holds an
    exact ``stored_score`` for it (stored as a search at clock 0 stores it) to ``stored_depth``."""
    import numpy as np

    from chess_endgame.engine.core.position import PLY
    from chess_endgame.engine.core.transposition import NO_STATIC
    from chess_endgame.engine.core.tree import search
    from chess_endgame.engine.core.treestate import STOPPED, tt_store

    board = chess.Board(fen)
    board.halfmove_clock = clock
    searcher = Searcher()
    searcher.search(board, Limits(depth=1))  # sets the searcher's arrays up for this root
    tree = searcher._tree
    tree.counters[STOPPED] = 0
    searcher.tt.clear()
    key = tree.keys[tree.state[PLY]]  # the root's key
    tt_store(tree, key, stored_depth, EXACT, stored_score, 0, NO_STATIC)
    return int(search(tree, 3, -MATE, MATE, 0, 0, 0, 1, np.uint64(0), 0, searcher._probe_callback,
                           searcher._check_callback))


def test_a_mate_stored_at_clock_0_is_not_reused_where_the_50_move_rule_forbids_it() -> None:
    """Exactly the case: a mate in 3 (5 plies, no zeroing move) stored at clock 0, probed at clock 96."""
    fen = "5Q2/8/4K3/7k/8/8/8/8 w - - 0 1"
    fresh = Searcher().search(chess.Board(fen), Limits(depth=8))
    assert fresh.score is not None and fresh.score.mate() is not None and fresh.score.mate() <= 4
    assert _tt_probe_at(fen, 0, 10, MATE - 5) == MATE - 5  # the stored mate serves at clock 0
    late = _tt_probe_at(fen, 96, 10, MATE - 5)  # no cutoff near the limit: searched, no mate
    assert late < MATE_BOUND
    # Below clock 90 cutoffs happen, but a mate farther than the 50-move rule allows is downgraded.
    assert _tt_probe_at(fen, 89, 10, MATE - 15) == MATE_BOUND - 1
    assert _tt_probe_at(fen, 89, 10, TB_WIN - 15) == TB_BOUND - 1
    assert _tt_probe_at(fen, 80, 10, TB_WIN - 15) == TB_WIN - 15


def test_sweep_a_shared_tt_never_claims_what_the_50_move_rule_forbids(prober: Prober) -> None:
    """Search 5-piece positions at clock 0 (TB probes inside the tree at 4 pieces), then the same
    positions at late clocks with that TT: every mate or tablebase win reported is reachable before
    the 50-move draw (a mate in n moves within 100 - clock plies, a TB win at ply p with p <= 100 - clock)."""
    small = Prober(prober.files.directories, probe_limit=4)
    rng = random.Random(5)
    for material in ("KQvKR", "KRPvKR", "KBPvKB"):
        for _ in range(3):
            board = random_position(material, rng)
            shared = Searcher(prober=small)
            shared.search(board, Limits(depth=4))
            for clock in (90, 95, 98):
                board.halfmove_clock = clock
                score = shared.search(board, Limits(depth=4)).score
                assert score is not None
                if score.mate() is not None:
                    assert 2 * abs(score.mate()) - 1 <= 100 - clock, (board.fen(), clock, score)
                elif abs(score.score()) >= TB_BOUND:
                    assert TB_WIN - abs(score.score()) <= 100 - clock, (board.fen(), clock, score)
            board.halfmove_clock = 0


def test_value_from_tt_downgrades_unreachable_mates_and_tb_scores() -> None:
    from chess_endgame.engine.search import from_tt as _from_tt
    from chess_endgame.engine.search import to_tt as _to_tt
    # A mate in 7 plies from a node at ply 3: fine at clock 0, not at clock 95.
    stored = _to_tt(MATE - 10, 3)
    assert _from_tt(stored, 3, 0) == MATE - 10
    assert _from_tt(stored, 3, 95) == MATE_BOUND - 1
    assert _from_tt(-stored, 3, 95) == -MATE_BOUND + 1
    stored = _to_tt(TB_WIN - 12, 2)  # a TB win 10 plies from the node
    assert _from_tt(stored, 2, 80) == TB_WIN - 12
    assert _from_tt(stored, 2, 91) == TB_BOUND - 1
    assert _from_tt(-stored, 2, 91) == -TB_BOUND + 1


def test_the_time_budget_plans_for_the_moves_left_before_the_tables() -> None:
    from chess_endgame.engine.timeman import DEFAULT_MOVES_TO_GO, moves_left

    assert moves_left(32, 0) == DEFAULT_MOVES_TO_GO  # no tables: the usual horizon
    assert moves_left(20, 5) == DEFAULT_MOVES_TO_GO
    assert moves_left(6, 5) < moves_left(8, 5) < moves_left(10, 5) <= DEFAULT_MOVES_TO_GO
    assert moves_left(8, 7) == moves_left(6, 5)  # what counts is the distance to the tables' reach
    near, far = budget(10_000, 100, horizon=moves_left(6, 5)), budget(10_000, 100, horizon=moves_left(14, 5))
    assert near.soft > far.soft and near.hard <= 10_000 / 4 and near.clock == far.clock
    assert budget(10_000, 100, moves_to_go=20, horizon=5) == budget(10_000, 100, moves_to_go=20)  # the GUI says


def test_the_soft_budget_stretches_while_the_best_move_changes_or_the_score_falls() -> None:
    from chess_endgame.engine.timeman import STABLE_DEPTHS, Stretch

    steady = Stretch()
    shares = [steady.after_iteration(depth, "e2e4", 20) for depth in range(1, STABLE_DEPTHS + 3)]
    assert shares[:STABLE_DEPTHS] == [1.0] * STABLE_DEPTHS  # as planned while the move is young
    assert shares[-1] < 1.0  # a best move kept for many iterations: less time

    changing = Stretch()
    for depth, move in enumerate(["e2e4", "d2d4", "e2e4", "d2d4"], start=1):
        share = changing.after_iteration(depth, move, 20)
    assert share > 1.5  # three changes in a row
    assert changing.after_iteration(5, "d2d4", 20) < share  # each change counts less as iterations pass

    falling, rising = Stretch(), Stretch()
    for depth in range(1, 7):
        fall = falling.after_iteration(depth, "e2e4", 20 - 40 * depth)
        rise = rising.after_iteration(depth, "e2e4", 20 + 40 * depth)
    assert fall > 1.0 > rise

    decided = Stretch()
    for depth, move in enumerate(["e2e4", "d2d4", "e2e4"], start=1):
        assert decided.after_iteration(depth, move, 19_990, decided=True) == 1.0  # a mate or a table: as planned


def test_the_search_starts_another_iteration_only_within_half_the_stretched_soft_budget() -> None:
    from chess_endgame.engine.timeman import Stretch

    class Fixed(Stretch):
        def __init__(self, share: float) -> None:
            super().__init__()
            self.share = share

        def after_iteration(self, *args: object, **kwargs: object) -> float:
            return self.share

    searcher = Searcher()
    now = time.monotonic()
    searcher.start = now - 0.3  # 0.3 s searched of a 1 s soft budget, 2 s hard
    searcher.limits = Limits(soft_deadline=now + 0.7, deadline=now + 1.7)
    done = {}
    for share in (0.5, 1.0, 2.5):
        searcher._stretch = Fixed(share)
        done[share] = searcher._done_after_iteration(9, 30, 20, chess.Move.from_uci("e2e4"))
    assert done == {0.5: True, 1.0: False, 2.5: False}
    # 1.1 s searched of a 1 s soft budget and a 2 s hard stop: stretched 2.5 times the soft budget would be 2.5 s,
    # but never more than the hard stop, whose half has passed.
    now = time.monotonic()
    searcher.start = now - 1.1
    searcher.limits = Limits(soft_deadline=now - 0.1, deadline=now + 0.9)
    assert searcher._done_after_iteration(9, 30, 20, chess.Move.from_uci("e2e4"))


def test_a_new_best_move_of_an_unfinished_iteration_brings_its_own_score() -> None:
    """Stopped inside an iteration that proved another move better, the result plays that move with the score it
    proved, as a lower bound; the last complete iteration's score belonged to its own move and PV."""
    board = chess.Board("8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1")
    changed = 0
    for nodes in range(3000, 9000, 97):
        result = Searcher().search(board, Limits(nodes=nodes))
        completed_score, completed_pv = result.lines[0]
        if result.best_move != completed_pv[0]:
            changed += 1
            assert result.bound == "lowerbound" and result.pv[0] == result.best_move, nodes
        elif result.bound is None:
            assert result.score == completed_score and result.pv[0] == completed_pv[0], nodes
    assert changed, "no node limit stopped an iteration after it changed its mind: choose other limits"
