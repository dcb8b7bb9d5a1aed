# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared fixtures: the real sampler, the real cyclictest, and the recorded rt-tests outputs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
RT_TESTS = FIXTURES / "rt-tests"
IS_ROOT = os.geteuid() == 0
# Real-time priority and locked memory where we may have them (CI runs as root).
RT_OPTS = ["-p", "80", "-m"] if IS_ROOT else []


def _required(tool: str, package: str) -> str:
    path = shutil.which(tool)
    if path:
        return path
    if os.environ.get("CI"):
        pytest.fail(f"{tool} is required in CI: .ci/run installs Debian's {package}")
    pytest.skip(f"{tool} not installed (apt-get install {package})")


@pytest.fixture(scope="session")
def sampler() -> str:
    from rtgate.measure.runner import find_sampler

    return find_sampler()


@pytest.fixture(scope="session")
def cyclictest() -> str:
    return _required("cyclictest", "rt-tests")


@pytest.fixture(scope="session")
def tool() -> Any:
    return _required


def run_tool(argv: list[str], timeout: float = 120, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)


def load_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def junit_figures(path: Path) -> dict[str, dict[str, str]]:
    """Per testcase, the figures rtgate's JUnit holds as testsuite properties named '<testcase>::<figure>'."""
    from junitparser import JUnitXml

    out: dict[str, dict[str, str]] = {}
    for suite in JUnitXml.fromfile(str(path)):
        for prop in suite.properties():
            case, sep, figure = prop.name.rpartition("::")
            if sep:
                out.setdefault(case, {})[figure] = prop.value
    return out


def sampler_child_of(pid: int) -> bool:
    """An rtgate-sampler runs as a child of process `pid` (rtgate may wait for the measurement lock first)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            name = stat.read_text().split("(", 1)[1].rsplit(")", 1)[0]
        except (OSError, IndexError):
            continue
        if name == "rtgate-sampler" and int(fields[1]) == pid:
            return True
    return False
