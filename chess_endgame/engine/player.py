"""The player: one service every front end uses to pick a move.

If the tables cover the root, the move chooser decides (and, in faster-mate
mode, a short search among the moves of the best class picks a quicker mate);
otherwise the alpha-beta searcher plays, probing the tables inside its tree.
With a remote tablebase (:mod:`.remote`), a root the local tables do not cover
is ranked from the server's answer when the clock allows the round trip; the
searcher never asks the server.
The CLI, the UCI adapter and the suite runner all call :meth:`Player.decide`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import chess
import chess.engine

from chess_endgame.board import outcome
from chess_endgame.chooser import Choice, MoveClass, RankedMove, choose, has_repeated, rank_move
from chess_endgame.engine.evaluation import Evaluator
from chess_endgame.engine.result import Info, Limits, SearchResult
from chess_endgame.engine.search import Searcher, load_compiled
from chess_endgame.engine.timeman import ranking_deadline
from chess_endgame.engine.tt import TranspositionTable
from chess_endgame.tablebase.prober import NotCovered, NotCoveredError, Prober, Reason, TablebaseProber
from chess_endgame.tablebase.remote import RemoteProber, RootProber

#: UCI score of a tablebase verdict at the root (Stockfish's convention: a win is cp 20000).
CLASS_SCORE = {MoveClass.WIN: 20000, MoveClass.MAYBE_WIN: 2, MoveClass.CURSED_WIN: 1, MoveClass.DRAW: 0,
               MoveClass.BLESSED_LOSS: -1, MoveClass.MAYBE_LOSS: -2, MoveClass.LOSS: -20000}

#: Think this long (ms) when a front end is given no limit at all.
DEFAULT_MOVETIME_MS = 1000


def class_score(entry: RankedMove) -> chess.engine.Score:
    """The score a tablebase move reports: mate 1 for a mate, else its class's (sure) value."""
    return chess.engine.Mate(1) if entry.checkmate else chess.engine.Cp(CLASS_SCORE[entry.worst])


def class_wdl(cls: MoveClass, rule50: bool = True) -> tuple[int, int, int]:
    """The exact win/draw/loss (permille, side to move) of a tablebase class (UCI ``wdl``).

    Under the 50-move rule cursed wins and blessed losses are draws; a MAYBE class,
    which DTZ rounding may make a draw, counts half.
    """
    return {MoveClass.WIN: (1000, 0, 0), MoveClass.MAYBE_WIN: (500, 500, 0),
            MoveClass.CURSED_WIN: (0, 1000, 0) if rule50 else (1000, 0, 0), MoveClass.DRAW: (0, 1000, 0),
            MoveClass.BLESSED_LOSS: (0, 1000, 0) if rule50 else (0, 0, 1000), MoveClass.MAYBE_LOSS: (0, 500, 500),
            MoveClass.LOSS: (0, 0, 1000)}[cls]


@dataclass
class Decision:
    """The move to play and where it came from."""

    move: chess.Move | None
    #: "tablebase" (the chooser decided, maybe helped by a mate search) or "search".
    source: str
    #: None when no search produced a score (see :class:`~.result.SearchResult`).
    score: chess.engine.Score | None
    pv: list[chess.Move] = field(default_factory=list)
    ponder: chess.Move | None = None
    #: Tablebase class and distance D of the move (None when the search decided alone).
    cls: MoveClass | None = None
    distance: int | None = None
    choice: Choice | None = None
    #: Why the tables did not answer (None when they did).
    not_covered: NotCovered | None = None
    depth: int = 0
    seldepth: int = 0
    nodes: int = 0
    tbhits: int = 0
    time_ms: int = 0
    lines: list[tuple[chess.engine.Score, list[chess.Move]]] = field(default_factory=list)
    #: "lowerbound" when the score is that of an unfinished iteration's best move.
    bound: str | None = None
    #: What the user should know about this move (UCI: ``info string``), e.g. why the remote tablebase failed.
    notes: list[str] = field(default_factory=list)


@dataclass
class PlayerOptions:
    """Knobs shared with UCI options of the same meaning (Stockfish's names in comments)."""

    hash_mb: int = 16                # Hash
    #: Search threads: the main search and ``threads - 1`` helpers sharing its hash (Lazy SMP).
    threads: int = 1                 # Threads
    probe_depth: int = 1             # SyzygyProbeDepth
    probe_limit: int = 7             # SyzygyProbeLimit
    rule50: bool = True              # Syzygy50MoveRule
    multipv: int = 1                 # MultiPV
    #: Centipawns a draw costs the side to move at the root, in the search's tree (see
    #: :class:`~chess_endgame.engine.search.Searcher`); the tables' verdict at a tablebase root is not changed.
    contempt: int = 0                # Contempt
    #: Search among the moves of the best tablebase class for a quicker mate / a better draw.
    faster_mate: bool = True
    #: Node budget of that search (it also stops at the caller's limits).
    faster_mate_nodes: int = 20000
    #: Also probe the root's DTZ (for reports such as ``chess-endgame best``).
    root_dtz: bool = False
    #: Plies of chooser play appended to a tablebase move's PV, and the time that may take.
    tb_pv_plies: int = 8
    tb_pv_ms: int = 30


def _deadline(limits: Limits, start: float, *, soft: bool = False) -> float | None:
    """When the answer is due (``time.monotonic()``): the hard deadline and the move time, or with
    ``soft`` the time manager's target (extra work at a tablebase root must not drain the clock)."""
    due = [limits.deadline] if limits.deadline is not None else []
    if soft and limits.soft_deadline is not None:
        due.append(limits.soft_deadline)
    if limits.movetime is not None:
        due.append(start + limits.movetime / 1000)
    return min(due) if due else None


class Player:
    """Tablebases where they reach, search beyond. Thread-compatible: one decision at a time."""

    def __init__(self, prober: Prober | None = None, *, options: PlayerOptions | None = None,
                 evaluator: Evaluator | None = None) -> None:
        self.options = options or PlayerOptions()
        self.prober = prober or Prober(None)
        self.prober.probe_limit = self.options.probe_limit
        self.searcher = Searcher(evaluator, prober=self.prober, hash_mb=self.options.hash_mb,
                                 probe_depth=self.options.probe_depth, rule50=self.options.rule50,
                                 multipv=self.options.multipv, contempt=self.options.contempt,
                                 threads=self.options.threads)
        self._mate_searcher = Searcher(self.searcher.evaluator, hash_mb=4)
        #: A server speaking the Lichess tablebase API, asked at the root only (None: local tables only).
        self.remote: RemoteProber | None = None

    # -- configuration -----------------------------------------------------------------

    def set_prober(self, prober: Prober) -> None:
        """Use other tables (UCI ``SyzygyPath``)."""
        old = self.prober
        self.prober = prober
        self.prober.probe_limit = self.options.probe_limit
        self.searcher.prober = prober
        self.searcher.tt.clear()
        old.close()

    def set_remote(self, remote: RemoteProber | None) -> None:
        """Ask this server where the local tables do not reach (UCI ``SyzygyRemote``); None: no server."""
        old, self.remote = self.remote, remote
        if remote is not None:
            remote.probe_limit = self.options.probe_limit
        if old is not None and old is not remote:
            old.close()

    def apply_options(self) -> None:
        """Push changed :attr:`options` into the prober and searcher."""
        o = self.options
        self.prober.probe_limit = o.probe_limit
        if self.remote is not None:
            self.remote.probe_limit = o.probe_limit
        s = self.searcher
        if s.tt.size != TranspositionTable.slots_for(o.hash_mb):
            s.tt.resize(o.hash_mb)
        s.probe_depth, s.rule50, s.multipv, s.contempt = o.probe_depth, o.rule50, o.multipv, o.contempt
        s.threads = o.threads

    def new_game(self) -> None:
        """Forget the hash and history tables (UCI ``ucinewgame``)."""
        self.searcher.clear()
        self._mate_searcher.clear()

    # -- deciding ----------------------------------------------------------------------

    def decide(self, board: chess.Board, limits: Limits | None = None,
               on_info: Callable[[Info], None] | None = None) -> Decision:
        """The move to play in ``board`` (its move stack is the game history)."""
        limits = limits or Limits()
        if self.prober.covers(board) is not None:
            # One-off set-up, before the clock starts, where the search will play; a root the tables rank
            # needs none of it, and its caller's deadlines (taken before the call) must not pay for it.
            load_compiled()
        _ = getattr(self.prober, "compiled_tables", None)  # the tables' headers read (once) before the clock, too
        start = time.monotonic()
        # MultiPV reports every move's class, and go mate may find its mate behind any winning move: then every DTZ
        # is probed. The ranking always completes unless the game clock would run out first (the time manager
        # reserves it).
        choice = choose(board, self.prober, rule50=self.options.rule50, full=self._full(limits),
                        root_dtz=self.options.root_dtz,
                        deadline=ranking_deadline(start, limits.deadline, limits.clock_deadline))
        notes: list[str] = []
        ranker: TablebaseProber = self.prober  # what ranked the root: the local tables, or they and the server
        if isinstance(choice, NotCovered) and self.remote is not None:
            choice, ranker = self._remote_choice(board, limits, start, choice, notes)
        # Only listed moves (go searchmoves): each ranked exactly; None where the tables cannot rank one of them.
        restricted: list[RankedMove] | None = []
        if isinstance(choice, Choice) and choice.moves and limits.searchmoves:
            restricted = self._restricted(board, limits.searchmoves, ranker)
        if isinstance(choice, Choice) and choice.moves and restricted is not None and limits.mate is not None:
            decision = self._mate_at_tables(board, choice, restricted, limits, on_info)
        elif isinstance(choice, Choice) and choice.moves and restricted is not None:
            decision = self._from_tables(board, choice, restricted, limits, _deadline(limits, start, soft=True))
        else:
            if isinstance(choice, NotCovered):
                best_wdl = self._wdl_moves(board, choice, limits.searchmoves)
            else:  # a listed move the tables cannot rank (its DTZ table missing): the search picks among them
                best_wdl = self._best_by_wdl(board, limits.searchmoves, ranker) if restricted is None else None
            if best_wdl:  # Stockfish's root_probe_wdl: without DTZ the search keeps to the moves of the best WDL
                limits = dataclasses.replace(limits, searchmoves=best_wdl)
            result = self.searcher.search(board, limits, on_info)
            decision = self._from_search(result)
            if isinstance(choice, NotCovered):
                decision.not_covered = choice
        decision.time_ms = int((time.monotonic() - start) * 1000)
        decision.notes = notes
        return decision

    def _mate_at_tables(self, board: chess.Board, choice: Choice, restricted: list[RankedMove], limits: Limits,
                        on_info: Callable[[Info], None] | None) -> Decision:
        """``go mate N`` at a root the tables rank (every move exactly: :meth:`_full`): the search looks for the mate
        among every move of their best class (until it finds one in N or less, or its other limits or ``stop`` end
        it, as Stockfish's does); the mate it finds is played, else the tables' move with their verdict."""
        among = [m.move for m in restricted or choice.best_class_moves()]
        found = self.searcher.search(board, dataclasses.replace(limits, searchmoves=among), on_info)
        if found.best_move is not None and found.score is not None and (found.score.mate() or 0) > 0:
            return self._from_search(found)
        decision = self._from_tables(board, choice, restricted, limits, None, mate_search=False)
        decision.nodes += found.nodes
        return decision

    def _wdl_moves(self, board: chess.Board, why: NotCovered,
                   searchmoves: list[chess.Move] | None) -> list[chess.Move] | None:
        """Where only a DTZ table is missing: the moves (of ``searchmoves``, if given) whose result under WDL alone
        is best (a mate first, then the child's WDL), so that the search cannot pick a move that throws the result
        away; None otherwise."""
        if why.reason is not Reason.MISSING_TABLE:
            return None
        return self._best_by_wdl(board, searchmoves, self.prober)

    @staticmethod
    def _best_by_wdl(board: chess.Board, searchmoves: list[chess.Move] | None,
                     prober: TablebaseProber) -> list[chess.Move] | None:
        """The moves (of ``searchmoves``, if given) whose result under WDL alone is best (a mate first, then the
        child's WDL), by ``prober``; None where a WDL table is missing too."""
        values: dict[chess.Move, int] = {}
        try:
            prober.probe_wdl(board)  # the WDL table is there (only its DTZ is missing)
            for move in searchmoves or board.legal_moves:
                if not board.is_legal(move):
                    continue
                board.push(move)
                try:
                    values[move] = 3 if board.is_checkmate() else -prober.probe_wdl(board)
                finally:
                    board.pop()
        except NotCoveredError:
            return None
        best = max(values.values(), default=None)
        return [m for m, v in values.items() if v == best] if best is not None else None

    def _remote_choice(self, board: chess.Board, limits: Limits, start: float, local: NotCovered,
                       notes: list[str]) -> tuple[Choice | NotCovered, TablebaseProber]:
        """The chooser on the remote server (local tables where they answer), when the clock allows
        the round trip, and the prober that ranked it; else, or when the server fails, ``local`` and a note saying
        why."""
        remote = self.remote
        assert remote is not None
        if remote.covers(board) is not None:
            return local, self.prober  # beyond the server too (more pieces, castling): nothing to say
        now = time.monotonic()
        due = _deadline(limits, start)
        clock_left = None if limits.clock_deadline is None else limits.clock_deadline - now
        timeout = remote.request_timeout(clock_left=clock_left, due_in=None if due is None else due - now)
        root = RootProber(self.prober, remote, timeout)
        asked = remote.remote_stats.requests
        try:  # the root first: its one answer holds every move's too (also those of a missing local table)
            remote.lookup(board, timeout)
        except NotCoveredError as exc:
            notes.append(f"remote tablebase {remote.url}: {exc.answer.message}; the searcher plays this move")
            return local, self.prober
        choice = choose(board, root, rule50=self.options.rule50, full=self._full(limits),  # type: ignore[arg-type]
                        root_dtz=self.options.root_dtz)
        if isinstance(choice, Choice):
            how = "its answer" if remote.remote_stats.requests > asked else "its cached answer"
            notes.append(f"remote tablebase {remote.url}: the root ranked from {how}")
            return choice, root  # type: ignore[return-value]
        if root.used_remote:
            notes.append(f"remote tablebase {remote.url}: {choice.message}; the searcher plays this move")
        return local, self.prober

    def _from_search(self, result: SearchResult) -> Decision:
        return Decision(result.best_move, "search", result.score, result.pv, result.ponder_move,
                        depth=result.depth, seldepth=result.seldepth, nodes=result.nodes, tbhits=result.tbhits,
                        time_ms=result.time_ms, lines=result.lines, bound=result.bound)

    def _full(self, limits: Limits) -> bool:
        """Whether the root's ranking must rank every move exactly (MultiPV, go mate), not only the best."""
        return self.options.multipv > 1 or limits.mate is not None

    def _from_tables(self, board: chess.Board, choice: Choice, restricted: list[RankedMove], limits: Limits,
                     due: float | None, *, mate_search: bool = True) -> Decision:
        """The chooser's move, or the best of ``restricted`` (the listed moves' best class, if any); ``due`` bounds
        the optional mate search (none with ``mate_search`` false: a search has looked already) and PV
        extension."""
        candidates = restricted or choice.best_class_moves()
        best = candidates[0]
        score = class_score(best)
        nodes = 0
        hits_before = self.prober.stats.tbhits
        if (mate_search and self.options.faster_mate and best.cls >= MoveClass.DRAW and not limits.searchmoves
                and not best.checkmate and not (best.cls.winning and has_repeated(board))
                and (due is None or due - time.monotonic() > 0.02)):
            candidates = candidates + self._more_of_class(board, choice, best, due)
        if best.cls == MoveClass.DRAW:  # a draw to claim: only among the moves that would still win without it
            candidates = [m for m in candidates if m.wdl == best.wdl]
        if (mate_search and self.options.faster_mate and len(candidates) > 1 and best.cls >= MoveClass.DRAW
                and not best.checkmate and not (best.cls.winning and has_repeated(board))
                and (due is None or due - time.monotonic() > 0.02)):
            found = self._search_among(board, candidates, limits, due)
            nodes = found.nodes
            if found.best_move is not None:
                if best.cls.winning and found.score is not None and (found.score.mate() or 0) > 0:
                    best = next(m for m in candidates if m.move == found.best_move)
                    score = found.score
                elif best.cls == MoveClass.DRAW:
                    best = next(m for m in candidates if m.move == found.best_move)
        pv = self._tablebase_pv(board, best.move, due)
        return Decision(best.move, "tablebase", score, pv, pv[1] if len(pv) > 1 else None, best.worst,
                        best.distance, choice, depth=1, nodes=nodes,
                        tbhits=self.prober.stats.tbhits - hits_before)

    def _more_of_class(self, board: chess.Board, choice: Choice, best: RankedMove,
                       due: float | None) -> list[RankedMove]:
        """Moves the chooser left unresolved (it needs only the best one) that are of ``best``'s class
        too, resolved exactly while ``due`` allows (half the time left, checks first): the faster-mate
        search picks among them."""
        unresolved = sorted((m for m in choice.moves if not m.exact and m.cls == best.cls),
                            key=lambda m: not board.gives_check(m.move))
        stop_at = None if due is None else time.monotonic() + (due - time.monotonic()) / 2
        found = []
        for entry in unresolved:
            if stop_at is not None and time.monotonic() >= stop_at:
                break
            try:
                ranked = rank_move(board, entry.move, self.prober, rule50=self.options.rule50)
            except NotCoveredError:
                break
            if ranked.cls == best.cls:
                found.append(ranked)
        return found

    def _restricted(self, board: chess.Board, searchmoves: list[chess.Move],
                    prober: TablebaseProber) -> list[RankedMove] | None:
        """The best-class moves among ``searchmoves`` (UCI ``go searchmoves``), each ranked exactly by ``prober``; []
        when none is legal, None when the tables cannot rank one of them (a DTZ table missing)."""
        try:
            ranked = sorted((rank_move(board, m, prober, rule50=self.options.rule50)
                             for m in dict.fromkeys(searchmoves) if board.is_legal(m)), key=RankedMove.sort_key)
        except NotCoveredError:
            return None
        return [m for m in ranked if m.cls == ranked[0].cls] if ranked else []

    def _search_among(self, board: chess.Board, candidates: list, limits: Limits,
                      due: float | None) -> SearchResult:
        """A short search restricted to ``candidates`` (no probes in the tree: it looks for real mates)."""
        budget = Limits(nodes=self.options.faster_mate_nodes, deadline=due, clock_deadline=limits.clock_deadline,
                        stop=limits.stop, searchmoves=[m.move for m in candidates])
        if limits.nodes is not None:
            budget.nodes = min(budget.nodes or limits.nodes, limits.nodes)
        if limits.movetime is not None:
            budget.movetime = limits.movetime
        if limits.depth is not None:
            budget.depth = limits.depth
        return self._mate_searcher.search(board, budget)

    def _tablebase_pv(self, board: chess.Board, move: chess.Move, deadline: float | None) -> list[chess.Move]:
        """``move`` followed by a few plies of pure tablebase play, so GUIs show a real line."""
        pv = [move]
        temp = board.copy()
        temp.push(move)
        stop_at = time.monotonic() + self.options.tb_pv_ms / 1000
        if deadline is not None:
            stop_at = min(stop_at, deadline - 0.005)
        for _ in range(self.options.tb_pv_plies):
            if time.monotonic() >= stop_at or outcome(temp) is not None:
                break
            nxt = choose(temp, self.prober, rule50=self.options.rule50, deadline=stop_at)
            if not isinstance(nxt, Choice) or not nxt.moves:
                break
            pv.append(nxt.best.move)  # type: ignore[union-attr]
            temp.push(nxt.best.move)  # type: ignore[union-attr]
        return pv
