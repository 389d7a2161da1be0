"""Judging answers: bm / am / dm / wdl / dtz operations, puzzles, and the tablebases' verdict."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import chess

from chess_endgame.chooser import Choice, choose, game_result, rank_move
from chess_endgame.play.engines import Answer
from chess_endgame.suite.items import Item
from chess_endgame.tablebase.prober import NotCoveredError, Prober


@dataclass
class Result:
    """Everything the runner learnt about one position."""

    index: int
    file: str
    line: int
    id: str
    kind: str
    fen: str
    operations: list[str]
    #: What the position asks for (:meth:`~.items.Item.expected`).
    expected: dict = field(default_factory=dict)
    #: The solver's moves (one for EPD; every solver move tried for a puzzle).
    moves: list[str] = field(default_factory=list)
    #: Per operation: True solved, False failed, None cannot be judged (e.g. not in the tables).
    checks: dict[str, bool | None] = field(default_factory=dict)
    #: Tablebase verdict on the first move: is it of the root's best class? None when not covered.
    tb_correct: bool | None = None
    tb_move_class: str | None = None
    tb_best_class: str | None = None
    score: str | None = None
    depth: int = 0
    nodes: int = 0
    seconds: float = 0.0
    #: --play: {"result", "expected", "plies", "termination", "ok"}
    play: dict | None = None
    error: str | None = None

    @property
    def solved(self) -> bool | None:
        judged = [v for v in self.checks.values() if v is not None]
        return all(judged) if judged else None

    def record(self) -> dict:
        data = asdict(self)
        data["solved"] = self.solved
        return data


def check_epd(item: Item, board: chess.Board, answer: Answer, prober: Prober | None) -> dict[str, bool | None]:
    """The EPD operations' verdicts for ``answer`` in ``board``."""
    ops = item.ops
    move = answer.move
    checks: dict[str, bool | None] = {}
    if "bm" in ops:
        checks["bm"] = move in ops["bm"]
    if "am" in ops:
        checks["am"] = move is not None and move not in ops["am"]
    if "dm" in ops:
        checks["dm"] = _mates(board, answer, int(ops["dm"]))
    if "wdl" in ops or "dtz" in ops:
        ranked = _ranked(board, move, prober)
        if "wdl" in ops:
            checks["wdl"] = None if ranked is None else ranked[0].wdl == ops["wdl"]
        if "dtz" in ops:
            checks["dtz"] = None if ranked is None else _dtz_optimal(ranked[0], ranked[1], int(ops["dtz"]))
    return checks


def _mates(board: chess.Board, answer: Answer, n: int) -> bool:
    """Mate in at most ``n`` reported with the move played; a PV long enough must end in mate."""
    if answer.mate is None or not 0 < answer.mate <= n or answer.move is None:
        return False
    plies = 2 * answer.mate - 1
    if len(answer.pv) < plies or answer.pv[0] != answer.move:
        return True  # a short PV: the engine's word (its first move is the move played)
    line = board.copy()
    for uci in answer.pv[:plies]:
        move = chess.Move.from_uci(uci)
        if move not in line.legal_moves:
            return False
        line.push(move)
    return line.is_checkmate()


def _ranked(board: chess.Board, move: str | None, prober: Prober | None):
    if prober is None or move is None or prober.covers(board) is not None:
        return None
    try:
        choice = choose(board, prober)
        ranked = rank_move(board, chess.Move.from_uci(move), prober)
    except NotCoveredError:
        return None
    if not isinstance(choice, Choice) or not choice.moves:
        return None
    return ranked, choice


def _dtz_optimal(ranked, choice: Choice, expected: int) -> bool:
    """The move is of the best class and makes DTZ progress as fast as the key says (rounding allowed)."""
    if ranked.cls != choice.result:
        return False
    if expected == 0 or ranked.zeroing or ranked.checkmate or ranked.distance is None:
        return True
    return abs(abs(ranked.distance) - abs(expected)) <= 1


def tablebase_verdict(board: chess.Board, move: str | None, prober: Prober | None
                      ) -> tuple[bool | None, str | None, str | None]:
    """(move of the best class?, the move's class, the root's best class), or Nones when not covered."""
    ranked = _ranked(board, move, prober)
    if ranked is None:
        return None, None, None
    entry, choice = ranked
    return entry.cls == choice.result, entry.cls.name, choice.result.name


def expected_result(item: Item, board: chess.Board, prober: Prober | None) -> str | None:
    """The result a play-out should reach: the ``result``/``c0`` operation, else the tables' verdict."""
    if "result" in item.ops:
        return item.ops["result"]
    if prober is None or prober.covers(board) is not None:
        return None
    choice = choose(board, prober)
    if not isinstance(choice, Choice):
        return None
    return game_result(choice.result, board.turn)
