# SPDX-License-Identifier: GPL-2.0-or-later
"""The package's layers, in pipeline order: a module imports only from its own stage or the stages before it
(the map is in harness/rtgate/__init__.py). A stage that reached forward would make the pipeline a tangle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGE = ROOT / "harness" / "rtgate"
# Earliest first. errors and safe_io are leaves every stage may use.
STAGES = [
    "errors",
    "safe_io",
    "core",
    "parsers",
    "measure",
    "history",
    "reports",
    "lava",
    "fuego",
    "options",
    "pytest_plugin",
    "commands",
    "cli",
    "console",
    "__main__",
]


def _stage(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return -1  # the package itself: its version
    assert parts[1] in STAGES, f"{module}: a new top-level part of the package: add it to STAGES in pipeline order"
    return STAGES.index(parts[1])


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        out.append((".".join(p for p in parts if p != "__init__"), path))
    return out


@pytest.mark.parametrize("module,path", _modules(), ids=[m for m, _ in _modules()])
def test_no_import_runs_back_up_the_pipeline(module: str, path: Path) -> None:
    own = _stage(module)
    later = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            if (name == "rtgate" or name.startswith("rtgate.")) and _stage(name) > own:
                later.append(f"line {node.lineno}: {name}")
    assert not later, f"{module} imports from a later stage: " + "; ".join(later)
