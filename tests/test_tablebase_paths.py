"""The embedded 3-4-piece tables and where every command looks for tables (the front door)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import chess
import chess_endgame_tablebases
import pytest
from click.testing import CliRunner

from chess_endgame.tablebase import downloads
from chess_endgame.tablebase import files as tables
from chess_endgame.tablebase.paths import default_directory, embedded_directory, resolve_path, scan, user_path
from chess_endgame.tablebase.prober import Prober
from chess_endgame_cli.main import cli

from .conftest import ROOT, SHARED, run
from .httpserver import serve

BIN = Path(sys.executable).parent


@pytest.fixture
def no_user_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No $SYZYGY_PATH and an empty per-user data home (the directory is returned, not created)."""
    monkeypatch.delenv("SYZYGY_PATH", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data-home"))
    return tmp_path / "data-home" / "chess-endgame" / "syzygy"


def test_the_embedded_set_is_every_3_4_piece_table_with_its_official_checksum() -> None:
    directory = Path(embedded_directory())
    assert directory == ROOT / "tablebases"  # the checkout's folder, installed as chess_endgame_tablebases
    expected = set(tables.table_files(4))
    present = {p.name for p in directory.iterdir() if p.suffix in (".rtbw", ".rtbz")}
    assert present == expected and len(present) == 70
    official = tables.read_checksums(chess_endgame_tablebases.CHECKSUM_LISTS)
    for name in sorted(present):
        assert tables.embedded_checksum(str(directory / name)) == official[name], name
    # The shipped lists are the official ones (../shared holds the lists from the Syzygy generator).
    shared_lists = [SHARED / "syzygy" / "checksums" / n for n in ("wdl345.txt", "dtz345.txt")]
    if all(p.is_file() for p in shared_lists):
        assert official == tables.read_checksums(str(p) for p in shared_lists)
    assert len(official) == 290  # 145 tables of 3-5 pieces, WDL and DTZ


def test_no_other_table_file_is_tracked() -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (an sdist or a copy): nothing is tracked")
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    table_files = [line for line in tracked.splitlines() if line.endswith((".rtbw", ".rtbz"))]
    assert sorted(table_files) == sorted(f"tablebases/{n}" for n in tables.table_files(4))


def test_lookup_order_and_the_embedded_set_beneath(tmp_path: Path, no_user_tables: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    embedded = embedded_directory()
    # Nothing set, no per-user directory: the embedded set alone.
    assert resolve_path(None) == embedded and user_path(None) == ""
    # The per-user directory once it exists (XDG data home on Linux).
    no_user_tables.mkdir(parents=True)
    assert default_directory() == str(no_user_tables)
    assert resolve_path(None) == os.pathsep.join([str(no_user_tables), embedded])
    # $SYZYGY_PATH over it, an explicit path over both.
    monkeypatch.setenv("SYZYGY_PATH", str(tmp_path / "env"))
    assert resolve_path(None) == os.pathsep.join([str(tmp_path / "env"), embedded])
    assert resolve_path(str(tmp_path / "mine")) == os.pathsep.join([str(tmp_path / "mine"), embedded])
    assert resolve_path(embedded) == embedded  # named already: not twice
    # The first directory that has a file answers; the embedded set fills in what the others lack.
    mine = tmp_path / "mine"
    mine.mkdir()
    shutil.copy(Path(embedded) / "KQvK.rtbw", mine / "KQvK.rtbw")
    found = scan(resolve_path(str(mine)))
    assert found.wdl["KQvK"] == str(mine / "KQvK.rtbw")
    assert found.dtz["KQvK"] == os.path.join(embedded, "KQvK.rtbz")
    assert found.wdl["KRvK"] == os.path.join(embedded, "KRvK.rtbw")


def test_commands_probe_the_embedded_tables_with_nothing_installed(no_user_tables: Path) -> None:
    code, out, err = run("probe", "8/6k1/4K3/6B1/8/8/5N2/8 w - - 0 1", "--json")
    assert code == 0, err
    assert '"wdl": 2' in out and '"dtz": 20' in out
    with Prober(resolve_path(None)) as prober:
        assert prober.max_pieces == 4
        assert prober.probe_wdl(chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")) == 2


def test_the_uci_engine_probes_the_embedded_tables(no_user_tables: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SYZYGY_PATH"}
    env["XDG_DATA_HOME"] = str(tmp_path / "data-home")
    script = ("uci\nisready\nposition fen 8/6k1/4K3/6B1/8/8/5N2/8 w - - 0 1\ngo movetime 200\n")
    proc = subprocess.run([str(BIN / "chess-endgame-uci")], input=script, capture_output=True, text=True,
                          timeout=300, env=env)
    lines = proc.stdout.splitlines()
    assert "option name SyzygyPath type string default <empty>" in lines
    assert any("score cp 20000" in line and "tbhits" in line for line in lines), lines[-5:]
    assert any(line.startswith("bestmove ") and line != "bestmove 0000" for line in lines)


def test_info_names_the_directory_that_answers_each_material(tmp_path: Path, no_user_tables: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    for name in ("KQvK.rtbw", "KQvK.rtbz"):
        shutil.copy(Path(embedded_directory()) / name, mine / name)
    code, out, err = run("tablebases", "info", str(mine))
    assert code == 0, err
    assert f"per-user directory: {no_user_tables} (not created yet" in out
    answers = out.split("which directory answers, per material:\n")[1]
    assert f"  {mine}: 1 table:\n    KQvK\n" in answers
    assert f"  {embedded_directory()} (embedded): 34 tables:" in answers
    code, out, _ = run("tablebases", "info", str(mine), "--json")
    import json

    report = json.loads(out)
    assert report["sources"]["KQvK"] == {"wdl": str(mine), "dtz": str(mine)}
    assert report["sources"]["KRvK"] == {"wdl": embedded_directory(), "dtz": embedded_directory()}
    assert report["user_directory"] == str(no_user_tables)


def test_download_fills_the_per_user_directory_with_the_five_piece_set(five_pieces: str, tmp_path: Path,
                                                                       no_user_tables: Path) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    found = scan(five_pieces)
    for name in ("KRPvKR", "KRvK", "KQvK"):  # one 5-piece table, and two the package embeds
        for path in (found.wdl[name], found.dtz[name]):
            shutil.copy(path, mirror / os.path.basename(path))
    with serve(str(mirror)) as (url, log):
        code, out, err = run("tablebases", "download", "--mirror", url)
    # Every other 5-piece file is missing on this mirror: exit 1, and those are named.
    assert code == 1 and "NOT ON THE MIRROR KBBBvK.rtbw" in out, err
    assert "5-piece set: 220 files, about 935 MB" in err
    assert sorted(p.name for p in no_user_tables.iterdir()) == ["KRPvKR.rtbw", "KRPvKR.rtbz"]
    assert not [name for name, _ in log if len(os.path.splitext(name)[0]) <= 5]  # no 3-4-piece request
    # Every command now reads them from there, with the embedded set beneath.
    assert resolve_path(None) == os.pathsep.join([str(no_user_tables), embedded_directory()])
    code, out, _ = run("probe", "8/8/4k3/8/R7/5P2/6K1/r7 w - - 0 1", "--json")
    assert code == 0 and '"wdl"' in out


def test_a_six_piece_download_is_asked_for_first(tmp_path: Path, no_user_tables: Path) -> None:
    dest = tmp_path / "six"
    with serve(str(tmp_path)) as (url, log):
        result = CliRunner().invoke(cli, ["tablebases", "download", "--pieces", "6", "--dest", str(dest),
                                          "--mirror", url], input="n\n")
        assert result.exit_code == 2 and "about 150 GB" in result.stderr
        assert "not confirmed; nothing downloaded" in result.stderr and log == []
        result = CliRunner().invoke(cli, ["tablebases", "download", "--pieces", "6", "--dest", str(dest),
                                          "--mirror", url], input="")  # no answer at all: no
        assert result.exit_code == 2 and log == []
        result = CliRunner().invoke(cli, ["tablebases", "download", "--pieces", "6", "--wdl-only", "--yes",
                                          "--dest", str(dest), "--mirror", url])
        assert "[y/N]" not in result.stderr and "6-piece set: " in result.stderr
        assert log and all(len(os.path.splitext(name)[0]) == 7 for name, _ in log)  # 6 pieces and the 'v'
    assert downloads.file_url(downloads.DEFAULT_MIRROR, "KRPPvKR.rtbz").endswith("/6-DTZ/KRPPvKR.rtbz")
    assert downloads.file_url(downloads.DEFAULT_MIRROR, "KRPvKR.rtbz") == downloads.DEFAULT_MIRROR + "KRPvKR.rtbz"


def test_info_tells_an_empty_directory_from_one_answered_from_above(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = run("tablebases", "info", str(empty))
    assert code == 0 and f"  {empty}: none (it holds no tables)" in out, out
