# SPDX-License-Identifier: GPL-2.0-or-later
"""benchmarks/history_power.py cannot rot: its smoke mode runs the real compare on every design."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_power_benchmark_smoke_mode() -> None:
    r = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "history_power.py"), "--smoke"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if re.match(r"\s+5 (runs/release|pairs)\s", line)]
    assert len(rows) == 2, r.stdout  # one unpaired and one paired design
    for row in rows:  # four shares: detection on max, p99.9, above the threshold; false alarms
        assert len(re.findall(r"\d+%", row)) == 4, row
