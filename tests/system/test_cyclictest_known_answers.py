# SPDX-License-Identifier: GPL-2.0-or-later
"""Known answers from REAL cyclictest runs (Debian's rt-tests) under a load that provably skips periods.

The injector (tests/injector.py) is a SCHED_FIFO 95 thread pinned to cyclictest's CPU, busy for 30 ms
every 500 ms, that logs its own busy windows. cyclictest (SCHED_FIFO 80) cannot run inside a window,
so of the 1 ms deadlines inside it all but the first go unsampled: the truth comes from the injector's
log, independently of cyclictest and of rtgate. Recorded runs of the same kind (tests/fixtures/rt-tests/
ct-inject-*) give the same checks without a live run.
The tests of this topic that start no process: tests/unit/test_cyclictest_known_answers_unit.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import IS_ROOT, run_tool
from injector import inject
from known_answers import (
    CPU,
    assert_no_format_passes_what_json_fails,
    thresholds,
    true_skipped,
    verdicts_by_gate,
)
from rtgate.core.gates import Status
from rtgate.parsers import load_results

needs_rt = pytest.mark.skipif(not IS_ROOT or (os.cpu_count() or 1) < 2, reason="needs root (SCHED_FIFO) and two CPUs")


def run_cyclictest_under_injection(
    cyclictest: str, tmp_path: Path, args: list[str], seconds: float
) -> tuple[Path, int, int, Path]:
    out = tmp_path / "ct.json"
    log = tmp_path / "injector.json"
    with inject(CPU, 95, 30000, 500, seconds + 2, log):
        t0 = time.monotonic_ns()
        r = run_tool(
            [
                "timeout",
                "-s",
                "INT",
                str(int(seconds) + 30),
                cyclictest,
                "-m",
                "-p",
                "80",
                "-a",
                str(CPU),
                "-t",
                "1",
                "-i",
                "1000",
                "-q",
                *args,
                f"--json={out}",
            ],
            timeout=seconds + 60,
        )
        t1 = time.monotonic_ns()
    assert r.returncode == 0, r.stderr
    # cyclictest starts measuring a little after launch and stops a little before exit
    return out, t0 + 300_000_000, t1 - 300_000_000, log


@pytest.mark.slow
@needs_rt
def test_duration_run_skipped_periods_are_counted(cyclictest: str, tmp_path: Path) -> None:
    """-D with a histogram wide enough for every wake-up: the count gives the deficit."""
    out, since, until, log = run_cyclictest_under_injection(cyclictest, tmp_path, ["-D", "6", "-h", "2000"], 6)
    windows, truth = true_skipped(log, since, until, 1000)
    assert windows >= 8, "the injector did not run as planned"
    t = load_results(out).threads[0]
    assert t.expected_periods == 6000
    # The deficit is counted (one period of slack), and never more than the count allows.
    assert t.missed is not None and t.missed >= truth - 2, (t.missed, truth, t.missed_derivation)
    assert (t.missed_upper or t.missed) <= 6000 - t.cycles + 1
    got = verdicts_by_gate(thresholds(tmp_path, "duration: 6s"), out)
    # truth: at least `truth` of 6000 periods missed (>= 4 %), so none of these gates may pass
    assert truth / 6000 > 0.02
    assert got["over-1ms"] == Status.FAIL and got["missed"] == Status.FAIL, got
    assert got["p99"] == Status.FAIL, got


@pytest.mark.slow
@needs_rt
def test_loops_run_is_never_a_false_pass(cyclictest: str, tmp_path: Path) -> None:
    """-l: the thread that reaches N hides its own skips; its latencies (here -h 100, the hog's wake-ups in
    the overflow) bound them, and no gate the truth fails may PASS."""
    out, since, until, log = run_cyclictest_under_injection(cyclictest, tmp_path, ["-l", "5000", "-h", "100"], 6)
    windows, truth = true_skipped(log, since, until, 1000)
    assert windows >= 6
    t = load_results(out).threads[0]
    assert t.cycles == 5000
    hi = t.missed_upper if t.missed_upper is not None else t.missed
    assert t.missed is not None and hi is not None and hi >= truth, (t.missed, hi, truth)
    got = verdicts_by_gate(thresholds(tmp_path, "loops: 5000"), out)
    assert truth / (5000 + truth) > 0.02
    for gate in ("over-1ms", "p99", "missed"):
        assert got[gate] != Status.PASS, (gate, got, t.missed_derivation)


@pytest.mark.slow
@needs_rt
def test_run_stopped_early_is_inconclusive(cyclictest: str, tmp_path: Path) -> None:
    out = tmp_path / "stopped.json"
    proc = subprocess.Popen(
        [cyclictest, "-m", "-p", "80", "-a", str(CPU), "-t", "1", "-i", "1000", "-D", "10", "-q", f"--json={out}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        time.sleep(1.5)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    run = load_results(out)
    assert run.measured_setup.stopped_early, run.threads[0].missed_derivation
    got = verdicts_by_gate(thresholds(tmp_path, "duration: 10s"), out)
    assert got["max"] == Status.INCONCLUSIVE, got  # 1 s max 1000 ms would pass: the run was cut short
    assert Status.PASS not in got.values()


@pytest.mark.slow
@needs_rt
def test_setup_differences_are_errors_unless_accepted(cyclictest: str, tmp_path: Path) -> None:
    out = tmp_path / "other.json"
    r = run_tool([cyclictest, "-m", "-p", "70", "-a", "1", "-t", "1", "-i", "2000", "-D", "2", "-q", f"--json={out}"])
    assert r.returncode == 0, r.stderr
    t = thresholds(tmp_path, "duration: 1h", cpu=0)
    rg = [sys.executable, "-m", "rtgate", "check", str(t), str(out)]
    r = run_tool(rg)
    assert r.returncode == 1
    assert (
        "measured -i 2000 at prio 70 on cpu 1 for 2 s; thresholds ask -i 1000 at prio 80 on cpu 0 for 1 h" in r.stdout
    ), r.stdout
    assert "PASS" not in r.stdout.replace("PASS (", "")
    v = tmp_path / "v.json"
    r = run_tool([*rg, "--accept-setup", "interval,priority,cpus", "--json", str(v)])
    doc = json.loads(v.read_text())
    statuses = {x["gate"]: x["status"] for x in doc["verdicts"]}
    assert statuses["max"] == "INCONCLUSIVE"  # 2 s of a 1 h run: shorter than asked
    assert all(
        x["properties"]["setup_accepted"] == "measured -i 2000 at prio 70 on cpu 1; thresholds ask "
        "-i 1000 at prio 80 on cpu 0"
        for x in doc["verdicts"]
    )
    assert "accepted set-up differences: m: measured -i 2000" in r.stdout


@needs_rt
def test_priospread_priorities_as_run(cyclictest: str, tmp_path: Path) -> None:
    out = tmp_path / "spread.json"
    r = run_tool(
        [cyclictest, "-m", "-p", "80", "--priospread", "-t", "2", "-i", "1000", "-l", "200", "-q", f"--json={out}"]
    )
    assert r.returncode == 0, r.stderr
    assert [t.priority for t in load_results(out).threads] == [80, 79]
    show = run_tool([sys.executable, "-m", "rtgate", "show", str(out)]).stdout
    assert [line.split()[2] for line in show.splitlines()[2:4]] == ["80", "79"]
    # cyclictest's own T: lines agree
    stdout = run_tool([cyclictest, "-m", "-p", "80", "--priospread", "-t", "2", "-i", "1000", "-l", "100", "-q"]).stdout
    (tmp_path / "t.txt").write_text(stdout)
    assert [t.priority for t in load_results(tmp_path / "t.txt").threads] == [80, 79]


@needs_rt
def test_units_stated_and_implausible(cyclictest: str, tmp_path: Path) -> None:
    out = tmp_path / "ns.json"
    r = run_tool([cyclictest, "-m", "-p", "80", "-N", "-t", "1", "-i", "1000", "-l", "300", "-q", f"--json={out}"])
    assert r.returncode == 0, r.stderr
    (tmp_path / "ns.txt").write_text(r.stdout)
    assert load_results(out).unit == "ns"
    rg = [sys.executable, "-m", "rtgate", "show"]
    r = run_tool([*rg, "--unit", "us", str(out)])
    assert r.returncode == 2 and "--unit us contradicts the results" in r.stderr
    r = run_tool([*rg, str(tmp_path / "ns.txt")])  # T: lines of a -N run, read as us by default
    assert r.returncode == 2 and "look like nanoseconds" in r.stderr, r.stderr
    assert run_tool([*rg, "--unit", "ns", str(tmp_path / "ns.txt")]).returncode == 0
    us = tmp_path / "us.txt"
    us.write_text(run_tool([cyclictest, "-m", "-p", "80", "-t", "1", "-i", "1000", "-l", "300", "-q"]).stdout)
    r = run_tool([*rg, "--unit", "ns", str(us)])
    assert r.returncode == 2 and "look like microseconds" in r.stderr, r.stderr


# ---------------------------------------------------------------- every format of the same run


def record_every_format(program: str, out: Path, verbose: bool) -> None:
    """One run of `program` (cyclictest or rtgate-sampler) under 40 ms stalls every 500 ms: its JSON
    (r.json), histogram text (h.txt) and live T: lines (t.txt) or, with -v, its samples (v.txt)."""
    out.mkdir(parents=True, exist_ok=True)
    argv = [program, "-m", "-p", "80", "-a", str(CPU), "-t", "1", "-i", "1000", "-D", "4", "-h", "1000"]
    argv += [f"--histfile={out / 'h.txt'}", f"--json={out / 'r.json'}"] + (["-v"] if verbose else [])
    with inject(CPU, 95, 40000, 500, 6, out / "inj.json"), (out / ("v.txt" if verbose else "t.txt")).open("w") as f:
        r = subprocess.run(argv, stdout=f, stderr=subprocess.PIPE, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


@pytest.mark.slow
@needs_rt
@pytest.mark.parametrize("program", ["cyclictest", "rtgate-sampler"])
@pytest.mark.parametrize("verbose", [False, True], ids=["T-lines", "verbose"])
def test_live_formats_of_one_run_never_pass_what_its_json_fails(
    tmp_path: Path, program: str, verbose: bool, request: pytest.FixtureRequest
) -> None:
    exe = request.getfixturevalue("cyclictest" if program == "cyclictest" else "sampler")
    record_every_format(exe, tmp_path / "run", verbose)
    assert_no_format_passes_what_json_fails(tmp_path, tmp_path / "run")
