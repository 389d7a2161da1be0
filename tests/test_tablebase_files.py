"""``chess-endgame tablebases info|verify|download`` against real files and a local mirror."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import pytest
from chess_endgame_tablebases import CHECKSUM_LISTS

from chess_endgame.tablebase import downloads, paths
from chess_endgame.tablebase import files as tables

from .conftest import run
from .httpserver import serve


@pytest.fixture(scope="module")
def checksum_lists() -> list[str]:
    """The official lists, as shipped with the embedded tables."""
    return list(CHECKSUM_LISTS)


def test_official_names_come_from_python_chess() -> None:
    names = tables.official_names(5)
    assert len(names) == 145 and names[0] == "KBvK" and "KRPvKR" in names
    assert tables.table_files(3) == [f"{n}.{e}" for n in ("KBvK", "KNvK", "KPvK", "KQvK", "KRvK")
                                     for e in ("rtbw", "rtbz")]
    assert tables.table_files(3, wdl_only=True)[:2] == ["KBvK.rtbw", "KNvK.rtbw"]


def test_info(syzygy_path: str) -> None:
    code, out, _ = run("tablebases", "info", syzygy_path)
    assert code == 0
    found = tables.scan(syzygy_path)
    assert f"Found {len(found.wdl)} WDL and {len(found.dtz)} DTZ tablebase files" in out
    assert "total size:" in out and "complete: every table up to" in out
    code, out, _ = run("tablebases", "info", syzygy_path, "--json")
    import json
    data = json.loads(out)
    three = next(p for p in data["pieces"] if p["pieces"] == 3)
    assert sorted(three["wdl"]) == ["KBvK", "KNvK", "KPvK", "KQvK", "KRvK"] and not three["missing"]
    five = next(p for p in data["pieces"] if p["pieces"] == 5)
    assert len(five["wdl"]) + len(five["missing"]) >= 110  # 110 official 5-piece tables


def test_info_empty_dir_says_how_to_get_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An empty directory: the embedded set beneath it answers every 3-4-piece table, none is missing.
    code, out, err = run("tablebases", "info", str(tmp_path))
    assert code == 0, err
    assert f"  {tmp_path}: none" in out and "missing 3-piece tables" not in out
    assert "missing 5-piece tables" in out
    # Without the embedded set either (a broken install): no table at all, and how to get them.
    monkeypatch.setattr(paths, "embedded_directory", lambda: str(tmp_path))
    code, out, err = run("tablebases", "info", str(tmp_path))
    assert code == 1
    assert "tablebases download" in err
    assert "missing 3-piece tables" in out


def test_verify_with_checksums(syzygy_path: str, checksum_lists: list[str]) -> None:
    args = ["tablebases", "verify", syzygy_path]
    for c in checksum_lists:
        args += ["--checksums", c]
    code, out, _ = run(*args)
    assert code == 0, out
    assert "bad                   0" in out
    assert "checksum mismatch     0" in out


def test_verify_reports_bad_files(syzygy_dir: Path, tmp_path: Path, checksum_lists: list[str]) -> None:
    shutil.copy(syzygy_dir / "KQvK.rtbz", tmp_path)
    data = (syzygy_dir / "KRvK.rtbw").read_bytes()
    (tmp_path / "KRvK.rtbw").write_bytes(data[:-5])                        # truncated
    (tmp_path / "KBvK.rtbw").write_bytes(os.urandom(80))                   # garbage
    changed = bytearray((syzygy_dir / "KQvK.rtbw").read_bytes())
    changed[-1] ^= 1                                                        # wrong checksum
    (tmp_path / "KQvK.rtbw").write_bytes(bytes(changed))
    code, out, _ = run("tablebases", "verify", str(tmp_path), "--checksums", checksum_lists[0],
                       "--checksums", checksum_lists[1])
    assert code == 1
    assert "BAD" in out and "KRvK.rtbw: size" in out
    assert "KBvK.rtbw: bad magic header" in out
    assert "KQvK.rtbw: embedded checksum differs" in out
    assert "KQvK.rtbz" not in out.split("bad")[-1]


def test_verify_deep_finds_flipped_bytes(syzygy_dir: Path, tmp_path: Path) -> None:
    for name in ("KPvK.rtbw", "KPvK.rtbz", "KQvK.rtbw", "KQvK.rtbz"):
        shutil.copy(syzygy_dir / name, tmp_path)
        os.chmod(tmp_path / name, 0o644)
    data = bytearray((tmp_path / "KPvK.rtbw").read_bytes())
    for i in range(len(data) // 4, len(data) - 16, 97):
        data[i] ^= 0xFF
    (tmp_path / "KPvK.rtbw").write_bytes(bytes(data))
    code, out, _ = run("tablebases", "verify", str(tmp_path))
    assert code == 0, "header, size and opening cannot see flipped data bytes"
    code, out, _ = run("tablebases", "verify", str(tmp_path), "--deep", "--samples", "24")
    assert code == 1
    assert "BAD" in out and "KPvK.rtbw" in out and "positions checked" in out
    assert "KQvK" not in "".join(line for line in out.splitlines() if line.startswith("BAD"))


def test_malformed_checksum_list(syzygy_path: str, tmp_path: Path) -> None:
    bad = tmp_path / "sums.txt"
    bad.write_text("KQvK.rtbw: af0d561da4523cb21a8cf05e9bc5cc6e\nthis is not a checksum\n")
    code, _, err = run("tablebases", "verify", syzygy_path, "--checksums", str(bad))
    assert code == 2
    assert "sums.txt:2" in err and "Traceback" not in err


def test_verify_without_tables(tmp_path: Path) -> None:
    code, _, err = run("tablebases", "verify", str(tmp_path))
    assert code == 2 and "no Syzygy tables" in err


def _mirror_dir(syzygy_dir: Path, tmp_path: Path) -> Path:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    for name in tables.table_files(3):
        shutil.copy(syzygy_dir / name, mirror / name)
    return mirror


def test_download_from_local_mirror(syzygy_dir: Path, tmp_path: Path, checksum_lists: list[str]) -> None:
    mirror = _mirror_dir(syzygy_dir, tmp_path)
    dest = tmp_path / "dest"
    with serve(str(mirror)) as (url, log):
        code, out, err = run("tablebases", "download", "--pieces", "3", "--dest", str(dest), "--mirror", url,
                             "--checksums", checksum_lists[0], "--checksums", checksum_lists[1])
        assert code == 0, err
        assert "downloaded 10 files" in out
        for name in tables.table_files(3):
            assert (dest / name).read_bytes() == (syzygy_dir / name).read_bytes()
        assert not list(dest.glob("*.part"))
        # A second run finds everything present and downloads nothing.
        log.clear()
        code, out, _ = run("tablebases", "download", "--pieces", "3", "--dest", str(dest), "--mirror", url)
        assert code == 0 and "downloaded 0 files" in out and "10 already present" in out
        assert log == []


def test_download_resumes_an_interrupted_transfer(syzygy_dir: Path, tmp_path: Path) -> None:
    mirror = _mirror_dir(syzygy_dir, tmp_path)
    dest = tmp_path / "dest"
    with serve(str(mirror), cut_after={"KQvK.rtbz": 1000}) as (url, log):
        code, _, err = run("tablebases", "download", "--pieces", "3", "--dest", str(dest), "--mirror", url)
        assert code == 1
        assert "KQvK.rtbz" in err and "resume" in err
        assert (dest / "KQvK.rtbz.part").stat().st_size == 1000
        assert not (dest / "KQvK.rtbz").exists()
        code, out, err = run("tablebases", "download", "--pieces", "3", "--dest", str(dest), "--mirror", url)
        assert code == 0, err
    assert ("KQvK.rtbz", "bytes=1000-") in log
    assert (dest / "KQvK.rtbz").read_bytes() == (syzygy_dir / "KQvK.rtbz").read_bytes()
    assert not list(dest.glob("*.part"))


def test_a_ctrl_c_during_the_check_puts_the_file_back_to_part(syzygy_dir: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The file is in place while it is checked: a Ctrl-C then must not leave it there unchecked and
    uncounted (CI once saw 2 table files in dest and "downloaded 1")."""
    mirror = _mirror_dir(syzygy_dir, tmp_path)
    dest = tmp_path / "dest"
    names = tables.table_files(3)
    checked: list[str] = []

    def check(path: str, checksums: dict[str, str] | None) -> str | None:
        checked.append(os.path.basename(path))
        if len(checked) == 2:
            assert os.path.exists(path)
            raise KeyboardInterrupt
        return None

    monkeypatch.setattr(downloads, "_file_problem", check)
    with serve(str(mirror)) as (url, _):
        result = downloads.download(names, str(dest), mirror=url)
    assert result.interrupted and result.downloaded == names[:1]
    assert sorted(p.name for p in dest.iterdir()) == sorted([names[0], names[1] + ".part"])
    monkeypatch.undo()
    with serve(str(mirror)) as (url, log):
        result = downloads.download(names, str(dest), mirror=url)
    assert not result.interrupted and result.present == names[:1] and result.downloaded == names[1:]
    assert (names[1], f"bytes={(syzygy_dir / names[1]).stat().st_size}-") in log
    assert (dest / names[1]).read_bytes() == (syzygy_dir / names[1]).read_bytes()
    assert not list(dest.glob("*.part"))


def test_download_rejects_a_bad_checksum(syzygy_dir: Path, tmp_path: Path) -> None:
    mirror = _mirror_dir(syzygy_dir, tmp_path)
    sums = tmp_path / "sums.txt"
    sums.write_text("KBvK.rtbw: " + "0" * 32 + "\n")
    dest = tmp_path / "dest"
    with serve(str(mirror)) as (url, _):
        code, out, _ = run("tablebases", "download", "--pieces", "3", "--wdl-only", "--dest", str(dest),
                           "--mirror", url, "--checksums", str(sums))
    assert code == 1
    assert "BAD KBvK.rtbw: embedded checksum differs" in out
    assert not (dest / "KBvK.rtbw").exists() and (dest / "KQvK.rtbw").exists()


def test_download_missing_file_on_mirror(syzygy_dir: Path, tmp_path: Path) -> None:
    mirror = _mirror_dir(syzygy_dir, tmp_path)
    (mirror / "KNvK.rtbw").unlink()
    dest = tmp_path / "d"
    with serve(str(mirror)) as (url, _):
        code, out, err = run("tablebases", "download", "--pieces", "3", "--dest", str(dest), "--mirror", url)
    # The 404 is reported and the run fails, but every other file still comes.
    assert code == 1, err
    assert "downloaded 9 files" in out and "1 not on the mirror" in out
    assert "NOT ON THE MIRROR KNvK.rtbw" in out and "HTTP 404" in out
    assert sorted(p.name for p in dest.iterdir()) == sorted(n for n in tables.table_files(3) if n != "KNvK.rtbw")


def test_download_fetches_again_what_verify_calls_bad(syzygy_dir: Path, tmp_path: Path) -> None:
    mirror = _mirror_dir(syzygy_dir, tmp_path)
    dest = tmp_path / "dest"
    dest.mkdir()
    for name in tables.table_files(3):
        shutil.copy(mirror / name, dest / name)
        os.chmod(dest / name, 0o644)
    data = bytearray((dest / "KRvK.rtbw").read_bytes())
    data[10:60] = b"\x7f" * 50  # header and size still pass; python-chess cannot open it
    (dest / "KRvK.rtbw").write_bytes(bytes(data))
    code, out, _ = run("tablebases", "verify", str(dest))
    assert code == 1 and "BAD" in out and "KRvK.rtbw" in out
    with serve(str(mirror)) as (url, log):
        code, out, err = run("tablebases", "download", "--pieces", "3", "--dest", str(dest), "--mirror", url)
    assert code == 0, err
    assert "downloaded 1 file (" in out and "9 already present" in out
    assert "fetched again KRvK.rtbw" in out
    assert [name for name, _ in log] == ["KRvK.rtbw"]
    assert (dest / "KRvK.rtbw").read_bytes() == (syzygy_dir / "KRvK.rtbw").read_bytes()
    assert run("tablebases", "verify", str(dest))[0] == 0


def test_download_network_failure(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out, err = run("tablebases", "download", "--pieces", "3", "--dest", str(tmp_path),
                         "--mirror", f"http://127.0.0.1:{port}/", "--timeout", "5")
    assert code == 1
    assert "cannot reach" in err and "Traceback" not in err
    # Nothing was done: the reason alone, not a summary of zeros before it.
    assert "downloaded 0 files" not in out + err and out == ""
    assert [line for line in err.splitlines() if line.startswith("chess-endgame:")] == err.splitlines()[-1:]


def test_download_checks_its_directory_before_any_transfer(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    for dest in (blocker, blocker / "sub"):
        code, out, err = run("tablebases", "download", "--pieces", "3", "--dest", str(dest),
                             "--mirror", "http://127.0.0.1:9/")
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
        assert err.startswith("chess-endgame: error: ") and str(blocker) in err


@pytest.mark.slow
def test_ctrl_c_during_verify_reports_the_files_checked(syzygy_path: str) -> None:
    from .interrupting import interrupt, progress_shows

    code, out, err = interrupt(["tablebases", "verify", syzygy_path, "--deep", "--samples", "2000"],
                               progress_shows("verify", 2), terminal=True)
    assert code == 130 and "interrupted; the" in err and "files checked are reported above" in err, err
    files = next(line for line in out.splitlines() if line.startswith("files"))
    done, total = (int(n) for n in files.split()[1::2])
    assert 2 <= done < total and "sound" in out


def test_verify_deep_reads_the_embedded_set_behind_a_directory(syzygy_dir: Path, tmp_path: Path) -> None:
    """A directory holding only KRvKB (as one filled by download holds only its 5-piece files): the deep check
    follows its moves into KRvK and KBvK from the embedded set, so flipped bytes are found."""
    for name in ("KRvKB.rtbw", "KRvKB.rtbz"):
        shutil.copy(syzygy_dir / name, tmp_path)
        os.chmod(tmp_path / name, 0o644)
    data = bytearray((tmp_path / "KRvKB.rtbw").read_bytes())
    middle = len(data) // 2
    data[middle:middle + 4096] = bytes(4096)
    (tmp_path / "KRvKB.rtbw").write_bytes(bytes(data))
    code, out, _ = run("tablebases", "verify", str(tmp_path), "--deep")
    assert code == 1 and "BAD" in out and "KRvKB.rtbw" in out, out


def test_verify_names_a_path_that_is_no_directory(tmp_path: Path, syzygy_dir: Path) -> None:
    code, _, err = run("tablebases", "verify", str(tmp_path / "missing"))
    assert code == 2 and err.strip().endswith("missing: No such file or directory"), err
    code, _, err = run("tablebases", "verify", str(syzygy_dir / "KQvK.rtbw"))
    assert code == 2 and "KQvK.rtbw: Not a directory" in err, err
    code, out, err = run("tablebases", "verify", f"{tmp_path / 'missing'}{os.pathsep}{paths.embedded_directory()}")
    assert code == 0 and "missing: No such file or directory" in err, err


def test_compare_counts_positions_neither_prober_can_answer(syzygy_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "KQvK.rtbw").write_bytes((syzygy_dir / "KQvK.rtbw").read_bytes()[:100])  # truncated
    shutil.copy(syzygy_dir / "KQvK.rtbz", tmp_path)
    code, out, _ = run("tablebases", "compare", str(tmp_path), "--positions", "5")
    assert code == 1 and "FAILED" in out and out.rstrip().endswith("5 not answered"), out


def test_download_reports_a_file_it_cannot_write_and_goes_on(syzygy_dir: Path, tmp_path: Path) -> None:
    """A directory where a table should go: that file is bad, the others come, the summary is printed (exit 1)."""
    mirror = _mirror_dir(syzygy_dir, tmp_path)
    dest = tmp_path / "dest"
    (dest / "KQvK.rtbw").mkdir(parents=True)
    with serve(str(mirror)) as (url, _):
        code, out, err = run("tablebases", "download", "--pieces", "3", "--dest", str(dest), "--mirror", url)
    assert code == 1 and "downloaded 9 files" in out and "1 bad" in out, (out, err)
    assert "KQvK.rtbw" in out + err and "Traceback" not in err


@pytest.mark.parametrize(("mirror", "words"), [("", "is not http://HOST[:PORT][/PATH] or https://..."),
                                               ("notaurl", "is not http://HOST[:PORT][/PATH] or https://..."),
                                               ("http://[::1", "Invalid IPv6 URL"),
                                               ("http://h:99999/", "Port out of range")])
def test_download_checks_the_mirror_before_anything(tmp_path: Path, mirror: str, words: str) -> None:
    code, out, err = run("tablebases", "download", "--pieces", "3", "--dest", str(tmp_path / "d"), "--mirror", mirror)
    assert code == 2 and out == "" and f"--mirror {mirror!r}" in err and words in err and err.count("\n") == 1, err
    assert not (tmp_path / "d").exists()
