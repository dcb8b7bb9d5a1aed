# SPDX-License-Identifier: GPL-2.0-or-later
"""The histogram text `rtgate run` writes is judged as made: check reads the NAME.cmdline beside it (issue 46).
In-process tests of the same reading: tests/unit/test_as_made_unit.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import IS_ROOT

pytestmark = pytest.mark.skipif(
    not IS_ROOT or (os.cpu_count() or 1) < 2, reason="needs root (SCHED_FIFO, mlockall) and two CPUs"
)

SPEC = """\
platform: as-made
measurements:
  m:
    sampler:
      interval_us: 500
      duration: 3s
      histogram_us: 300
      threads: [{name: a, cpus: [0]}, {name: b, cpus: [1], priority: 70}]
    gates:
      - {name: max, kind: max, limit_us: 1000000}
      - {name: missed, kind: missed, max_count: 1000000}
"""


def rtgate(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rtgate", *args], capture_output=True, text=True, cwd=cwd, timeout=600)


def test_check_reads_the_hist_of_rtgate_run_with_its_cmdline(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(SPEC)
    r = rtgate(tmp_path, "run", "t.yaml", "--json", "run.json")
    assert r.returncode == 0, r.stdout + r.stderr
    out = tmp_path / "rtgate-results"
    assert (out / "m.cmdline").is_file() and (out / "m.hist").is_file()
    r = rtgate(tmp_path, "check", "t.yaml", str(out / "m.hist"), "--json", "hist.json")
    assert r.returncode == 0, r.stdout + r.stderr
    by_run = json.loads((tmp_path / "run.json").read_text())["verdicts"]
    by_hist = json.loads((tmp_path / "hist.json").read_text())["verdicts"]
    assert [(v["gate"], v["thread"], v["status"]) for v in by_hist] == [
        (v["gate"], v["thread"], v["status"]) for v in by_run
    ]
    for h, j in zip(by_hist, by_run):
        hp, jp = h["properties"], j["properties"]
        assert hp["setup_source"] == f"command line ({out / 'm.cmdline'})"
        assert (hp["interval_us"], hp["priority"], hp["policy"]) == (jp["interval_us"], jp["priority"], jp["policy"])
        # the text's missed periods are derived from the command line's -D: a range around the sampler's count
        high = hp.get("missed_periods_upper", hp["missed_periods"])
        assert hp["missed_periods"] <= jp["missed_periods"] + 1 and jp["missed_periods"] <= high + 1, (hp, jp)
