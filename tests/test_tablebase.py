"""The prober: WDL/DTZ values, reasons for no answer, corrupt files, the cache."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import chess
import chess.syzygy
import pytest

from chess_endgame.tablebase.paths import split_path
from chess_endgame.tablebase.prober import NotCovered, NotCoveredError, Prober, ProbeResult, Reason

from .conftest import DATA, require_tables


def dtz_matches(got: int, expected: int) -> bool:
    """python-chess's documented tolerance: a stored n can mean n or n + 1 plies."""
    if got == expected:
        return True
    return (got > 0) == (expected > 0) and abs(expected) - abs(got) == 1


def test_endgame_epd(prober: Prober) -> None:
    """python-chess's 200 test positions of 3 and 4 pieces (tests/data/endgame.epd, a copy of
    ../shared/fixtures/endgame.epd)."""
    lines = (DATA / "endgame.epd").read_text().splitlines()
    assert len(lines) == 200
    for line in lines:
        board, ops = chess.Board.from_epd(line)
        assert prober.probe_wdl(board) == ops["wdl"], line
        assert dtz_matches(prober.probe_dtz(board), int(ops["dtz"])), line


def material(board: chess.Board) -> str:
    """The Syzygy table name of ``board``'s material (stronger side first), e.g. ``KRPvKR``."""
    order = "KQRBNP"
    sides = ["".join(sorted((chess.piece_symbol(p.piece_type).upper() for p in board.piece_map().values()
                             if p.color == color), key=order.index)) for color in (chess.WHITE, chess.BLACK)]
    return chess.syzygy.normalize_tablename("v".join(sides))


@pytest.mark.parametrize("fen, wdl, dtz", [
    ("8/6k1/4K3/6B1/8/8/5N2/8 w - - 0 1", 2, 20),
    ("8/2K5/4B3/3N4/8/8/4k3/8 b - - 0 1", -2, -53),
    ("7b/8/6b1/8/5Nk1/4K3/8/8 b - - 0 1", 1, 109),
    ("7b/8/6b1/8/5Nk1/4K3/8/8 w - - 0 1", 0, 0),
    ("7b/7b/8/8/5Nk1/4K3/8/8 w - - 0 1", -1, -108),
    ("8/8/8/k2Pp3/8/8/8/4K3 w - e6 0 2", 2, None),
    ("8/8/8/8/2pP4/2K5/4k3/8 b - d3 0 1", 2, None),
    ("8/5k1r/8/8/6K1/8/8/R7 w - - 0 1", 0, 0),
    ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", 0, 0),      # stalemate
    ("5Q1k/8/6K1/8/8/8/8/8 b - - 0 1", -2, -1),    # checkmated
])
def test_documented_positions(prober: Prober, fen: str, wdl: int, dtz: int | None) -> None:
    board = chess.Board(fen)
    if not board.is_game_over():
        require_tables(prober, material(board))
    result = prober.probe(board)
    assert isinstance(result, ProbeResult)
    assert result.wdl == wdl
    if dtz is not None:
        assert dtz_matches(result.dtz, dtz)


def test_en_passant_raw_table_differs(prober: Prober) -> None:
    board = chess.Board("8/8/8/k2Pp3/8/8/8/4K3 w - e6 0 2")
    # The raw table value ignores the en passant capture; the full probe resolves it.
    assert prober._tables.probe_wdl_table(board) == 0
    assert prober.probe_wdl(board) == 2


def test_categories(prober: Prober) -> None:
    require_tables(prober, "KBBvKN")
    assert prober.probe(chess.Board("7b/8/6b1/8/5Nk1/4K3/8/8 b - - 0 1")).category == "cursed win"
    assert prober.probe(chess.Board("7b/7b/8/8/5Nk1/4K3/8/8 w - - 0 1")).category == "blessed loss"


def test_castling_rights(prober: Prober) -> None:
    answer = prober.probe(chess.Board("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1"))
    assert isinstance(answer, NotCovered) and answer.reason is Reason.CASTLING
    # A castling right without king and rook in place is cleaned away: covered.
    board = chess.Board("4k3/8/8/8/8/8/8/4K3 w K - 0 1")
    assert prober.probe(board) == ProbeResult(0, 0)
    assert board.castling_rights  # the caller's board is left as given


def test_too_many_pieces(prober: Prober) -> None:
    answer = prober.probe(chess.Board("8/5pk1/6p1/8/3R4/6P1/5PK1/4r3 w - - 0 1"))
    assert isinstance(answer, NotCovered) and answer.reason is Reason.TOO_MANY_PIECES
    assert "8 pieces" in answer.message


def test_missing_table_is_named(five_pieces: str, syzygy_dir: Path, tmp_path: Path) -> None:
    # A 5-piece set without KQRvKB: the position is within the piece limit, its table is absent.
    _copy_tables(syzygy_dir, tmp_path, "KBNvKB.rtbw", "KQvK.rtbw", "KRvK.rtbw")
    prober = Prober(str(tmp_path))
    assert prober.max_pieces == 5
    answer = prober.probe(chess.Board("4k3/8/8/2b5/8/8/8/QR2K3 w - - 0 1"))
    assert isinstance(answer, NotCovered) and answer.reason is Reason.MISSING_TABLE
    assert answer.tables == ("KQRvKB",)
    assert "KQRvKB.rtbw" in answer.message
    # Black with the queen and rook: the same file, named as it is named (the stronger side first).
    answer = prober.probe(chess.Board("4k3/8/8/2b5/8/8/8/QR2K3 w - - 0 1").mirror())
    assert answer.tables == ("KQRvKB",) and "missing WDL table KQRvKB.rtbw" in answer.message, answer.message


def test_no_tables() -> None:
    prober = Prober(None)
    assert not prober.available
    answer = prober.probe(chess.Board("4k3/8/8/8/8/8/8/4KQ2 w - - 0 1"))
    assert isinstance(answer, NotCovered) and answer.reason is Reason.NO_TABLES
    assert "download" in answer.message
    # Dead positions need no file.
    assert prober.probe(chess.Board("8/8/8/4k3/8/8/8/4K3 w - - 0 1")) == ProbeResult(0, 0)
    assert prober.probe(chess.Board("8/8/8/4k3/8/8/8/3BK3 w - - 0 1")) == ProbeResult(0, 0)


def test_probe_limit(syzygy_path: str) -> None:
    prober = Prober(syzygy_path, probe_limit=3)
    assert prober.probe_wdl(chess.Board("4k3/8/8/8/8/8/8/4KQ2 w - - 0 1")) == 2
    with pytest.raises(NotCoveredError) as info:
        prober.probe_wdl(chess.Board("4k3/8/8/8/8/8/8/3RKQ2 w - - 0 1"))
    assert info.value.reason is Reason.TOO_MANY_PIECES
    assert "SyzygyProbeLimit" in str(info.value)


def test_summary_and_split_path(syzygy_path: str, tmp_path: Path) -> None:
    prober = Prober(syzygy_path + os.pathsep + str(tmp_path / "nope"))
    assert prober.summary().startswith(f"Found {len(prober.files.wdl)} WDL and")
    assert str(tmp_path / "nope") in prober.files.bad_directories
    assert split_path(f"a{os.pathsep}{os.pathsep}b{os.pathsep}<empty>") == ["a", "b"]
    assert prober.files.complete_pieces >= 3


def test_cache_counts_and_bound(syzygy_path: str) -> None:
    prober = Prober(syzygy_path, cache_size=2)
    boards = [chess.Board(f"4k3/8/8/8/8/8/8/{r}K3 w - - 0 1") for r in ("Q3", "R3", "1Q2")]
    prober.probe_wdl(boards[0])
    prober.probe_wdl(boards[0])
    assert prober.stats.wdl_probes == 1 and prober.stats.cache_hits == 1 and prober.stats.tbhits == 2
    for board in boards:
        prober.probe_wdl(board)
    assert len(prober._wdl_cache) == 2
    prober.probe_wdl(boards[0])  # evicted: probed again
    assert prober.stats.wdl_probes == 4


def _copy_tables(src: Path, dst: Path, *names: str) -> None:
    for name in names:
        shutil.copy(src / name, dst / name)


def test_truncated_table_is_reported_and_others_work(syzygy_dir: Path, tmp_path: Path) -> None:
    _copy_tables(syzygy_dir, tmp_path, "KRvK.rtbw", "KRvK.rtbz", "KQvK.rtbz")
    data = (syzygy_dir / "KQvK.rtbw").read_bytes()
    (tmp_path / "KQvK.rtbw").write_bytes(data[: len(data) // 2])
    prober = Prober(str(tmp_path))
    kqk = chess.Board("4k3/8/8/8/8/8/8/4KQ2 w - - 0 1")
    for _ in range(2):  # the second probe fails fast with the same answer
        answer = prober.probe(kqk)
        assert isinstance(answer, NotCovered) and answer.reason is Reason.CORRUPT_TABLE
        assert answer.tables == ("KQvK",)
        assert str(tmp_path / "KQvK.rtbw") in answer.message and "size" in answer.message  # which copy is bad
    assert prober.probe_wdl(chess.Board("4k3/8/8/8/8/8/8/4KR2 w - - 0 1")) == 2
    assert str(tmp_path / "KQvK.rtbw") in prober.corrupt


def test_garbage_table_is_reported(syzygy_dir: Path, tmp_path: Path) -> None:
    size = (syzygy_dir / "KRvK.rtbw").stat().st_size
    (tmp_path / "KRvK.rtbw").write_bytes(os.urandom(size))
    prober = Prober(str(tmp_path))
    with pytest.raises(NotCoveredError) as info:
        prober.probe_wdl(chess.Board("4k3/8/8/8/8/8/8/4KR2 w - - 0 1"))
    assert info.value.reason is Reason.CORRUPT_TABLE
    assert "KRvK.rtbw" in str(info.value) and "magic" in str(info.value)


def test_empty_table_file(tmp_path: Path) -> None:
    (tmp_path / "KRvK.rtbw").write_bytes(b"")
    prober = Prober(str(tmp_path))
    answer = prober.probe(chess.Board("4k3/8/8/8/8/8/8/4KR2 w - - 0 1"))
    assert isinstance(answer, NotCovered) and answer.reason is Reason.CORRUPT_TABLE


def test_invalid_position_is_not_reported_as_a_missing_table(prober: Prober) -> None:
    # The black king is in check with White to move: python-chess would "capture" it.
    answer = prober.probe(chess.Board("8/8/8/8/8/5k2/8/2KB1N2 w - - 0 1"))
    assert isinstance(answer, NotCovered) and answer.reason is Reason.INVALID_POSITION


class _CtrlCAsTheReaderLeaves(threading.Condition):
    """python-chess's reader count for one table, with Ctrl-C arriving as a read ends: after the
    count went up (the first entry) and before it comes down (the second), as SIGINT can."""

    entries = 0

    def __enter__(self) -> bool:
        entered = super().__enter__()
        self.entries += 1
        if self.entries == 2:
            self.release()
            raise KeyboardInterrupt
        return entered


@pytest.mark.parametrize("kind", ["wdl", "dtz"])
def test_close_after_ctrl_c_in_a_table_read_returns(syzygy_path: str, kind: str) -> None:
    """python-chess's tables count their readers, and close() waits for them (the compiled back end has none)."""
    prober = Prober(syzygy_path, cache_size=0, backend="python-chess")
    board = chess.Board("8/8/8/8/8/4k3/8/Q3K3 w - - 0 1")
    probe = prober.probe_wdl if kind == "wdl" else prober.probe_dtz
    probe(board)  # opens the table
    table = getattr(prober._tables, kind)["KQvK"]
    table.read_condition = _CtrlCAsTheReaderLeaves()
    with pytest.raises(KeyboardInterrupt):
        probe(board)
    assert table.read_count == 1  # python-chess's own close() waits for this to reach 0
    closer = threading.Thread(target=prober.close, daemon=True)
    closer.start()
    closer.join(10)
    assert not closer.is_alive(), "close() hangs after Ctrl-C"


def test_close_closes_the_tables(syzygy_path: str) -> None:
    prober = Prober(syzygy_path, cache_size=0, backend="python-chess")
    prober.probe_wdl(chess.Board("8/8/8/8/8/4k3/4P3/4K3 w - - 0 1"))
    table = prober._tables.wdl["KPvK"]
    assert table.data is not None
    prober.close()
    assert table.data is None
    prober = Prober(syzygy_path, cache_size=0, backend="compiled")
    assert prober.probe_wdl(chess.Board("8/8/8/8/8/4k3/4P3/4K3 w - - 0 1")) == 0
    assert prober.compiled_tables is not None
    prober.close()
    assert prober._tables._tables is None  # the maps go with the last reference
