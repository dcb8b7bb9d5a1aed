# SPDX-License-Identifier: GPL-2.0-or-later
"""The timerlat backend without a VM: real rtla outputs recorded on Debian's PREEMPT_RT kernel
(tests/fixtures/rtla, see its README) read, gated and checked; threshold files; rtla's command
line; and what this machine's kernel (no timerlat tracer) makes of a timerlat measurement.
The tests of this topic that start no process: tests/unit/test_timerlat_unit.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rtgate.core.thresholds import load_thresholds
from rtgate.errors import RtgateError
from rtgate.measure.sampler_args import sampler_args
from rtla_specs import spec

RTGATE = [sys.executable, "-m", "rtgate"]


def test_the_sampler_and_lava_refuse_a_timerlat_measurement(tmp_path: Path) -> None:
    p = spec(tmp_path, "{name: m, kind: max, limit_us: 80}")
    with pytest.raises(RtgateError, match="timerlat backend"):
        sampler_args(load_thresholds(p).measurements["kernel"], None)
    r = subprocess.run([*RTGATE, "lava", "args", str(p)], capture_output=True, text=True)
    assert r.returncode == 2 and "timerlat backend" in r.stderr and "Traceback" not in r.stderr


def test_run_on_a_kernel_without_timerlat_reports_error_verdicts(tmp_path: Path) -> None:
    tracers = Path("/sys/kernel/tracing/available_tracers")
    if tracers.is_file() and "timerlat" in tracers.read_text().split():
        pytest.skip("this kernel has the timerlat tracer: tests/system/test_timerlat_qemu.py runs it")
    p = spec(tmp_path, "{name: m, kind: max, limit_us: 80}", "{duration: 1s}")
    r = subprocess.run(
        [*RTGATE, "run", str(p), "--output-dir", str(tmp_path / "out"), "--json", str(tmp_path / "v.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    v = json.loads((tmp_path / "v.json").read_text())["verdicts"]
    assert [x["status"] for x in v] == ["ERROR"] and "not measured" in v[0]["reason"]
    assert "timerlat tracer" in v[0]["reason"] or "rtla" in v[0]["reason"] or "tracefs" in v[0]["reason"]
