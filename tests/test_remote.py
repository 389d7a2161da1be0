"""Remote probing: the remote prober against our own ``serve`` and against a misbehaving server.

Every server runs on 127.0.0.1 in the test. The remote prober must answer
through the local prober's interface (same chooser result on every shared
material), never ask a position twice, keep its rate limits, and turn every
failure into a "not covered" answer: the player then searches, with a note.
"""

from __future__ import annotations

import io
import json
import os
import random
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import chess
import pytest

from chess_endgame.board import random_position
from chess_endgame.chooser import Choice, choose
from chess_endgame.engine.player import Player
from chess_endgame.engine.result import Limits
from chess_endgame.serve import api
from chess_endgame.tablebase.cache import DiskCache
from chess_endgame.tablebase.lichess import check_url, parse_answer, position_key, wdl_from_dtz
from chess_endgame.tablebase.prober import NotCovered, NotCoveredError, Prober, Reason
from chess_endgame.tablebase.remote import RemoteProber, RootProber
from chess_endgame.uci import UciEngine

from .conftest import EXECUTABLE, require_tables
from .tbserver import misbehaving, serving

KBNK = "8/6k1/4K3/6B1/8/8/5N2/8 w - - 0 1"
KBNK_WINS = {"Kf5", "Be7", "Bf6+", "Ne4", "Nh3", "Nd3"}


@pytest.fixture(scope="module")
def server(prober: Prober) -> str:
    with serving(prober) as url:
        yield url


def remote(url: str, tmp_path: Path | None = None, **kwargs) -> RemoteProber:
    kwargs.setdefault("min_interval", 0.0)
    return RemoteProber(url, cache_path=str(tmp_path / "cache.sqlite") if tmp_path else None, **kwargs)


def test_same_chooser_result_on_every_shared_material(server: str, prober: Prober, tmp_path: Path) -> None:
    """Local tables served through ``serve``, probed remotely with no local tables: the same ranking."""
    rng = random.Random(7)
    materials = [m for m in sorted(prober.files.wdl) if m in prober.files.dtz]
    assert len(materials) >= 30
    boards = []
    for material in materials:
        for _ in range(3):
            board = random_position(material, rng)
            board.halfmove_clock = rng.randrange(100)
            boards.append(board)
    compared = 0
    with remote(server, tmp_path) as far:
        for i, board in enumerate(boards):
            near = choose(board, prober, full=i % 3 == 0)
            asked = far.remote_stats.requests
            away = choose(board, far, full=i % 3 == 0)
            assert far.remote_stats.requests - asked <= 1  # one round trip ranks a root
            if isinstance(near, NotCovered):
                assert isinstance(away, NotCovered), board.fen()
                continue
            assert isinstance(away, Choice), (board.fen(), away)
            assert away.result == near.result and away.root_wdl == near.root_wdl, board.fen()
            assert (away.best and away.best.move) == (near.best and near.best.move), board.fen()
            assert [(m.uci, m.cls, m.dtz) for m in away.moves] == [(m.uci, m.cls, m.dtz) for m in near.moves]
            assert away.root_dtz == near.root_dtz
            compared += 1
        requests = far.remote_stats.requests
        for board in boards:  # asked again: nothing new goes out
            choose(board, far)
        assert far.remote_stats.requests == requests
    with remote(server, tmp_path) as again:  # a new prober on the same file asks nothing either
        assert isinstance(choose(boards[0], again), Choice)
        assert again.remote_stats.requests == 0 and again.remote_stats.disk_hits >= 1
    assert compared >= 100, compared


def test_wdl_from_the_dtz_matches_the_tables(prober: Prober) -> None:
    require_tables(prober, "KNNvKP", "KBBvKN")
    rng = random.Random(3)
    for material in ("KBNvK", "KRvKB", "KQvKR", "KNNvKP", "KBBvKN", "KPvKP"):
        for _ in range(60):
            board = random_position(material, rng)
            assert wdl_from_dtz(prober.probe_dtz(board)) == prober.probe_wdl(board), board.fen()


def test_cursed_and_blessed_positions_over_the_wire(server: str, prober: Prober) -> None:
    require_tables(prober, "KBBvKN")
    with remote(server) as far:
        for fen in ("7b/8/6b1/8/5Nk1/4K3/8/8 b - - 0 1", "7b/7b/8/8/5Nk1/4K3/8/8 w - - 0 1",
                    "8/8/8/k2Pp3/8/8/8/4K3 w - e6 0 2", "8/8/8/8/2pP4/2K5/4k3/8 b - d3 0 1"):
            board = chess.Board(fen)
            assert far.probe_wdl(board) == prober.probe_wdl(board)
            assert far.probe_dtz(board) == prober.probe_dtz(board)
            assert choose(board, far).best.move == choose(board, prober).best.move


def test_root_prober_prefers_the_local_tables(server: str, prober: Prober, syzygy_dir: Path,
                                              tmp_path: Path) -> None:
    # Local tables up to 3 pieces; the server has the rest.
    for name in ("KQvK", "KRvK", "KBvK", "KNvK", "KPvK"):
        for ext in (".rtbw", ".rtbz"):
            (tmp_path / f"{name}{ext}").symlink_to(syzygy_dir / f"{name}{ext}")
    with Prober(str(tmp_path)) as small, remote(server) as far:
        root = RootProber(small, far)
        board = chess.Board("8/8/8/4k3/8/8/8/K1QR4 w - - 0 1")  # KQRvK: from the server
        assert isinstance(choose(board, root), Choice) and root.used_remote
        root = RootProber(small, far)
        assert root.probe_wdl(chess.Board("8/8/8/4k3/8/8/8/K1Q5 w - - 0 1")) == 2 and not root.used_remote


def test_a_missing_local_table_costs_one_request(server: str, prober: Prober, syzygy_dir: Path,
                                                 tmp_path: Path) -> None:
    for name in prober.files.wdl:  # every local table but KQRvK and KRRvK, which promotions here reach
        if name not in ("KQRvK", "KRRvK") and len(name) <= 5:
            for ext in (".rtbw", ".rtbz"):
                (tmp_path / f"{name}{ext}").symlink_to(syzygy_dir / f"{name}{ext}")
    board = chess.Board("8/4P3/8/8/8/2k5/8/K6R w - - 0 1")
    with Prober(str(tmp_path)) as partial:
        assert isinstance(choose(board, partial), NotCovered)
        player = Player(partial)
        player.set_remote(remote(server))
        decision = player.decide(board, Limits(depth=1))
        assert decision.source == "tablebase" and decision.cls is not None and decision.cls.winning
        assert player.remote.remote_stats.requests == 1  # the root's answer holds both promotions'
        # go searchmoves: the listed moves are ranked by what ranked the root (the server for the promotions).
        listed = [chess.Move.from_uci("e7e8q"), chess.Move.from_uci("a1b1")]
        decision = player.decide(board, Limits(depth=1, searchmoves=listed))
        assert decision.source == "tablebase" and decision.move in listed and decision.cls.winning
        player.set_remote(None)


def test_player_uses_the_server_only_at_the_root(server: str) -> None:
    player = Player(Prober(None))
    player.set_remote(remote(server))
    decision = player.decide(chess.Board(KBNK), Limits(movetime=500))
    assert decision.source == "tablebase" and chess.Board(KBNK).san(decision.move) in {"Kf5"} | KBNK_WINS
    assert any("ranked from its answer" in note for note in decision.notes)
    assert player.searcher.prober is player.prober and player.prober is not player.remote
    # Beyond the tables the searcher plays, and the server is not asked for positions in its tree.
    asked = player.remote.remote_stats.requests
    decision = player.decide(chess.Board("8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1"), Limits(depth=3))
    assert decision.source == "search" and player.remote.remote_stats.requests == asked
    player.set_remote(None)


def test_request_timeout_follows_the_clock() -> None:
    far = RemoteProber("http://127.0.0.1:9", timeout=2.0)
    assert far.request_timeout(clock_left=None, due_in=None) == 2.0
    assert far.request_timeout(clock_left=20.0, due_in=None) == 2.0      # lichess-bot: 2 s from 20 s on
    assert far.request_timeout(clock_left=5.0, due_in=None) == 0.5
    assert far.request_timeout(clock_left=None, due_in=0.3) == pytest.approx(0.15)
    far.remote_stats.round_trips.extend([100.0, 120.0, 90.0])         # measured: about 100 ms
    assert far.request_timeout(clock_left=60.0, due_in=0.3) == 0.0       # 150 ms < 2 round trips: not asked
    assert far.request_timeout(clock_left=1.0, due_in=None) == 0.0
    assert far.request_timeout(clock_left=3.0, due_in=1.0) == pytest.approx(0.3)


def test_no_round_trip_when_the_clock_is_short(server: str) -> None:
    with misbehaving("json", answer={}) as (url, log):
        player = Player(Prober(None))
        player.set_remote(remote(url))
        now = time.monotonic()
        decision = player.decide(chess.Board(KBNK), Limits(deadline=now + 0.05, soft_deadline=now + 0.03,
                                                           clock_deadline=now + 0.1))
        assert decision.source == "search" and log.times == []
        assert any("no time for a round trip" in note for note in decision.notes), decision.notes
        player.set_remote(None)


def answer_for(board: chess.Board, prober: Prober) -> dict:
    return api.standard(board, prober)


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "words"), [
    ("429", "rate-limited (HTTP 429)"),
    ("500", "HTTP 500 from the server"),
    ("garbage", "malformed answer: not JSON"),
    ("slow", "no answer within"),
    ("silent", "no answer within"),
])
def test_a_misbehaving_server_means_search_with_a_note(mode: str, words: str) -> None:
    with misbehaving(mode, delay=3.0, answer={}) as (url, log):
        far = remote(url, timeout=0.5)
        start = time.monotonic()
        with pytest.raises(NotCoveredError) as caught:
            far.probe_wdl(chess.Board(KBNK))
        assert time.monotonic() - start < 2.0
        assert caught.value.reason is Reason.REMOTE and words in str(caught.value), str(caught.value)
        player = Player(Prober(None))
        player.set_remote(RemoteProber(url, timeout=0.5, min_interval=0.0))
        decision = player.decide(chess.Board(KBNK), Limits(movetime=1500))
        assert decision.source == "search" and decision.move in chess.Board(KBNK).legal_moves
        assert any(note.startswith(f"remote tablebase {url}:") and "the searcher plays this move" in note
                   for note in decision.notes), decision.notes
        player.set_remote(None)
        far.close()


def test_connection_refused_backs_off(tmp_path: Path) -> None:
    far = remote("http://127.0.0.1:9", timeout=0.5)
    with pytest.raises(NotCoveredError, match="cannot reach the server"):
        far.probe_wdl(chess.Board(KBNK))
    with pytest.raises(NotCoveredError, match="no requests for"):
        far.probe_wdl(chess.Board(KBNK))  # the server is away: not asked again at once
    assert far.remote_stats.requests == 1


def test_429_backs_off_a_minute_and_asks_nothing_meanwhile() -> None:
    with misbehaving("429", retry_after="5") as (url, log):
        far = remote(url)
        for _ in range(3):
            with pytest.raises(NotCoveredError) as caught:
                far.probe_wdl(chess.Board(KBNK))
        assert len(log.times) == 1 and "no requests for" in str(caught.value)
        assert 55 < far._backoff_until - time.monotonic() <= 60


@pytest.mark.parametrize(("change", "words"), [
    (lambda a: a.update(category="winning"), "unknown category"),
    (lambda a: a["moves"][0].update(category="surely"), "unknown category"),
    (lambda a: a["moves"].pop(), "legal moves missing"),
    (lambda a: a["moves"].append(dict(a["moves"][0])), "listed twice"),
    (lambda a: a["moves"][0].update(uci="a1a8"), "not a legal move"),
    (lambda a: a["moves"][0].update(dtz="12"), "is not a number of plies"),
    (lambda a: a["moves"][0].update(dtz=-a["moves"][0]["dtz"]), "disagree"),
    (lambda a: a.pop("moves"), "no list of moves"),
])
def test_malformed_answers_are_refused(prober: Prober, change, words: str) -> None:
    board = chess.Board(KBNK)
    answer = answer_for(board, prober)
    change(answer)
    with misbehaving("json", answer=answer) as (url, log):
        far = remote(url)
        with pytest.raises(NotCoveredError, match=words):
            far.probe_wdl(board)
        player = Player(Prober(None))
        player.set_remote(remote(url))
        decision = player.decide(board, Limits(depth=2))
        assert decision.source == "search" and "malformed answer" in " ".join(decision.notes)
        player.set_remote(None)


def test_unknown_positions_are_not_asked_twice(prober: Prober) -> None:
    board = chess.Board(KBNK)
    answer = answer_for(board, prober)
    answer.update(category="unknown", dtz=None)
    with misbehaving("json", answer=answer) as (url, log):
        far = remote(url)
        for _ in range(2):
            with pytest.raises(NotCoveredError, match="does not know this position"):
                far.probe_wdl(board)
        assert len(log.times) == 1


def test_one_request_in_flight_and_the_minimum_interval() -> None:
    boards = [random_position("KRvK", random.Random(i)) for i in range(4)]
    with misbehaving("slow", delay=0.1, answer=None) as (url, log):
        far = RemoteProber(url, min_interval=0.25)
        # The answers are null (refused as malformed); what counts is when the requests arrive.
        errors: list[str] = []

        def ask(board: chess.Board) -> None:
            try:
                far.probe_wdl(board)
            except NotCoveredError as exc:
                errors.append(str(exc))

        threads = [threading.Thread(target=ask, args=(b,)) for b in boards]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert log.most_in_flight == 1 and len(log.times) == 4
        gaps = [b - a for a, b in zip(log.times, log.times[1:], strict=False)]
        # The client spaces its sends 0.25 s apart; the server sees arrivals, later by however long a busy machine
        # takes to deliver each (CI saw one 12 ms short). Without the interval the gaps would be the server's 0.1 s.
        assert min(gaps) >= 0.2, gaps
        assert len(errors) == 4 and all("malformed answer" in e for e in errors), errors


def test_disk_cache_is_bounded_and_survives_a_bad_file(tmp_path: Path) -> None:
    cache = DiskCache(str(tmp_path / "c.sqlite"), max_entries=100)
    for i in range(25):
        cache.put("http://x", {f"position {i} {j}": (2, 10 + j) for j in range(10)})
    assert 0 < len(cache) <= 100
    assert cache.get("http://x", "position 24 9") == (2, 19) and cache.get("http://x", "position 0 0") is None
    assert cache.get("http://other", "position 24 9") is None
    cache.close()
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    broken = DiskCache(str(bad))
    assert broken.problem and broken.get("http://x", "p") is None
    broken.put("http://x", {"p": (0, 0)})  # no exception
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM answers").fetchone()[0] <= 100


def test_parse_answer_reads_our_own_server(prober: Prober) -> None:
    board = chess.Board("8/2K5/4B3/3N4/8/8/4k3/8 b - - 0 1")
    values = parse_answer(board, json.loads(json.dumps(answer_for(board, prober))))
    assert values[position_key(board)] == (-2, -53)
    assert len(values) == 1 + board.legal_moves.count()


def test_urls_are_checked() -> None:
    assert check_url("http://127.0.0.1:8000/") == "http://127.0.0.1:8000"
    assert check_url("https://tablebase.example/api") == "https://tablebase.example/api"
    for bad in ("ftp://x", "127.0.0.1:8000", "http://", "http://x/?fen=1", "http://x:99999"):
        with pytest.raises(ValueError):
            check_url(bad)


def test_uci_option_syzygy_remote(server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    out = io.StringIO()
    engine = UciEngine(out, player=Player(Prober(None)))
    engine.handle("uci")
    assert "option name SyzygyRemote type string default <empty>" in out.getvalue()
    engine.handle("setoption name SyzygyRemote value ftp://nowhere")
    assert "SyzygyRemote: remote tablebase URL 'ftp://nowhere' is not" in out.getvalue()
    assert engine.player.remote is None
    engine.handle(f"setoption name SyzygyRemote value {server}")
    assert engine.player.remote is not None and "asked at the root only" in out.getvalue()
    engine.handle(f"position fen {KBNK}")
    engine.handle("go movetime 500")
    engine._session.join()
    lines = out.getvalue().splitlines()
    assert any(line.startswith("info string remote tablebase") and "ranked from" in line for line in lines)
    best = lines[-1].split()[1]
    assert lines[-1].startswith("bestmove") and chess.Board(KBNK).san(chess.Move.from_uci(best)) in KBNK_WINS
    assert (tmp_path / "chess-endgame" / "remote-tablebase.sqlite").is_file()
    engine.handle("setoption name SyzygyRemote value http://127.0.0.1:9")
    engine.handle("go movetime 300")
    engine._session.join()
    lines = out.getvalue().splitlines()
    assert any("cannot reach the server" in line and line.startswith("info string") for line in lines)
    assert lines[-1].startswith("bestmove")
    engine.handle("setoption name SyzygyRemote value")
    assert engine.player.remote is None


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([EXECUTABLE, *args], capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.slow
def test_cli_remote_tablebase(server: str, five_pieces: str, tmp_path: Path) -> None:
    # No local tables but the embedded 3-4-piece ones: the server answers the 5-piece positions.
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path), SYZYGY_PATH=str(tmp_path))
    fen = "1K1k4/1P6/8/8/8/8/r7/2R5 w - - 3 1"  # KRPvKR, a Lucena position
    local = run_cli("probe", fen, "--syzygy-path", five_pieces)
    far = run_cli("probe", fen, "--remote-tablebase", server, env=env)
    assert far.returncode == 0 and far.stdout == local.stdout and "remote tablebase" in far.stderr
    best = run_cli("best", fen, "--remote-tablebase", server, "--json", env=env)
    record = json.loads(best.stdout)
    assert record["source"] == "tablebase" and record["class"] == "WIN" and record["notes"]
    # The embedded tables answer a 4-piece position with no request.
    kbnk = json.loads(run_cli("best", KBNK, "--remote-tablebase", server, "--json", env=env).stdout)
    assert kbnk["source"] == "tablebase" and kbnk["notes"] == []
    down = run_cli("best", fen, "--remote-tablebase", "http://127.0.0.1:9", "--movetime", "200", env=env)
    assert down.returncode == 0 and "source:    search" in down.stdout and "cannot reach the server" in down.stdout
    down = run_cli("probe", fen, "--remote-tablebase", "http://127.0.0.1:9", env=env)  # no answer claimed
    assert down.returncode == 2 and down.stderr.count("\n") == 1 and "cannot reach the server" in down.stderr
    played = run_cli("play", "8/8/8/4k3/8/8/8/K1QR4 w - - 0 1", "--remote-tablebase", server, "--max-plies", "4",
                     "--movetime", "200", env=env)
    assert played.returncode == 0 and played.stdout.count("tablebase WIN") == 2, played.stdout
    for args in (["probe", fen, "--remote-tablebase", "nonsense"],
                 ["suite", "tests/data/mates.epd", "--remote-tablebase", server, "--jobs", "2"]):
        bad = run_cli(*args, env=env)
        assert bad.returncode == 2 and bad.stderr.startswith("chess-endgame: error:") and \
            bad.stderr.count("\n") == 1, bad.stderr
    suite = run_cli("suite", "tests/data/tablebase.epd", "--remote-tablebase", server, "--depth", "1", "--json",
                    env=env)
    assert suite.returncode == 0, suite.stderr
    results = json.loads(suite.stdout)["positions"]
    assert results and all(r.get("error") is None for r in results)
