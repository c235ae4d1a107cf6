"""The package's import contract: stages import only the stages below them, and no modules import
each other in a cycle. Read from the source with ``ast`` (every import, at the top of a module or
inside a function), so the check needs no import of the package and names the line that breaks it.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set, Tuple

import moveorder
from helpers import REPO

SRC = REPO / "src" / "moveorder"

#: The layers, lowest first: a module may import its own layer and those before it.
LAYERS = ("settings", "go", "data", "nets", "search", "katago", "report", "serve", "cli")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:  # the package itself: its __init__ holds only the version and the map
        return -1
    top = "cli" if parts[1] == "__main__" else parts[1]
    return LAYERS.index(top)


def imports_of(path: Path, modules: Set[str]) -> List[Tuple[int, str]]:
    """(line, module) for every import of a moveorder module in ``path``."""
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # ``from pkg import mod`` imports a module; ``from mod import name`` the module itself
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name.startswith("moveorder") and name != me:
                found.append((node.lineno, name))
    return found


def graph() -> Dict[str, List[Tuple[int, str]]]:
    paths = {module_name(p): p for p in SRC.rglob("*.py")}
    return {m: imports_of(p, set(paths)) for m, p in paths.items()}


def upward_imports(g) -> List[str]:
    return [
        f"{m} (line {line}) imports {t}: {LAYERS[layer_of(t)]} is above {LAYERS[layer_of(m)]}"
        for m, targets in g.items()
        for line, t in targets
        if layer_of(m) >= 0 and layer_of(t) > layer_of(m)
    ]


def cycles(g) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    out = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for _, w in g.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def test_the_checker_finds_an_upward_import_and_a_cycle():
    g = {
        "moveorder.go.board": [(3, "moveorder.report.plots")],
        "moveorder.report.plots": [(1, "moveorder.go.board")],
        "moveorder.data.a": [(1, "moveorder.data.b")],
        "moveorder.data.b": [(1, "moveorder.data.a")],
    }
    assert upward_imports(g) == ["moveorder.go.board (line 3) imports moveorder.report.plots: report is above go"]
    assert cycles(g) == [["moveorder.data.a", "moveorder.data.b"], ["moveorder.go.board", "moveorder.report.plots"]]


def test_function_level_imports_are_read():
    g = graph()
    # a function-level import (the command line imports each stage's module where its verb runs)
    assert "moveorder.search.inference" in {t for _, t in g["moveorder.cli.search"]}
    assert "moveorder.go.coords" in {t for _, t in g["moveorder.go.board"]}


def test_imports_point_down_the_stages():
    assert upward_imports(graph()) == []


def test_no_modules_import_each_other_in_a_cycle():
    assert cycles(graph()) == []


def test_the_package_map_names_every_module():
    doc = moveorder.__doc__
    missing = [m for m in graph() if m.count(".") == 2 and m.rpartition(".")[2] not in doc]
    assert missing == []
    for sub in LAYERS[1:-1]:
        assert f"{sub}/" in doc
