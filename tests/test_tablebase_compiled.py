"""The compiled prober: the same WDL and DTZ as python-chess's reference, the same errors, no crash on a
damaged file, probes from threads and from the search's tree."""

from __future__ import annotations

import random
import shutil
import threading
from pathlib import Path

import chess
import chess.syzygy
import pytest

from chess_endgame.engine.result import Limits
from chess_endgame.engine.search import Searcher
from chess_endgame.tablebase.compare import compare, en_passant_board, every_board, random_boards, tables_of
from chess_endgame.tablebase.compiled import material, name_of
from chess_endgame.tablebase.prober import NotCoveredError, Prober, Reason

from .conftest import require_tables


def test_every_table_answers_as_python_chess(syzygy_path: str) -> None:
    """Random positions of every table present (either side to move, mirrored, en passant where both sides
    have pawns). `chess-endgame tablebases compare` runs the same with more positions."""
    prober = Prober(syzygy_path)
    names = tables_of(prober)
    rng = random.Random(7)
    results = compare(syzygy_path, names, lambda table: random_boards(table, 12, rng))
    assert [r.table for r in results] == names and len(names) >= 30
    assert sum(r.positions for r in results) >= 12 * len(names)
    assert [m for r in results for m in r.mismatches] == []


def test_en_passant_positions_answer_as_python_chess(syzygy_path: str) -> None:
    rng = random.Random(3)
    boards = [en_passant_board("KPvKP", rng) for _ in range(150)]
    assert all(b is not None and b.has_legal_en_passant() for b in boards)
    results = compare(syzygy_path, ["KPvKP"], lambda table: boards)
    assert results[0].en_passant == 150 and results[0].mismatches == []


@pytest.mark.slow
def test_every_position_of_a_table_with_few(syzygy_path: str) -> None:
    """Every legal position of KNvK (all draws, the kings' 462 placements with the knight anywhere), both
    sides to move, and of KPvK with the pawn on the a-file (wins, draws, the pawn rules)."""
    boards = list(every_board("KNvK"))
    assert len(boards) > 40000
    results = compare(syzygy_path, ["KNvK"], lambda table: boards)
    assert results[0].mismatches == []
    a_file = [b for b in every_board("KPvK") if b.pawns & chess.BB_FILE_A]
    results = compare(syzygy_path, ["KPvK"], lambda table: a_file[::3])
    assert results[0].positions > 8000 and results[0].mismatches == []


def test_python_chess_test_positions(syzygy_path: str) -> None:
    """python-chess's 200 positions of tests/data/endgame.epd, their WDL and DTZ, by the compiled prober."""
    prober = Prober(syzygy_path, backend="compiled")
    lines = (Path(__file__).parent / "data" / "endgame.epd").read_text().splitlines()
    checked = 0
    for line in lines:
        if not line.strip():
            continue
        board, ops = chess.Board.from_epd(line)
        assert prober.probe_wdl(board) == ops["wdl"], line
        assert prober.probe_dtz(board) == ops["dtz"], line
        checked += 1
    assert checked == 200


def test_material_keys_name_tables() -> None:
    assert name_of(material("KRP", "KR")) == "KRPvKR"
    assert name_of(material("K", "KQQ")) == "KvKQQ"
    assert material("KRP", "KR") != material("KR", "KRP")


def test_a_missing_table_is_named_as_python_chess_names_it(syzygy_dir: Path, tmp_path: Path) -> None:
    require_tables(Prober(str(syzygy_dir)), "KRPvKR")
    for name in ("KRPvKR.rtbw", "KRPvKR.rtbz"):
        shutil.copy(syzygy_dir / name, tmp_path / name)
    board = chess.Board("8/8/8/4k3/R7/5P2/6K1/r7 b - - 0 1")  # Rxa4 leads into KPvKR
    answers = []
    for backend in ("python-chess", "compiled"):
        with pytest.raises(NotCoveredError) as info:
            Prober(str(tmp_path), backend=backend).probe_wdl(board)
        answers.append((info.value.reason, info.value.answer.tables))
    assert answers[0] == answers[1] == (Reason.MISSING_TABLE, ("KRvKP",))  # the file's name, not White first


@pytest.mark.parametrize("blocks_only", [True, False])
def test_a_damaged_file_gives_errors_never_a_crash(syzygy_dir: Path, tmp_path: Path, blocks_only: bool) -> None:
    """KRPvKR's WDL file overwritten with noise from a quarter of its length on (its blocks), or from its 40th
    byte on (its Huffman set-ups and index tables too; the magic number, the piece orders and the checksum
    kept): every probe answers a WDL or says the table is corrupt, and no read leaves the file."""
    require_tables(Prober(str(syzygy_dir)), "KRPvKR", "KRvKR")
    for path in syzygy_dir.iterdir():
        if path.suffix in (".rtbw", ".rtbz") and len(path.stem) <= 5 or path.stem == "KRPvKR":
            shutil.copy(path, tmp_path / path.name)
    data = bytearray((syzygy_dir / "KRPvKR.rtbw").read_bytes())
    noise = random.Random(5)
    for at in range(len(data) // 4 if blocks_only else 40, len(data) - 16):
        data[at] = noise.randrange(256)
    (tmp_path / "KRPvKR.rtbw").write_bytes(bytes(data))
    prober = Prober(str(tmp_path), cache_size=0, backend="compiled")
    rng = random.Random(9)
    outcomes = set()
    for board in random_boards("KRPvKR", 300, rng):
        try:
            outcomes.add(prober.probe_wdl(board) in (-2, -1, 0, 1, 2))
        except NotCoveredError as exc:
            outcomes.add(exc.reason)
    assert outcomes and outcomes <= {True, Reason.CORRUPT_TABLE}
    if not blocks_only:
        assert Reason.CORRUPT_TABLE in outcomes
        assert any("KRPvKR.rtbw" in path for path in prober.corrupt)


def test_threads_probe_at_once(syzygy_path: str) -> None:
    prober = Prober(syzygy_path, cache_size=0, backend="compiled")
    rng = random.Random(11)
    boards = [b for table in tables_of(prober, 4) for b in random_boards(table, 15, rng)]
    expected = [(prober.probe_wdl(b), prober.probe_dtz(b)) for b in boards]
    found: dict[int, list] = {}

    def work(index: int) -> None:
        found[index] = [(prober.probe_wdl(b), prober.probe_dtz(b)) for b in boards]

    workers = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert all(found[i] == expected for i in range(3))


def test_the_tree_probes_the_compiled_tables_without_python(syzygy_path: str) -> None:
    """Inside the search every probe goes to the compiled prober (no callback into Python), and a fixed-depth
    search finds the same as with python-chess's prober behind the callback."""
    prober = Prober(syzygy_path)
    require_tables(prober, "KRPvKR", "KRvKR")
    board = chess.Board("8/8/8/4k3/R7/5PP1/6K1/r7 w - - 0 1")
    compiled = Searcher(prober=Prober(syzygy_path, backend="compiled"))
    reference = Searcher(prober=Prober(syzygy_path, backend="python-chess"))
    first, second = (s.search(board, Limits(depth=7)) for s in (compiled, reference))
    assert compiled.compiled_probes > 0 and compiled.probe_calls == 0
    assert reference.compiled_probes == 0 and reference.probe_calls > 0
    assert (first.nodes, first.best_move, first.score, first.tbhits) == \
        (second.nodes, second.best_move, second.score, second.tbhits)
    assert compiled.compiled_probe_seconds > 0


def test_an_unknown_backend_is_refused(syzygy_path: str) -> None:
    with pytest.raises(ValueError, match="backend"):
        Prober(syzygy_path, backend="fathom")


def test_a_batch_answers_as_one_probe_at_a_time(syzygy_path: str) -> None:
    """Prober.probe_many: the same WDL and DTZ as python-chess's probes, None where the tables cannot answer
    (too many pieces, castling rights, the side not to move in check), en passant included."""
    prober = Prober(syzygy_path, backend="compiled")
    reference = Prober(syzygy_path, backend="python-chess", cache_size=0)
    rng = random.Random(12)
    boards = [b for table in ("KQvKR", "KPvKP", "KRvK") for b in random_boards(table, 40, rng)]
    boards += [chess.Board(), chess.Board("r3k3/8/8/8/8/8/8/4K3 b q - 0 1"),
               chess.Board("8/8/8/8/8/5k2/8/2KB1N2 w - - 0 1")]  # 32 pieces, castling, Black in check
    for dtz in (False, True):
        expected = []
        for board in boards:
            try:
                expected.append(reference.probe_dtz(board) if dtz else reference.probe_wdl(board))
            except NotCoveredError:
                expected.append(None)
        assert prober.probe_many(boards, dtz=dtz) == expected
    assert expected[-3:] == [None, None, None] and any(b.ep_square is not None for b in boards)
