"""Root move chooser: every legal move ranked from Syzygy WDL/DTZ, 50-move aware.

Implements the rules of ``docs/chooser.md`` (the behaviour of Stockfish's
``root_probe`` and Fathom's ``root_probe_dtz``): each move gets a distance ``D``
in plies from the root side's view and a :class:`MoveClass` that takes the
root's halfmove clock ``c`` and the game history into account.

- checkmate: ``D = 1``; stalemate, dead position or threefold repetition, or a winning move after which the
  loser can reply into a threefold repetition: ``D = 0``;
- zeroing move: the child's WDL ``w`` maps to ``{-2: 1, -1: 101, 0: 0, 1: -101, 2: -1}``;
- ``c >= 99`` and not zeroing: ``D = 0`` (the 50-move draw can be claimed);
- otherwise ``d = -DTZ(child)`` and ``D = d + sign(d)``.

``s = |D| + c`` (``|D|`` for a mate, and for a zeroing move while ``c < 100``) decides between WIN
(s <= 99), MAYBE_WIN (s == 100, DTZ rounding may make it a draw) and CURSED_WIN
(s >= 101 or D > 100); losses mirror that. Winning classes prefer a mate, then
the smallest s; losing classes the largest s (resist longest); ties go to the
smaller UCI string, so the same position always gives the same move.

Probe economy: WDL is probed for every child; DTZ only for moves that can
still be of the best class (and are not beaten inside it by a known move).
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass

import chess

from chess_endgame.tablebase.prober import NotCovered, NotCoveredError, Prober


class MoveClass(enum.IntEnum):
    """Outcome of a move under the 50-move rule, best last (so ``max`` picks the best)."""

    LOSS = 0
    MAYBE_LOSS = 1
    BLESSED_LOSS = 2
    DRAW = 3
    CURSED_WIN = 4
    MAYBE_WIN = 5
    WIN = 6

    @property
    def winning(self) -> bool:
        return self > MoveClass.DRAW

    @property
    def losing(self) -> bool:
        return self < MoveClass.DRAW

    @property
    def wdl(self) -> int:
        """The class as a WDL value: 2 certain win, 1 win that may be drawn, 0, -1, -2."""
        return {6: 2, 5: 1, 4: 1, 3: 0, 2: -1, 1: -1, 0: -2}[int(self)]


#: Zeroing move: the child's WDL (opponent's view) -> D from the mover's view.
ZEROING_DISTANCE = {-2: 1, -1: 101, 0: 0, 1: -101, 2: -1}


def classify(distance: int, s: int, *, rule50: bool = True) -> MoveClass:
    """Class of a move with distance ``D`` and 50-move distance ``s`` (see module docstring)."""
    if distance > 0:
        if not rule50:
            return MoveClass.WIN
        if distance > 100 or s >= 101:
            return MoveClass.CURSED_WIN
        return MoveClass.MAYBE_WIN if s == 100 else MoveClass.WIN
    if distance < 0:
        if not rule50:
            return MoveClass.LOSS
        if distance < -100 or s >= 101:
            return MoveClass.BLESSED_LOSS
        return MoveClass.MAYBE_LOSS if s == 100 else MoveClass.LOSS
    return MoveClass.DRAW


@dataclass
class RankedMove:
    """One legal move with its tablebase verdict. Values are from the mover's view."""

    move: chess.Move
    cls: MoveClass
    #: D in plies (None while its DTZ was not needed, see ``exact``).
    distance: int | None
    #: 50-move distance s = |D| + c (|D| for mates and zeroing moves); None with distance.
    s: int | None
    #: WDL of the position after the move, from the mover's view (= -WDL of the child).
    wdl: int
    #: DTZ of the position after the move, from the mover's view (= -DTZ of the child), plies.
    dtz: int | None
    zeroing: bool
    checkmate: bool = False
    stalemate: bool = False
    #: False when the DTZ was skipped: ``cls`` is then the best the move could be
    #: and ``floor`` the worst.
    exact: bool = True
    floor: MoveClass | None = None

    @property
    def worst(self) -> MoveClass:
        """The class the move is sure to reach (its class when exact)."""
        return self.cls if self.exact or self.floor is None else self.floor

    @property
    def uci(self) -> str:
        return self.move.uci()

    def sort_key(self) -> tuple:
        cls = self.cls
        if self.s is None:
            within: tuple = (1, 0)
        elif cls.winning:
            within = (0, 0 if self.checkmate else 1, self.s)
        elif cls.losing:
            within = (0, -self.s)
        else:
            # Draws by the rules alike: first the moves that would still win without the 50-move rule (the draw
            # must be claimed), last those that would lose (WDL, which every ranking has; DTZ may be skipped).
            within = (0, -self.wdl)
        return (-int(cls), within, self.move.uci())


@dataclass
class Choice:
    """Every legal move ranked, best first, and the root's result."""

    fen: str
    halfmove_clock: int
    moves: list[RankedMove]
    #: Probe of the root (halfmove clock taken as 0, as the tables assume).
    root_wdl: int
    root_dtz: int | None

    #: False when a deadline cut the DTZ probes short (some classes are upper bounds only).
    complete: bool = True

    @property
    def best(self) -> RankedMove | None:
        """The move to play.

        Complete: the first exactly ranked move. Cut short by a deadline: the move
        with the best class it is sure to reach, so that an unresolved win beats an
        exact draw.
        """
        if not self.moves:
            return None
        if self.complete:
            return next((m for m in self.moves if m.exact), self.moves[0])
        return max(self.moves, key=lambda m: (m.worst, m.exact))

    @property
    def result(self) -> MoveClass:
        """The root's result: the class its best move is sure to reach (a mated root is a LOSS)."""
        best = self.best
        if best is not None:
            return best.worst
        return MoveClass.LOSS if self.root_wdl < 0 else MoveClass.DRAW

    def best_class_moves(self) -> list[RankedMove]:
        """The moves that share the best class (the only ones the player may choose from)."""
        best = self.best
        if best is None:
            return []
        if not best.exact:
            return [best]
        return [m for m in self.moves if m.cls == best.cls and m.exact]


def game_result(cls: MoveClass, turn: chess.Color) -> str:
    """The game result a root class promises: "1-0", "0-1" or "1/2-1/2".

    WIN and MAYBE_WIN are wins for the side to move (``turn``), LOSS and
    MAYBE_LOSS losses; cursed wins and blessed losses are draws, as the 50-move
    rule makes them.
    """
    if cls in (MoveClass.WIN, MoveClass.MAYBE_WIN):
        return "1-0" if turn == chess.WHITE else "0-1"
    if cls in (MoveClass.LOSS, MoveClass.MAYBE_LOSS):
        return "0-1" if turn == chess.WHITE else "1-0"
    return "1/2-1/2"


def has_repeated(board: chess.Board) -> bool:
    """True when a position has occurred twice since the last zeroing move (game history)."""
    seen = set()
    temp = board.copy()
    for _ in range(min(board.halfmove_clock, len(board.move_stack)) + 1):
        key = temp._transposition_key()
        if key in seen:
            return True
        seen.add(key)
        if not temp.move_stack:
            break
        temp.pop()
    return False


# Bounds for a non-zeroing move whose DTZ is not known yet, by the mover's WDL:
# (lowest possible class, highest possible class, smallest possible D).
def _bounds(wdl: int, rule50: bool) -> tuple[MoveClass, MoveClass, int]:
    if wdl == 2:
        return (MoveClass.CURSED_WIN if rule50 else MoveClass.WIN), MoveClass.WIN, 2
    if wdl == 1:
        cls = MoveClass.CURSED_WIN if rule50 else MoveClass.WIN
        return cls, cls, 102
    if wdl == -1:
        cls = MoveClass.BLESSED_LOSS if rule50 else MoveClass.LOSS
        return cls, cls, 102
    return MoveClass.LOSS, (MoveClass.BLESSED_LOSS if rule50 else MoveClass.LOSS), 2


def choose(board: chess.Board, prober: Prober, *, rule50: bool = True, full: bool = False,
           root_dtz: bool | None = None, deadline: float | None = None) -> Choice | NotCovered:
    """Rank every legal move of ``board`` (clock and move stack included).

    ``rule50=False`` counts cursed wins as wins and blessed losses as losses
    (UCI ``Syzygy50MoveRule false``). ``full=True`` probes the DTZ of every
    move (for display); otherwise DTZ is probed only where it can change the
    choice; ``root_dtz`` (default: ``full``) also probes the root's DTZ.
    ``deadline`` (a ``time.monotonic()`` instant) stops the DTZ probes when a
    clock runs out: the choice is then the best move found exact so far
    (:attr:`Choice.complete` is False). Returns :class:`NotCovered` when the
    tables cannot answer (then the searcher plays).
    """
    not_covered = prober.covers(board)
    if not_covered is not None:
        return not_covered
    clock = board.halfmove_clock
    try:
        root_wdl = prober.probe_wdl(board)
        moves: list[RankedMove] = []
        pending: list[tuple[RankedMove, MoveClass, int]] = []  # (move, lowest class, least D)
        repeated = has_repeated(board)
        for move in board.legal_moves:
            entry, bounds = _entry(board, move, prober, rule50, repeated)
            moves.append(entry)
            if bounds is not None:
                pending.append((entry, *bounds))
        lows = [low for _, low, _ in pending]
        complete = True
        if not full and root_wdl == 2 and not any(m.exact and m.distance == 1 for m in moves):
            pending, complete = _fastest_win(board, prober, pending, clock, rule50, deadline)
        elif not full and root_wdl == -2:
            pending, complete = _longest_loss(board, prober, pending, clock, rule50, deadline)
        exact = [m for m in moves if m.exact]
        best_low = max([m.cls for m in exact] + lows, default=MoveClass.LOSS)
        if deadline is not None:  # checks first: under a deadline the likeliest best moves get resolved
            pending.sort(key=lambda p: not board.gives_check(p[0].move))
        for entry, _low, min_distance in pending:
            if not complete:
                break
            if not full and _cannot_be_best(entry, min_distance, clock, best_low, exact):
                continue
            if deadline is not None and time.monotonic() >= deadline:
                complete = False
                break
            _resolve(board, entry, prober, clock, rule50)
        if full:
            for entry in moves:
                if entry.dtz is None:
                    entry.dtz = _child_dtz(board, entry.move, prober)
        moves.sort(key=RankedMove.sort_key)
        dtz = prober.probe_dtz(board) if (full if root_dtz is None else root_dtz) else None
    except NotCoveredError as exc:
        return exc.answer
    return Choice(board.fen(), clock, moves, root_wdl, dtz, complete)


def rank_move(board: chess.Board, move: chess.Move, prober: Prober, *, rule50: bool = True) -> RankedMove:
    """The exact class and distance of one legal move (for comments and checks).

    :raises NotCoveredError: when the tables cannot answer.
    """
    entry, bounds = _entry(board, move, prober, rule50, has_repeated(board))
    if bounds is not None:
        _resolve(board, entry, prober, board.halfmove_clock, rule50)
    return entry


def _entry(board: chess.Board, move: chess.Move, prober: Prober, rule50: bool,
           repeated: bool) -> tuple[RankedMove, tuple[MoveClass, int] | None]:
    """The move's verdict from the child's WDL; bounds (lowest class, least D) when DTZ is still needed.
    ``repeated``: a position has occurred twice in ``board``'s history (:func:`has_repeated`)."""
    clock = board.halfmove_clock
    zeroing = board.is_zeroing(move)
    board.push(move)
    try:
        child_wdl = prober.probe_wdl(board)
        checkmate = child_wdl == -2 and board.is_check() and board.is_checkmate()
        stalemate = child_wdl == 0 and not board.is_check() and not any(board.generate_legal_moves())
        draw_now = stalemate or board.is_insufficient_material() or board.is_repetition(3)
        # A winning move after which the loser can reply into a position's third occurrence: it will, and claim.
        draw_now = draw_now or (repeated and not zeroing and child_wdl < 0 and not checkmate
                                and board.can_claim_threefold_repetition())
    finally:
        board.pop()
    entry = RankedMove(move, MoveClass.DRAW, 0, 0, -child_wdl, None, zeroing, checkmate, stalemate)
    if checkmate:
        entry.distance, entry.s, entry.cls, entry.dtz = 1, 1, MoveClass.WIN, 1
    elif draw_now:
        pass  # DRAW with D = 0, whatever the tables say
    elif zeroing:
        distance = ZEROING_DISTANCE[child_wdl]
        # From clock 100 the 50-move draw is already there to claim: zeroing comes too late.
        entry.distance, entry.s = distance, abs(distance) + (clock if clock >= 100 else 0)
        entry.cls = classify(distance, entry.s, rule50=rule50)
    elif (clock >= 99 and rule50) or child_wdl == 0:
        pass  # DRAW with D = 0: the 50-move draw can be claimed, or the child is drawn
    else:
        low, high, min_distance = _bounds(-child_wdl, rule50)
        entry.cls, entry.distance, entry.s, entry.exact, entry.floor = high, None, None, False, low
        return entry, (low, min_distance)
    return entry, None


def _cannot_be_best(entry: RankedMove, min_distance: int, clock: int, best_low: MoveClass,
                    exact: list[RankedMove]) -> bool:
    high = entry.cls
    if high < best_low:
        return True
    if not high.winning:
        return False  # in losing classes a longer resistance is always possible
    min_s = min_distance + clock
    return any(m.cls > high or (m.cls == high and (m.checkmate or (m.s is not None and m.s < min_s)))
               for m in exact)


def _fastest_win(board: chess.Board, prober: Prober, pending: list[tuple[RankedMove, MoveClass, int]], clock: int,
                 rule50: bool, deadline: float | None) -> tuple[list[tuple[RankedMove, MoveClass, int]], bool]:
    """Resolve the non-zeroing winning move with the least D (the first in UCI order on a tie),
    when no move zeroes into a win at once.

    The root's DTZ ``d0`` is the least D a winning move reaches (give or take one ply of DTZ
    rounding). Candidates are taken in UCI order against a bound that starts at ``d0 + 1`` and
    shrinks to one less than the best D found: a candidate is refuted by the first reply after
    which the win takes longer, so only the moves that can be best cost a full DTZ probe. Every
    refuted or unneeded candidate keeps ``exact=False`` with its class capped by the D it is known
    to exceed. Returns the pending moves still to consider, and False when ``deadline`` cut the
    scan short (nothing is lost: the rest stay pending, with their bounds).
    """
    wins = sorted((p for p in pending if p[0].wdl == 2), key=lambda p: p[0].uci)
    if not wins:
        return pending, True
    d0 = prober.probe_dtz(board)
    floor = max(2, d0 - 1)  # no winning move can reach less
    bound = d0 + 1
    done: set[int] = set()
    refutations: list[chess.Move] = []  # replies that outlasted the bound: tried first on the next candidate
    for i, (entry, _low, _least) in enumerate(wins):
        if deadline is not None and time.monotonic() >= deadline:
            return pending, False
        if bound < floor:
            for later, _, _ in wins[i:]:  # not better than the move found: only their upper bound is known
                _cap(later, floor, clock, rule50)
                done.add(id(later))
            break
        if _win_within(board, entry.move, prober, bound, refutations):
            _resolve(board, entry, prober, clock, rule50)
            assert entry.distance is not None
            bound = min(bound, entry.distance - 1)
        else:
            _cap(entry, bound + 1, clock, rule50)
        done.add(id(entry))
    return [p for p in pending if id(p[0]) not in done], True


def _longest_loss(board: chess.Board, prober: Prober, pending: list[tuple[RankedMove, MoveClass, int]], clock: int,
                  rule50: bool, deadline: float | None) -> tuple[list[tuple[RankedMove, MoveClass, int]], bool]:
    """At a lost root, resolve the move that resists longest (the first in UCI order on a tie).

    The mirror of :func:`_fastest_win`: the root's DTZ bounds the longest resistance; a
    candidate is refuted by the first winning reply that zeroes sooner than the best found
    so far, so only the moves that can resist longest cost a full DTZ probe.
    """
    losses = sorted((p for p in pending if p[0].wdl == -2), key=lambda p: p[0].uci)
    if not losses:
        return pending, True
    ceiling = -prober.probe_dtz(board) + 1  # no move resists longer (give or take a ply of rounding)
    best = ceiling - 3  # a move must resist longer than this to be a candidate
    done: set[int] = set()
    refutations: list[chess.Move] = []
    for i, (entry, _low, _least) in enumerate(losses):
        if deadline is not None and time.monotonic() >= deadline:
            return pending, False
        if best >= ceiling:
            for later, _, _ in losses[i:]:
                _cap_loss(later, best, clock, rule50)
                done.add(id(later))
            break
        if _loss_beyond(board, entry.move, prober, best, refutations):
            _resolve(board, entry, prober, clock, rule50)
            assert entry.distance is not None
            best = max(best, -entry.distance)
        else:
            _cap_loss(entry, best, clock, rule50)
        done.add(id(entry))
    return [p for p in pending if id(p[0]) not in done], True


def _cap_loss(entry: RankedMove, most: int, clock: int, rule50: bool) -> None:
    """An unresolved losing move known to resist at most ``most`` plies: its best class."""
    entry.cls = min(entry.cls, classify(-max(most, 1), max(most, 1) + clock, rule50=rule50))


def _loss_beyond(board: chess.Board, move: chess.Move, prober: Prober, bound: int,
                 refutations: list[chess.Move]) -> bool:
    """Whether losing ``move`` may resist more than ``bound`` plies (|D| > bound).

    False as soon as one winning reply zeroes within ``bound`` plies of the root side's move:
    a zeroing reply that keeps the win, or a quiet one after which DTZ + 1 is that short.
    """
    board.push(move)
    try:
        if board.ep_square is not None or prober.dtz_stored(board):
            return prober.probe_dtz(board) + 1 > bound
        def shorter(after: chess.Board, zeroing: bool) -> bool:
            if zeroing:
                return 2 <= bound and prober.probe_wdl(after) == -2
            dtz = prober.probe_dtz(after)
            return dtz < 0 and 2 - dtz <= bound

        return not _refuted(board, list(board.generate_legal_moves()), refutations, shorter)
    finally:
        board.pop()


def _cap(entry: RankedMove, least_distance: int, clock: int, rule50: bool) -> None:
    """An unresolved winning move known to need at least ``least_distance`` plies: its best class."""
    entry.cls = min(entry.cls, classify(least_distance, least_distance + clock, rule50=rule50))


def _win_within(board: chess.Board, move: chess.Move, prober: Prober, bound: int,
                refutations: list[chess.Move]) -> bool:
    """Whether winning ``move`` may reach a zeroing move within ``bound`` plies (D <= bound).

    False as soon as one reply is found after which the win takes longer: D is the largest of
    2 (a zeroing reply) and DTZ + 2 of the positions after the quiet replies: where the table
    does not store the child's side, python-chess would probe all of them to answer. Replies in
    ``refutations`` (which outlasted the bound after an earlier candidate) are tried first.
    """
    if bound < 2:
        return False
    board.push(move)
    try:
        if board.ep_square is not None or prober.dtz_stored(board):  # one read (or en passant rules)
            return 1 - prober.probe_dtz(board) <= bound
        replies = [m for m in board.generate_legal_moves() if not board.is_zeroing(m)]
        return not _refuted(board, replies, refutations, lambda after, _: prober.probe_dtz(after) + 2 > bound)
    finally:
        board.pop()


def _refuted(board: chess.Board, replies: list[chess.Move], refutations: list[chess.Move],
             refutes: Callable[[chess.Board, bool], bool]) -> bool:
    """Whether one of ``replies`` refutes the candidate just made on ``board``: ``refutes(position
    after the reply, the reply zeroes)``. Replies that refuted an earlier candidate go first, and a
    new refutation joins them."""
    first = [m for m in refutations if m in replies]
    for reply in first + [m for m in replies if m not in first]:
        zeroing = board.is_zeroing(reply)
        board.push(reply)
        try:
            found = refutes(board, zeroing)
        finally:
            board.pop()
        if found:
            if reply not in first:
                refutations.insert(0, reply)
            return True
    return False


def _child_dtz(board: chess.Board, move: chess.Move, prober: Prober) -> int:
    """DTZ after ``move`` from the mover's view (the negated DTZ of the child)."""
    board.push(move)
    try:
        return -prober.probe_dtz(board)
    finally:
        board.pop()


def _resolve(board: chess.Board, entry: RankedMove, prober: Prober, clock: int, rule50: bool) -> None:
    d = _child_dtz(board, entry.move, prober)
    distance = d + (d > 0) - (d < 0)
    entry.dtz, entry.distance, entry.s = d, distance, abs(distance) + clock
    entry.cls = classify(distance, entry.s, rule50=rule50)
    entry.exact, entry.floor = True, None
