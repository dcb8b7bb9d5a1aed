# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/unit is the developer's loop: its files start no process and never sleep. A file that needs either
belongs in tests/system. Checked by reading each file's syntax tree, so the tier stays what it says."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

UNIT = Path(__file__).resolve().parent
# Modules whose import means a process (or a pool of them) is started.
PROCESS_MODULES = {"subprocess", "multiprocessing", "pty", "concurrent", "asyncio"}
# os functions that start or replace a process.
OS_PROCESS_CALLS = {"system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp"}
OS_PROCESS_PREFIXES = ("exec", "spawn")
# Fixtures that start a process (pytester can run pytest in a child) or hand out a tool to run.
PROCESS_FIXTURES = {"sampler", "static_sampler", "cyclictest", "tool", "pytester", "testdir"}
# Helpers from tests/conftest.py and tests/ that run something.
PROCESS_HELPERS = {"run_tool", "injector", "history_live", "record_injected", "engine_require"}


def _offences(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    out = []
    for node in ast.walk(tree):
        where = f"{path.name}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top in PROCESS_MODULES or top in PROCESS_HELPERS:
                    out.append(f"{where}: imports {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            top = node.module.split(".")[0]
            if top in PROCESS_MODULES or top in PROCESS_HELPERS:
                out.append(f"{where}: imports from {node.module}")
            out += [f"{where}: imports {a.name}" for a in node.names if a.name in PROCESS_HELPERS | {"sleep"}]
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):
                owner = func.value.id if isinstance(func.value, ast.Name) else ""
                if func.attr == "sleep":
                    out.append(f"{where}: calls {owner}.sleep")
                elif owner == "os" and (func.attr in OS_PROCESS_CALLS or func.attr.startswith(OS_PROCESS_PREFIXES)):
                    out.append(f"{where}: calls os.{func.attr}")
            elif isinstance(func, ast.Name) and func.id in {"sleep", "run_tool"}:
                out.append(f"{where}: calls {func.id}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out += [f"{where}: uses fixture {a.arg}" for a in node.args.args if a.arg in PROCESS_FIXTURES]
    return out


@pytest.mark.parametrize("path", sorted(UNIT.glob("*.py")), ids=lambda p: p.name)
def test_a_unit_test_starts_no_process_and_never_sleeps(path: Path) -> None:
    assert not _offences(path), "move this file to tests/system:\n" + "\n".join(_offences(path))


def test_the_check_sees_what_it_forbids(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import subprocess\nimport time\nfrom conftest import run_tool\n"
        "def test_x(sampler):\n    time.sleep(1)\n    os.system('true')\n"
    )
    found = "\n".join(_offences(bad))
    for what in ("imports subprocess", "imports run_tool", "fixture sampler", "calls time.sleep", "calls os.system"):
        assert what in found
