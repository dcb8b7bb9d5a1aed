# SPDX-License-Identifier: GPL-2.0-or-later
"""Every benchmark is documented in benchmarks/README."""

from __future__ import annotations

from conftest import ROOT

BENCHMARKS = sorted(p for p in (ROOT / "benchmarks").glob("*.py") if p.name != "common.py")


def test_every_benchmark_is_in_the_readme() -> None:
    readme = (ROOT / "benchmarks" / "README.md").read_text()
    assert [p.name for p in BENCHMARKS if f"`{p.name}`" not in readme] == []
