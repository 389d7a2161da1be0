"""chess_endgame.engine.player: the one Player service, at the tables and beyond them."""

from __future__ import annotations

import chess
import chess.pgn

from chess_endgame.chooser import MoveClass, choose
from chess_endgame.engine.player import Player, PlayerOptions
from chess_endgame.engine.result import Limits
from chess_endgame.tablebase.prober import Prober


def test_player_uses_tables_when_they_cover_the_root(prober: Prober) -> None:
    player = Player(prober)
    decision = player.decide(chess.Board("8/6k1/4K3/6B1/8/8/5N2/8 w - - 0 1"), Limits(nodes=2000))
    assert decision.source == "tablebase" and decision.cls == MoveClass.WIN and decision.distance == 20
    assert decision.score.score() == 20000 and decision.pv[0] == decision.move


def test_player_searches_beyond_the_tables(prober: Prober) -> None:
    decision = Player(prober).decide(chess.Board("8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1"), Limits(depth=3))
    assert decision.source == "search" and decision.not_covered is not None
    assert "8 pieces" in decision.not_covered.message and decision.depth == 3


def test_faster_mate_mode_finds_a_shorter_mate(prober: Prober) -> None:
    # KQPvK: pure DTZ play pushes the pawn (a winning zeroing move ranks first), which is slow; any
    # waiting move forces Kf8 and Qh8# follows: the search among the winning moves finds that mate.
    board = chess.Board("6k1/8/5K2/8/8/8/P7/7Q w - - 0 1")
    pure = Player(prober, options=PlayerOptions(faster_mate=False)).decide(board, Limits(nodes=5000))
    fast = Player(prober).decide(board, Limits(nodes=5000))
    assert pure.cls == fast.cls == MoveClass.WIN
    assert pure.move == chess.Move.from_uci("a2a3") and pure.score.score() == 20000
    assert fast.score.mate() == 2


def test_without_the_dtz_table_the_search_keeps_to_the_moves_that_keep_the_win(prober: Prober, tmp_path) -> None:
    """Only KNNvKB.rtbw (the WDL half, as `tablebases download --wdl-only` leaves it): the root cannot be ranked
    by DTZ, and a shallow search liked Kb4, a draw; as Stockfish's root_probe_wdl does, the search is kept to the
    moves of the best WDL (here Nd2+, the only win). searchmoves are kept to theirs."""
    import shutil

    from chess_endgame.tablebase.paths import with_embedded

    from .conftest import require_tables

    require_tables(prober, "KNNvKB")
    shutil.copy(prober.files.wdl["KNNvKB"], tmp_path)
    board = chess.Board("8/8/8/8/8/1K1N1N2/1b6/1k6 w - - 0 1")
    player = Player(Prober(with_embedded(str(tmp_path))))
    decision = player.decide(board, Limits(depth=3))
    assert decision.source == "search" and decision.move == chess.Move.from_uci("f3d2"), decision.move
    assert decision.not_covered is not None and "KNNvKB" in decision.not_covered.message
    restricted = player.decide(board, Limits(depth=3, searchmoves=[chess.Move.from_uci("b3b4"),
                                                                    chess.Move.from_uci("b3a4")]))
    assert restricted.move in (chess.Move.from_uci("b3b4"), chess.Move.from_uci("b3a4"))


def test_searchmoves_the_tables_cannot_rank_are_searched_not_left(prober: Prober, tmp_path) -> None:
    """Only KRPvKR.rtbw: the chooser ranks the root by its zeroing moves (e7, a win), but a listed king move
    needs the DTZ table; the listed moves are then searched, kept to the best WDL among them (Kf1 draws, Kd1
    loses the rook), and the move played is one of them, never the chooser's e7."""
    import shutil

    from chess_endgame.tablebase.paths import with_embedded

    from .conftest import require_tables

    require_tables(prober, "KRPvKR")
    shutil.copy(prober.files.wdl["KRPvKR"], tmp_path)
    player = Player(Prober(with_embedded(str(tmp_path))))
    board = chess.Board("8/8/4P3/8/8/2k5/r7/4K2R w - - 0 1")
    listed = [chess.Move.from_uci("e1f1"), chess.Move.from_uci("e1d1")]
    assert player.decide(board, Limits(nodes=2000)).move == chess.Move.from_uci("e6e7")
    decision = player.decide(board, Limits(nodes=2000, searchmoves=listed))
    assert decision.source == "search" and decision.move == chess.Move.from_uci("e1f1"), decision.move


def test_go_mate_at_a_table_root_searches_for_the_mate(prober: Prober) -> None:
    """``go mate N`` (Limits.mate): the search looks for the mate among the tables' best moves, as Stockfish's does,
    rather than the chooser answering at once with a DTZ move."""
    board = chess.Board("6k1/8/5K2/8/8/8/P7/7Q w - - 0 1")  # KQPvK: a waiting move, then Qh8#
    decision = Player(prober).decide(board, Limits(mate=2))
    assert decision.source == "search" and decision.score.mate() == 2
    # The mate may be any winning move's, not only those the chooser ranked exactly (a5-a6 zeroes at once).
    board = chess.Board("8/8/8/P7/7R/4K3/8/6k1 w - - 0 1")
    assert choose(board, prober).best.move == chess.Move.from_uci("a5a6")
    decision = Player(prober).decide(board, Limits(mate=2))
    assert decision.score.mate() == 2 and decision.move == chess.Move.from_uci("e3f3")
    # No mate in 1 here: the search goes on to its other limit, then the tables' move and verdict stand.
    board = chess.Board("8/8/4k3/8/8/3r4/8/Q3K3 w - - 0 1")
    best = {m.move for m in choose(board, prober, full=True).best_class_moves()}
    decision = Player(prober).decide(board, Limits(mate=1, nodes=20_000))
    assert decision.source == "tablebase" and decision.nodes >= 20_000 and decision.move in best
    assert decision.cls == MoveClass.WIN and decision.score.score() == 20000
