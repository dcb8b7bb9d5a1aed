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
from rtgate.errors import RtgateError, ThresholdsError
from rtgate.measure.sampler_args import sampler_args
from rtla_specs import RTLA, spec

RTGATE = [sys.executable, "-m", "rtgate"]


def test_text_report_quotes_the_analysis(tmp_path: Path) -> None:
    p = spec(tmp_path, "{name: t, kind: max, threads: [thread], limit_us: 1}")
    r = subprocess.run([*RTGATE, "check", str(p), str(RTLA / "stop.txt")], capture_output=True, text=True)
    assert r.returncode == 1
    assert "rtla analysis of kernel:\n    rtla timerlat hit stop tracing\n" in r.stdout


def test_gates_name_rtlas_contexts(tmp_path: Path) -> None:
    with pytest.raises(ThresholdsError, match=r"no thread group 'user' .*groups: irq, thread"):
        load_thresholds(spec(tmp_path, "{name: m, kind: max, threads: [user], limit_us: 10}"))
    tf = load_thresholds(
        spec(tmp_path, "{name: m, kind: max, threads: [user], limit_us: 10}", "{duration: 5s, user_threads: true}")
    )
    assert [g.name for g in tf.measurements["kernel"].sampler.threads] == ["irq", "thread", "user"]
    with pytest.raises(ThresholdsError, match="rtla does not count missed periods"):
        load_thresholds(spec(tmp_path, "{name: m, kind: missed, max_count: 0}"))


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


def test_history_keeps_irq_and_thread_latency_of_one_cpu_apart(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    r = subprocess.run(
        [
            *RTGATE,
            "history",
            "add",
            "--db",
            str(db),
            "--platform",
            "qemu-rt",
            "--kernel-release",
            "6.1.0-56-rt-amd64",
            str(RTLA / "basic.txt"),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    import sqlite3

    rows = sqlite3.connect(db).execute("SELECT idx, thread, cycles FROM threads ORDER BY idx").fetchall()
    # history names threads that share a CPU by their index: irq-cpu0 is t0-cpu0, thread-cpu0 t2-cpu0
    assert rows == [(0, "t0-cpu0", 4954), (1, "t1-cpu1", 4952), (2, "t2-cpu0", 4954), (3, "t3-cpu1", 4952)]
