"""The compiled board (chess_endgame.engine.core.position) against python-chess: perft counts, and at every ply of
seeded random games the legal and tactical moves, checkers, Zobrist keys, repetitions, the arrays after
make and the round trip of make/unmake."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import chess
import chess.polyglot
import numpy as np
import pytest

from chess_endgame.bench.perft import python_perft
from chess_endgame.board import random_position
from chess_endgame.engine.core import position as core
from chess_endgame.engine.core.movegen import generate, perft
from chess_endgame.engine.result import encode

#: (FEN, depth): each feature named in the comment is reached within the depth.
PERFT = [
    (chess.STARTING_FEN, 3),
    # Kiwipete: castling both ways, pins, en passant, promotions
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 3),
    # CPW position 3: the horizontal en passant pin (b5 takes c6 with the king on a5 and a rook on h5)
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 4),
    # CPW position 4 and its mirror: checks, promotions with capture, castling out of reach
    ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 3),
    ("r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1", 3),
    # CPW position 5 and 6
    ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 3),
    ("r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", 3),
    # en passant: the capturing pawn pinned along the rank (king, both pawns, rook on one rank)
    ("8/8/8/KPp4r/8/8/8/6k1 w - c6 0 1", 4),
    ("8/8/8/8/k2Pp2Q/8/8/3K4 b - d3 0 1", 4),
    # en passant: the capturing pawn pinned along a diagonal
    ("8/5B2/8/8/2pP4/1k6/8/7K b - d3 0 1", 4),
    # en passant in check: the double push uncovered a check (the capture does not help) ...
    ("8/8/7k/8/3Pp3/8/8/2B1K3 b - d3 0 1", 4),
    # ... and the pushed pawn gives check (the capture takes the checker)
    ("8/8/8/2k5/3Pp3/8/8/4K3 b - d3 0 1", 4),
    # en passant that gives check, and an en passant square nobody can use
    ("8/8/1k6/2b5/2pP4/8/5K2/8 b - d3 0 1", 4),
    ("3k4/3p4/8/K1P4r/8/8/8/8 b - - 0 1", 4),
    ("8/8/4k3/8/2p5/8/B2P2K1/8 w - - 0 1", 4),
    # castling: giving check, both sides, prevented by attacked squares, rook attacked (still legal)
    ("5k2/8/8/8/8/8/8/4K2R w K - 0 1", 4),
    ("3k4/8/8/8/8/8/8/R3K3 w Q - 0 1", 4),
    ("r3k2r/1b4bq/8/8/8/8/7B/R3K2R w KQkq - 0 1", 3),
    ("r3k2r/8/3Q4/8/8/5q2/8/R3K2R b KQkq - 0 1", 3),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", 3),
    ("r3k2r/8/8/8/8/8/6p1/R3K2R b KQkq - 0 1", 3),
    # promotions: out of check, giving check, under-promotion giving check, many at once
    ("2K2r2/4P3/8/8/8/8/8/3k4 w - - 0 1", 4),
    ("4k3/1P6/8/8/8/8/K7/8 w - - 0 1", 4),
    ("8/P1k5/K7/8/8/8/8/8 w - - 0 1", 4),
    ("n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1", 3),
    # discovered check; stalemate and mate in the tree
    ("8/8/1P2K3/8/2n5/1q6/8/5k2 b - - 0 1", 4),
    ("K1k5/8/P7/8/8/8/8/8 w - - 0 1", 5),
    ("8/k1P5/8/1K6/8/8/8/8 w - - 0 1", 5),
    ("8/8/2k5/5q2/5n2/8/5K2/8 b - - 0 1", 3),
    # double check (rook and knight): only the king moves
    ("4k3/8/8/8/8/5n2/8/r3K3 w - - 0 1", 4),
]

#: Materials of the random endgame starts (pawns: promotions; no castling, no en passant at the start).
ENDGAMES = ("KPvK", "KPPvKP", "KRPvKR", "KQvKR", "KRPPvKRP", "KBNPvKNP", "KQPvKQ")
#: Openings and middlegames of the random games (castling rights, en passant).
STARTS = (chess.STARTING_FEN, PERFT[1][0], PERFT[3][0], PERFT[5][0], PERFT[6][0],
          "rnbqkbnr/pp1p1ppp/8/2pPp3/8/8/PPP1PPPP/RNBQKBNR w KQkq c6 0 3")


def buffer() -> np.ndarray:
    return np.zeros(core.STACK * 256, dtype=np.int64)


def snapshot(position: core.Position) -> list[np.ndarray]:
    """What make/unmake must give back: bitboards, mailbox, state and the keys up to the current position
    (the undo stack and the keys above it are scratch space)."""
    return [position.bb.copy(), position.mailbox.copy(), position.state.copy(),
            position.keys[:position.state[core.PLY] + 1].copy()]


def same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_perft_positions_cover_the_issue() -> None:
    assert len(PERFT) >= 20
    assert all(chess.Board(fen).is_valid() for fen, _ in PERFT)


@pytest.mark.parametrize(("fen", "depth"), PERFT)
def test_perft_equals_python_chess(fen: str, depth: int) -> None:
    position = core.Position(chess.Board(fen))
    before = snapshot(position)
    assert perft(*position.arrays(), depth, buffer()) == python_perft(chess.Board(fen), depth)
    assert same(snapshot(position), before)


def castling_bits(board: chess.Board) -> int:
    rights = board.clean_castling_rights()
    return sum(bit for bit, corner in ((1, chess.H1), (2, chess.A1), (4, chess.H8), (8, chess.A8))
               if rights & chess.BB_SQUARES[corner])


def tactical_reference(board: chess.Board) -> set[int]:
    """Captures (en passant included) without under-promotions, and queen promotions; every move in check."""
    if board.is_check():
        return {encode(m) for m in board.legal_moves}
    return {encode(m) for m in board.legal_moves
            if m.promotion == chess.QUEEN or (board.is_capture(m) and not m.promotion)}


def tactical(board: chess.Board) -> set[int]:
    position = core.Position(board)
    out = np.zeros(256, dtype=np.int64)
    n = generate(position.bb, position.mailbox, position.state, np.uint64(core.checkers(position.bb,
                      position.state)), out, 0, True)
    return set(out[:n].tolist())


def test_tactical_moves_include_queen_promotion_pushes() -> None:
    board = chess.Board("8/2K3P1/8/8/8/8/8/4k3 w - - 1 4")
    assert tactical(board) == {encode(chess.Move.from_uci("g7g8q"))}
    board = chess.Board("1n6/2P5/8/8/8/8/k7/4K3 w - - 0 1")
    assert tactical(board) == {encode(chess.Move.from_uci(m)) for m in ("c7c8q", "c7b8q")}


def repetition_reference(keys: list[int], halfmove_clock: int, root: int) -> bool:
    """The last position of ``keys`` (the game since its start) repeats one since index ``root``, or two
    before it, within the positions since the last zeroing move."""
    p = len(keys) - 1
    earlier = [i for i in range(max(0, p - halfmove_clock), p) if keys[i] == keys[p]]
    return any(i >= root for i in earlier) or len(earlier) >= 2


def check_ply(board: chess.Board, position: core.Position, game_keys: list[int], rng: random.Random) -> int:
    """Every check at one ply; returns how many of the roots tried found a repetition."""
    bb, mailbox, state, keys, undo = position.arrays()
    where = board.fen()
    assert np.array_equal(bb, core.bitboards(board)), where
    assert [mailbox[s] for s in range(64)] == [
        0 if (p := board.piece_at(s)) is None else 8 * p.color + p.piece_type for s in range(64)], where
    assert (state[core.TURN], state[core.CASTLING], state[core.HALFMOVE]) == (
        int(board.turn), castling_bits(board), board.halfmove_clock), where
    assert state[core.EP] == (-1 if board.ep_square is None else board.ep_square), where
    key = chess.polyglot.zobrist_hash(board)
    assert int(keys[state[core.PLY]]) == key == int(core.key_of(bb, mailbox, state)), where
    check = core.checkers(bb, state)
    assert check == int(board.checkers()), where
    out = np.zeros(256, dtype=np.int64)
    n = generate(bb, mailbox, state, np.uint64(check), out, 0, False)
    assert len(set(out[:n])) == n and set(out[:n].tolist()) == {encode(m) for m in board.legal_moves}, where
    n = generate(bb, mailbox, state, np.uint64(check), out, 0, True)
    assert len(set(out[:n])) == n and set(out[:n].tolist()) == tactical_reference(board), where
    found = 0
    for root in {0, len(game_keys) - 1, rng.randrange(len(game_keys))}:
        state[core.ROOT] = root
        expected = repetition_reference(game_keys, board.halfmove_clock, root)
        assert core.is_repetition(state, keys) == expected, (where, root)
        found += expected
    return found


def play_game(board: chess.Board, rng: random.Random, plies: int) -> tuple[int, int]:
    """Random moves (often taking back one's own last move, so that positions repeat) with every check of
    :func:`check_ply` at every ply; returns the plies played and the repetitions found."""
    position = core.Position(board)
    arrays = position.arrays()
    state = position.state
    game_keys = [chess.polyglot.zobrist_hash(board)]
    played = repetitions = 0
    for _ in range(plies):
        repetitions += check_ply(board, position, game_keys, rng)
        moves = list(board.legal_moves)
        if not moves or board.is_insufficient_material():
            break
        move = rng.choice(moves)
        if len(board.move_stack) >= 2 and rng.random() < 0.4:
            last = board.move_stack[-2]
            back = chess.Move(last.to_square, last.from_square)
            if back in moves:
                move = back
        # make/unmake round trip: the position comes back, its key included
        saved = snapshot(position)
        core.make(*arrays, encode(move))
        core.unmake(*arrays, encode(move))
        assert same(snapshot(position), saved), (board.fen(), move.uci())
        if not board.is_check() and rng.random() < 0.1:
            core.make_null(position.bb, state, position.keys, position.undo)
            board.push(chess.Move.null())
            assert int(position.keys[state[core.PLY]]) == chess.polyglot.zobrist_hash(board)
            board.pop()
            core.unmake_null(state, position.undo)
            assert same(snapshot(position), saved), board.fen()
        core.make(*arrays, encode(move))
        board.push(move)
        game_keys.append(chess.polyglot.zobrist_hash(board))
        played += 1
    return played, repetitions


@pytest.mark.slow
def test_random_games_agree_with_python_chess() -> None:
    rng = random.Random(13)
    plies = repetitions = 0
    for game in range(300):
        if game % 2:
            board = random_position(ENDGAMES[game // 2 % len(ENDGAMES)], rng)
            length = 120
        else:
            board = chess.Board(STARTS[game // 2 % len(STARTS)])
            length = 80
        played, found = play_game(board, rng, length)
        plies += played
        repetitions += found
    assert plies > 20000
    assert repetitions > 1000  # the games did exercise repetitions


def test_position_keeps_the_game_since_the_last_zeroing_move() -> None:
    board = chess.Board()
    for uci in ("g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"):
        board.push_uci(uci)
    position = core.Position(board)
    state, keys = position.state, position.keys
    assert state[core.PLY] == state[core.ROOT] == 8
    assert [int(k) for k in keys[:9]] == [chess.polyglot.zobrist_hash(b) for b in
                                         (chess.Board(), *_prefixes(board))]
    assert core.is_repetition(state, keys)  # the start position, twice before the root
    state[core.ROOT] = 0
    assert core.is_repetition(state, keys)
    board.pop()
    position = core.Position(board)
    assert not core.is_repetition(position.state, position.keys)  # once before the root only


def _prefixes(board: chess.Board) -> list[chess.Board]:
    out, replay = [], chess.Board()
    for move in board.move_stack:
        replay.push(move)
        out.append(replay.copy())
    return out


def test_the_same_perft_without_jit() -> None:
    """NUMBA_DISABLE_JIT=1: the same functions as plain Python give the same count."""
    fen, depth = PERFT[3][0], 3
    code = ("import chess, numpy as np; from chess_endgame.engine.core import position as core; "
            "from chess_endgame.engine.core.movegen import perft; "
            "from chess_endgame.engine.core.jit import COMPILED; assert not COMPILED; "
            f"p = core.Position(chess.Board({fen!r})); "
            f"print(perft(*p.arrays(), {depth}, np.zeros(core.STACK * 256, dtype=np.int64)))")
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) == python_perft(chess.Board(fen), depth) == 9467


def test_the_key_hint_is_the_key_after_a_move_that_changes_no_right() -> None:
    """``key_hint`` (the child's TT bucket, prefetched before the move is made) equals the key that ``make``
    computes for every move that changes no castling right and no en passant square, captures among them, on
    positions of random games; for the others it may differ, which costs only a wasted prefetch."""
    rng = random.Random(17)
    exact = other = 0
    for game in range(40):
        board = random_position(ENDGAMES[game % len(ENDGAMES)], rng) if game % 2 else chess.Board()
        for _ in range(60):
            moves = list(board.legal_moves)
            if not moves or board.is_game_over():
                break
            position = core.Position(board)
            bb, mailbox, state, keys, undo = position.arrays()
            for move in moves:
                hint = core.key_hint(mailbox, state, keys, encode(move))
                after = board.copy(stack=False)
                after.push(move)
                plain = not move.promotion and not board.is_castling(move) and not board.is_en_passant(move) \
                    and after.castling_rights == board.castling_rights and after.ep_square is None \
                    and board.ep_square is None
                if plain:
                    assert int(hint) == chess.polyglot.zobrist_hash(after), (board.fen(), move.uci())
                    exact += 1
                else:
                    other += 1
            board.push(rng.choice(moves))
    assert exact > 20_000 and other > 100
