"""The shape of a package's source, read from its files with ``ast`` (nothing is imported): modules,
subpackages, modules over 400 lines, functions over 80 lines, one-letter parameters, import cycles and
imports that point up the stages, and the pairs of duplicated blocks the ``duplicates`` command finds.

python scripts/code_metrics.py [PACKAGE_DIR]     # default: src/moveorder; prints a markdown table row

The stages are those of the package's import contract (tests/test_layout.py, lowest first); a module
at the top of the package other than ``settings`` (the package itself, ``__main__``) is outside them.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path
from typing import Dict, List, Set, Tuple

LAYERS = ("settings", "go", "data", "nets", "search", "katago", "report", "cli")
LONG_MODULE, LONG_FUNCTION = 400, 80


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, root: Path, modules: Set[str]) -> List[str]:
    """Every module of the package ``path`` imports, at the top or inside a function."""
    me = module_name(path, root)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != me:
                found.append(name)
    return found


def layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return -1
    top = "cli" if parts[1] == "__main__" else parts[1]
    return LAYERS.index(top) if top in LAYERS else -1


def cycles(graph: Dict[str, List[str]]) -> List[List[str]]:
    """An import cycle, if there is one, as its sorted modules (the standard library's graphlib finds
    one cycle at a time; the count the table needs is 0 or not)."""
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as err:
        return [sorted(set(err.args[1]))]
    return []


def duplicated(root: Path) -> Tuple[str, str]:
    """Pairs and runs of duplicated blocks (``duplicates``; each pair is one run plus its '+N more runs')."""
    try:
        text = subprocess.run(
            ["duplicates", "--repo", str(root), "--most", "200", "--seconds", "120"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
    except FileNotFoundError:
        return "-", "-"
    first = text.splitlines()[0] if text else ""
    pairs = re.match(r"(\d+) pairs", first)
    if not pairs:
        return ("0", "0") if first.startswith("no duplicates") else ("?", "?")
    runs = sum(1 + int(m or 0) for m in re.findall(r"^D\d+ .*?(?:\(\+(\d+) more runs?\))?$", text, flags=re.M))
    return pairs.group(1), str(runs)


def metrics(root: Path) -> Dict[str, object]:
    paths = sorted(root.rglob("*.py"))
    modules = {module_name(p, root): p for p in paths}
    graph = {m: imports_of(p, root, set(modules)) for m, p in modules.items()}
    long_functions, one_letter = [], []
    for p in paths:
        for node in ast.walk(ast.parse(p.read_text(), str(p))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.end_lineno - node.lineno + 1 > LONG_FUNCTION:
                    long_functions.append(f"{module_name(p, root)}.{node.name}")
                a = node.args
                params = a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]
                one_letter += [f"{node.name}({x.arg})" for x in params if len(x.arg) == 1]
    upward = [(m, t) for m, ts in graph.items() for t in ts if layer(m) >= 0 and layer(t) > layer(m)]
    pairs, runs = duplicated(root)
    return {
        "modules": len(paths),
        "subpackages": sum(1 for p in paths if p.name == "__init__.py") - 1,
        f"modules over {LONG_MODULE} lines": sum(len(p.read_text().splitlines()) > LONG_MODULE for p in paths),
        f"functions over {LONG_FUNCTION} lines": len(long_functions),
        "one-letter parameters": len(one_letter),
        "import cycles": len(cycles(graph)),
        "upward imports": len(upward),
        "duplicated pairs (runs)": f"{pairs} ({runs})",
        "_long": long_functions,
    }


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "src/moveorder").resolve()
    m = metrics(root)
    long = m.pop("_long")
    print("| " + " | ".join(m) + " |")
    print("|" + "---|" * len(m))
    print("| " + " | ".join(str(v) for v in m.values()) + " |")
    print("functions over 80 lines: " + (", ".join(long) or "none"))


if __name__ == "__main__":
    main()
