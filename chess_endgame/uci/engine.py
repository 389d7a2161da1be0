"""UCI adapter: the protocol, Stockfish's option names, a reader thread and a search thread.

The main thread reads commands; ``go`` starts a worker thread that asks the
:class:`~.player.Player` for a move and prints ``info`` lines and exactly one
``bestmove``. ``isready``, ``stop`` and ``ponderhit`` are answered while it
searches. Bad input gets an ``info string`` and changes nothing; the engine
never exits on bad input. Only protocol lines go to stdout.

At start-up a thread compiles the search core (or loads numba's cache):
``uciok`` comes at once, ``readyok`` once the compiled code is ready.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TextIO

import chess

from chess_endgame.board import PositionError, parse_position
from chess_endgame.engine.player import DEFAULT_MOVETIME_MS, Decision, Player, class_score, class_wdl
from chess_endgame.engine.result import Info, Limits, uci_words
from chess_endgame.tablebase.paths import with_embedded
from chess_endgame.tablebase.prober import Prober
from chess_endgame.tablebase.remote import RemoteProber, default_cache_path
from chess_endgame.uci.go import Go, parse_go, start_clock, start_movetime
from chess_endgame.uci.options import declaration, options, parse_value, wdl
from chess_endgame.version import __version__

ENGINE_NAME = f"chess-endgame {__version__}"
AUTHOR = "the chess-endgame developers"


class Session:
    """One ``go``: its limits, its worker thread and when its ``bestmove`` may go out.

    The reading thread (``stop``, ``ponderhit``, ``isready``) and the worker meet
    only here, under one lock; a session is never reused, so a late ``stop`` can
    only reach the search it was meant for.
    """

    def __init__(self, limits: Limits, *, pondering: bool, ponder_budget: tuple[float, float, float] | None,
                 ponder_movetime: int | None = None, infinite: bool = False) -> None:
        self.limits = limits
        self._lock = threading.Lock()
        self._pondering = pondering
        #: The go said ``infinite``: after ``ponderhit`` the bestmove still waits for ``stop``.
        self._infinite = infinite
        #: ms (soft, hard, clock) to apply from ``ponderhit`` on.
        self._ponder_budget = ponder_budget
        #: ms of move time to apply from ``ponderhit`` on.
        self._ponder_movetime = ponder_movetime
        #: Set on stop / ponderhit (and at once unless infinite or pondering): the bestmove may go out.
        self.release = threading.Event()
        #: Set by the worker just before it sends the bestmove.
        self.finished = threading.Event()
        self.thread: threading.Thread | None = None
        if not (limits.infinite or pondering):
            self.release.set()

    def stop(self) -> None:
        with self._lock:
            self.limits.stop.set()
            self.release.set()

    def ponderhit(self) -> None:
        """Switch from pondering to the move's own limits (a no-op unless pondering)."""
        with self._lock:
            if not self._pondering:
                return
            self._pondering = False
            limits = self.limits
            if self._ponder_budget is not None:
                start_clock(limits, self._ponder_budget)
            if self._ponder_movetime is not None:
                start_movetime(limits, self._ponder_movetime)
            if not self._infinite:  # from now on the search's own limits (clock, depth, ...) apply
                limits.infinite = False
                self.release.set()

    def searching(self) -> bool:
        """The bestmove is not out yet."""
        return self.thread is not None and self.thread.is_alive() and not self.finished.is_set()

    def join(self) -> None:
        if self.thread is not None:
            self.thread.join()


class UciEngine:
    """One engine process: call :meth:`run` with the input and output streams."""

    def __init__(self, output: TextIO | None = None, *, player: Player | None = None,
                 warmed: threading.Event | None = None) -> None:
        """``warmed``: set when the start-up warm-up (:func:`.core.warm.start`) is over; ``readyok``
        waits for it."""
        self.out = output or sys.stdout
        self._warmed = warmed
        self._readyok_pending: list[threading.Thread] = []
        self._write_lock = threading.Lock()
        #: The GUI closed our output: see :meth:`send`.
        self.output_closed = False
        self.options = {o.name.lower(): o for o in options()}
        self.values = {o.name.lower(): o.default for o in self.options.values()}
        self.player = player or Player(Prober(with_embedded(self.values["syzygypath"] or None)))
        if warmed is not None:
            self._warmed = self._then_read_tables(warmed)
        self.board = chess.Board()
        self._search_ply = 0
        #: Why the last ``position`` was refused (None: the board is the GUI's).
        self._rejected: str | None = None
        self._session: Session | None = None
        #: What the current search's last info line said, per MultiPV rank (repeats are not sent).
        self._sent: dict[int, tuple] = {}
        self._pending_options: list[tuple[str, str | None]] = []
        self.debug = False

    # -- I/O -------------------------------------------------------------------------

    def send(self, line: str) -> None:
        """Write one line to the GUI. Once the GUI has closed our output (it quit or crashed) nothing is
        written any more, from any thread; the end of the input then stops the search, as ``quit`` would."""
        with self._write_lock:
            if self.output_closed:
                return
            try:
                self._write(line + "\n")
            except (OSError, ValueError):  # BrokenPipeError; ValueError: the stream itself was closed
                self.output_closed = True

    def _write(self, text: str) -> None:
        """Write and flush ``text``; characters the output's encoding lacks (a path on a Windows pipe) go out as
        ``?``, so that a line is never lost for one character."""
        try:
            self.out.write(text)
        except UnicodeEncodeError:
            encoding = getattr(self.out, "encoding", None) or "ascii"
            self.out.write(text.encode(encoding, errors="replace").decode(encoding))
        self.out.flush()

    def info_string(self, text: str) -> None:
        self.send(f"info string {' '.join(text.split())}")

    def run(self, stream: TextIO | None = None) -> None:
        """Read commands until ``quit`` or end of input."""
        stream = stream or sys.stdin
        while True:
            line = stream.readline()  # the process reads stdin with errors="replace" (process.main)
            if not line:
                for waiting in self._readyok_pending:  # end of input: answer every isready read (quit does not)
                    waiting.join()
                break
            try:
                if not self.handle(line):
                    break
            except Exception as exc:  # noqa: BLE001 - the engine must survive anything it is sent
                self.info_string(f"error handling {line.strip()!r}: {type(exc).__name__}: {exc}")
        self._stop_search()

    def handle(self, line: str) -> bool:
        """Process one command line; False means quit."""
        tokens = line.split()
        if not tokens:
            return True
        self._apply_pending()
        handlers: dict[str, Callable[[list[str]], None]] = {
            "uci": self._uci, "isready": self._isready, "setoption": self._setoption,
            "ucinewgame": self._ucinewgame, "position": self._position, "go": self._go, "stop": self._stop,
            "ponderhit": self._ponderhit, "debug": self._debug, "register": lambda a: None,
        }
        # Unknown tokens before a command are skipped, as the protocol asks ("joho debug on" sets debug on).
        at = next((i for i, token in enumerate(tokens) if token in handlers or token == "quit"), None)
        if at is None:
            self.info_string(f"unknown command: {line.strip()[:80]}")
            return True
        if at:
            self.info_string(f"ignoring {' '.join(tokens[:at])[:80]!r} before {tokens[at]}")
        command, args = tokens[at], tokens[at + 1:]
        if command == "quit":
            return False
        handlers[command](args)
        return True

    # -- commands --------------------------------------------------------------------

    def _uci(self, args: list[str]) -> None:
        self.send(f"id name {ENGINE_NAME}")
        self.send(f"id author {AUTHOR}")
        for option in self.options.values():
            self.send(declaration(option))
        self.send("uciok")

    def _then_read_tables(self, warmed: threading.Event) -> threading.Event:
        """An event set once the warm-up is over and the compiled prober has read its tables' headers, which the
        first search would otherwise read on the clock."""
        ready = threading.Event()

        def run() -> None:
            warmed.wait()
            try:
                _ = self.player.prober.compiled_tables
            except Exception as exc:  # noqa: BLE001 - the first search reads them again and reports its own failure
                self.info_string(f"reading the tables' headers failed: {type(exc).__name__}: {exc}")
            finally:
                ready.set()

        threading.Thread(target=run, name="tables", daemon=True).start()
        return ready

    def _isready(self, args: list[str]) -> None:
        warmed = self._warmed
        if warmed is None or warmed.is_set():
            self.send("readyok")
            return

        def when_warm() -> None:  # the reader keeps reading meanwhile (stop, quit)
            warmed.wait()
            self.send("readyok")

        waiting = threading.Thread(target=when_warm, name="readyok", daemon=True)
        self._readyok_pending.append(waiting)
        waiting.start()

    def _debug(self, args: list[str]) -> None:
        self.debug = bool(args) and args[0] == "on"

    def _setoption(self, args: list[str]) -> None:
        lowered = [a.lower() for a in args]
        if not args or lowered[0] != "name":
            self.info_string("setoption needs: setoption name <id> [value <x>]")
            return
        if "value" in lowered:
            at = lowered.index("value")
            name, value = " ".join(args[1:at]), " ".join(args[at + 1:])
        else:
            name, value = " ".join(args[1:]), None
        if self.searching():
            self._pending_options.append((name, value))
            self.info_string(f"option {name} will be set when the search ends")
            return
        self._apply_option(name, value)

    def _apply_pending(self) -> None:
        """Set the options that arrived during a search, once it is over (on this, the reading thread)."""
        if self._pending_options and not self.searching():
            pending, self._pending_options = self._pending_options, []
            for name, value in pending:
                self._apply_option(name, value)

    def _apply_option(self, name: str, value: str | None) -> None:
        option = self.options.get(name.lower())
        if option is None:
            self.info_string(f"No such option: {name}")
            return
        try:
            parsed = parse_value(option, value)
        except ValueError as exc:
            self.info_string(f"{exc}; unchanged")
            return
        key = option.name.lower()
        o = self.player.options
        if key == "clear hash":
            self.player.new_game()
            return
        if key == "syzygypath":
            self._load_tables(str(parsed))
        if key == "syzygyremote" and not self._load_remote(str(parsed)):
            return
        self.values[key] = parsed
        if key == "hash":
            o.hash_mb = int(parsed)  # type: ignore[arg-type]
        elif key == "multipv":
            o.multipv = int(parsed)  # type: ignore[arg-type]
        elif key == "syzygyprobedepth":
            o.probe_depth = int(parsed)  # type: ignore[arg-type]
        elif key == "syzygyprobelimit":
            o.probe_limit = int(parsed)  # type: ignore[arg-type]
        elif key == "syzygy50moverule":
            o.rule50 = bool(parsed)
        elif key == "contempt":
            o.contempt = int(parsed)  # type: ignore[arg-type]
        elif key == "threads":
            o.threads = int(parsed)  # type: ignore[arg-type]
        self.player.apply_options()

    def _load_tables(self, path: str) -> None:
        prober = Prober(with_embedded(path or None), probe_limit=self.player.options.probe_limit)
        _ = prober.compiled_tables  # the headers read now, not at the first search's clock
        for directory, problem in prober.files.bad_directories.items():
            self.info_string(f"SyzygyPath directory {directory}: {problem}")
        self.player.set_prober(prober)
        self.info_string(prober.summary())

    def _load_remote(self, url: str) -> bool:
        """Use the server at ``url`` at the root where the tables do not reach (empty: none); False if unusable."""
        if not url.strip():
            self.player.set_remote(None)
            return True
        try:
            remote = RemoteProber(url, cache_path=default_cache_path())
        except ValueError as exc:
            self.info_string(f"SyzygyRemote: {exc}; unchanged")
            return False
        self.player.set_remote(remote)
        self.info_string(f"SyzygyRemote: {remote.summary()}, asked at the root only; answers cached in "
                         f"{default_cache_path()}")
        return True

    def _ucinewgame(self, args: list[str]) -> None:
        self._stop_search()
        self.player.new_game()
        self.board, self._rejected = chess.Board(), None  # a new game from the start position

    def _position(self, args: list[str]) -> None:
        """Set the board; a rejected ``position`` leaves no board until a valid one arrives (``go`` then
        answers ``bestmove 0000`` with the reason: the GUI's board is not the one we would search)."""
        if not args:
            self._reject("position needs: position startpos|fen <FEN> [moves ...]")
            return
        moves_at = args.index("moves") if "moves" in args else len(args)
        if args[0] == "startpos":
            fen = chess.STARTING_FEN
            extra = args[1:moves_at]
            if extra:
                self.info_string(f"ignoring {' '.join(extra)} after startpos")
        elif args[0] == "fen":
            fen = " ".join(args[1:moves_at])
        else:
            self._reject(f"position: expected startpos or fen, got {args[0]!r}")
            return
        try:
            board = parse_position(fen, args[moves_at + 1:])
        except PositionError as exc:
            self._reject(str(exc))
            return
        if board.chess960:
            self._reject("Chess960 is not supported")
            return
        self.board, self._rejected = board, None

    def _reject(self, why: str) -> None:
        """A ``position`` command was refused: say why, and search nothing until a valid one comes."""
        self._rejected = why
        self.info_string(f"{why}; no position until a valid one: go answers bestmove 0000")

    def _stop(self, args: list[str]) -> None:
        session = self._session
        if session is not None:
            session.stop()

    def _ponderhit(self, args: list[str]) -> None:
        session = self._session
        if session is not None:
            session.ponderhit()

    # -- go ----------------------------------------------------------------------------

    def searching(self) -> bool:
        """A search is under way (its bestmove not yet sent)."""
        session = self._session
        return session is not None and session.searching()

    def _stop_search(self) -> None:
        """End the current search, if any, and wait until its bestmove is out."""
        session, self._session = self._session, None
        if session is not None:
            session.stop()
            session.join()

    def _go(self, args: list[str]) -> None:
        self._stop_search()
        self._apply_pending()
        if self._rejected is not None:
            self.info_string(f"no position to search: the last position command was refused ({self._rejected})")
            # Even so, an infinite or pondering go keeps its bestmove until stop or ponderhit.
            session = Session(Limits(infinite="infinite" in args), pondering="ponder" in args, ponder_budget=None,
                              infinite="infinite" in args)
            session.thread = threading.Thread(target=self._no_move, args=(session,), daemon=True)
            self._session = session
            session.thread.start()
            return
        try:
            go = parse_go(args, self.board, overhead=int(self.values["move overhead"]),  # type: ignore[arg-type]
                          table_pieces=self.player.prober.max_pieces if self.player.prober.available else 0,
                          warn=self.info_string)
        except Exception as exc:  # noqa: BLE001 - every go gets its bestmove
            self.info_string(f"go: {type(exc).__name__}: {exc}; searching {DEFAULT_MOVETIME_MS} ms")
            go = Go(Limits(movetime=DEFAULT_MOVETIME_MS), None, False)
        session = Session(go.limits, pondering=go.ponder, ponder_budget=go.budget_ms if go.ponder else None,
                          ponder_movetime=go.ponder_movetime_ms, infinite=go.infinite)
        self._search_ply = self.board.ply()  # UCI_ShowWDL's model reads the game ply
        session.thread = threading.Thread(target=self._think, args=(self.board.copy(), session), daemon=True)
        self._session = session
        session.thread.start()

    def _no_move(self, session: Session) -> None:
        """The bestmove of a go without a position, once stop or ponderhit allows it."""
        session.release.wait()
        session.finished.set()
        self.send("bestmove 0000")

    def _think(self, board: chess.Board, session: Session) -> None:
        decision: Decision | None = None
        self._sent = {}
        try:
            decision = self.player.decide(board, session.limits, on_info=self._on_info)
        except Exception as exc:  # noqa: BLE001 - report, and still answer with a legal move
            self.info_string(f"search failed: {type(exc).__name__}: {exc}")
        if decision is not None:
            for note in decision.notes:
                self.info_string(note)
            for info in self._final_infos(decision, session.limits):
                self._on_info(info)
        # In ponder or infinite mode, bestmove waits for ponderhit / stop.
        session.release.wait()
        move = decision.move if decision is not None else None
        if move is None:
            legal = list(board.legal_moves)
            move = legal[0] if legal else None
        session.finished.set()
        if move is None:
            self.send("bestmove 0000")
        else:
            ponder = decision.ponder if decision is not None and decision.move == move else None
            self.send(f"bestmove {move.uci()}" + (f" ponder {ponder.uci()}" if ponder else ""))

    def _final_infos(self, decision: Decision, limits: Limits) -> list[Info]:
        """The last word on a decision: the tablebase verdict (one line per move with MultiPV: the move played
        first, then the others of ``limits.searchmoves``, or all, best first), or the search's result where it
        says more than its last iteration's line."""
        nps = decision.nodes * 1000 // max(decision.time_ms, 1)
        hashfull = self.player.searcher.tt.hashfull()
        if decision.source == "tablebase":
            rule50 = self.player.options.rule50
            if decision.choice is not None and self.player.options.multipv > 1:
                allowed = set(limits.searchmoves or ())
                entries = [e for e in decision.choice.moves if not allowed or e.move in allowed]
                entries.sort(key=lambda e: e.move != decision.move)  # stable: the others stay best first
                ranked = entries[: self.player.options.multipv]
                return [Info(1, 1, class_score(entry), decision.nodes, nps, decision.tbhits, hashfull,
                             decision.time_ms, decision.pv if entry.move == decision.move else [entry.move], rank,
                             wdl=class_wdl(entry.worst, rule50))
                        for rank, entry in enumerate(ranked, 1)]
            assert decision.cls is not None and decision.score is not None
            # A mate the search proved among the tables' moves is certain, whatever the class says of the clock.
            certain = wdl(decision.score, self._search_ply) if decision.score.is_mate() else None
            return [Info(1, len(decision.pv), decision.score, decision.nodes, nps, decision.tbhits, hashfull,
                         decision.time_ms, decision.pv, wdl=certain or class_wdl(decision.cls, rule50))]
        if decision.move is None:  # mated or stalemated: Stockfish's "info depth 0 score mate 0" (cp 0), no pv
            over = None if decision.score is None or decision.score.is_mate() else chess.engine.Wdl(0, 1000, 0)
            return [] if decision.score is None else [Info(0, 0, decision.score, decision.nodes, nps, decision.tbhits,
                                                           hashfull, decision.time_ms, [], wdl=over)]
        return [Info(max(decision.depth, 1), decision.seldepth, decision.score, decision.nodes, nps,
                     decision.tbhits, hashfull, decision.time_ms, decision.pv, bound=decision.bound)]

    def _on_info(self, info: Info) -> None:
        """Send one info line, unless it only repeats the last line of its MultiPV rank (time aside)."""
        said = (info.depth, info.score, info.bound, info.nodes, tuple(info.pv))
        if self._sent.get(info.multipv) == said:
            return
        self._sent[info.multipv] = said
        parts = [f"info depth {info.depth} seldepth {max(info.seldepth, info.depth)}"]
        if self.player.options.multipv > 1:
            parts.append(f"multipv {info.multipv}")
        if info.score is not None:
            parts.append(f"score {uci_words(info.score)}")
            if info.bound:
                parts.append(info.bound)
            if self.values["uci_showwdl"]:
                parts.append("wdl {} {} {}".format(*(info.wdl or wdl(info.score, self._search_ply))))
        parts.append(f"nodes {info.nodes} nps {info.nps} tbhits {info.tbhits} time {info.time_ms} "
                     f"hashfull {info.hashfull}")
        if info.pv:
            parts.append("pv " + " ".join(m.uci() for m in info.pv))
        self.send(" ".join(parts))
