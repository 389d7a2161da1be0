"""The search board against python-chess: perft, tactical moves, FENs and Zobrist keys."""

from __future__ import annotations

import random

import chess
import pytest

from chess_endgame.searchboard import SearchBoard, decode, encode, zobrist

PERFT = [
    # (FEN, depth, python-chess's node count is the reference)
    (chess.STARTING_FEN, 3),
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 2),   # castling, pins
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 3),                              # en passant pins
    ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 2),       # promotions
    ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 2),
    ("8/8/8/2k5/2pP4/8/B7/4K3 b - d3 0 3", 3),                                      # en passant into check
    ("3k4/8/8/8/7b/8/5P2/4KR2 w - - 0 1", 3),                                       # check, pinned pawn
    ("8/8/8/8/k2Pp2Q/8/8/3K4 b - d3 0 1", 3),                                       # ep capture exposing king
]


def perft(board: SearchBoard, reference: chess.Board, depth: int) -> int:
    """Count leaves while checking every node's moves, tactical moves and checkers."""
    if depth == 0:
        return 1
    checkers = board.checkers()
    assert checkers == reference.checkers_mask()
    legal = {encode(m) for m in reference.legal_moves}
    moves = board.moves(checkers)
    assert len(moves) == len(set(moves)) and set(moves) == legal, reference.fen()
    tactical = set(board.moves(checkers, tactical=True))
    expected = legal if checkers else {
        encode(m) for m in reference.legal_moves
        if (reference.is_capture(m) and m.promotion in (None, chess.QUEEN)) or m.promotion == chess.QUEEN}
    assert tactical == expected, reference.fen()
    count = 0
    for code in moves:
        board.push_code(code)
        reference.push(decode(code))
        count += perft(board, reference, depth - 1)
        reference.pop()
        board.pop()
    return count


@pytest.mark.parametrize("fen, depth", PERFT)
def test_perft_matches_python_chess(fen: str, depth: int) -> None:
    reference = chess.Board(fen)
    expected = sum(1 for _ in _leaves(reference, depth))
    assert perft(SearchBoard(fen), chess.Board(fen), depth) == expected


def _leaves(board: chess.Board, depth: int):
    if depth == 0:
        yield 1
        return
    for move in list(board.legal_moves):
        board.push(move)
        yield from _leaves(board, depth - 1)
        board.pop()


@pytest.mark.parametrize("fen", [fen for fen, _ in PERFT])
def test_random_games_keep_fen_and_key(fen: str) -> None:
    rng = random.Random(fen)
    board, reference = SearchBoard(fen), chess.Board(fen)
    keys = []
    for _ in range(200):
        moves = board.moves(board.checkers())
        if not moves:
            break
        code = rng.choice(moves)
        keys.append(board.zobrist)
        board.push_code(code)
        reference.push(decode(code))
        assert board.fen() == reference.fen()
        assert board.zobrist == zobrist(reference)
        assert board._transposition_key() == reference._transposition_key()
    while keys:  # unmaking restores every key
        board.pop()
        assert board.zobrist == keys.pop()
    assert board.fen() == chess.Board(fen).fen()


def test_zobrist_distinguishes_what_python_hash_confuses() -> None:
    # A rook on a1 and on f8: 2**61 == 1 modulo 2**61 - 1, so Python's hash of the bitboard tuples agree.
    a = chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")
    b = chess.Board("4kR2/8/8/8/8/8/8/4K3 w - - 0 1")
    assert hash(a._transposition_key()) == hash(b._transposition_key())
    assert zobrist(a) != zobrist(b)


def test_useless_en_passant_square_does_not_change_the_key() -> None:
    with_ep = chess.Board("4k3/8/8/8/4P3/8/8/4K3 b - e3 0 1")
    without = chess.Board("4k3/8/8/8/4P3/8/8/4K3 b - - 0 1")
    assert zobrist(with_ep) == zobrist(without)
    capturable = chess.Board("4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1")
    assert zobrist(capturable) != zobrist(chess.Board("4k3/8/8/8/3pP3/8/8/4K3 b - - 0 1"))
