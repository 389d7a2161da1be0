"""Every command example of README.md and docs/*.md runs, exits 0 and prints what the text shows, in shape.

An example is a fenced block:

- ```` ```console ````: lines starting with ``$ `` are shell commands (a trailing ``\\`` continues one),
  the other lines are what they print (stdout and stderr together). The commands of a block run in one
  bash script, in order, in a scratch directory that holds ``tests/data`` and ``docs`` of the checkout,
  with the venv's ``bin`` first on ``PATH``; a command ending in ``&`` runs in the background and is
  stopped when the block ends.
- ```` ```uci ````: a UCI session. Lines that are UCI commands (``uci``, ``isready``, ``position``,
  ``go`` ...) are sent to ``chess-endgame-uci``; the others are what it answers.

"In shape" means: after FENs become ``FEN``, absolute paths ``/P``, moves (SAN or UCI) ``M`` and numbers
``9`` (``1,493,418`` and ``-5`` too), a line of moves one ``M``, and runs of spaces one space,
the shown lines equal the printed ones, in order; a line ``...`` stands for any number of lines. An HTML
comment right before the fence sets how the example runs: ``<!-- example: tables=5 -->`` (it needs the
5-piece tables: ``$SYZYGY_PATH`` then points at them, and without them the example skips), ``needs=ray``
(the cluster extra: without Ray the example skips, except where the cluster tests are required),
``exit=N`` (the last command's expected exit code); in such an example ``/data/syzygy`` in a command
stands for the 5-piece tables' directory. Otherwise ``$SYZYGY_PATH`` is unset and the per-user
directory empty: the examples show what a fresh install prints, on the embedded tables.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .conftest import ROOT, ray_lock

BIN = Path(sys.executable).parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
UCI_COMMANDS = {"uci", "isready", "setoption", "position", "go", "stop", "ponderhit", "ucinewgame", "debug",
                "register", "quit"}

_UCI_MOVE = r"[a-h][1-8][a-h][1-8][qrbn]?"
_SAN = r"(?:O-O(?:-O)?|[KQRBN][a-h]?[1-8]?x?[a-h][1-8]|[a-h]x[a-h][1-8](?:=[QRBN])?|[a-h][1-8](?:=[QRBN])?)[+#]?"
_MOVE = re.compile(rf"(?<![\w/]){_UCI_MOVE}(?![\w/])|(?<![\w/]){_SAN}(?![\w/])")
# 1,493,418 is one number, and so is -5 (not the 4 of 3-4)
_NUMBER = re.compile(r"(?:(?<![\w.-])-)?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)")
_FEN = re.compile(r"[1-8pnbrqkPNBRQK]+(?:/[1-8pnbrqkPNBRQK]+){7} [wb] [-KQkq]+ [-a-h1-8]+ \d+ \d+")


@dataclass
class Example:
    page: str
    line: int
    kind: str  # "console" or "uci"
    commands: list[str] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"


def examples() -> list[Example]:
    found = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            fence = re.fullmatch(r"```(console|uci)\s*", lines[i])
            if not fence:
                i += 1
                continue
            example = Example(str(page.relative_to(ROOT)), i + 1, fence.group(1))
            before = lines[i - 1] if i else ""
            directive = re.fullmatch(r"<!-- example: (.*) -->", before.strip())
            if directive:
                for word in directive.group(1).split():
                    key, _, value = word.partition("=")
                    example.options[key] = value
            i += 1
            pending = ""
            while i < len(lines) and lines[i] != "```":
                text = lines[i]
                if example.kind == "console" and (text.startswith("$ ") or pending):
                    command = pending + (text[2:] if not pending else text)
                    if command.endswith("\\"):
                        pending = command[:-1] + " "
                    else:
                        example.commands.append(command)
                        pending = ""
                elif example.kind == "uci" and text.split(" ", 1)[0] in UCI_COMMANDS:
                    example.commands.append(text)
                else:
                    example.shown.append(text)
                i += 1
            found.append(example)
            i += 1
    return found


_PATH = re.compile(r"(?<![\w.~])(?:/|~/)[^\s:,;()'\"]*")
_LINE_OF_MOVES = re.compile(r"(?:9\.(?:\.\.)? ?)?M(?: (?:9\.(?:\.\.)? ?)?M)*")


def shape(line: str) -> str:
    """A line's shape: absolute paths become /P (they differ from machine to machine), moves M, numbers
    9 (signed ones too: a score of -5 cp and one of 0 have one shape), a line of moves (a PV of any length) one M."""
    line = _FEN.sub("FEN", line.rstrip())
    line = _PATH.sub("/P", line)
    line = _MOVE.sub("M", line)
    line = re.sub(r"\s+", " ", _NUMBER.sub("9", line)).strip()
    return _LINE_OF_MOVES.sub("M", line)


def matches(shown: list[str], printed: list[str]) -> bool:
    """``shown`` (with ``...`` lines as wildcards) equals ``printed`` line by line, in shape."""
    want = [None if s.strip() == "..." else shape(s) for s in shown]
    got = [shape(p) for p in printed]
    memo: dict[tuple[int, int], bool] = {}

    def match(i: int, j: int) -> bool:
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(want):
            result = j == len(got)
        elif want[i] is None:
            result = any(match(i + 1, k) for k in range(j, len(got) + 1))
        else:
            result = j < len(got) and got[j] == want[i] and match(i + 1, j + 1)
        memo[(i, j)] = result
        return result

    return match(0, 0)


def test_the_matcher_reads_shape_not_figures() -> None:
    assert shape("search:    depth 8, 16402 nodes, 23 ms") == shape("search: depth 12, 3 nodes, 1.5 ms")
    assert shape("pv: 1. Rd7 Re2 2. Kf3") == shape("pv: 1. g4 Kxf6+ 2. e8=Q#") == shape("pv: 1... Kf7")
    assert shape("bestmove e6f5 ponder g7f8") == "bestmove M ponder M"
    assert shape("score cp 20000") != shape("score mate 3")
    assert shape("Syzygy path: /work/x/syzygy:/tmp/y (embedded)") == shape("Syzygy path: ~/data:/a/b (embedded)")
    assert shape("GET /standard?fen=8/8") == "GET /P" and shape("1/2-1/2") == "9/9-9/9"
    assert shape("score: cp -5") == shape("score: cp 0") == "score: cp 9" and shape("3-4-piece") == "9-9-piece"
    assert shape("nodes 980,464 max 1.5 ms (2Q5/8/8/8/3k4/K7/8/5r2 w - - 52 1)") == \
        shape("nodes 1,493,418 max 38.35 ms (2R5/8/k7/3r4/8/8/8/4R2K w - - 27 1)")
    assert matches(["a 1", "...", "c"], ["a 2", "x", "y", "c"]) and matches(["..."], [])
    assert not matches(["a 1", "c"], ["a 2", "x", "c"]) and not matches(["a"], ["a", "b"])
    assert not matches(["best move: M"], ["error: no such option"])


EXAMPLES = examples()


def test_every_page_has_its_examples_found() -> None:
    pages = {e.page for e in EXAMPLES}
    assert "README.md" in pages and len(EXAMPLES) >= 10
    for example in EXAMPLES:
        assert example.commands, f"{example.name}: an example block with no command"


def tables(lines: list[str]) -> list[tuple[int, list[str]]]:
    """The Markdown tables of a page outside code fences: (first line number, rows), a table being a run of
    lines that start with ``|`` (after indentation)."""
    found: list[tuple[int, list[str]]] = []
    fenced, previous = False, False
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if text.startswith("```"):
            fenced = not fenced
        row = not fenced and text.startswith("|")
        if row and previous:
            found[-1][1].append(text)
        elif row:
            found.append((number, [text]))
        previous = row
    return found


def test_every_table_is_one_table() -> None:
    # A blank line inside a table ends it: the rows after it render as text without a header. A table is a
    # header row and its separator, and a blank line ends it (a line of text right after it is read as a row).
    assert tables(["| a |", "|---|", "| 1 |", "", "| 2 |"]) == [(1, ["| a |", "|---|", "| 1 |"]), (5, ["| 2 |"])]
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for number, rows in tables(lines):
            where = f"{page.name}:{number}"
            assert len(rows) >= 2 and re.fullmatch(r"\|(?:\s*:?-+:?\s*\|)+", rows[1]), f"{where}: no header row"
            after = number + len(rows) - 1
            assert after == len(lines) or not lines[after].strip(), f"{where}: text right after the table"


#: The examples that take minutes (a cold compile of the core; python-chess's probes timed three times).
LONG_COMMANDS = ("chess-endgame bench startup", "chess-endgame bench probe")


def _params() -> list:
    # Each example starts the program afresh (a second or more each): all are slow, run by CI, not by the quick
    # run (pytest -m "not slow"); the longest are also ``long``, run first.
    def marks(e: Example) -> list:
        long = any(c.startswith(LONG_COMMANDS) for c in e.commands)
        return [pytest.mark.slow, pytest.mark.long] if long else [pytest.mark.slow]

    return [pytest.param(e, id=e.name, marks=marks(e)) for e in EXAMPLES]


def run_uci(commands: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, list[str]]:
    """Send ``commands`` to the UCI engine as a GUI does: after ``uci``, ``isready`` and a ``go`` that ends
    by itself, wait for ``uciok``, ``readyok`` or ``bestmove`` before the next command. Returns the exit
    code and every line the engine printed."""
    engine = subprocess.Popen([str(BIN / "chess-endgame-uci")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, cwd=cwd, env=env, bufsize=1)
    assert engine.stdin is not None and engine.stdout is not None
    printed: list[str] = []
    try:
        for command in commands:
            engine.stdin.write(command + "\n")
            engine.stdin.flush()
            words = command.split()
            awaited = {"uci": "uciok", "isready": "readyok"}.get(words[0])
            if words[0] == "go" and not {"infinite", "ponder"} & set(words):
                awaited = "bestmove"
            while awaited is not None:
                line = engine.stdout.readline()
                if not line:
                    break
                printed.append(line.rstrip("\n"))
                if line.startswith(awaited):
                    awaited = None
        engine.stdin.close()
        printed += [line.rstrip("\n") for line in engine.stdout]
        return engine.wait(timeout=60), printed
    finally:
        engine.kill()


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """A directory like a clone's top level for the examples' relative paths (tests/data, docs, tablebases)."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tablebases").symlink_to(ROOT / "tablebases")
    (tmp_path / "scripts").symlink_to(ROOT / "scripts")
    shutil.copytree(ROOT / "tests" / "data", tmp_path / "tests" / "data")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    return tmp_path


@pytest.mark.parametrize("example", _params())
def test_example(example: Example, scratch: Path, request: pytest.FixtureRequest) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("SYZYGY_PATH", "CHESS_ENDGAME_REMOTE_CACHE")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["XDG_DATA_HOME"] = str(scratch / "data-home")  # an empty per-user directory
    env["XDG_CACHE_HOME"] = str(scratch / "cache-home")  # the remote tablebase's answers
    env["COLUMNS"] = "200"
    commands = example.commands
    if example.options.get("needs") == "ray" and importlib.util.find_spec("ray") is None:
        if os.environ.get("CHESS_ENDGAME_CLUSTER_TESTS") == "required" or os.environ.get("CI"):
            pytest.fail("Ray is missing (pip install -e '.[cluster]') and the cluster tests are required")
        pytest.skip("needs Ray: pip install -e '.[cluster]'")
    if example.options.get("tables") == "5":
        env["SYZYGY_PATH"] = request.getfixturevalue("five_pieces")
        commands = [c.replace("/data/syzygy", env["SYZYGY_PATH"]) for c in commands]
    # A Ray example starts its own Ray instance: one at a time on the machine (tests/conftest.py's ray_lock).
    with ray_lock() if example.options.get("needs") == "ray" else contextlib.nullcontext():
        code, printed = _run_example(example, commands, scratch, env)
    assert code == int(example.options.get("exit", "0")), (example.name, printed[-20:])
    assert matches(example.shown, printed), (f"{example.name}: printed\n" + "\n".join(printed[:60])
                                             + "\n--- but the text shows\n" + "\n".join(example.shown))


def _run_example(example: Example, commands: list[str], scratch: Path, env: dict[str, str]) -> tuple[int, list[str]]:
    """Run an example's commands (a UCI session, or one bash script): the exit code and the lines printed."""
    if example.kind == "uci":
        code, printed = run_uci(commands, scratch, env)
    else:
        script = "trap 'kill $(jobs -p) 2>/dev/null' EXIT\n"
        for command in commands[:-1]:
            stop_on_failure = "" if command.rstrip().endswith("&") else "code=$?; [ $code = 0 ] || exit $code\n"
            script += f"{command}\n{stop_on_failure}"
        script += commands[-1] + "\n"
        result = subprocess.run(["bash", "-c", script], capture_output=False, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, cwd=scratch, env=env, timeout=900)
        printed = result.stdout.splitlines()
        code = result.returncode
    return code, printed
