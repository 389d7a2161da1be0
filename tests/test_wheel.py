"""The package as a user installs it: an sdist and a wheel built from the checkout, installed into a venv of
its own outside the checkout, used from another directory with no $SYZYGY_PATH and no tables anywhere but
the embedded set, on an empty numba cache (the UCI engine's cold start, a go sent before isready, is checked
here, on a real install; `chess-endgame bench startup`'s example checks the cold start with isready)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from pathlib import Path

import chess
import pytest

from .conftest import ROOT, Pipe

pytestmark = pytest.mark.slow


def _run(*args: str | Path, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, (args, result.stdout[-2000:], result.stderr[-2000:])
    return result


@pytest.mark.long
def test_the_wheel_works_alone(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    # python -m build: the sdist first, then the wheel built from the sdist (so the sdist must hold it all).
    _run(sys.executable, "-m", "build", "--outdir", dist, ROOT, timeout=600)
    sdist = next(dist.glob("chess_endgame-*.tar.gz"))
    wheel = next(dist.glob("chess_endgame-*.whl"))
    with tarfile.open(sdist) as tar:
        assert len([n for n in tar.getnames() if re.search(r"/tablebases/K\w+\.rtb[wz]$", n)]) == 70
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
    assert len([n for n in names if re.fullmatch(r"chess_endgame_tablebases/K\w+\.rtb[wz]", n)]) == 70
    assert "chess_endgame_tablebases/checksums/wdl345.txt" in names
    assert {"chess_endgame/serve/static/index.html", "chess_endgame/serve/static/explorer.js"} <= set(names)
    assert not [n for n in names if n.startswith(("cli/", "tablebases/", "tests/"))]

    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv, timeout=300)
    _run(venv / "bin" / "pip", "install", "--quiet", "--disable-pip-version-check", f"{wheel}[serve]", timeout=900)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("SYZYGY_PATH", "PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HOME=str(tmp_path / "home"), XDG_DATA_HOME=str(tmp_path / "home" / "data"),
               XDG_CACHE_HOME=str(tmp_path / "home" / "cache"), NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    binary = venv / "bin"

    probe = _run(binary / "chess-endgame", "probe", "8/6k1/4K3/6B1/8/8/5N2/8 w - - 0 1", cwd=elsewhere, env=env,
                 timeout=300).stdout
    assert re.search(r"WDL\s+2", probe) and "win" in probe, probe
    info = _run(binary / "chess-endgame", "tablebases", "info", cwd=elsewhere, env=env, timeout=120).stdout
    assert "chess_endgame_tablebases (embedded): 35 tables" in info, info

    # The engine's first start on the empty cache (the probe above compiled only the prober), as a GUI that
    # never sends isready: uciok at once, and the first go answered once the search core is compiled (the
    # engine keeps reading meanwhile); then isready, and the input ends (every isready read is answered
    # before the engine exits).
    fen = "8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1"
    started = time.monotonic()
    uci = Pipe([str(binary / "chess-endgame-uci")], env=env, cwd=elsewhere)
    try:
        uci.send("uci")
        uciok, _ = uci.expect("uciok", 10)
        uci.send(f"position fen {fen}")
        uci.send("go depth 3")
        answered, bestmove = uci.expect("bestmove", 900)
        uci.send("isready")
        assert uci.proc.stdin is not None
        uci.proc.stdin.close()
        uci.expect("readyok", 60)
        assert uci.proc.wait(timeout=20) == 0
    finally:
        uci.close()
    stderr = uci.stderr()
    assert "warm-up failed" not in stderr and "Traceback" not in stderr, stderr
    assert chess.Move.from_uci(bestmove.split()[1]) in chess.Board(fen).legal_moves, bestmove
    assert uciok - started < 2.0, f"uciok after {uciok - started:.2f} s"
    assert answered > uciok + 1.0, f"uciok after {uciok - started:.2f} s, bestmove after {answered - started:.2f} s"
    assert [p for p in (tmp_path / "numba").rglob("*") if p.suffix in (".nbi", ".nbc")]  # the core was cached

    server = subprocess.Popen([str(binary / "chess-endgame"), "serve", "--port", "0"], cwd=elsewhere, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = None
        deadline = time.monotonic() + 120
        assert server.stdout is not None
        while url is None and time.monotonic() < deadline:
            line = server.stdout.readline()
            match = re.search(r"(http://127\.0\.0\.1:\d+)", line)
            url = match.group(1) if match else None
        assert url, "serve printed no address"
        page = urllib.request.urlopen(url + "/", timeout=30).read().decode()
        assert "<html" in page.lower() and "explorer" in page.lower()
        script = urllib.request.urlopen(url + "/static/explorer.js", timeout=30).read()
        assert len(script) > 1000
        answer = urllib.request.urlopen(url + "/standard?fen=8/6k1/4K3/6B1/8/8/5N2/8_w_-_-_0_1", timeout=30).read()
        assert b'"category":"win"' in answer.replace(b" ", b"")
    finally:
        server.terminate()
        server.wait(timeout=30)
