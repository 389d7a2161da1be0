"""A python-chess board with a lean make/unmake, a Zobrist key and a move generator for the search.

:class:`SearchBoard` is a :class:`chess.Board` (standard chess only), so every
python-chess query still works on it (``attackers_mask``, ``is_insufficient_material``,
the Syzygy prober, ...). The search's hot loop uses its own faster parts:

- moves are ints, ``code = from | to << 6 | promotion << 12`` (:func:`encode`, :func:`decode`);
- :meth:`SearchBoard.push_code` / :meth:`SearchBoard.pop` save and restore a flat
  tuple and keep a 64-bit Zobrist key (:attr:`SearchBoard.zobrist`) up to date;
- :meth:`SearchBoard.moves` generates legal moves straight from attack tables.

``tests/test_searchboard.py`` checks all of it against python-chess (perft,
FENs and keys after random games). The board does not keep ``move_stack``
(python-chess's repetition helpers do not work on it): repetitions are the
search's business, through the Zobrist keys.
"""

from __future__ import annotations

import random

import chess
from chess import (
    BB_DIAG_ATTACKS,
    BB_DIAG_MASKS,
    BB_FILE_A,
    BB_FILE_ATTACKS,
    BB_FILE_H,
    BB_FILE_MASKS,
    BB_KING_ATTACKS,
    BB_KNIGHT_ATTACKS,
    BB_PAWN_ATTACKS,
    BB_RANK_ATTACKS,
    BB_RANK_MASKS,
    BB_RAYS,
    BB_SQUARES,
)

_ALL = chess.BB_ALL
_RANK_1_8 = chess.BB_RANK_1 | chess.BB_RANK_8
_PROMOTIONS = (chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT)
_CASTLING_ROOK = {chess.G1: (chess.H1, chess.F1), chess.C1: (chess.A1, chess.D1),
                  chess.G8: (chess.H8, chess.F8), chess.C8: (chess.A8, chess.D8)}

_rng = random.Random(20261121)
#: Zobrist keys: _ZP[color][piece_type][square], side to move, castling corners, en passant files.
_ZP = [[[_rng.getrandbits(64) for _ in range(64)] for _ in range(7)] for _ in range(2)]
_Z_TURN = _rng.getrandbits(64)
_Z_CASTLE = {sq: _rng.getrandbits(64) for sq in (chess.A1, chess.H1, chess.A8, chess.H8)}
_Z_EP = [_rng.getrandbits(64) for _ in range(8)]
_Z_CASTLING = {}
for _rights in range(16):
    _bb = sum(chess.BB_SQUARES[sq] for i, sq in enumerate(_Z_CASTLE) if _rights >> i & 1)
    _Z_CASTLING[_bb] = 0
    for _i, (_sq, _z) in enumerate(_Z_CASTLE.items()):
        if _rights >> _i & 1:
            _Z_CASTLING[_bb] ^= _z

_MOVES: dict[int, chess.Move] = {}


def encode(move: chess.Move) -> int:
    """The int code of a move: ``from | to << 6 | promotion << 12``."""
    return move.from_square | move.to_square << 6 | (move.promotion or 0) << 12


def decode(code: int) -> chess.Move:
    """The (shared, cached) :class:`chess.Move` of a code."""
    move = _MOVES.get(code)
    if move is None:
        move = _MOVES[code] = chess.Move(code & 63, code >> 6 & 63, (code >> 12) or None)
    return move


def _ep_capturable(board: chess.Board, ep_square: int) -> bool:
    """A pawn of the side to move stands where it could capture on ``ep_square``."""
    return bool(BB_PAWN_ATTACKS[not board.turn][ep_square] & board.pawns & board.occupied_co[board.turn])


def zobrist(board: chess.Board) -> int:
    """64-bit Zobrist key of a position (pieces, side to move, castling rights, en passant file).

    The en passant file counts only when a pawn stands ready to capture, so a
    useless en passant square does not make two equal positions differ.
    Python's own ``hash`` of a bitboard tuple cannot serve as a key: it reduces
    ints modulo 2**61 - 1, so a piece on a1 and the same piece on f8 hash alike.
    """
    key = 0
    for color in chess.COLORS:
        for piece_type in chess.PIECE_TYPES:
            for sq in chess.scan_forward(board.pieces_mask(piece_type, color)):
                key ^= _ZP[color][piece_type][sq]
    if board.turn == chess.WHITE:
        key ^= _Z_TURN
    key ^= _Z_CASTLING[board.clean_castling_rights() & (chess.BB_A1 | chess.BB_H1 | chess.BB_A8 | chess.BB_H8)]
    if board.ep_square is not None and _ep_capturable(board, board.ep_square):
        key ^= _Z_EP[board.ep_square & 7]
    return key


class SearchBoard(chess.Board):
    """A standard-chess board with the search's fast parts (see the module docstring)."""

    def __init__(self, fen: str | None = chess.STARTING_FEN) -> None:
        super().__init__(fen)
        self._undo: list[tuple] = []
        self.castling_rights = self.clean_castling_rights()
        self.zobrist = zobrist(self)

    @classmethod
    def from_board(cls, board: chess.Board) -> SearchBoard:
        """The current position of ``board`` (its move history is not carried over)."""
        if board.chess960:
            raise ValueError("the searcher plays standard chess only")
        return cls(board.fen(en_passant="fen"))

    @property
    def ply(self) -> int:
        """Moves pushed since the board was made."""
        return len(self._undo)

    def _transposition_key(self) -> tuple:
        # The same tuple as python-chess's, so the prober's cache is shared; castling
        # rights are kept clean here and need no cleaning.
        return (self.pawns, self.knights, self.bishops, self.rooks, self.queens, self.kings,
                self.occupied_co[1], self.occupied_co[0], self.turn, self.castling_rights,
                self.ep_square if self.ep_square is not None and self.has_legal_en_passant() else None)

    def checkers(self) -> int:
        """Pieces giving check to the side to move (python-chess's ``checkers_mask``, faster)."""
        turn = self.turn
        occ = self.occupied_co
        them = occ[not turn]
        king = (self.kings & occ[turn]).bit_length() - 1
        attackers = (BB_KNIGHT_ATTACKS[king] & self.knights | BB_PAWN_ATTACKS[turn][king] & self.pawns) & them
        queens = self.queens
        straight = (self.rooks | queens) & them
        if straight:
            occupied = self.occupied
            attackers |= (BB_RANK_ATTACKS[king][BB_RANK_MASKS[king] & occupied]
                          | BB_FILE_ATTACKS[king][BB_FILE_MASKS[king] & occupied]) & straight
        diagonal = (self.bishops | queens) & them
        if diagonal:
            attackers |= BB_DIAG_ATTACKS[king][BB_DIAG_MASKS[king] & self.occupied] & diagonal
        return attackers

    def plausible(self, code: int) -> bool:
        """Cheap check of a stored move: our piece on its origin, none of ours on its target."""
        own = self.occupied_co[self.turn]
        return bool(own >> (code & 63) & 1) and not own >> (code >> 6 & 63) & 1

    # -- make / unmake ---------------------------------------------------------------

    def push(self, move: chess.Move) -> None:
        self.push_code(move.from_square | move.to_square << 6 | (move.promotion or 0) << 12)

    def push_code(self, code: int) -> None:
        occ = self.occupied_co
        castling = self.castling_rights
        key = self.zobrist
        self._undo.append((self.pawns, self.knights, self.bishops, self.rooks, self.queens, self.kings,
                           occ[0], occ[1], castling, self.ep_square, self.halfmove_clock,
                           self.fullmove_number, key))
        turn = self.turn
        them = not turn
        zp_us, zp_them = _ZP[turn], _ZP[them]
        f, t = code & 63, code >> 6 & 63
        fb, tb = BB_SQUARES[f], BB_SQUARES[t]
        ep = self.ep_square
        if ep is not None:
            self.ep_square = None
            if _ep_capturable(self, ep):
                key ^= _Z_EP[ep & 7]
        self.halfmove_clock += 1
        if not turn:
            self.fullmove_number += 1
        if tb & occ[them]:
            self.halfmove_clock = 0
            keep = ~tb
            if self.pawns & tb:
                self.pawns &= keep
                key ^= zp_them[1][t]
            elif self.knights & tb:
                self.knights &= keep
                key ^= zp_them[2][t]
            elif self.bishops & tb:
                self.bishops &= keep
                key ^= zp_them[3][t]
            elif self.rooks & tb:
                self.rooks &= keep
                self.castling_rights &= keep
                key ^= zp_them[4][t]
            else:
                self.queens &= keep
                key ^= zp_them[5][t]
            occ[them] &= keep
        if self.pawns & fb:
            self.halfmove_clock = 0
            self.pawns ^= fb
            key ^= zp_us[1][f]
            promotion = code >> 12
            if t - f == 16 or f - t == 16:
                self.ep_square = (f + t) >> 1
            elif t == ep:
                captured_sq = t - 8 if turn else t + 8
                captured = BB_SQUARES[captured_sq]
                self.pawns &= ~captured
                occ[them] &= ~captured
                key ^= zp_them[1][captured_sq]
            if not promotion:
                self.pawns |= tb
                key ^= zp_us[1][t]
            else:
                key ^= zp_us[promotion][t]
                if promotion == 5:
                    self.queens |= tb
                elif promotion == 2:
                    self.knights |= tb
                elif promotion == 4:
                    self.rooks |= tb
                else:
                    self.bishops |= tb
        elif self.knights & fb:
            self.knights ^= fb | tb
            key ^= zp_us[2][f] ^ zp_us[2][t]
        elif self.bishops & fb:
            self.bishops ^= fb | tb
            key ^= zp_us[3][f] ^ zp_us[3][t]
        elif self.rooks & fb:
            self.rooks ^= fb | tb
            self.castling_rights &= ~fb
            key ^= zp_us[4][f] ^ zp_us[4][t]
        elif self.queens & fb:
            self.queens ^= fb | tb
            key ^= zp_us[5][f] ^ zp_us[5][t]
        else:
            self.kings ^= fb | tb
            key ^= zp_us[6][f] ^ zp_us[6][t]
            self.castling_rights &= ~(chess.BB_RANK_1 if turn else chess.BB_RANK_8)
            if t - f == 2 or f - t == 2:
                rook_from, rook_to = _CASTLING_ROOK[t]
                rook_bb = BB_SQUARES[rook_from] | BB_SQUARES[rook_to]
                self.rooks ^= rook_bb
                occ[turn] ^= rook_bb
                key ^= zp_us[4][rook_from] ^ zp_us[4][rook_to]
        occ[turn] ^= fb | tb
        self.occupied = occ[0] | occ[1]
        self.turn = them
        if self.castling_rights != castling:
            key ^= _Z_CASTLING[castling] ^ _Z_CASTLING[self.castling_rights]
        if self.ep_square is not None and _ep_capturable(self, self.ep_square):
            key ^= _Z_EP[self.ep_square & 7]
        self.zobrist = key ^ _Z_TURN

    def last_state(self) -> tuple:
        """The position before the last move: (pawns, knights, bishops, rooks, queens, kings, black,
        white, castling rights, en passant square, halfmove clock, fullmove number, key)."""
        return self._undo[-1]

    def push_null(self) -> None:
        """Pass the move (null-move pruning): the other side moves next, no en passant; undo with :meth:`pop`."""
        key = self.zobrist
        self._undo.append((self.pawns, self.knights, self.bishops, self.rooks, self.queens, self.kings,
                           self.occupied_co[0], self.occupied_co[1], self.castling_rights, self.ep_square,
                           self.halfmove_clock, self.fullmove_number, key))
        ep = self.ep_square
        if ep is not None:
            if _ep_capturable(self, ep):
                key ^= _Z_EP[ep & 7]
            self.ep_square = None
        self.halfmove_clock += 1
        self.turn = not self.turn
        self.zobrist = key ^ _Z_TURN

    def pop(self) -> None:  # type: ignore[override]
        """Take back the last move (unlike python-chess, nothing is returned)."""
        (self.pawns, self.knights, self.bishops, self.rooks, self.queens, self.kings, black, white,
         self.castling_rights, self.ep_square, self.halfmove_clock, self.fullmove_number,
         self.zobrist) = self._undo.pop()
        self.occupied_co[0] = black
        self.occupied_co[1] = white
        self.occupied = black | white
        self.turn = not self.turn

    # -- move generation ----------------------------------------------------------------

    def moves(self, checkers: int, tactical: bool = False) -> list[int]:
        """Legal move codes; ``checkers`` is :meth:`checkers`. ``tactical``: captures and queen promotions.

        In check, every legal evasion is returned (``tactical`` is ignored: all of them are needed).
        """
        turn = self.turn
        occ = self.occupied_co
        own, them = occ[turn], occ[not turn]
        occupied = self.occupied
        king = (self.kings & own).bit_length() - 1
        moves: list[int] = []
        append = moves.append
        target = them if tactical and not checkers else ~own & _ALL
        # King moves: test a few candidate squares one by one, or build the enemy's attack map
        # when there are many (the king leaves its square, so sliders see through it).
        candidates = BB_KING_ATTACKS[king] & target
        if candidates:
            without_king = occupied ^ BB_SQUARES[king]
            if candidates.bit_count() <= 2:
                attackers = self.attackers_mask
                safe = 0
                bits = candidates
                while bits:
                    low = bits & -bits
                    bits ^= low
                    if not attackers(not turn, low.bit_length() - 1, without_king):
                        safe |= low
            else:
                safe = candidates & ~self._attacks(not turn, without_king)
            while safe:
                low = safe & -safe
                safe ^= low
                append(king | (low.bit_length() - 1) << 6)
        if checkers:
            if checkers & (checkers - 1):
                return moves  # double check: only the king moves
            target = chess.between(king, checkers.bit_length() - 1) | checkers
            tactical = False
        elif not tactical and self.castling_rights & own:
            moves.extend(m.from_square | m.to_square << 6 for m in self.generate_castling_moves())
        pinned = self._pinned(king, them, occupied)

        bits = self.knights & own & ~pinned
        while bits:
            low = bits & -bits
            bits ^= low
            sq = low.bit_length() - 1
            attacks = BB_KNIGHT_ATTACKS[sq] & target
            while attacks:
                to = attacks & -attacks
                attacks ^= to
                append(sq | (to.bit_length() - 1) << 6)
        diagonal = (self.bishops | self.queens) & own
        straight = (self.rooks | self.queens) & own
        bits = diagonal | straight
        while bits:
            low = bits & -bits
            bits ^= low
            sq = low.bit_length() - 1
            attacks = 0
            if low & diagonal:
                attacks = BB_DIAG_ATTACKS[sq][BB_DIAG_MASKS[sq] & occupied]
            if low & straight:
                attacks |= (BB_FILE_ATTACKS[sq][BB_FILE_MASKS[sq] & occupied]
                            | BB_RANK_ATTACKS[sq][BB_RANK_MASKS[sq] & occupied])
            attacks &= target
            if low & pinned:
                attacks &= BB_RAYS[king][sq]
            while attacks:
                to = attacks & -attacks
                attacks ^= to
                append(sq | (to.bit_length() - 1) << 6)

        pawns = self.pawns & own
        if pawns:
            self._pawn_moves(pawns, them & target, target, occupied, pinned, king, tactical, append)
        if self.ep_square is not None:
            moves.extend(m.from_square | m.to_square << 6 for m in self.generate_legal_ep())
        return moves

    def _pinned(self, king: int, them: int, occupied: int) -> int:
        """Our pieces pinned to our king (python-chess's ``_slider_blockers``, with a fast exit)."""
        queens = self.queens
        snipers = ((BB_RANK_ATTACKS[king][0] | BB_FILE_ATTACKS[king][0]) & (self.rooks | queens)
                   | BB_DIAG_ATTACKS[king][0] & (self.bishops | queens)) & them
        pinned = 0
        while snipers:
            low = snipers & -snipers
            snipers ^= low
            between = chess.between(king, low.bit_length() - 1) & occupied
            if between and not between & (between - 1):
                pinned |= between
        return pinned & ~them

    def attacks_by(self, color: chess.Color) -> int:
        """Every square ``color`` attacks."""
        return self._attacks(color, self.occupied)

    def _attacks(self, color: chess.Color, occupied: int) -> int:
        """Squares attacked by ``color`` with the given occupancy."""
        pieces = self.occupied_co[color]
        attacks = BB_KING_ATTACKS[(self.kings & pieces).bit_length() - 1]
        pawns = self.pawns & pieces
        if pawns:
            if color:
                attacks |= ((pawns & ~BB_FILE_A) << 7 | (pawns & ~BB_FILE_H) << 9) & _ALL
            else:
                attacks |= (pawns & ~BB_FILE_A) >> 9 | (pawns & ~BB_FILE_H) >> 7
        queens = self.queens
        diagonal = (self.bishops | queens) & pieces
        straight = (self.rooks | queens) & pieces
        bits = (self.knights & pieces) | diagonal | straight
        while bits:
            low = bits & -bits
            bits ^= low
            sq = low.bit_length() - 1
            if low & diagonal:
                attacks |= BB_DIAG_ATTACKS[sq][BB_DIAG_MASKS[sq] & occupied]
                if low & straight:
                    attacks |= (BB_FILE_ATTACKS[sq][BB_FILE_MASKS[sq] & occupied]
                                | BB_RANK_ATTACKS[sq][BB_RANK_MASKS[sq] & occupied])
            elif low & straight:
                attacks |= (BB_FILE_ATTACKS[sq][BB_FILE_MASKS[sq] & occupied]
                            | BB_RANK_ATTACKS[sq][BB_RANK_MASKS[sq] & occupied])
            else:
                attacks |= BB_KNIGHT_ATTACKS[sq]
        return attacks

    def _pawn_moves(self, pawns: int, them: int, target: int, occupied: int, pinned: int, king: int,
                    tactical: bool, append) -> None:
        empty = ~occupied & _ALL
        if self.turn:
            single = (pawns << 8) & empty
            double = ((single & chess.BB_RANK_3) << 8) & empty
            left = ((pawns & ~BB_FILE_A) << 7) & them
            right = ((pawns & ~BB_FILE_H) << 9) & them
            forward = 8
        else:
            single = (pawns >> 8) & empty
            double = ((single & chess.BB_RANK_6) >> 8) & empty
            left = ((pawns & ~BB_FILE_A) >> 9) & them
            right = ((pawns & ~BB_FILE_H) >> 7) & them
            forward = -8
        if tactical:
            single &= _RANK_1_8
            double = 0
        else:
            single &= target
            double &= target
        promotions = (5,) if tactical else (5, 4, 3, 2)
        for targets, offset in ((single, forward), (double, 2 * forward), (left, forward - 1),
                                (right, forward + 1)):
            while targets:
                low = targets & -targets
                targets ^= low
                to = low.bit_length() - 1
                frm = to - offset
                if pinned >> frm & 1 and not BB_RAYS[king][frm] & low:
                    continue
                code = frm | to << 6
                if low & _RANK_1_8:
                    for promotion in promotions:
                        append(code | promotion << 12)
                else:
                    append(code)
