# SPDX-License-Identifier: GPL-2.0-or-later
"""A stall present when the run starts (issue 21): a SCHED_FIFO 99 busy loop pinned to the sampler's
CPU, started before `rtgate run`, killed by PID while it measures. The run must not PASS: either the
sampler shows the stall as latency and missed periods (max gate FAIL), or `rtgate run` sees time
that no period accounts for (overrun: ERROR); and the verdict names the hog as the likely cause.
Also: a competing RT task seen by `rtgate doctor` and made to matter by `require: no_competing_rt`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import IS_ROOT, sampler_child_of
from rtgate.measure.lock import measurement_lock

needs_root = pytest.mark.skipif(not IS_ROOT or (os.cpu_count() or 1) < 2, reason="needs root and two CPUs")
pytestmark = needs_root

SPEC = """\
platform: stall
measurements:
  m:
    sampler: {{interval_us: 1000, duration: {seconds}s, priority: 80, threads: [{{name: a, cpus: [1]}}]}}
    {require}
    gates:
      - {{name: max, kind: max, limit_us: 100000}}
"""
# Its own bound: the loop ends after 15 s even if nobody kills it.
HOG = "import time\nt = time.monotonic()\nwhile time.monotonic() - t < 15:\n    pass\n"


def start_hog(busy: bool = True) -> subprocess.Popen[bytes]:
    code = HOG if busy else "import time; time.sleep(15)"
    return subprocess.Popen(["chrt", "-f", "99", "taskset", "-c", "1", sys.executable, "-c", code])


def stop_hog(hog: subprocess.Popen[bytes]) -> None:
    if hog.poll() is None:
        hog.kill()
    hog.wait(timeout=30)


def alone(tmp_path: Path) -> dict[str, str]:
    """The environment of an `rtgate run` inside the test's own hold on the machine's measurement lock (a FIFO 99
    hog must not land in another worker's measurement, nor another's sampler in this one): its lock is private."""
    return {**os.environ, "RTGATE_LOCK_FILE": str(tmp_path / "inner.lock")}


def rtgate(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    r = subprocess.run(
        [sys.executable, "-m", "rtgate", *args, "--json", "v.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    v = tmp_path / "v.json"
    return r, (json.loads(v.read_text())["verdicts"] if v.exists() else [])


@pytest.mark.slow
def test_a_stall_present_at_start_is_never_a_pass(tmp_path: Path) -> None:
    spec = tmp_path / "t.yaml"
    spec.write_text(SPEC.format(seconds=4, require=""))
    with measurement_lock("stall"):
        _stall_at_start(tmp_path, spec)


def _stall_at_start(tmp_path: Path, spec: Path) -> None:
    hog, run = start_hog(), None
    try:
        time.sleep(0.3)
        run = subprocess.Popen(
            [sys.executable, "-m", "rtgate", "run", str(spec), "--json", "v.json"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=alone(tmp_path),
        )
        deadline = time.monotonic() + 60
        # The sampler itself has started (rtgate first reads the plan and runs the preflight; the lock is private).
        while not sampler_child_of(run.pid):
            assert time.monotonic() < deadline and run.poll() is None
            time.sleep(0.02)
        time.sleep(2.0)  # the hog holds CPU 1 from before the sampler started until now
        stop_hog(hog)
        out, err = run.communicate(timeout=120)
    finally:
        stop_hog(hog)
        if run and run.poll() is None:
            run.kill()
    assert run is not None
    stall_s = 2.0
    assert "Traceback" not in err, err
    v = json.loads((tmp_path / "v.json").read_text())["verdicts"][0]
    results = json.loads((tmp_path / "rtgate-results" / "m.json").read_text())
    record, thread = results["rtgate_run"], results["rtgate"]["threads"][0]
    # the hog was seen before measuring, on CPU 1, as a competitor (not an expected kernel thread)
    seen = [t for t in record["rt_tasks"]["before"] if t["pid"] == hog.pid]
    assert seen and seen[0]["policy"] == "FIFO" and seen[0]["priority"] == 99 and seen[0]["on_cpus"] == [1]
    assert seen[0]["expected"] is None and f"pid {hog.pid}" in err  # rtgate warned before measuring
    assert run.returncode == 1, (out, err)
    assert v["status"] in ("FAIL", "ERROR")
    if v["status"] == "FAIL":  # the sampler shows the stall itself
        assert v["value"] >= (stall_s - 0.5) * 1e6 and thread["missed_periods"] >= (stall_s - 0.5) * 1000
    else:  # the sampler hid it; rtgate run's overrun check did not
        unmeasured = results["rtgate"]["elapsed_s"] - (thread["cycles"] + thread["missed_periods"]) / 1000
        assert unmeasured >= stall_s - 0.5, results["rtgate"]
        assert "overrun" in v["reason"] and not record["valid"]
        assert any(r.startswith("overrun") for r in record["invalid"])
    assert "likely cause: real-time task(s) that can preempt the sampler:" in v["reason"]
    assert f"pid {hog.pid}, FIFO 99, cpu 1" in v["reason"]
    # every later reading gives the same verdict
    r, again = rtgate(tmp_path, "check", str(spec), "rtgate-results/m.json")
    assert r.returncode == 1 and (again[0]["status"], again[0]["reason"]) == (v["status"], v["reason"])


@pytest.mark.slow
def test_a_hog_that_comes_and_goes_mid_run_is_named(tmp_path: Path) -> None:
    spec = tmp_path / "t.yaml"
    spec.write_text(SPEC.format(seconds=5, require=""))
    with measurement_lock("stall"):
        _hog_mid_run(tmp_path, spec)


def _hog_mid_run(tmp_path: Path, spec: Path) -> None:
    run = subprocess.Popen(
        [sys.executable, "-m", "rtgate", "run", str(spec), "--json", "v.json"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=alone(tmp_path),
    )
    hog = None
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "rtgate-results" / "m.json").exists():  # the sampler is running
            assert time.monotonic() < deadline and run.poll() is None
            time.sleep(0.05)
        time.sleep(0.5)
        hog = start_hog()
        time.sleep(1.5)
        stop_hog(hog)
        _out, err = run.communicate(timeout=120)
    finally:
        if hog:
            stop_hog(hog)
        if run.poll() is None:
            run.kill()
    v = json.loads((tmp_path / "v.json").read_text())["verdicts"][0]
    assert run.returncode == 1 and v["status"] == "FAIL" and v["value"] >= 500_000, (v, err)
    record = json.loads((tmp_path / "rtgate-results" / "m.json").read_text())["rtgate_run"]
    assert any(t["pid"] == hog.pid for t in record["rt_tasks"]["during"])  # seen while measuring
    assert f"pid {hog.pid}, FIFO 99, cpu 1" in v["reason"]


def test_doctor_and_require_see_a_competing_rt_task(tmp_path: Path) -> None:
    spec = tmp_path / "t.yaml"
    spec.write_text(SPEC.format(seconds=2, require="require: {no_competing_rt: true}"))
    hog = start_hog(busy=False)  # sleeps: it could preempt the sampler, but costs nobody anything
    try:
        time.sleep(0.3)
        doc = subprocess.run(
            [sys.executable, "-m", "rtgate", "doctor", str(spec)], capture_output=True, text=True, timeout=60
        )
        r, verdicts = rtgate(tmp_path, "run", str(spec))
    finally:
        stop_hog(hog)
    lines = [x for x in doc.stdout.splitlines() if f"pid {hog.pid}" in x]
    # doctor's own check warns; the requirement fails, in the words run refuses to measure with
    assert lines[0].startswith("WARN [m] real-time task(s) that can preempt the sampler (priority 80+) on cpu 1")
    assert lines[1].startswith("FAIL [m] requires no competing real-time task on the measured CPUs; found")
    assert "FIFO 99, cpu 1" in lines[1] and doc.returncode == 1
    assert "expected kernel threads" in doc.stdout and "migration/1" in doc.stdout
    assert r.returncode == 1 and verdicts[0]["status"] == "ERROR"
    assert verdicts[0]["reason"].startswith("not measured: requires no competing real-time task")
    assert f"pid {hog.pid}" in verdicts[0]["reason"]
    assert not (tmp_path / "rtgate-results" / "m.json").exists()
