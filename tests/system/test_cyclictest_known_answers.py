# SPDX-License-Identifier: GPL-2.0-or-later
"""Known answers from REAL cyclictest runs (Debian's rt-tests) under a load that provably skips periods.

The injector (tests/injector.py) is a SCHED_FIFO 95 thread pinned to cyclictest's CPU, busy for 30 ms
every 500 ms, that logs its own busy windows. cyclictest (SCHED_FIFO 80) cannot run inside a window,
so of the 1 ms deadlines inside it all but the first go unsampled: the truth comes from the injector's
log, independently of cyclictest and of rtgate. Recorded runs of the same kind (tests/fixtures/rt-tests/
ct-inject-*) give the same checks without a live run.
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

from conftest import IS_ROOT, RT_TESTS, run_tool
from injector import inject
from rtgate.core.gates import Status
from rtgate.core.setup import evaluate_measured
from rtgate.core.thresholds import load_thresholds
from rtgate.errors import RtgateError
from rtgate.parsers import load_results

CPU = 1
needs_rt = pytest.mark.skipif(not IS_ROOT or (os.cpu_count() or 1) < 2, reason="needs root (SCHED_FIFO) and two CPUs")

THRESHOLDS = """\
platform: known-answers
measurements:
  m:
    sampler: {{interval_us: 1000, {length}, priority: 80, threads: [{{name: rt, cpus: [{cpu}]}}]}}
    gates:
      - {{name: over-1ms, kind: miss_rate, above_us: 1000, rate: 1%}}
      - {{name: p99, kind: percentile, percentile: 99, limit_us: 500}}
      - {{name: missed, kind: missed, max_rate: 1%}}
      - {{name: max, kind: max, limit_us: 1000000}}
"""


def thresholds(tmp_path: Path, length: str, cpu: int = CPU) -> Path:
    p = tmp_path / "known.yaml"
    p.write_text(THRESHOLDS.format(length=length, cpu=cpu))
    return p


def true_skipped(injector_log: Path, since_ns: int, until_ns: int, interval_us: int) -> tuple[int, int]:
    """(windows, fewest periods skipped) by busy windows wholly inside [since, until]: of the deadlines in
    a window of length L at least floor(L / I) - 1 fall inside it, and only the first of them is sampled."""
    doc = json.loads(injector_log.read_text())
    inside = [(a, b) for a, b in doc["windows_ns"] if a >= since_ns and b <= until_ns]
    per = [max(0, (b - a) // (interval_us * 1000) - 2) for a, b in inside]
    return len(inside), sum(per)


def verdicts_by_gate(path: Path, results: Path) -> dict[str, Status]:
    tf = load_thresholds(path)
    run = load_results(results)
    return {v.gate: v.status for v in evaluate_measured(tf.measurements["m"], run)}


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


# ------------------------------------------------------------------ recorded runs (fast, deterministic)


@pytest.mark.parametrize("stem, length", [("ct-inject-D6", "duration: 6s"), ("ct-inject-l5000-h100", "loops: 5000")])
def test_recorded_injected_runs(stem: str, length: str, tmp_path: Path) -> None:
    log = RT_TESTS / f"{stem}.injector.json"
    meta = json.loads((RT_TESTS / f"{stem}.truth.json").read_text())
    windows, truth = true_skipped(log, meta["since_ns"], meta["until_ns"], 1000)
    assert windows >= 6 and truth > 150
    res = RT_TESTS / f"{stem}.json"
    t = load_results(res).threads[0]
    hi = t.missed_upper if t.missed_upper is not None else t.missed
    assert t.missed is not None and hi is not None and hi >= truth - 2
    got = verdicts_by_gate(thresholds(tmp_path, length, cpu=meta["cpu"]), res)
    for gate in ("over-1ms", "p99", "missed"):
        assert got[gate] != Status.PASS, (gate, got, t.missed_derivation)


# ---------------------------------------------------------------- every format of the same run

FORMATS_DIR = RT_TESTS / "inject-formats"
SAME_RUN_THRESHOLDS = """\
platform: known-answers
measurements:
  m:
    sampler: {interval_us: 1000, duration: 4s, priority: 80, threads: [{name: rt, cpus: [1]}]}
    gates:
      - {name: over-1ms, kind: miss_rate, above_us: 1000, rate: 1%}
      - {name: p99, kind: percentile, percentile: 99, limit_us: 500}
      - {name: missed, kind: missed, max_rate: 1%}
      - {name: max, kind: max, limit_us: 1000000}
"""


def record_every_format(program: str, out: Path, verbose: bool) -> None:
    """One run of `program` (cyclictest or rtgate-sampler) under 40 ms stalls every 500 ms: its JSON
    (r.json), histogram text (h.txt) and live T: lines (t.txt) or, with -v, its samples (v.txt)."""
    out.mkdir(parents=True, exist_ok=True)
    argv = [program, "-m", "-p", "80", "-a", str(CPU), "-t", "1", "-i", "1000", "-D", "4", "-h", "1000"]
    argv += [f"--histfile={out / 'h.txt'}", f"--json={out / 'r.json'}"] + (["-v"] if verbose else [])
    with inject(CPU, 95, 40000, 500, 6, out / "inj.json"), (out / ("v.txt" if verbose else "t.txt")).open("w") as f:
        r = subprocess.run(argv, stdout=f, stderr=subprocess.PIPE, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def _same_run_verdicts(tmp_path: Path, run_dir: Path, name: str) -> dict[str, Status]:
    th = tmp_path / "same.yaml"
    th.write_text(SAME_RUN_THRESHOLDS)
    tf = load_thresholds(th)
    return {v.gate: v.status for v in evaluate_measured(tf.measurements["m"], load_results(run_dir / name))}


def _assert_no_format_passes_what_json_fails(tmp_path: Path, run_dir: Path) -> None:
    truth = _same_run_verdicts(tmp_path, run_dir, "r.json")
    assert truth["over-1ms"] == Status.FAIL and truth["missed"] == Status.FAIL, truth  # 40 ms stalls: ~8 % missed
    for name in sorted(p.name for p in run_dir.glob("[htv].txt")):
        got = _same_run_verdicts(tmp_path, run_dir, name)
        for gate, status in truth.items():
            if status == Status.FAIL:
                assert got[gate] != Status.PASS, (run_dir.name, name, gate, got)


@pytest.mark.parametrize("run", ["ct-t", "ct-v", "rs-t", "rs-v"])
def test_recorded_formats_of_one_run_never_pass_what_its_json_fails(tmp_path: Path, run: str) -> None:
    """Histogram text of a run with 40 ms stalls PASSed where its JSON FAILed: '# Max Latencies: 39482' at
    the 1 ms the thresholds ask shows at least 39 periods skipped per stall. Every format of one run of
    cyclictest and of rtgate-sampler now agrees with the JSON's FAIL."""
    _assert_no_format_passes_what_json_fails(tmp_path, FORMATS_DIR / run)


@pytest.mark.parametrize("run", ["ct-v", "rs-v"])
@pytest.mark.parametrize("keep", [0.05, 0.5, 0.9])
def test_cut_verbose_output_never_passes(tmp_path: Path, run: str, keep: float) -> None:
    """A -v file cut at a line: 200 of 2,000 samples PASSed where the whole file FAILs. Cut anywhere, with
    the stalls or without, it is never PASS: the thresholds' length shows the periods it lacks."""
    lines = (FORMATS_DIR / run / "v.txt").read_text().splitlines(keepends=True)
    cut = tmp_path / run
    cut.mkdir()
    (cut / "v.txt").write_text("".join(lines[: int(len(lines) * keep)]))
    got = _same_run_verdicts(tmp_path, cut, "v.txt")
    assert Status.PASS not in got.values(), got
    # cut inside a line: the last line has no newline
    (cut / "v.txt").write_text("".join(lines[: int(len(lines) * keep)]) + lines[-1][:3])
    with pytest.raises(RtgateError, match="truncated"):
        load_results(cut / "v.txt")


def test_histogram_of_a_clean_short_run_is_not_pass(tmp_path: Path) -> None:
    """A run stopped early (1.5 s of 4 s): its histogram text says nothing about length, and its periods are
    fewer than the thresholds ask: INCONCLUSIVE, as its JSON is."""
    src = (FORMATS_DIR / "ct-t" / "h.txt").read_text().splitlines(keepends=True)
    # keep only the samples below 100 us (no stall) and the footer rebuilt to match: a clean, short run
    rows = [ln for ln in src if ln[:1].isdigit() and int(ln.split()[0]) < 100]
    counts = [int(ln.split()[1]) for ln in rows]
    filled = [int(ln.split()[0]) for ln in rows if int(ln.split()[1])]
    total = sum(counts)
    avg = sum(int(ln.split()[0]) * int(ln.split()[1]) for ln in rows) // total
    text = "# Histogram\n" + "".join(rows)
    text += f"# Total: {total:09d}\n# Min Latencies: {filled[0]:05d}\n# Avg Latencies: {avg:05d}\n"
    text += f"# Max Latencies: {filled[-1]:05d}\n# Histogram Overflows: 00000\n# Histogram Overflow at cycle number:\n"
    text += "# Thread 0:\n"
    d = tmp_path / "short"
    d.mkdir()
    (d / "h.txt").write_text(text)
    got = _same_run_verdicts(tmp_path, d, "h.txt")
    assert total < 3800  # fewer periods than 4 s at 1 ms
    assert Status.PASS not in got.values(), got
    assert got["max"] == Status.INCONCLUSIVE, got


@pytest.mark.slow
@needs_rt
@pytest.mark.parametrize("program", ["cyclictest", "rtgate-sampler"])
@pytest.mark.parametrize("verbose", [False, True], ids=["T-lines", "verbose"])
def test_live_formats_of_one_run_never_pass_what_its_json_fails(
    tmp_path: Path, program: str, verbose: bool, request: pytest.FixtureRequest
) -> None:
    exe = request.getfixturevalue("cyclictest" if program == "cyclictest" else "sampler")
    record_every_format(exe, tmp_path / "run", verbose)
    _assert_no_format_passes_what_json_fails(tmp_path, tmp_path / "run")
