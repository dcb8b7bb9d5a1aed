# SPDX-License-Identifier: GPL-2.0-or-later
"""Imports within harness/rtgate form no cycle, and no module imports another's private name.

Every import counts: at module level, inside a function, under TYPE_CHECKING. A cycle hidden in a
function still ties two modules into one: neither can be read, tested or moved alone. A private
name (`_x`) imported elsewhere is a public one in disguise. tests/unit/test_layers.py checks the
direction between stages; this checks what the stages hold.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "harness" / "rtgate"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(name: str, path: Path) -> list[tuple[str, str | None, int]]:
    """(module imported, name taken from it or None, line) for every import of an rtgate module."""
    is_package = path.name == "__init__.py"
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(a.name, None, node.lineno) for a in node.names if a.name.split(".")[0] == "rtgate"]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package
                pkg = name.split(".") if is_package else name.split(".")[:-1]
                pkg = pkg[: len(pkg) - node.level + 1]
                base = ".".join(pkg + ([node.module] if node.module else []))
            if base.split(".")[0] != "rtgate":
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.append((sub, None, node.lineno) if sub in MODULES else (base, a.name, node.lineno))
    return out


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for name, path in MODULES.items():
        for target, _, _ in _imports(name, path):
            if target in MODULES and target != name and not name.startswith(target + "."):
                graph[name].add(target)  # a package's own __init__ runs first anyway: not an edge
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle() -> None:
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_private_name_is_imported_from_another_module() -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line}: {taken} from {target}"
        for name, path in MODULES.items()
        for target, taken, line in _imports(name, path)
        if taken and taken.startswith("_") and not taken.startswith("__") and target != name
    ]
    assert bad == []
