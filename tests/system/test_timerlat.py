# SPDX-License-Identifier: GPL-2.0-or-later
"""The timerlat backend without a VM: real rtla outputs recorded on Debian's PREEMPT_RT kernel
(tests/fixtures/rtla, see its README) read, gated and checked; threshold files; rtla's command
line as the engine builds it; and what this machine's kernel (no timerlat tracer) makes of a timerlat measurement.
The tests of this topic that start no process: tests/unit/test_timerlat_unit.py."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rtgate.core.thresholds import Measurement, load_thresholds
from rtgate.errors import RtgateError
from rtgate.measure.sampler_args import engine_args, sampler_args
from rtla_specs import spec

RTGATE = [sys.executable, "-m", "rtgate"]


def engine_rtla_command(sampler: str, m: Measurement, duration_s: int | None = None) -> list[str]:
    """The rtla command line the engine would run for `m`: its --check-only answer's backend."""
    argv = [sampler, "--check-only", *engine_args(m, duration_s), "--output-dir=/out"]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert r.returncode in (0, 1), r.stderr
    backend = json.loads(r.stdout)["backend"]
    assert backend["name"] == "timerlat"
    return backend["command"]


def test_the_engine_builds_rtlas_command_line(sampler: str, tmp_path: Path) -> None:
    if shutil.which("rtla") is None:
        pytest.fail("rtla is required: scripts/bootstrap --test installs it")
    tf = load_thresholds(
        spec(
            tmp_path,
            "{name: i, kind: max, threads: [irq], limit_us: 30.5};"
            "{name: t, kind: max, limit_us: 80};{name: c, kind: max, cpus: [1], limit_us: 5};"
            "{name: r, kind: miss_rate, above_us: 2000, rate: 1%}",
            "{interval_us: 200, duration: 1m, priority: 90, cpus: '0-1', latency_us: 0}",
        )
    )
    m = tf.measurements["kernel"]
    args = engine_rtla_command(sampler, m)
    assert args[0] == shutil.which("rtla") and args[1:3] == ["timerlat", "hist"]
    opt = {args[i]: args[i + 1] for i in range(3, len(args) - 1) if args[i].startswith("-")}
    assert (opt["-p"], opt["-d"], opt["-c"], opt["-P"], opt["--dma-latency"]) == ("200", "60s", "0,1", "f:90", "0")
    # Stop thresholds: floor(limit) + 1, the lowest of each context; a gate on some CPUs only sets none.
    assert (opt["-i"], opt["-T"], opt["-s"]) == ("31", "81", "81")
    assert args[-1] == "-t=/out/kernel.trace.txt"
    assert (opt["-b"], opt["-E"]) == ("1", "4000")  # twice the largest figure of any gate
    short = engine_rtla_command(sampler, m, 7)
    assert short[short.index("-d") + 1] == "7s"
    tf = load_thresholds(spec(tmp_path, "{name: t, kind: max, limit_us: 80}", "{duration: 5s, analysis: false}"))
    args = engine_rtla_command(sampler, tf.measurements["kernel"])
    assert "-i" not in args and "-T" not in args and not any(a.startswith("-t") for a in args)
    assert "-u" not in args


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
