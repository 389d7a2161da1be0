"""chess_endgame.bench and ``chess-endgame bench``: the one percentile every benchmark reports, and what the
benchmarks print."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from chess_endgame.bench.common import percentile

from .conftest import run


@pytest.mark.parametrize("q", [0, 1, 25, 50, 90, 99, 99.9, 100])
def test_percentile_equals_numpy_s_linear_interpolation(q: float) -> None:
    values = [3.0, 1.0, 4.0, 1.5, 9.0, 2.6, 5.3, 5.8, 9.7, 9.3, 2.4]
    assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)))


def test_p99_9_differs_from_the_maximum_and_edge_cases() -> None:
    values = list(range(1001))
    assert percentile(values, 99.9) == pytest.approx(999.0) and percentile(values, 100) == 1000
    assert percentile([7.0], 99) == 7.0 and math.isnan(percentile([], 50))
    with pytest.raises(ValueError, match="from 0 to 100"):
        percentile(values, 101)


def test_bench_commands_print_their_figures(five_pieces: str) -> None:
    code, out, _ = run("bench", "search", "--depth", "2", "--repeat", "1")
    assert code == 0 and "signature:" in out and "nodes/cpu-s" in out
    code, out, _ = run("bench", "choose", "--positions", "1", "--repeat", "1", "--worst-positions", "1")
    assert code == 0 and "speed-up: median" in out and "same best class" in out
    assert "worst case, one cold choice each" in out and "p99.9" in out and "reserved by the time manager" in out
    code, out, _ = run("bench", "probe", "--positions", "10", "--repeat", "1", "--game-plies", "6")
    assert code == 0 and "WDL, distinct positions" in out and "game replay" in out


@pytest.mark.slow
def test_bench_threads_tree_probes_and_serve_print_their_figures(five_pieces: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from chess_endgame.engine import smp

    monkeypatch.setattr(smp, "usable_cores", lambda: 64)  # two threads even where this process has one core
    code, out, err = run("bench", "threads", "--movetime", "60")
    assert code == 0, err
    rows = [line for line in out.splitlines() if line.startswith("endgame")]
    assert len(rows) == 8 and all(float(row.split()[-3]) > 0 for row in rows)  # the ratio column
    assert out.splitlines()[-2].startswith("total") and "N = 2 threads, 60 ms" in out
    for prober in ("compiled", "python-chess"):
        code, out, err = run("bench", "tree-probes", "--positions", "2", "--depth", "4", "--prober", prober)
        assert code == 0, err
        assert ("by the compiled prober" in out) == (prober == "compiled") and "% of the search" in out
    code, out, err = run("bench", "serve", "--requests", "12", "--clients", "3")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[2].split()[0] == "compiled" and lines[3].split()[0] == "python-chess"
    assert all(line.split()[-1] == "0" for line in lines[2:4])  # no failures
    assert lines[-1].startswith("compiled / python-chess: ")


def test_bench_search_prints_only_what_it_measured() -> None:
    code, out, err = run("bench", "search", "--depth", "2", "--repeat", "1")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["position", "depth", "EBF", "nodes"]
    rows = [line for line in lines[1:] if line[34:40].strip().isdigit()]
    assert len(rows) == 13
    for row in rows:  # nodes/cpu-s is this run's nodes over this run's CPU seconds
        nodes, cpu, nps = int(row[46:56]), float(row[56:64]), float(row[64:77].replace(",", ""))
        assert abs(nodes / nps - cpu) <= 0.0051  # the CPU seconds are printed rounded to 0.01
    total = next(line for line in lines if line.startswith("total"))
    assert int(total[46:56]) == sum(int(row[46:56]) for row in rows)
    assert not any(word in out for word in ("sunfish", "peer", "python-chess engine", "reference"))
    # Two iterations give no branching factor: "-", not nan; and the compiled code loads before any clock runs.
    assert "nan" not in out and all(row[40:46].strip() == "-" for row in rows), out
    assert float(rows[0][56:64]) < 0.2, rows[0]  # loading counted there took 0.3 s or more


def test_bench_startup_times_each_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """On an engine that takes 0.5 s to get ready (tests/fake_engine.py, standing in for a cold compile): two
    starts by default, a third that sends go before isready with --without-isready."""
    from chess_endgame.bench import startup

    fake = [sys.executable, str(Path(__file__).parent / "fake_engine.py"), "warming:0.5"]
    monkeypatch.setattr(startup, "engine_command", lambda: fake)
    rows = startup.bench_startup(1)
    assert [r.label for r in rows] == ["cold (empty cache)", "warm (that cache)"]
    assert all(r.readyok is not None and r.readyok >= 0.5 > r.uciok for r in rows)
    code, out, _ = run("bench", "startup", "--without-isready")
    assert code == 0, out
    third = out.splitlines()[4].split()
    assert out.splitlines()[2].startswith("cold (empty cache)") and third[:4] == ["cold,", "go", "without", "isready"]
    assert third[5] == "-" and float(third[6]) >= 0.4, out  # no readyok; the go waited for the engine


def test_a_bad_tables_directory_is_warned_of_and_five_men_benchmarks_want_five_men(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "missing"
    monkeypatch.setenv("SYZYGY_PATH", str(missing))  # the embedded 3-4-man set is all that is left
    for command in (["tree-probes", "--positions", "1", "--depth", "1"],
                    ["threads", "--tables", "--positions", "1", "--movetime", "10"]):
        code, out, err = run("bench", *command)
        assert code == 2 and out == ""
        assert f"chess-endgame: warning: Syzygy directory {missing}: No such file or directory" in err
        assert "this benchmark needs 5-man tables and " in err and "has tables up to 4 men" in err, err


def test_bench_convert_names_the_materials_it_played(syzygy_path: str) -> None:
    code, out, err = run("bench", "convert", "--positions", "2", "--mate-nodes", "100")
    assert code == 0, err
    assert out.splitlines()[0] == "2 won positions (seed 1) of KQPvK, KRPvK"  # the first two, round robin
    assert [line.split()[-2] for line in out.splitlines()[2:4]] == ["2/2", "2/2"]  # both converted, both modes


def test_bench_threads_wants_no_more_threads_than_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    from chess_endgame.engine import smp

    monkeypatch.setattr(smp, "usable_cores", lambda: 2)
    code, out, err = run("bench", "threads", "--threads", "3", "--movetime", "10")
    assert code == 2 and out == ""
    assert err == "chess-endgame: error: --threads 3: this process may use 2 cores, and a search starts no more " \
        "threads than that\n"
    monkeypatch.setattr(smp, "usable_cores", lambda: 1)
    assert "this process may use 1 core, and" in run("bench", "threads", "--movetime", "10")[2]
