# SPDX-License-Identifier: GPL-2.0-or-later
"""The threshold file the report tests of both tiers judge results with, and its KCIDB export (in-process; the
export through the console script is tests/system/test_reports.py::test_kcidb_export_validates) validated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from in_process import rtgate

SPEC = """\
platform: vm
measurements:
  smp:
    sampler: {interval_us: 500, loops: 3000, priority: 80, threads: [{name: all, count: 2}]}  # as ct-new-t2-H200
    gates:
      - {name: max, kind: max, limit_us: 500}
      - {name: over-100, kind: miss_rate, above_us: 100, rate: 1%}
"""


def write_spec(directory: Path) -> Path:
    p = directory / "t.yaml"
    p.write_text(SPEC)
    return p


def kcidb_tests(tmp_path: Path, thresholds: Path, *results: Path, build: str = "rtgate:build-1") -> list[dict]:  # type: ignore[type-arg]
    out = tmp_path / "k.json"
    r = rtgate(
        "export", "kcidb", str(thresholds), *map(str, results), "--build-id", build, "-o", str(out), cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    validate_kcidb(doc)
    return doc["tests"]  # type: ignore[no-any-return]


def validate_kcidb(doc: dict) -> None:  # type: ignore[type-arg]
    """As the newest kcidb-io installed (the test extra asks for it) validates, after upgrading to its schema."""
    kcidb_io = pytest.importorskip("kcidb_io")
    kcidb_io.schema.V5_3.validate(doc)
    kcidb_io.schema.LATEST.validate(kcidb_io.schema.LATEST.upgrade(doc))
