"""The evaluation's terms by name: their families, their order (:data:`TERMS`) and the feature vector's
(:data:`FEATURES`), each term's index for the compiled code that fills them (:mod:`.features`), and the layout of
the scratch it fills them with.
"""

from __future__ import annotations

import numpy as np

from chess_endgame.engine.core.pawns import PAWN_TERM_NAMES

MOBILITY = (("knight", 9), ("bishop", 14), ("rook", 15), ("queen", 28))
PIECES = ("pawn", "knight", "bishop", "rook", "queen", "king")

#: (family, term names) in the order of :data:`TERMS`.
FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("material", ("pawn", "knight", "bishop", "rook", "queen")),
    ("pawns", PAWN_TERM_NAMES),
    ("passers", ("passed_free",       # passed pawns whose path to promotion is empty, by ranks advanced
                 "unstoppable",       # outside the enemy king's square (the enemy without pieces)
                 "king_passer",       # king distances to the promotion squares (theirs - ours)
                 "rook_behind_passer",
                 # Passed pawns weighted by how far they are: w = max(0, ranks advanced - 1), 0 .. 4.
                 "passer_king_them",  # sum of w * the enemy king's distance (at most 5) to the stop square
                 "passer_king_us",    # sum of w * the own king's distance (at most 5) to the stop square
                 "passer_path",       # sum of w * (1 path empty and unattacked, 0.5 stop square so, else 0)
                 "passer_connected",  # sum of w over passed pawns with a passed pawn on a next file
                 "king_key_square",   # pawn endings: passed pawns with the own king on one of their key squares
                 "opposition")),      # pawn endings: the kings facing, an odd number of squares apart
    ("king", ("king_center",          # centralisation (0 edge .. 3 centre); 0 against a bare king
              "king_shelter",         # own pawns on the two ranks in front of the king, its and the next files
              "king_pawns",           # mean distance of the enemy king to all pawns less the own king's
              "king_storm",           # own pawns up to three ranks in front of the enemy king, its files
              "king_attackers",       # pieces attacking the enemy king's zone (king square and neighbours)
              "king_attack_knight", "king_attack_bishop", "king_attack_rook", "king_attack_queen",  # zone squares
              "safe_check_knight", "safe_check_bishop", "safe_check_rook", "safe_check_queen")),  # safe checks
    ("threats", ("pawn_threat",       # enemy pieces (not pawns) attacked by own pawns
                 "minor_threat",      # enemy rooks and queens attacked by own knights and bishops
                 "rook_threat",       # enemy queens attacked by own rooks
                 "hanging")),         # enemy pieces (not pawns) attacked and not defended
    ("pieces", ("bishop_pair",
                "bad_bishop",         # own pawns on the squares of the own bishops' colour
                "knight_outpost",     # knights in the enemy half, defended by a pawn, no enemy pawn can chase
                "bishop_outpost",
                "rook_open_file",     # 1 a rook on an open file, 0.5 on a half-open one
                "rook_seventh",
                "knight_center")),    # knight centralisation (0 edge .. 3 centre)
    ("mobility", tuple(f"mobility_{piece}_{n}" for piece, size in MOBILITY for n in range(size))),
    ("psqt", tuple(f"psqt_{piece}_{i}" for piece in PIECES for i in range(32))),
    ("mopup", ("mop_edge",            # lone defender: its king's Manhattan distance from the centre (0..6)
               "mop_kings",           # lone defender: 14 - Manhattan distance between the kings
               "kbn_corner")),        # KBNvK: 7 - distance of the lone king to a corner of the bishop's colour
    ("drawish", ("drawish",)),        # material balance (pawns) when the material is drawish
    # How winnable a material lead is (Stockfish's "initiative", for the side ahead): each counted +1 / -1 for
    # White / Black ahead by a pawn or more (the fixed values of side_material), 0 when neither is.
    ("winnable", ("win_lead",         # the lead in pawns, at most 4
                  "win_pawns_ahead",  # the pawns of the side ahead
                  "win_pawns_behind",  # the pawns of the other side
                  "win_passers",      # the passed pawns of the side ahead
                  "win_both_wings",   # pawns (either side's) on both wings
                  "win_pawn_ending")),  # kings and pawns alone
)
#: The terms, from White's view, in order.
TERMS: tuple[str, ...] = tuple(name for _, names in FAMILIES for name in names)
N_TERMS = len(TERMS)
#: The feature vector: the tempo, then every term's middlegame and endgame part.
FEATURES: tuple[str, ...] = ("tempo",) + tuple(f"{t}.{part}" for t in TERMS for part in ("mg", "eg"))
N_FEATURES = len(FEATURES)

_I = {name: i for i, name in enumerate(TERMS)}
I_PAWN, I_KNIGHT, I_BISHOP, I_ROOK, I_QUEEN = (_I[n] for n in ("pawn", "knight", "bishop", "rook", "queen"))
I_PAWNS = _I[PAWN_TERM_NAMES[0]]
I_PASSED_FREE, I_UNSTOPPABLE, I_KING_PASSER, I_ROOK_BEHIND = (
    _I[n] for n in ("passed_free", "unstoppable", "king_passer", "rook_behind_passer"))
I_PASSER_THEM, I_PASSER_US, I_PASSER_PATH, I_PASSER_CONNECTED = (
    _I[n] for n in ("passer_king_them", "passer_king_us", "passer_path", "passer_connected"))
I_KEY_SQUARE, I_OPPOSITION = _I["king_key_square"], _I["opposition"]
I_KING_CENTER, I_SHELTER, I_KING_PAWNS, I_STORM, I_ATTACKERS = (
    _I[n] for n in ("king_center", "king_shelter", "king_pawns", "king_storm", "king_attackers"))
I_ZONE = _I["king_attack_knight"]     # + 0 knight, 1 bishop, 2 rook, 3 queen
I_CHECK = _I["safe_check_knight"]     # likewise
I_PAWN_THREAT, I_MINOR_THREAT, I_ROOK_THREAT, I_HANGING = (
    _I[n] for n in ("pawn_threat", "minor_threat", "rook_threat", "hanging"))
I_BISHOP_PAIR, I_BAD_BISHOP, I_KNIGHT_OUTPOST, I_BISHOP_OUTPOST = (
    _I[n] for n in ("bishop_pair", "bad_bishop", "knight_outpost", "bishop_outpost"))
I_OPEN_FILE, I_SEVENTH, I_KNIGHT_CENTER = _I["rook_open_file"], _I["rook_seventh"], _I["knight_center"]
I_MOBILITY = np.array([_I[f"mobility_{piece}_0"] for piece, _ in MOBILITY], dtype=np.int64)
MOBILITY_MAX = np.array([size - 1 for _, size in MOBILITY], dtype=np.int64)
I_PSQT = _I["psqt_pawn_0"]            # + 32 * (piece type - 1) + slot
I_MOP_EDGE, I_MOP_KINGS, I_KBN = _I["mop_edge"], _I["mop_kings"], _I["kbn_corner"]
I_DRAWISH = _I["drawish"]
I_WIN = _I["win_lead"]                # + 0 lead, 1 pawns ahead, 2 pawns behind, 3 passers, 4 both wings, 5 pawn ending
#: The sparse block of the terms: the mobility and square tables, [SPARSE_FIRST, SPARSE_END), a handful of them non-zero
#: in a position (one a man, two a piece). They are not written into the terms but noted as (term, sign) pairs in
#: the maps scratch, so that :func:`evaluate` neither clears nor sums the whole block (about a fifth of its time).
SPARSE_FIRST, SPARSE_END = int(I_MOBILITY[0]), I_PSQT + 32 * len(PIECES)
assert SPARSE_FIRST < SPARSE_END and TERMS[SPARSE_END - 1] == "psqt_king_31"
#: The most men (pieces and pawns, kings included) a position has: :func:`evaluate`'s weights have a row for each
#: count from 0 to this.
MAX_MEN = 32
#: The maps scratch (``uint64[MAPS_SIZE]``): each side's attack maps by piece type (12 words), the count of notes
#: (word NOTE_COUNT), then the notes: ``2 * term`` for a term of the sparse block a White man adds 1 to,
#: ``2 * term + 1`` for one a Black man adds -1 to; at most two a man (a square and, for a piece, its mobility).
NOTE_COUNT = 12
MAPS_SIZE = NOTE_COUNT + 1 + 2 * MAX_MEN
