"""Running a suite: one engine per process (or Ray actor), positions in parallel, partial results kept."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import chess

from chess_endgame.batch.local import LocalProcesses
from chess_endgame.batch.protocol import Backend, BackendError, WorkerLost
from chess_endgame.batch.runner import run_batch
from chess_endgame.engine.player import Player
from chess_endgame.play.engines import EngineError, ExternalEngine, PlayerEngine
from chess_endgame.play.game import TablebaseAgent, play_game
from chess_endgame.suite.items import Item
from chess_endgame.suite.scoring import Result, check_epd, expected_result, tablebase_verdict
from chess_endgame.tablebase.prober import Prober
from chess_endgame.tablebase.remote import RemoteProber, default_cache_path

#: This many positions given up (their engine died on the retry too) end the run (the rest is reported as not run).
MAX_CRASHES = 3


@dataclass(frozen=True)
class EngineSpec:
    """Everything a worker process needs to build its engine (picklable)."""

    command: str | None = None  # None: this project's player, in-process
    options: tuple[tuple[str, str], ...] = ()
    limits: chess.engine.Limit = field(default_factory=chess.engine.Limit)
    syzygy_path: str | None = None
    play: bool = False
    max_plies: int = 300
    #: A server speaking the Lichess tablebase API that the player asks at the root (None: local tables only).
    remote_tablebase: str | None = None

    def solver(self) -> PlayerEngine | ExternalEngine:
        if self.command is None:
            player = Player(Prober(self.syzygy_path or None))
            if self.remote_tablebase:
                player.set_remote(RemoteProber(self.remote_tablebase, cache_path=default_cache_path()))
            return PlayerEngine(player, self.limits)
        return ExternalEngine(self.command, dict(self.options), self.limits)


@dataclass
class SuiteRun:
    """What a suite run gives back: every result, and what went wrong on the way."""

    results: list[Result] = field(default_factory=list)
    interrupted: bool = False
    #: Engine failures (start-up, crashes), in order.
    errors: list[str] = field(default_factory=list)
    #: Positions run a second time because their engine (or Ray actor) died: (index, id, why).
    retried: list[tuple[int, str, str]] = field(default_factory=list)


class _Worker:
    """Solves items with one engine; when the engine dies the batch runner restarts it (a new worker)."""

    def __init__(self, spec: EngineSpec) -> None:
        self.spec = spec
        self.solver: PlayerEngine | ExternalEngine = spec.solver()
        self.prober = Prober(spec.syzygy_path or None)
        if isinstance(self.solver, PlayerEngine):
            self.solver.warm()  # so that the first position's time is its own

    def run(self, task: tuple[int, Item]) -> Result:
        """One task of the batch runner: (index, item)."""
        return self.solve(*task)

    def solve(self, index: int, item: Item) -> Result:
        board = item.board()
        result = Result(index, item.file, item.line, item.id, item.kind, item.fen, item.operations, item.expected())
        try:
            self.solver.new_position()
            if item.kind == "puzzle":
                self._puzzle(item, board.copy(), result)
            else:
                answer = self.solver.answer(board)
                result.moves = [answer.move] if answer.move else []
                result.checks = check_epd(item, board, answer, self.prober)
                self._note(result, answer)
            first = result.moves[0] if result.moves else None
            result.tb_correct, result.tb_move_class, result.tb_best_class = \
                tablebase_verdict(item.board(), first, self.prober)
            if self.spec.play:
                result.play = self._play(item, board)
        except EngineError as exc:
            raise WorkerLost(str(exc)) from None  # the runner restarts the engine and retries the position once
        except Exception as exc:  # noqa: BLE001 - one position must not cost the whole run
            result.error = f"{type(exc).__name__}: {exc}"
        return result

    def _note(self, result: Result, answer) -> None:
        result.score = result.score or answer.score_text()
        result.depth = max(result.depth, answer.depth)
        result.nodes += answer.nodes
        result.seconds += answer.seconds

    def _puzzle(self, item: Item, board: chess.Board, result: Result) -> None:
        solution = item.solution
        solved = True
        for i in range(0, len(solution), 2):
            answer = self.solver.answer(board)
            self._note(result, answer)
            result.moves.append(answer.move or "0000")
            expected = solution[i]
            last = i + 1 >= len(solution)
            if answer.move != expected:
                # At the last move any mate solves the puzzle too.
                if not (last and answer.move and _mates_now(board, answer.move)):
                    solved = False
                break
            board.push(chess.Move.from_uci(expected))
            if not last:
                board.push(chess.Move.from_uci(solution[i + 1]))
        result.checks = {"puzzle": solved}

    def _play(self, item: Item, board: chess.Board) -> dict:
        start = item.board()
        expected = expected_result(item, start, self.prober)
        defender = TablebaseAgent(self.prober, fallback=self.solver)
        ours, theirs = self.solver, defender
        white, black = (ours, theirs) if start.turn == chess.WHITE else (theirs, ours)
        record = play_game(start, white, black, max_plies=self.spec.max_plies)
        return {"result": record.result, "expected": expected, "plies": record.plies,
                "termination": record.termination, "ok": None if expected is None else record.result == expected}

    def close(self) -> None:
        self.solver.close()
        self.prober.close()


def _given_up(task: tuple[int, Item], why: str) -> Result:
    """The result of a position whose engine died on it twice."""
    index, item = task
    result = Result(index, item.file, item.line, item.id, item.kind, item.fen, item.operations, item.expected())
    result.error = f"{why} (retried once; it died again)"
    return result


def _mates_now(board: chess.Board, uci: str) -> bool:
    move = chess.Move.from_uci(uci)
    if move not in board.legal_moves:
        return False
    board.push(move)
    try:
        return board.is_checkmate()
    finally:
        board.pop()


def run_items(items: list[Item], spec: EngineSpec, *, jobs: int = 1, backend: Backend | None = None,
              on_result: Callable[[Result], None] | None = None) -> SuiteRun:
    """Solve every item; ``on_result`` sees each result as it arrives. Ctrl-C keeps what is done.

    Runs through the shared batch runner (:mod:`chess_endgame.batch`), one engine per process
    (``jobs``) or on ``backend`` (e.g. Ray actors). A position whose engine dies is
    run once more on a restarted engine, then reported with its error.

    :raises EngineError: when the engine cannot be started at all.
    :raises BackendError: when the back end cannot start (a node without the tables).
    """
    outcome = SuiteRun()

    def take(result: Result) -> bool:
        if on_result:
            on_result(result)
        if result.error:
            outcome.errors.append(f"{result.id}: {result.error}")
        return len(outcome.errors) < MAX_CRASHES

    if backend is None and jobs > 1:
        spec.solver().close()  # fail early, in the parent, when the engine cannot start
    batch = run_batch(functools.partial(_Worker, spec), list(enumerate(items)),
                      backend=backend or LocalProcesses(jobs), on_result=take, failed=_given_up)
    outcome.results, outcome.interrupted = batch.results, batch.interrupted
    done = {result.index for result in batch.results}
    outcome.retried = [(i, items[i].id, why) for i, why in sorted(batch.retried.items()) if i in done]
    if len(outcome.errors) >= MAX_CRASHES and len(batch.results) < len(items) and not batch.interrupted:
        outcome.errors.append(f"the run stopped after {MAX_CRASHES} failed positions; "
                              f"{len(items) - len(batch.results)} not run")
    if isinstance(batch.error, (EngineError, BackendError)):
        if not outcome.results:
            raise batch.error  # the engine (or the back end) cannot start at all
        outcome.errors.append("the engine could not be restarted" if isinstance(batch.error, EngineError)
                              else f"the run stopped: {batch.error}")
    elif batch.error is not None:
        outcome.errors.append(f"the run stopped: {type(batch.error).__name__}: {batch.error}")
    return outcome
