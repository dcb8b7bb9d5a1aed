# SPDX-License-Identifier: GPL-2.0-or-later
"""The shared gate vectors through the Python gates, and through the sampler's own (C) gates.
The tests of this topic that start no process: tests/unit/test_vectors_unit.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import ROOT

VECTORS = ROOT / "tests" / "vectors" / "gates.txt"


def test_generated_vectors_are_up_to_date() -> None:
    """The rate vectors are what the independent generator (direct binomial sums) writes today."""
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, str(VECTORS.parent / "make_rate_vectors.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, "tests/vectors/gates.txt differs from make_rate_vectors.py's output " + r.stderr


def test_c_gates_give_the_vector_verdicts(tool: Any, tmp_path: Path) -> None:
    """The same file through sampler/gate.c (also run by `meson test`)."""
    import subprocess

    tool("meson", "meson")
    build = tmp_path / "build"
    for args in (["setup", str(build), str(ROOT), "-Dharness=disabled"], ["compile", "-C", str(build)]):
        r = subprocess.run(["meson", *args], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    r = subprocess.run(
        [str(build / "sampler" / "tests" / "test_gate_vectors"), str(VECTORS)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
