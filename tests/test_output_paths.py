"""Every option that writes a file is checked by writing before the work starts; a write that still fails
at the end puts the output somewhere the user can find it."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from chess_endgame_cli import common
from chess_endgame_cli.main import cli

from .conftest import EXECUTABLE

DATA = Path(__file__).parent / "data"
ROOK_ENDING = "8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1"

#: Every command and option that writes a file or a directory, with arguments that would start real work.
OUTPUTS = {
    "play --pgn": (["play", ROOK_ENDING, "--movetime", "200"], "--pgn", "file"),
    "review --output": (["review", str(DATA / "review.pgn")], "--output", "file"),
    "review --svg": (["review", str(DATA / "review.pgn")], "--svg", "directory"),
    "suite --output": (["suite", str(DATA / "mates.epd"), "--depth", "3"], "--output", "file"),
    "suite --csv": (["suite", str(DATA / "mates.epd"), "--depth", "3"], "--csv", "file"),
    "match --pgn": (["match", "--engine", "self", "--engine", "self", "--nodes", "500", "--games", "2"], "--pgn",
                    "file"),
    "match --save-starts": (["match", "--engine", "self", "--engine", "self", "--nodes", "500", "--games", "2"],
                            "--save-starts", "file"),
    "tune --output": (["tune", "--per-material", "10"], "--output", "file"),
    "tune --labels-out": (["tune", "--per-material", "10", "--selfplay-games", "2"], "--labels-out", "file"),
    "tablebases download --dest": (["tablebases", "download", "--pieces", "3", "--mirror", "http://127.0.0.1:9/"],
                                   "--dest", "directory"),
}


def test_the_sweep_covers_every_output_option() -> None:
    """A new option that writes a file must join the sweep below."""
    found = set()

    def walk(command: click.Command, name: str) -> None:
        if isinstance(command, click.Group):
            for sub_name, sub in command.commands.items():
                walk(sub, f"{name} {sub_name}".strip())
            return
        for param in command.params:
            if isinstance(param.type, (common.OutputFile, common.OutputDirectory)) or \
                    param.name in ("dest",):
                found.add(f"{name} {param.opts[0]}")

    walk(cli, "")
    assert found == set(OUTPUTS)


@pytest.mark.slow
@pytest.mark.parametrize("place", ["/sys/chess-endgame-out", "/proc/chess-endgame-out", "FILE/under-a-file"])
@pytest.mark.parametrize("name", list(OUTPUTS))
def test_an_unwritable_output_is_refused_before_the_work(name: str, place: str, tmp_path: Path) -> None:
    """Root may write everywhere by permission bits; /sys and /proc still refuse, and so does a path under a
    regular file: only writing tells. One line, exit 2, at once."""
    args, option, _ = OUTPUTS[name]
    if place.startswith("FILE"):
        blocker = tmp_path / "a-file"
        blocker.write_text("not a directory\n")
        place = str(blocker / "under-a-file")
    start = time.monotonic()
    proc = subprocess.run([EXECUTABLE, *args, option, place + (".out" if option != "--svg" else "")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == "" and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("chess-endgame: error: ") and "cannot write" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert time.monotonic() - start < 60  # refused at once: nothing was played, reviewed or tuned


def test_the_check_leaves_nothing_behind(tmp_path: Path) -> None:
    new, old = tmp_path / "new.pgn", tmp_path / "old.pgn"
    old.write_text("kept\n")
    assert common.writable_file(str(new)) is None and not new.exists()
    assert common.writable_file(str(old)) is None and old.read_text() == "kept\n"
    assert common.writable_directory(str(tmp_path / "made" / "deep")) is None
    assert [p.name for p in (tmp_path / "made" / "deep").iterdir()] == []
    assert common.writable_file(str(tmp_path)) == f"{tmp_path} is a directory"
    assert common.writable_directory(str(old)) == f"{old} is not a directory"


def test_a_final_write_that_fails_keeps_the_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check passed, but at the end the file cannot be written (here: the check is skipped, as if the
    disk filled up meanwhile): the output goes to a temporary file that the error names, the other outputs
    are still written, and the command exits 1."""
    monkeypatch.setattr(common, "writable_file", lambda path: None)
    csv_out = tmp_path / "r.csv"
    result = CliRunner().invoke(cli, ["suite", str(DATA / "mates.epd"), "--depth", "2", "--output",
                                      "/sys/chess-endgame.json", "--csv", str(csv_out)])
    assert result.exit_code == 1, result.output
    lines = result.stderr.splitlines()
    moved = [line for line in lines if line.startswith("chess-endgame: error: cannot write /sys/chess-endgame.json")]
    assert len(moved) == 1 and "; it is in " in moved[0] and moved[0].endswith(" instead")
    fallback = Path(moved[0].split("; it is in ")[1].removesuffix(" instead"))
    assert fallback.suffix == ".json" and len(json.loads(fallback.read_text())["positions"]) == 31
    assert len(csv_out.read_text().splitlines()) == 32  # the other output is written as asked
    assert "mates.epd" in result.stdout  # and the report printed
    fallback.unlink()
    # The next command in the same process starts clean.
    assert CliRunner().invoke(cli, ["suite", str(DATA / "mates.epd"), "--depth", "1"]).exit_code == 0
