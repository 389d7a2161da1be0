"""--cluster: the batch runner's Ray back end, on a local Ray instance this module starts (2 CPUs).

The commands run as the real executable, connecting to that instance as users
connect to theirs; the node-loss test drives the runner from this process. Ray
is an optional extra: without it these tests skip on a developer's machine and
fail in CI (``CHESS_ENDGAME_CLUSTER_TESTS=required``, or ``CI`` set).
"""

from __future__ import annotations

import codecs
import fcntl
import json
import logging
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import chess.engine
import pytest
from click.testing import CliRunner

from chess_endgame.batch.cluster import TablesOnNode, check_address
from chess_endgame.batch.protocol import BackendError
from chess_endgame.batch.runner import choose_backend
from chess_endgame.engine.evaluation import load_weights
from chess_endgame.suite import EngineSpec, load_files, run_items
from chess_endgame.tablebase.prober import Prober
from chess_endgame.tuning import labels
from chess_endgame_cli.main import cli

from .conftest import CRASHING_ENGINE, EXECUTABLE, ray_lock

DATA = Path(__file__).parent / "data"
#: 50 positions: middlegame tactics and mates (searched) and tablebase positions (ranked by the tables).
SUITE = [str(DATA / "tactics.epd"), str(DATA / "mates.epd"), str(DATA / "tablebase.epd")]
#: Per-position fields that must not depend on where the position ran (time does).
SAME = ("index", "id", "moves", "checks", "tb_correct", "tb_move_class", "score", "depth", "nodes", "error")
REQUIRED = os.environ.get("CHESS_ENDGAME_CLUSTER_TESTS") == "required" or bool(os.environ.get("CI"))


@pytest.fixture(scope="module")
def cluster(syzygy_path: str) -> Iterator[object]:
    """A local Ray instance, a head node with 2 CPUs (a worker node is added by the node-loss test)."""
    try:
        import ray
        from ray.cluster_utils import Cluster
    except ImportError as exc:
        message = f"Ray is not installed ({exc}): pip install -e \".[cluster]\""
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)
    # One Ray instance on the machine at a time, across the test processes (busy_actors() sees only this one's).
    with ray_lock():
        head = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": False})
        ray.init(address=head.address, logging_level=logging.ERROR, log_to_driver=False)
        try:
            yield head
        finally:
            ray.shutdown()
            head.shutdown()


@pytest.fixture(scope="module")
def address(cluster: object) -> str:
    return cluster.address  # type: ignore[attr-defined]


def chess_endgame(*args: str) -> tuple[int, str, str]:
    proc = subprocess.run([EXECUTABLE, *args], capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def positions(path: Path) -> list[dict]:
    return [{k: p[k] for k in SAME} for p in json.loads(path.read_text())["positions"]]


def busy_actors() -> list[int]:
    """Process ids of the engine slots' actors now working on a task (Ray titles them ``ray::Slot.run``)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if Path(f"/proc/{entry}/cmdline").read_bytes().startswith(b"ray::Slot.run"):
                    found.append(int(entry))
            except OSError:
                continue
    return found


@pytest.fixture(scope="module")
def local_depth8(syzygy_path: str, tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """The suite at depth 8 with --jobs 1: the reference."""
    out = tmp_path_factory.mktemp("local") / "one.json"
    code, _, err = chess_endgame("suite", *SUITE, "--depth", "8", "--output", str(out))
    assert code == 0, err
    return positions(out)


def test_suite_on_the_cluster_matches_jobs_1(address: str, local_depth8: list[dict], tmp_path: Path) -> None:
    out = tmp_path / "cluster.json"
    code, stdout, err = chess_endgame("suite", *SUITE, "--depth", "8", "--cluster", address, "--output", str(out))
    assert code == 0, err
    assert "tactics.epd" in stdout and "TB-verified" in stdout
    assert all(line.startswith("chess-endgame: skipped ") for line in err.splitlines()), err  # no Ray noise
    meta = json.loads(out.read_text())["meta"]
    assert meta["cluster"] == {"address": address, "actors": 2} and meta["retried"] == []  # one actor a CPU
    assert positions(out) == local_depth8 and len(local_depth8) == 50


def test_review_on_the_cluster_matches_jobs_1(address: str) -> None:
    games = str(DATA / "cluster-review.pgn")
    one = chess_endgame("review", games, "--depth", "4", "--json")
    two = chess_endgame("review", games, "--depth", "4", "--json", "--cluster", address, "--jobs", "2")
    assert one[0] == two[0] == 0, one[2] + two[2]

    def strip(out: str) -> list:
        return [{k: v for k, v in g.items() if k != "seconds"} for g in json.loads(out)["games"]]

    assert strip(one[1]) == strip(two[1]) and len(strip(one[1])) == 6
    assert json.loads(two[1])["meta"]["cluster"] == {"address": address, "actors": 2}


def test_an_actor_killed_mid_run_is_replaced_and_its_position_retried(address: str, local_depth8: list[dict],
                                                                       tmp_path: Path) -> None:
    out = tmp_path / "killed.json"
    proc = subprocess.Popen([EXECUTABLE, "suite", *SUITE, "--depth", "8", "--cluster", address, "--output", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Kill the first actor seen at work, at once: the compiled search runs the whole suite at
        # depth 8 in about a second, so a position is a few milliseconds of work.
        start = time.monotonic()
        while not (victims := busy_actors()):
            assert proc.poll() is None and time.monotonic() - start < 60, "no actor ever worked"
            time.sleep(0.002)
        os.kill(victims[0], signal.SIGKILL)
        stdout, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    run = json.loads(out.read_text())
    # The run completed, every position once and as without the kill, the lost one run again.
    assert positions(out) == local_depth8
    assert len(run["meta"]["retried"]) == 1 and "Ray actor" in run["meta"]["retried"][0]["why"]
    assert "died" in run["meta"]["retried"][0]["why"]
    retried = run["meta"]["retried"][0]["id"]
    notes = [line for line in err.splitlines() if not line.startswith("chess-endgame: skipped ")]
    assert notes == [f"chess-endgame: retried {retried}: {run['meta']['retried'][0]['why']}"]


def test_an_engine_that_dies_on_an_actor_is_restarted_and_the_position_retried(address: str, tmp_path: Path) -> None:
    script = tmp_path / "crasher.py"
    script.write_text(CRASHING_ENGINE)  # exits at its third `go`
    out = tmp_path / "crash.json"
    code, _, err = chess_endgame("suite", str(DATA / "mates.epd"), "--limit", "8", "--engine",
                                 f"{sys.executable} {script}", "--movetime", "10", "--cluster", address,
                                 "--output", str(out))
    assert code == 0, err
    run = json.loads(out.read_text())
    assert len(run["positions"]) == 8 and not any(p["error"] for p in run["positions"])
    retried = run["meta"]["retried"]
    assert retried and all("died" in r["why"] for r in retried) and err.count("chess-endgame: retried ") == len(retried)


def test_ctrl_c_on_the_cluster_writes_the_partial_report(address: str, tmp_path: Path) -> None:
    out = tmp_path / "partial.json"
    # The progress bar is drawn on a terminal only, so standard error is a pseudo-terminal here: the interrupt
    # goes as soon as the bar counts a finished position, whatever the machine's load (a fixed sleep failed
    # once on a loaded machine). The other positions take the 2 actors seconds more at 300 ms. A terminal of
    # no width (a new one's) would get an empty bar.
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    proc = subprocess.Popen([EXECUTABLE, "suite", *SUITE, "--movetime", "300", "--cluster", address, "--output",
                             str(out)], stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    chunks: list[str] = []
    finished = threading.Event()

    def read_terminal() -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")  # the bar's blocks span reads
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the command has exited and closed its end
                break
            if not data:
                break
            chunks.append(decoder.decode(data))
            if not finished.is_set() and any(0 < int(done) < int(total) for done, total
                                             in re.findall(r"(\d+)/(\d+) \[", "".join(chunks))):
                finished.set()

    reader = threading.Thread(target=read_terminal, daemon=True)
    reader.start()
    try:
        assert finished.wait(120), f"no position finished: {''.join(chunks)[-500:]}"
        proc.send_signal(signal.SIGINT)
        stdout, _ = proc.communicate(timeout=60)
        reader.join(10)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    err = "".join(chunks)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "not run:" in stdout
    done = json.loads(out.read_text())
    assert done["meta"]["interrupted"] and 0 < len(done["positions"]) < 50
    deadline = time.monotonic() + 30
    while busy_actors() and time.monotonic() < deadline:  # the driver's actors go with it
        time.sleep(0.1)
    assert not busy_actors()


def test_a_lost_node_loses_no_finished_result(cluster: object, address: str, syzygy_path: str,
                                               local_depth8: list[dict]) -> None:
    node = cluster.add_node(num_cpus=1)  # type: ignore[attr-defined]
    cluster.wait_for_nodes()  # type: ignore[attr-defined]
    items = load_files(SUITE).items
    spec = EngineSpec(limits=chess.engine.Limit(depth=8), syzygy_path=syzygy_path)
    seen: list[int] = []
    removed: list[int] = []

    def arrived(result: object) -> None:
        seen.append(1)
        if len(seen) == 10:
            # In the driver's callback, so that the run cannot finish before the node is gone (removed
            # from a thread, a fast run sometimes did); the other actors work on meanwhile.
            cluster.remove_node(node)  # type: ignore[attr-defined]
            removed.append(len(seen))

    # Three actors on three CPUs: one of them runs on the node that goes away.
    outcome = run_items(items, spec, backend=choose_backend(3, address, tables=syzygy_path), on_result=arrived)
    assert removed and removed[0] < len(items), "the node went away after the run"
    assert not outcome.errors and not outcome.interrupted
    got = [{k: getattr(r, k) for k in SAME} for r in outcome.results]
    assert got == local_depth8
    assert len(outcome.retried) <= 1 and all("Ray actor" in why for _, _, why in outcome.retried)


def test_tables_missing_on_a_node_stop_the_run_in_one_line(address: str, syzygy_path: str, tmp_path: Path) -> None:
    # A directory that is not there: the embedded 3-4-piece tables beneath it are on every node (the same
    # venv), so the run goes on, on those.
    code, out, err = chess_endgame("suite", str(DATA / "mates.epd"), "--depth", "2", "--cluster", address,
                                   "--syzygy-path", str(tmp_path / "no-tables"))
    assert code == 0 and out.splitlines()[1].split()[:2] == ["mates.epd", "31"], err
    # A node without any of the tables of the path: the actor's check says so in one line.
    assert TablesOnNode(str(tmp_path / "no-tables"), ())() == (
        f"no Syzygy tables in {tmp_path / 'no-tables'} ({tmp_path / 'no-tables'}: No such file or directory): "
        "every node needs the same Syzygy tables at the same SYZYGY_PATH")
    # A node that has some of the driver's tables but not all of them.
    check = TablesOnNode.of(syzygy_path)
    assert check() is None
    short = TablesOnNode(check.path, (*check.files, "KQQQQvK.rtbw"))
    assert short() == (f"1 of the {len(check.files) + 1} Syzygy files in {syzygy_path} are missing (KQQQQvK.rtbw): "
                       "every node needs the same Syzygy tables at the same SYZYGY_PATH")


def test_selfplay_labels_on_the_cluster_are_the_same_games(address: str, syzygy_path: str) -> None:
    prober = Prober(syzygy_path)
    one = labels.selfplay_labels(prober, load_weights(), 3, nodes=100, seed=5, per_game=6)
    two = labels.selfplay_labels(prober, load_weights(), 3, nodes=100, seed=5, per_game=6,
                                 backend=choose_backend(2, address, tables=syzygy_path))
    assert [b.fen() for b in two.boards] == [b.fen() for b in one.boards] and len(one) > 0
    assert two.labels == one.labels and two.games == one.games


def test_tune_takes_the_cluster_for_its_selfplay(address: str, syzygy_path: str, tmp_path: Path) -> None:
    out, cache = tmp_path / "w.json", tmp_path / "labels.epd"
    result = CliRunner().invoke(cli, ["tune", "--per-material", "10", "--selfplay-nodes", "100", "--seed", "5",
                                      "--selfplay-games", "2", "--cluster", address, "--labels-out", str(cache),
                                      "--output", str(out)])
    assert result.exit_code == 0, result.stderr
    assert "self-play 2 games" in result.stdout and len(labels.read_labels(str(cache))) > 0


@pytest.mark.parametrize(("bad", "words"), [
    ("nonsense", "--cluster takes auto, ray://HOST:PORT"),
    ("ray://127.0.0.1:1", "no Ray cluster answers at 127.0.0.1:1"),
    ("127.0.0.1:1", "no Ray cluster answers at 127.0.0.1:1"),
])
def test_a_bad_cluster_address_is_one_line(cluster: object, bad: str, words: str) -> None:
    code, out, err = chess_endgame("suite", str(DATA / "mates.epd"), "--depth", "2", "--cluster", bad)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and lines[0].startswith("chess-endgame: error: "), err
    assert words in lines[0], err


@pytest.mark.parametrize("command", [["suite", str(DATA / "mates.epd")], ["review", str(DATA / "review.pgn")],
                                     ["tune", "--selfplay-games", "1"]])
def test_without_ray_the_cluster_option_says_how_to_install_it(command: list[str], syzygy_path: str,
                                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as where it is not installed
    result = CliRunner().invoke(cli, [*command, "--cluster", "auto", *(["--output", str(tmp_path / "w.json")]
                                                                       if command[0] == "tune" else [])])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.stderr
    assert lines[0] == ("chess-endgame: error: --cluster needs Ray, an optional extra: pip install -e \".[cluster]\" "
                        "(or: pip install \"ray[client]\")")


def test_cluster_addresses() -> None:
    assert check_address("auto") == ("auto", None)
    assert check_address("ray://10.0.0.5:10001") == ("ray://10.0.0.5:10001", ("10.0.0.5", 10001))
    assert check_address("head.example:6379") == ("head.example:6379", ("head.example", 6379))
    for bad in ("http://host:1", "host", "ray://host:port", "host:0"):
        with pytest.raises(BackendError, match="--cluster takes auto"):
            check_address(bad)
