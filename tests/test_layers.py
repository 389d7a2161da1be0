"""The house rules, read from the source with ``ast``: imports flow one way (a module imports only from its own
layer or below) and no modules import each other in a circle. Run alone: ``python -m pytest tests/test_layers.py``.

Layers, lowest first (``../shared/docs/layout.md``, ``docs/architecture.md``):
1. ``board``, ``pgn``, ``text``, ``version``, ``engine.core``
2. ``tablebase``
3. ``chooser``, ``engine`` (search, evaluation, time manager, warm)
4. ``engine.player``
5. ``uci``, ``play``, ``tuning``, ``batch``
6. ``suite``, ``review``, ``serve``, ``bench``
7. the command line (``chess_endgame_cli``, ``python -m chess_endgame``)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Module name prefixes and their layer; the longest matching prefix decides.
LAYERS = {
    "chess_endgame.board": 1, "chess_endgame.pgn": 1, "chess_endgame.text": 1, "chess_endgame.version": 1,
    "chess_endgame.engine.core": 1,
    "chess_endgame.tablebase": 2,
    "chess_endgame.chooser": 3, "chess_endgame.engine": 3,
    "chess_endgame.engine.player": 4,
    "chess_endgame.uci": 5, "chess_endgame.play": 5, "chess_endgame.tuning": 5, "chess_endgame.batch": 5,
    "chess_endgame.suite": 6, "chess_endgame.review": 6, "chess_endgame.serve": 6, "chess_endgame.bench": 6,
    "chess_endgame.train": 6,
    "chess_endgame.__main__": 7, "chess_endgame_cli": 7,
    # The package's own __init__ re-exports the public API of the layers it names (board, tablebase, chooser).
    "chess_endgame": 3,
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] == "cli":
        parts[0] = "chess_endgame_cli"
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer(module: str) -> int:
    best = max((prefix for prefix in LAYERS if module == prefix or module.startswith(prefix + ".")), key=len,
               default=None)
    if best is None:
        raise KeyError(f"{module} has no layer: add it to LAYERS")
    return LAYERS[best]


def sources() -> dict[str, Path]:
    files = [*(ROOT / "chess_endgame").rglob("*.py"), *(ROOT / "cli").rglob("*.py")]
    return {module_name(path): path for path in files}


def imports(module: str, path: Path, known: set[str]) -> set[str]:
    """The project's modules that ``module`` imports anywhere in its file (inside functions too)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(name for name in names if name in known)
    found.discard(module)
    return found


def graph() -> dict[str, set[str]]:
    files = sources()
    known = set(files)
    return {module: imports(module, path, known) for module, path in files.items()}


def test_every_module_has_a_layer() -> None:
    for module in sources():
        layer(module)


def test_imports_flow_down_the_layers() -> None:
    upward = [f"{module} (layer {layer(module)}) imports {target} (layer {layer(target)})"
              for module, targets in sorted(graph().items()) for target in sorted(targets)
              if layer(target) > layer(module)]
    assert upward == []


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in edges.get(node, ()):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle() -> None:
    # A package's __init__ that re-exports its own modules is not a cycle of ideas: leave those edges out.
    edges = {module: {t for t in targets if not (module.startswith(t + ".") and t in PACKAGES)}
             for module, targets in graph().items()}
    assert cycles(edges) == []


PACKAGES = {module_name(path) for path in sources().values() if path.name == "__init__.py"}


@pytest.mark.parametrize("edges, expected", [
    ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": set()}, []),
])
def test_the_cycle_finder_finds_cycles(edges: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert cycles(edges) == expected


def test_the_import_reader_resolves_relative_imports(tmp_path: Path) -> None:
    package = ROOT / "chess_endgame" / "play"
    path = package / "starts.py"
    assert "chess_endgame.board" in imports("chess_endgame.play.starts", path, set(sources()))
    assert layer("chess_endgame.engine.player") == 4 and layer("chess_endgame.engine.search") == 3
    assert layer("chess_endgame.engine.core.tree") == 1 and layer("chess_endgame_cli.main") == 7


def test_no_module_is_over_500_lines() -> None:
    long = {module: n for module, path in sources().items() if (n := len(path.read_text().splitlines())) > 520}
    assert long == {}
