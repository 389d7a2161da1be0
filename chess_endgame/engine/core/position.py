"""The search's board as arrays: bitboards, a mailbox, state, Zobrist keys; make/unmake, checks, pins and
repetitions (the legal moves: :mod:`.movegen`).

Layout (all numpy arrays, so compiled functions take them as arguments):

- ``bb``: ``uint64[16]``, ``bb[8 * color + piece_type]`` are the pieces (python-chess piece
  types, 1 = pawn .. 6 = king; colour 1 = White, 0 = Black) and ``bb[8 * color]`` all pieces of
  that colour;
- ``mailbox``: ``int64[64]``, ``8 * color + piece_type`` on each square, 0 when empty;
- ``state``: ``int64[...]`` (see the ``TURN``, ``CASTLING``, ... indices);
- ``keys``: ``uint64[STACK]``, the Zobrist key (python-chess's Polyglot key) of every position
  from the oldest game position kept to the current one (``keys[state[PLY]]``);
- ``undo``: ``int64[STACK, 5]``, what a move cannot give back by itself (captured piece, castling
  rights, en passant square, halfmove clock, plies since the last null move).

Moves are ints: ``from | to << 6 | promotion << 12`` (python-chess piece types); castling is
the king's two-square move.
"""

from __future__ import annotations

import chess
import chess.polyglot
import numpy as np

from chess_endgame.engine.core.bits import (
    BETWEEN,
    BISHOP_LINES,
    KING,
    KNIGHT,
    PAWN,
    ROOK_LINES,
    SQUARE,
    U64,
    ZERO,
    bishop_attacks,
    lsb,
    rook_attacks,
)
from chess_endgame.engine.core.jit import njit

PAWN_T, KNIGHT_T, BISHOP_T, ROOK_T, QUEEN_T, KING_T = 1, 2, 3, 4, 5, 6
#: ``state`` indices: side to move (1 = White), castling rights (1 = H1, 2 = A1, 4 = H8, 8 = A8),
#: en passant square (-1: none), halfmove clock, stack index of the current position, plies since
#: the last null move, stack index of the search's root.
TURN, CASTLING, EP, HALFMOVE, PLY, FROM_NULL, ROOT = range(7)
STATE_SIZE = 8
#: Positions the stacks hold: the game since its last zeroing move (at most 100 kept) and the tree.
STACK = 512
HISTORY_KEPT = 120

# Zobrist keys: python-chess's Polyglot array, so that keys equal chess.polyglot.zobrist_hash.
_POLYGLOT = np.array(chess.polyglot.POLYGLOT_RANDOM_ARRAY, dtype=np.uint64)
#: ``Z_PIECE[8 * color + piece_type, square]``.
Z_PIECE = np.zeros((16, 64), dtype=np.uint64)
for _color in (0, 1):
    for _pt in range(1, 7):
        Z_PIECE[8 * _color + _pt] = _POLYGLOT[64 * ((_pt - 1) * 2 + _color):64 * ((_pt - 1) * 2 + _color) + 64]
Z_CASTLING = np.zeros(16, dtype=np.uint64)
for _rights in range(16):
    for _bit in range(4):
        if _rights >> _bit & 1:
            Z_CASTLING[_rights] ^= _POLYGLOT[768 + _bit]
Z_EP = _POLYGLOT[772:780].copy()
Z_TURN = _POLYGLOT[780]
#: Castling rights that survive a move from or to each square.
CASTLING_KEEP = np.full(64, 15, dtype=np.int64)
CASTLING_KEEP[chess.E1], CASTLING_KEEP[chess.H1], CASTLING_KEEP[chess.A1] = 12, 14, 13
CASTLING_KEEP[chess.E8], CASTLING_KEEP[chess.H8], CASTLING_KEEP[chess.A8] = 3, 11, 7
_RIGHT_CORNER = ((1, chess.H1), (2, chess.A1), (4, chess.H8), (8, chess.A8))


def bitboards(board: chess.Board) -> np.ndarray:
    """``bb`` of a python-chess board (see the module docstring)."""
    bb = np.zeros(16, dtype=np.uint64)
    for color in (0, 1):
        occupied = board.occupied_co[color]
        bb[8 * color] = occupied
        for piece_type in range(1, 7):
            bb[8 * color + piece_type] = board.pieces_mask(piece_type, bool(color))
    return bb



class Position:
    """The arrays of one position and its stacks (a plain holder; compiled code takes the arrays)."""

    def __init__(self, board: chess.Board | None = None) -> None:
        """The arrays, holding ``board`` (see :meth:`load`) when one is given."""
        self.bb = np.zeros(16, dtype=np.uint64)
        self.mailbox = np.zeros(64, dtype=np.int64)
        self.state = np.zeros(STATE_SIZE, dtype=np.int64)
        self.keys = np.zeros(STACK, dtype=np.uint64)
        self.undo = np.zeros((STACK, 5), dtype=np.int64)
        if board is not None:
            self.load(board)

    def load(self, board: chess.Board) -> None:
        """Hold the position of ``board``, with the positions of its game since the last zeroing move
        (the last :data:`HISTORY_KEPT` of them) for repetitions; the arrays stay the same objects."""
        if board.chess960:
            raise ValueError("the searcher plays standard chess only")
        history = []
        back = board.copy()
        for _ in range(min(back.halfmove_clock, len(back.move_stack), HISTORY_KEPT)):
            back.pop()
            history.append(chess.polyglot.zobrist_hash(back))
        history.reverse()
        self.keys[:] = 0
        self.undo[:] = 0
        self.keys[:len(history)] = history
        self.set(board, len(history))

    def set(self, board: chess.Board, ply: int) -> None:
        self.bb[:] = bitboards(board)
        self.mailbox[:] = 0
        for square, piece in board.piece_map().items():
            self.mailbox[square] = 8 * piece.color + piece.piece_type
        rights = board.clean_castling_rights()
        state = self.state
        state[TURN] = int(board.turn)
        state[CASTLING] = sum(bit for bit, corner in _RIGHT_CORNER if rights & chess.BB_SQUARES[corner])
        state[EP] = -1 if board.ep_square is None else board.ep_square
        state[HALFMOVE] = board.halfmove_clock
        state[PLY] = ply
        state[FROM_NULL] = 1000
        state[ROOT] = ply
        self.keys[ply] = key_of(self.bb, self.mailbox, state)

    def arrays(self) -> tuple:
        return self.bb, self.mailbox, self.state, self.keys, self.undo


@njit
def _ep_key(bb, state):
    """The en passant part of the key: the file when a pawn of the side to move stands ready to capture."""
    ep = state[EP]
    if ep >= 0:
        us = state[TURN]
        if PAWN[1 - us, ep] & bb[8 * us + PAWN_T]:
            return Z_EP[ep & 7]
    return ZERO


@njit
def key_of(bb, mailbox, state):
    """The Zobrist key computed from scratch (equal to ``chess.polyglot.zobrist_hash``)."""
    key = ZERO
    for square in range(64):
        if mailbox[square]:
            key ^= Z_PIECE[mailbox[square], square]
    key ^= Z_CASTLING[state[CASTLING]] ^ _ep_key(bb, state)
    if state[TURN]:
        key ^= Z_TURN
    return key


@njit
def attackers(bb, square, color, occupied):
    """Pieces of ``color`` that attack ``square`` with the given occupancy."""
    base = 8 * color
    queens = bb[base + QUEEN_T]
    found = KNIGHT[square] & bb[base + KNIGHT_T] | KING[square] & bb[base + KING_T] \
        | PAWN[1 - color, square] & bb[base + PAWN_T]
    # A slider's rays are traced only when one stands on the square's lines (most endings have few sliders).
    diagonal = (bb[base + BISHOP_T] | queens) & BISHOP_LINES[square]
    if diagonal:
        found |= bishop_attacks(square, occupied) & diagonal
    straight = (bb[base + ROOK_T] | queens) & ROOK_LINES[square]
    if straight:
        found |= rook_attacks(square, occupied) & straight
    return found & occupied


@njit
def king_square(bb, color):
    return lsb(bb[8 * color + KING_T])


@njit
def checkers(bb, state):
    """Pieces giving check to the side to move."""
    us = state[TURN]
    return attackers(bb, king_square(bb, us), 1 - us, bb[0] | bb[8])


@njit
def attacks_by(bb, color, occupied):
    """Every square the pieces of ``color`` attack, with the given occupancy."""
    base = 8 * color
    attacks = KING[lsb(bb[base + KING_T])]
    pawns = bb[base + PAWN_T]
    if pawns:
        if color:
            attacks |= ((pawns & ~U64(0x0101010101010101)) << U64(7)) | \
                ((pawns & ~U64(0x8080808080808080)) << U64(9))
        else:
            attacks |= ((pawns & ~U64(0x0101010101010101)) >> U64(9)) | \
                ((pawns & ~U64(0x8080808080808080)) >> U64(7))
    bits = bb[base + KNIGHT_T]
    while bits:
        attacks |= KNIGHT[lsb(bits)]
        bits &= bits - U64(1)
    queens = bb[base + QUEEN_T]
    bits = bb[base + BISHOP_T] | queens
    while bits:
        attacks |= bishop_attacks(lsb(bits), occupied)
        bits &= bits - U64(1)
    bits = bb[base + ROOK_T] | queens
    while bits:
        attacks |= rook_attacks(lsb(bits), occupied)
        bits &= bits - U64(1)
    return attacks


@njit
def pinned(bb, us, king, occupied):
    """Our pieces pinned to our king."""
    them = 8 * (1 - us)
    queens = bb[them + QUEEN_T]
    snipers = ROOK_LINES[king] & (bb[them + ROOK_T] | queens) | BISHOP_LINES[king] & (bb[them + BISHOP_T] | queens)
    result = ZERO
    while snipers:
        between = BETWEEN[king, lsb(snipers)] & occupied
        if between and not between & (between - U64(1)):
            result |= between
        snipers &= snipers - U64(1)
    return result & bb[8 * us]


# -- make / unmake -----------------------------------------------------------------------


@njit
def _toggle(bb, mailbox, piece, square):
    """Put ``piece`` on an empty ``square`` or take it off (bitboards only; the caller sets the mailbox)."""
    bit = SQUARE[square]
    bb[piece] ^= bit
    bb[piece & 8] ^= bit


@njit
def _castling_rook(frm, to):
    """(from, to) of the rook when the king castles from ``frm`` to ``to``."""
    return (to + 1, to - 1) if to > frm else (to - 2, to + 1)


@njit
def key_hint(mailbox, state, keys, move):
    """The key after ``move``, for a prefetch of its TT bucket: exact for a move or capture that promotes
    nothing and changes no castling right and no en passant square (other moves give a key the TT may not
    hold: a wasted prefetch)."""
    frm, to = move & 63, (move >> 6) & 63
    piece = mailbox[frm]
    key = keys[state[PLY]] ^ Z_TURN ^ Z_PIECE[piece, frm] ^ Z_PIECE[piece, to]
    if mailbox[to]:
        key ^= Z_PIECE[mailbox[to], to]
    return key


@njit
def make(bb, mailbox, state, keys, undo, move):
    """Play a legal ``move``."""
    p = state[PLY]
    us = state[TURN]
    frm, to, promotion = move & 63, (move >> 6) & 63, move >> 12
    piece = mailbox[frm]
    captured = mailbox[to]
    ep = state[EP]
    undo[p, 0] = captured
    undo[p, 1] = state[CASTLING]
    undo[p, 2] = ep
    undo[p, 3] = state[HALFMOVE]
    undo[p, 4] = state[FROM_NULL]
    key = keys[p] ^ _ep_key(bb, state) ^ Z_TURN
    state[EP] = -1
    state[HALFMOVE] += 1
    if captured:
        _toggle(bb, mailbox, captured, to)
        key ^= Z_PIECE[captured, to]
        state[HALFMOVE] = 0
    _toggle(bb, mailbox, piece, frm)
    _toggle(bb, mailbox, piece, to)
    mailbox[frm] = 0
    mailbox[to] = piece
    key ^= Z_PIECE[piece, frm] ^ Z_PIECE[piece, to]
    kind = piece & 7
    if kind == PAWN_T:
        state[HALFMOVE] = 0
        if to - frm == 16 or frm - to == 16:
            state[EP] = (frm + to) >> 1
        elif to == ep:
            victim_square = to - 8 if us else to + 8
            victim = mailbox[victim_square]
            _toggle(bb, mailbox, victim, victim_square)
            mailbox[victim_square] = 0
            key ^= Z_PIECE[victim, victim_square]
        if promotion:
            promoted = 8 * us + promotion
            _toggle(bb, mailbox, piece, to)
            _toggle(bb, mailbox, promoted, to)
            mailbox[to] = promoted
            key ^= Z_PIECE[piece, to] ^ Z_PIECE[promoted, to]
    elif kind == KING_T and (to - frm == 2 or frm - to == 2):
        rook_from, rook_to = _castling_rook(frm, to)
        rook = mailbox[rook_from]
        _toggle(bb, mailbox, rook, rook_from)
        _toggle(bb, mailbox, rook, rook_to)
        mailbox[rook_from] = 0
        mailbox[rook_to] = rook
        key ^= Z_PIECE[rook, rook_from] ^ Z_PIECE[rook, rook_to]
    castling = state[CASTLING]
    if castling:
        new_castling = castling & CASTLING_KEEP[frm] & CASTLING_KEEP[to]
        key ^= Z_CASTLING[castling] ^ Z_CASTLING[new_castling]
        state[CASTLING] = new_castling
    state[TURN] = 1 - us
    state[FROM_NULL] += 1
    key ^= _ep_key(bb, state)
    state[PLY] = p + 1
    keys[p + 1] = key


@njit
def unmake(bb, mailbox, state, keys, undo, move):
    """Take back ``move``, the last move made."""
    p = state[PLY] - 1
    them = state[TURN]
    us = 1 - them
    frm, to, promotion = move & 63, (move >> 6) & 63, move >> 12
    piece = mailbox[to]
    if promotion:
        _toggle(bb, mailbox, piece, to)
        piece = 8 * us + PAWN_T
        _toggle(bb, mailbox, piece, to)
    _toggle(bb, mailbox, piece, to)
    _toggle(bb, mailbox, piece, frm)
    mailbox[frm] = piece
    captured = undo[p, 0]
    mailbox[to] = captured
    if captured:
        _toggle(bb, mailbox, captured, to)
    kind = piece & 7
    if kind == PAWN_T and to == undo[p, 2]:
        victim_square = to - 8 if us else to + 8
        victim = 8 * them + PAWN_T
        _toggle(bb, mailbox, victim, victim_square)
        mailbox[victim_square] = victim
    elif kind == KING_T and (to - frm == 2 or frm - to == 2):
        rook_from, rook_to = _castling_rook(frm, to)
        rook = mailbox[rook_to]
        _toggle(bb, mailbox, rook, rook_to)
        _toggle(bb, mailbox, rook, rook_from)
        mailbox[rook_to] = 0
        mailbox[rook_from] = rook
    state[CASTLING] = undo[p, 1]
    state[EP] = undo[p, 2]
    state[HALFMOVE] = undo[p, 3]
    state[FROM_NULL] = undo[p, 4]
    state[TURN] = us
    state[PLY] = p


@njit
def make_null(bb, state, keys, undo):
    """Pass the move (null-move pruning); undo with :func:`unmake_null`."""
    p = state[PLY]
    undo[p, 0] = 0
    undo[p, 1] = state[CASTLING]
    undo[p, 2] = state[EP]
    undo[p, 3] = state[HALFMOVE]
    undo[p, 4] = state[FROM_NULL]
    key = keys[p] ^ _ep_key(bb, state) ^ Z_TURN
    state[EP] = -1
    state[HALFMOVE] += 1
    state[FROM_NULL] = 0
    state[TURN] = 1 - state[TURN]
    state[PLY] = p + 1
    keys[p + 1] = key


@njit
def unmake_null(state, undo):
    p = state[PLY] - 1
    state[EP] = undo[p, 2]
    state[HALFMOVE] = undo[p, 3]
    state[FROM_NULL] = undo[p, 4]
    state[TURN] = 1 - state[TURN]
    state[PLY] = p


@njit
def is_repetition(state, keys):
    """The position repeats one since the search's root (or the root itself), or two before it."""
    p = state[PLY]
    key = keys[p]
    oldest = p - min(state[HALFMOVE], state[FROM_NULL])
    count = 0
    i = p - 4
    while i >= oldest and i >= 0:
        if keys[i] == key:
            if i >= state[ROOT]:
                return True
            count += 1
            if count >= 2:
                return True
        i -= 2
    return False
