# SPDX-License-Identifier: GPL-2.0-or-later
"""A stall present when the run starts (issue 21): a SCHED_FIFO 99 busy loop pinned to the sampler's
CPU, started before `rtgate run`, killed by PID while it measures. The run must not PASS: either the
sampler shows the stall as latency and missed periods (max gate FAIL), or `rtgate run` sees time
that no period accounts for (overrun: ERROR); and the verdict names the hog as the likely cause.
Also: a competing RT task seen by `rtgate doctor` and made to matter by `require: no_competing_rt`; and the
opposite, the sampler's main thread held up (not a measuring one), which is no stall of the measurement."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import IS_ROOT, sampler_child_of
from machine_lock import machine_to_itself

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
    with machine_to_itself("stall"):
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
        )
        deadline = time.monotonic() + 60
        # The sampler's measuring thread exists, so its start instant (at most a few ms before the thread) has
        # passed: from here the hog holds CPU 1 for 2 s of the measurement, however late a busy machine let the
        # sampler's main thread get there after its exec.
        while not sampler_child_of(run.pid, measuring=True):
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
    with machine_to_itself("stall"):
        _hog_mid_run(tmp_path, spec)


def _hog_mid_run(tmp_path: Path, spec: Path) -> None:
    run = subprocess.Popen(
        [sys.executable, "-m", "rtgate", "run", str(spec), "--json", "v.json"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
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


PTRACE_SEIZE, PTRACE_INTERRUPT, PTRACE_DETACH, WALL = 0x4206, 0x4207, 17, 0x40000000


def hold_thread(tid: int, seconds: float) -> None:
    """Stop one thread, and only that one (ptrace stops the task it is given, not its process), for `seconds`."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    if libc.ptrace(PTRACE_SEIZE, tid, None, None) or libc.ptrace(PTRACE_INTERRUPT, tid, None, None):
        raise OSError(ctypes.get_errno(), f"ptrace {tid}")
    try:
        os.waitpid(tid, WALL)  # its trap stop
        time.sleep(seconds)
    finally:
        libc.ptrace(PTRACE_DETACH, tid, None, None)


HELD = """\
platform: held
measurements:
  m:
    sampler: {interval_us: 1000, duration: 3s, priority: 80, threads: [{name: a, cpus: [0]}]}
    gates:
      - {name: max, kind: max, limit_us: 500000}
"""


def test_a_held_up_main_thread_is_no_stall_of_the_measurement(tmp_path: Path) -> None:
    """Known answer: the sampler's main thread (on cpu 1, off the measured cpu 0) is stopped from 0.5 s into the
    3 s measurement until 1.5 s after its end; the measuring thread runs on. The run takes about 1.5 s longer than
    its periods, all of it the main thread's: PASS, valid. The run's elapsed time alone (what a file without
    span_s is judged on) would call it an overrun, so the known answer has teeth."""
    (tmp_path / "t.yaml").write_text(HELD)
    run = subprocess.Popen(
        [sys.executable, "-m", "rtgate", "run", "t.yaml", "--json", "v.json"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 180  # a run may first wait for another's measurement
        while (sampler := sampler_child_of(run.pid, measuring=True)) is None:
            assert time.monotonic() < deadline and run.poll() is None
            time.sleep(0.02)
        time.sleep(0.5)
        hold_thread(sampler, 4.0)
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    results = tmp_path / "rtgate-results" / "m.json"
    doc = json.loads(results.read_text())
    thread = doc["rtgate"]["threads"][0]
    assert doc["rtgate"]["elapsed_s"] - thread["span_s"] >= 1.2, doc["rtgate"]  # main was held past the end
    assert thread["span_s"] - (thread["cycles"] + thread["missed_periods"]) / 1000 < 0.1, thread
    # the measuring thread ended on time: "late" is the threads' lateness, not the main thread's wind-down
    assert doc["rtgate"]["ended_late"] is False and doc["rtgate"]["overrun_s"] < 0.1, doc["rtgate"]
    assert "after its scheduled end" not in err
    v = json.loads((tmp_path / "v.json").read_text())["verdicts"][0]
    assert run.returncode == 0 and v["status"] == "PASS", (v, out, err)
    assert doc["rtgate_run"]["valid"] is True and doc["rtgate_run"]["invalid"] == []
    # the same figures without the thread's span: judged on elapsed time, they are an overrun
    del thread["span_s"]
    doc.pop("rtgate_run")
    (tmp_path / "no-span.json").write_text(json.dumps(doc))
    r, again = rtgate(tmp_path, "check", "t.yaml", "no-span.json")
    assert r.returncode == 1 and again[0]["status"] == "ERROR" and "overrun: the run took" in again[0]["reason"]


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
