"""Summing a suite up: per file and per operation; per-position details as JSON and CSV."""

from __future__ import annotations

import csv
import json
import os
import statistics
from dataclasses import dataclass, field
from typing import TextIO

from chess_endgame.suite.scoring import Result


@dataclass
class Row:
    """Totals over a group of positions."""

    label: str
    total: int = 0
    solved: int = 0
    judged: int = 0
    tb_covered: int = 0
    tb_correct: int = 0
    seconds: list[float] = field(default_factory=list)
    depths: list[int] = field(default_factory=list)
    nodes: int = 0
    errors: int = 0
    played: int = 0
    play_ok: int = 0

    def add(self, result: Result, solved: bool | None) -> None:
        self.total += 1
        if solved is not None:
            self.judged += 1
            self.solved += solved
        if result.tb_correct is not None:
            self.tb_covered += 1
            self.tb_correct += result.tb_correct
        self.seconds.append(result.seconds)
        self.depths.append(result.depth)
        self.nodes += result.nodes
        self.errors += result.error is not None
        if result.play is not None and result.play.get("ok") is not None:
            self.played += 1
            self.play_ok += bool(result.play["ok"])

    @property
    def mean_seconds(self) -> float:
        return statistics.mean(self.seconds) if self.seconds else 0.0

    @property
    def mean_depth(self) -> float:
        return statistics.mean(self.depths) if self.depths else 0.0

    def record(self) -> dict:
        """The row as JSON data."""
        return {"label": self.label, "positions": self.total, "solved": self.solved, "judged": self.judged,
                "tb_correct": self.tb_correct, "tb_covered": self.tb_covered,
                "mean_seconds": round(self.mean_seconds, 4), "mean_depth": round(self.mean_depth, 2),
                "nodes": self.nodes, "errors": self.errors, "played": self.played, "play_ok": self.play_ok}


@dataclass
class Summary:
    total: Row
    by_file: list[Row]
    by_operation: list[Row]

    def record(self) -> dict:
        return {"total": self.total.record(), "by_file": [r.record() for r in self.by_file],
                "by_operation": [r.record() for r in self.by_operation]}


def summarize(results: list[Result]) -> Summary:
    total = Row("all")
    files: dict[str, Row] = {}
    operations: dict[str, Row] = {}
    for result in results:
        total.add(result, result.solved)
        files.setdefault(result.file, Row(os.path.basename(result.file))).add(result, result.solved)
        for op in result.operations:
            operations.setdefault(op, Row(op)).add(result, result.checks.get(op))
    return Summary(total, list(files.values()), list(operations.values()))


def write_json(results: list[Result], out: TextIO, *, meta: dict | None = None) -> None:
    """The run as one JSON document: ``{meta, summary, positions}``."""
    json.dump({"meta": meta or {}, "summary": summarize(results).record(),
               "positions": [r.record() for r in results]}, out, indent=2)
    out.write("\n")


CSV_COLUMNS = ("index", "file", "line", "id", "kind", "fen", "operations", "moves", "solved", "checks",
               "tb_correct", "tb_move_class", "tb_best_class", "score", "depth", "nodes", "seconds",
               "play_result", "play_expected", "play_plies", "error")


def write_csv(results: list[Result], out: TextIO) -> None:
    """One row per position (open ``out`` with ``newline=""``)."""
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for r in results:
        play = r.play or {}
        writer.writerow([r.index, r.file, r.line, r.id, r.kind, r.fen, " ".join(r.operations),
                         " ".join(r.moves), r.solved, json.dumps(r.checks), r.tb_correct, r.tb_move_class,
                         r.tb_best_class, r.score, r.depth, r.nodes, f"{r.seconds:.3f}",
                         play.get("result"), play.get("expected"), play.get("plies"), r.error])
