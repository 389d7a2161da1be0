"""``review``: games built from the tables with the result thrown away at a known move, perfect play,
play beyond the tables, the annotated PGN, and bad input."""

from __future__ import annotations

import io
import json
import subprocess
import xml.dom.minidom
from pathlib import Path

import chess
import chess.pgn
import pytest

from chess_endgame.chooser import Choice, MoveClass, choose, rank_move
from chess_endgame.play.game import TablebaseAgent, play_game
from chess_endgame.review import GameReview, Judgement, Reviewer, ReviewOptions, annotated_game, annotated_pgn
from chess_endgame.review.curve import CHAR_WIDTH
from chess_endgame.review.judge import eval_judgement
from chess_endgame.tablebase.prober import Prober
from chess_endgame.tablebase.remote import RemoteProber

from .conftest import EXECUTABLE, require_pieces, require_tables, run
from .interrupting import interrupt, progress_shows
from .tbserver import serving

DATA = Path(__file__).parent / "data"
#: Beyond the tables: small, fixed budgets keep the tests quick and deterministic.
NODES = ReviewOptions(nodes=4000)
#: A won KRPvKR position; after ten plies of perfect play White can underpromote to a bishop and draw.
KRPVKR = "8/5K2/8/5R2/1r2P3/8/8/1k6 w - - 0 1"


def game_from(fen: str, sans: list[str], **headers: str) -> chess.pgn.Game:
    game = chess.pgn.Game()
    board = chess.Board(fen)
    game.setup(board)
    game.headers.update(headers)
    node: chess.pgn.GameNode = game
    for san in sans:
        move = board.parse_san(san)
        node = node.add_variation(move)
        board.push(move)
    return game


@pytest.fixture(scope="module")
def reviewer(prober: Prober) -> Reviewer:
    return Reviewer(prober, NODES)


def flagged(review: GameReview) -> list[tuple[int, str, Judgement]]:
    return [(m.ply, m.san, m.judgement) for m in review.moves if m.judgement is not None]


# -- within the tables ----------------------------------------------------------------------

THROWN_AWAY = [
    # (start, moves, the move thrown away (ply), class before -> after, acceptable best moves)
    pytest.param("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", ["Qf7"], 1, ("WIN", "DRAW"), {"Qf8#"}, id="stalemate"),
    pytest.param("8/8/8/k2Pp3/8/8/8/4K3 w - e6 0 2", ["Kd2"], 1, ("WIN", "DRAW"), {"dxe6"}, id="en passant"),
    pytest.param("8/2K5/4B3/3N4/8/8/4k3/8 b - - 48 1", ["Kd1"], 1, ("BLESSED_LOSS", "LOSS"), {"Kd3"},
                 id="the only 50-move draw missed"),
    pytest.param("8/6k1/4K3/6B1/8/8/5N2/8 w - - 79 1", ["Ke5"], 1, ("WIN", "CURSED_WIN"),
                 {"Kf5", "Be7", "Bf6+", "Ne4", "Nh3", "Nd3"}, id="win given away by the 50-move rule"),
    pytest.param("7b/8/6b1/8/5Nk1/4K3/8/8 b - - 0 1", ["Kf5"], 1, ("CURSED_WIN", "DRAW"), {"Bb1", "Bh7"},
                 id="cursed win given away"),
    pytest.param("8/6k1/4K3/6B1/8/8/5N2/8 w - - 0 1", ["Kf5", "Kf7", "Ne4", "Ke8", "Bd8"], 5, ("WIN", "DRAW"),
                 None, id="KBNvK bishop hung"),
]


@pytest.mark.parametrize(("fen", "moves", "ply", "classes", "best"), THROWN_AWAY)
def test_a_thrown_away_result_is_flagged_at_its_move(prober: Prober, reviewer: Reviewer, fen: str,
                                                      moves: list[str], ply: int, classes: tuple[str, str],
                                                      best: set[str] | None) -> None:
    require_pieces(prober, chess.Board(fen))
    review = reviewer.review(game_from(fen, moves))
    assert flagged(review) == [(ply, moves[ply - 1], Judgement.BLUNDER)]
    move = review.moves[ply - 1]
    assert move.source == "tablebase" and (move.before, move.after) == classes
    board = chess.Board(fen)
    for san in moves[:ply - 1]:
        board.push_san(san)
    if best is None:  # the chooser's best move: it keeps the result the blunder threw away
        choice = choose(board, prober)
        assert isinstance(choice, Choice)
        best = {board.san(choice.best.move)}
    assert move.best in best
    assert move.line and move.line[0] == move.best
    assert rank_move(board, board.parse_san(move.best), prober).cls.name == classes[0]


def test_a_drawn_rook_ending_thrown_away(reviewer: Reviewer, prober: Prober) -> None:
    board = chess.Board("8/5k1r/8/8/6K1/8/8/R7 w - - 0 1")
    review = reviewer.review(game_from(board.fen(), ["Rg1"]))
    move = review.moves[0]
    assert (move.judgement, move.before, move.after) == (Judgement.BLUNDER, "DRAW", "LOSS")
    assert move.best not in ("Rg1", "Rh1")
    assert rank_move(board, board.parse_san(move.best), prober).cls == MoveClass.DRAW


def perfect_game(prober: Prober, fen: str, plies: int) -> tuple[chess.Board, list[str]]:
    """``plies`` moves of the chooser against itself from ``fen``: the board before each and the SANs."""
    board = chess.Board(fen)
    sans = []
    for _ in range(plies):
        choice = choose(board, prober)
        assert isinstance(choice, Choice) and choice.best is not None
        sans.append(board.san(choice.best.move))
        board.push(choice.best.move)
    return board, sans


def test_thrown_away_after_perfect_play(prober: Prober, reviewer: Reviewer) -> None:
    """Ten plies of perfect KRPvKR play, then White promotes to a bishop and draws: flagged there only."""
    require_tables(prober, "KRPvKR")
    fen = KRPVKR
    board, sans = perfect_game(prober, fen, 10)
    choice = choose(board, prober, full=True)
    assert isinstance(choice, Choice) and choice.result == MoveClass.WIN
    drawing = next(m for m in choice.moves if m.cls == MoveClass.DRAW)
    best = board.san(choice.best.move)
    sans.append(board.san(drawing.move))
    board.push(drawing.move)
    sans += perfect_game(prober, board.fen(), 4)[1]
    review = reviewer.review(game_from(fen, sans))
    assert flagged(review) == [(11, sans[10], Judgement.BLUNDER)]
    assert review.moves[10].best == best
    assert review.entered is not None and review.entered.ply == 0 and review.entered.cls == "WIN"


def test_a_perfect_game_is_flagged_nowhere(prober: Prober, reviewer: Reviewer) -> None:
    """KRvK played to mate by the tablebase defender on both sides (the project's game runner)."""
    start = chess.Board("8/8/8/4k3/8/8/4K3/4R3 w - - 0 1")
    agent = TablebaseAgent(prober)
    record = play_game(start, agent, agent, max_plies=80)
    assert record.termination == "checkmate"
    game = chess.pgn.read_game(io.StringIO(record.pgn()))
    review = reviewer.review(game)
    assert len(review.moves) == record.plies and flagged(review) == []
    assert all(m.source == "tablebase" for m in review.moves)
    white = [m for m in review.moves if m.color == "white"]
    assert all(m.before == m.after == "WIN" for m in white)


@pytest.mark.parametrize(("fen", "moves", "reason"), [
    pytest.param("8/6k1/4K3/6B1/8/8/5N2/8 w - - 70 1", ["Ke5"], "plies to spare", id="winner near the limit"),
    pytest.param("8/2K5/4B3/3N4/8/8/4k3/8 b - - 40 1", ["Kd1"], "resists less", id="defender near the limit"),
    pytest.param("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", ["Qf2", "Kg8", "Qf1", "Kh8", "Qf2"], "repeats",
                 id="winner repeats a position"),
])
def test_spending_the_50_move_margin_is_dubious(reviewer: Reviewer, fen: str, moves: list[str],
                                                reason: str) -> None:
    review = reviewer.review(game_from(fen, moves))
    assert flagged(review) == [(len(moves), moves[-1], Judgement.DUBIOUS)]
    assert reason in review.moves[-1].reason and review.moves[-1].best is not None


def test_far_from_the_limit_a_slower_win_is_fine(reviewer: Reviewer) -> None:
    review = reviewer.review(game_from("8/6k1/4K3/6B1/8/8/5N2/8 w - - 0 1", ["Ke5"]))
    assert flagged(review) == [] and review.moves[0].after == "WIN"


def test_review_through_a_remote_tablebase(prober: Prober) -> None:
    """No local tables: the roots are ranked from a server speaking the Lichess API (our serve), as locally."""
    game = game_from("8/6k1/4K3/6B1/8/8/5N2/8 w - - 79 1", ["Kf5", "Kf7", "Ke5"])
    local = Reviewer(prober, NODES).review(game)
    with serving(prober) as url:
        remote = RemoteProber(url, min_interval=0.0)
        try:
            far = Reviewer(Prober(None), NODES, remote=remote).review(game)
        finally:
            remote.close()
    assert flagged(far) == flagged(local) == [(3, "Ke5", Judgement.BLUNDER)]
    assert [(m.source, m.before, m.after, m.best) for m in far.moves] == \
        [(m.source, m.before, m.after, m.best) for m in local.moves]
    code, out, err = run("review", str(DATA / "review.pgn"), "--remote-tablebase", "http://127.0.0.1:9",
                         "--jobs", "2")
    assert code == 2 and out == "" and "--jobs 1" in err


# -- beyond the tables ----------------------------------------------------------------------

def test_lichess_thresholds() -> None:
    cp, mate = chess.engine.Cp, chess.engine.Mate
    # Winning chances 2 / (1 + exp(-0.00368208 cp)) - 1 drop by 0.1, 0.2, 0.3 (5, 10, 15 Win% points).
    assert eval_judgement(cp(0), cp(-50)).judgement is None  # a drop of 0.092
    assert eval_judgement(cp(0), cp(-60)).judgement is Judgement.INACCURACY  # 0.110
    assert eval_judgement(cp(0), cp(-120)).judgement is Judgement.MISTAKE  # 0.217
    assert eval_judgement(cp(0), cp(-170)).judgement is Judgement.BLUNDER  # 0.303
    assert eval_judgement(cp(1500), cp(1000)).judgement is None  # beyond the ceiling of 1000 cp
    assert eval_judgement(mate(3), cp(1200)).judgement is Judgement.INACCURACY  # lost the mate, still winning
    assert eval_judgement(mate(3), cp(100)).judgement is Judgement.BLUNDER
    assert eval_judgement(cp(-800), mate(-4)).judgement is Judgement.MISTAKE  # mate allowed, already lost
    assert eval_judgement(mate(2), chess.engine.MateGiven).judgement is None


def test_beyond_the_tables_search_judges_and_the_entry_is_reported(prober: Prober, reviewer: Reviewer) -> None:
    require_tables(prober, "KRPvKR")
    hung_queen = reviewer.review(game_from("3r2k1/5pp1/7p/8/8/8/1R3PPP/3Q2K1 w - - 0 1",
                                           ["Qd5", "Rxd5", "Rb8+", "Kh7"]))
    assert flagged(hung_queen)[0] == (1, "Qd5", Judgement.BLUNDER) and hung_queen.moves[0].best == "Qxd8+"
    assert hung_queen.moves[0].source == "search" and hung_queen.entered is None
    into_tables = reviewer.review(game_from("7r/8/4k3/3p4/P7/8/4K3/3R4 w - - 0 1", ["Rxd5", "Kxd5", "a5"]))
    assert flagged(into_tables) == [(1, "Rxd5", Judgement.BLUNDER)]
    entry = into_tables.entered
    assert entry is not None and (entry.ply, entry.material, entry.turn, entry.cls, entry.result) == \
        (1, "KRPvKR", "black", "WIN", "0-1")
    # A game that ends mated (or stalemated) within the tables' reach enters them there: the rules' verdict.
    mated = reviewer.review(game_from("k7/1Q6/1K6/8/8/8/8/8 b - - 0 1", []))
    assert mated.entered is not None and (mated.entered.ply, mated.entered.material, mated.entered.cls,
                                          mated.entered.result) == (0, "KQvK", "LOSS", "1-0")
    stalemated = reviewer.review(game_from("k7/2K5/1Q6/8/8/8/8/8 b - - 0 1", []))
    assert stalemated.entered is not None and (stalemated.entered.cls, stalemated.entered.result) == \
        ("DRAW", "1/2-1/2")
    dead = reviewer.review(game_from("8/8/8/4k3/8/8/2K5/6N1 w - - 0 1", ["Kd3", "Kd5"]))  # KNvK from the start
    assert dead.entered is not None and (dead.entered.ply, dead.entered.material, dead.entered.cls) == \
        (0, "KNvK", "DRAW")
    assert [m.source for m in into_tables.moves] == ["search", "tablebase", "tablebase"]


# -- the annotated PGN ----------------------------------------------------------------------

def test_the_annotated_pgn_rereads_to_the_same_moves_and_comments(prober: Prober, reviewer: Reviewer) -> None:
    require_tables(prober, "KRPvKR")
    board, sans = perfect_game(prober, KRPVKR, 10)
    sans += ["e8=B", "Rb8+"]
    game = game_from(KRPVKR, sans, White="Ann", Black="Bob", Result="*")
    first = next(iter(game.mainline()))
    first.comment = "kept from the input [%clk 0:05:00]"
    review = reviewer.review(game)
    ours = annotated_game(review)
    text = annotated_pgn(review)
    again = chess.pgn.read_game(io.StringIO(text))
    assert again is not None and not again.errors
    assert list(again.mainline_moves()) == list(game.mainline_moves())
    assert [n.comment for n in again.mainline()] == [n.comment for n in ours.mainline()]
    assert [n.nags for n in again.mainline()] == [n.nags for n in ours.mainline()]
    assert "kept from the input" in next(iter(again.mainline())).comment
    for node, move in zip(again.mainline(), review.moves, strict=True):
        assert node.eval() == move.eval
        if move.judgement is not None:
            assert move.judgement.nag in node.nags and f"{move.best} was best" in node.comment
            assert len(node.parent.variations) == 2  # the best line beside the move played
    assert again.headers["White"] == "Ann" and again.headers["Annotator"] == "chess-endgame review"
    assert [m.ply for m in review.moves if m.judgement] == [11]


# -- the command ----------------------------------------------------------------------------

def write_games(path: Path, *games: chess.pgn.Game, junk: str = "") -> Path:
    path.write_text("\n\n".join(str(g) for g in games) + "\n\n" + junk)
    return path


def test_cli_outputs(syzygy_path: str, tmp_path: Path) -> None:
    games = write_games(tmp_path / "games.pgn",
                        game_from("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", ["Qf7"], White="A", Black="B"),
                        game_from("8/6k1/4K3/6B1/8/8/5N2/8 w - - 0 1", ["Kf5", "Kf7", "Ne4", "Ke8", "Bd8"]))
    code, out, err = run("review", str(games), "--nodes", "2000")
    assert code == 0, err
    annotated = io.StringIO(out)
    assert [g.headers["White"] for g in iter(lambda: chess.pgn.read_game(annotated), None)] == ["A", "?"]
    assert "1. Qf7 $4 { [%eval 0.00] Blunder. Qf8# was best." in out
    assert "result thrown away: 1. Qf7??" in err and "reviewed 2 of 2 games" in err
    # One ply, not "1 plies"; the draw named: a stalemate.
    assert "game 1: A - B *, 1 ply\n" in err and "(win → draw by stalemate); Qf8# was best" in err
    code, out, err = run("review", str(games), "--nodes", "2000", "--json", "--output", str(tmp_path / "a.pgn"),
                         "--svg", str(tmp_path / "curves"))
    assert code == 0, err
    data = json.loads(out)
    assert data["meta"]["reviewed"] == 2 and data["skipped"] == []
    first, second = data["games"]
    assert first["thrown_away"]["move"] == "1. Qf7" and first["thrown_away"]["best"] == "Qf8#"
    assert second["thrown_away"]["move"] == "3. Bd8" and second["kept"]["white"] == {"won": 3, "kept": 2}
    assert second["moves"][0]["eval"] == {"cp": 20000}
    assert (tmp_path / "a.pgn").read_text().count("[Event ") == 2
    svg = xml.dom.minidom.parse(str(tmp_path / "curves" / "game-2.svg"))
    dots = svg.getElementsByTagName("circle")
    assert len(dots) == 1 and "3. Bd8?? Blunder." in dots[0].getElementsByTagName("title")[0].firstChild.data
    # A blunder on the last ply sits at the right edge: its label must not be cut off there.
    for name in ("game-1.svg", "game-2.svg"):
        picture = xml.dom.minidom.parse(str(tmp_path / "curves" / name)).documentElement
        width = float(picture.getAttribute("width"))
        labels = [t for t in picture.getElementsByTagName("text") if t.firstChild.data.endswith("??")]
        assert labels, name
        for label in labels:
            x, span = float(label.getAttribute("x")), CHAR_WIDTH * len(label.firstChild.data)
            left = {"start": x, "middle": x - span / 2, "end": x - span}[label.getAttribute("text-anchor")]
            assert 0 <= left and left + span <= width, (name, label.toxml())


def test_jobs_give_the_same_review(syzygy_path: str, tmp_path: Path) -> None:
    games = write_games(tmp_path / "games.pgn", *(game_from(fen, moves) for fen, moves, *_ in
                                                  (p.values for p in THROWN_AWAY)),
                        game_from("7r/8/4k3/3p4/P7/8/4K3/3R4 w - - 0 1", ["Rxd5", "Kxd5"]))
    one = run("review", str(games), "--nodes", "2000", "--json")
    two = run("review", str(games), "--nodes", "2000", "--json", "--jobs", "2")
    assert one[0] == two[0] == 0, one[2] + two[2]

    def strip(out: str) -> list:
        return [{k: v for k, v in g.items() if k != "seconds"} for g in json.loads(out)["games"]]

    assert strip(one[1]) == strip(two[1]) and len(strip(one[1])) == len(THROWN_AWAY) + 1


def test_bad_input(syzygy_path: str, tmp_path: Path) -> None:
    def one_line(code: int, out: str, err: str, *words: str) -> None:
        assert code == 2 and out == "", (code, out, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("chess-endgame: error: "), err
        assert all(w in lines[0] for w in words), err

    one_line(*run("review", str(tmp_path / "missing.pgn")), "cannot read", "missing.pgn")
    (tmp_path / "binary.pgn").write_bytes(bytes(range(256)) * 4)
    one_line(*run("review", str(tmp_path / "binary.pgn")), "not a PGN file")
    (tmp_path / "text.pgn").write_text("this is not what review reads\n")
    one_line(*run("review", str(tmp_path / "text.pgn")), "not a PGN file")
    one_line(*run("review", str(tmp_path / "text.pgn"), "--json", "--output", "-"), "standard output")
    one_line(*run("review", str(tmp_path / "text.pgn"), "--nodes", "5", "--depth", "2"), "one of")
    good = str(game_from("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", ["Qf7"]))
    database = tmp_path / "db.pgn"
    database.write_text(f'{good}\n\n[Event "broken"]\n\n1. e4 e5 2. Ke3 *\n\n{good}\n')
    code, out, err = run("review", str(database), "--nodes", "2000")
    assert code == 0, err
    # The line of the illegal move itself (the game starts on line 13).
    assert "chess-endgame: skipped game 2 (line 15): illegal san: 'Ke3'" in err
    assert out.count("[Event ") == 2 and "reviewed 2 of 3 games in" in err and "1 skipped" in err
    (tmp_path / "bad.pgn").write_text('[Event "broken"]\n\n1. e4 e5\n2. Nf3 Nc6\n3. Ke3 *\n')
    one_line(*run("review", str(tmp_path / "bad.pgn")), "no game to review", "1 bad", "game 1, line 5", "Ke3")


@pytest.mark.slow
def test_ctrl_c_keeps_the_games_done(syzygy_path: str, tmp_path: Path) -> None:
    game = game_from("3r2k1/5pp1/7p/8/8/8/1R3PPP/3Q2K1 w - - 0 1", ["Qd5", "Rxd5", "Rb8+", "Kh7", "h3", "Rd1+"])
    games = write_games(tmp_path / "slow.pgn", *[game] * 40)
    out_pgn = tmp_path / "partial.pgn"
    code, out, err = interrupt(["review", str(games), "--movetime", "250", "--jobs", "2", "--output", str(out_pgn)],
                               progress_shows("review", 1), terminal=True)
    assert code == 130, err
    done = out_pgn.read_text().count("[Event ")
    assert "interrupted" in err and f"the outputs hold the {done} game{'s' if done > 1 else ''} reviewed" in err
    assert 0 < done < 40 and f"reviewed {done} of 40 games" in out


def test_every_game_skipped_by_the_reviewer_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file whose games all read but none could be reviewed ends as one whose games could not be read: exit 2
    with the first reason, after the outputs (the JSON's skipped list) are written."""
    def broken(self: Reviewer, game: chess.pgn.Game, number: int) -> GameReview:
        raise ValueError("the reviewer broke")

    monkeypatch.setattr(Reviewer, "review", broken)
    good = str(game_from("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", ["Qf7"]))
    database = tmp_path / "db.pgn"
    database.write_text(f"{good}\n\n{good}\n")
    code, out, err = run("review", str(database), "--nodes", "200", "--json")
    assert code == 2, (code, err)
    assert err.strip().splitlines()[-1] == (f"chess-endgame: error: no game reviewed in {database}: 2 skipped, "
                                            "the first (game 1, line 1): the reviewer broke"), err
    data = json.loads(out)
    assert data["meta"]["reviewed"] == 0 and [s["number"] for s in data["skipped"]] == [1, 2]


def test_json_names_the_side_mated_and_the_budget(syzygy_path: str, tmp_path: Path) -> None:
    """Mate on the board has no sign in ``{"mate": 0}``: the record names the side mated; ``meta.limits`` is the
    default budget when none is given; the per-game summary goes to stderr beside the JSON."""
    games = write_games(tmp_path / "mates.pgn", game_from("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", ["Qf8#"]),
                        game_from("5q2/8/8/8/8/6k1/8/7K b - - 0 1", ["Qf1#"]))
    code, out, err = run("review", str(games), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [g["moves"][-1]["eval"] for g in data["games"]] == [{"mate": 0, "mated": "black"},
                                                               {"mate": 0, "mated": "white"}]
    assert data["meta"]["limits"] == {"movetime": None, "nodes": 20000, "depth": None}
    assert "game 1: ? - ? *, 1 ply" in err and "reviewed 2 of 2 games in" in err


def test_a_full_standard_output_keeps_the_review(syzygy_path: str, tmp_path: Path) -> None:
    """Standard output on a full disk: one line names the file that holds the review, exit 1, no traceback."""
    games = write_games(tmp_path / "games.pgn", game_from("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", ["Qf7"]))
    for extra in ([], ["--json"]):
        with open("/dev/full", "w") as full:
            proc = subprocess.run([EXECUTABLE, "review", str(games), "--nodes", "2000", *extra], stdout=full,
                                  stderr=subprocess.PIPE, text=True, timeout=300)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        line = [x for x in proc.stderr.splitlines() if "cannot write standard output" in x]
        assert len(line) == 1 and "No space left on device; it is in " in line[0], proc.stderr
        kept = Path(line[0].split("it is in ")[1].split(" instead")[0]).read_text()
        assert ("Blunder. Qf8# was best." in kept) if not extra else json.loads(kept)["meta"]["reviewed"] == 1


def test_chess960_latin1_and_impossible_en_passant_games(syzygy_path: str, tmp_path: Path) -> None:
    """A Chess960 game without castling rights is standard chess; with them it is skipped, saying why; a Latin-1
    name is kept; an impossible en passant square is named as the reason, with the FEN as the file gives it."""
    no_castling = game_from("4k3/pppp4/8/8/8/8/PPPP4/4K3 w - - 0 1", ["a3", "a6"], Variant="Chess960")
    castling = chess.pgn.Game.from_board(chess.Board.from_chess960_pos(518))
    castling.headers["Variant"] = "Chess960"
    castling.add_main_variation(chess.Move.from_uci("e2e4"))
    text = "\n\n".join(str(g) for g in (no_castling, castling)) + "\n\n"
    text += '[Event "ep"]\n[White "M\u00fcller"]\n[FEN "8/8/8/4k3/8/8/4K3/R7 w - e6 0 1"]\n[SetUp "1"]\n\n1. Ra2 *\n\n'
    text += ('[Event "latin"]\n[White "M\u00fcller"]\n[FEN "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1"]\n[SetUp "1"]\n\n'
             '1. Qf8# 1-0\n')
    (tmp_path / "mixed.pgn").write_bytes(text.encode("latin-1"))
    code, out, err = run("review", str(tmp_path / "mixed.pgn"), "--nodes", "500", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [g["number"] for g in data["games"]] == [1, 4] and data["games"][1]["white"] == "M\u00fcller"
    reasons = {s["number"]: s["error"] for s in data["skipped"]}
    assert reasons[2] == "a Chess960 game with castling rights: the searcher plays standard chess only"
    assert reasons[3] == ("illegal start position '8/8/8/4k3/8/8/4K3/R7 w - e6 0 1': "
                          "the en passant square is impossible")


@pytest.mark.slow
def test_ctrl_c_before_a_game_is_done_leaves_the_output_file(syzygy_path: str, tmp_path: Path) -> None:
    game = game_from("3r2k1/5pp1/7p/8/8/8/1R3PPP/3Q2K1 w - - 0 1", ["Qd5", "Rxd5", "Rb8+", "Kh7", "h3", "Rd1+"])
    games = write_games(tmp_path / "slow.pgn", game)
    out_pgn = tmp_path / "earlier.pgn"
    out_pgn.write_text("earlier work\n")
    code, out, err = interrupt(["review", str(games), "--movetime", "2000", "--output", str(out_pgn)],
                               lambda out, err, elapsed: elapsed > 4)
    assert code == 130, err
    assert "no game was reviewed to the end; the outputs were left as they were" in err
    assert out_pgn.read_text() == "earlier work\n"


def test_reviewing_the_review_again_changes_nothing_and_lines_are_not_doubled(syzygy_path: str,
                                                                             tmp_path: Path) -> None:
    """The best line already a variation (the player's own) is followed, not added twice; the review's output
    reviewed again is the same text (its comments had doubled and its line was added once more)."""
    source = tmp_path / "game.pgn"
    source.write_text('[Event "x"]\n[FEN "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1"]\n[SetUp "1"]\n\n'
                      "1. Qf7 ( 1. Qf8# { my note } ) *\n")
    first, second = tmp_path / "a1.pgn", tmp_path / "a2.pgn"
    assert run("review", str(source), "--output", str(first))[0] == 0
    text = first.read_text()
    assert text.count("Qf8#") == 2 and "( 1. Qf8# { my note } ) *" in text  # the comment's, and the variation
    assert run("review", str(first), "--output", str(second))[0] == 0
    assert second.read_text() == text


def test_a_review_that_fails_as_it_starts_leaves_the_output_as_it_was(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A cluster node without the tables stops the batch before any game is reviewed: one line, exit 2, and an
    existing --output file keeps what it held (it was emptied)."""
    import chess_endgame_cli.review as front
    from chess_endgame.batch.protocol import BackendError, BatchResult

    def failing(games: object, spec: object, backend: object = None, on_result: object = None) -> BatchResult:
        return BatchResult(error=BackendError("on node 10.0.0.7 (worker-3): the tables are missing"))

    monkeypatch.setattr(front, "review_games", failing)
    kept = tmp_path / "keep.pgn"
    kept.write_text('[Event "an earlier review"]\n\n*\n')
    code, out, err = run("review", str(Path(__file__).parent / "data" / "cluster-review.pgn"), "--nodes", "100",
                         "--output", str(kept))
    assert code == 2 and out == "" and kept.read_text() == '[Event "an earlier review"]\n\n*\n'
    assert err.splitlines() == ["chess-endgame: error: on node 10.0.0.7 (worker-3): the tables are missing"]
