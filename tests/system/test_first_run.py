# SPDX-License-Identifier: GPL-2.0-or-later
"""A first run that explains itself: the machine's load beside the verdict, shipped threshold names
in every command, critical gates, the HTML environment of `rtgate run` results, honest plots."""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, RT_TESTS
from rtgate.core.gates import evaluate
from rtgate.core.model import Histogram, RunResult, ThreadResult
from rtgate.core.thresholds import load_thresholds
from rtgate.measure import busy
from rtgate.measure.orchestrate import busy_notes
from rtgate.parsers import load_results
from rtgate.reports.plots import histogram_figure
from rtgate.reports.text import summary_table

IS_ROOT = os.geteuid() == 0


def rtgate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rtgate", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


# ------------------------------------------------------------------ machine load


def test_steal_is_the_delta_over_the_measurement(tmp_path: Path) -> None:
    def root(stat: str, loadavg: str) -> Path:
        d = tmp_path / str(len(list(tmp_path.iterdir())))
        (d / "proc").mkdir(parents=True)
        (d / "proc/stat").write_text(f"cpu  {stat}\ncpu0 {stat}\n")
        (d / "proc/loadavg").write_text(f"{loadavg} 1/100 4242\n")
        return d

    before = busy.snapshot(root("100 0 100 700 0 0 0 100 50 0", "0.20 0.30 0.40"))
    after = busy.snapshot(root("200 0 200 1400 0 0 0 200 90 0", "3.50 1.00 0.50"))
    rec = busy.machine_load(before, after, cpus=4)
    # 100 stolen ticks of 1000 (guest time is inside user: not counted twice)
    assert rec["steal_percent"] == 10.0 and rec["loadavg_before"] == [0.2, 0.3, 0.4]
    assert rec["loadavg_after"] == [3.5, 1.0, 0.5]
    assert rec["busy"] == ["10 % of CPU time stolen by the hypervisor (busy above 3 %)"]
    busy_before = busy.snapshot(root("100 0 100 700 0 0 0 100 50 0", "2.50 0.30 0.40"))
    rec = busy.machine_load(busy_before, busy_before, cpus=4)
    assert rec["steal_percent"] is None  # no time passed: unknown, not 0
    assert rec["busy"] == ["load average 2.5 before measuring, on 4 CPUs (busy above 2)"]
    assert busy.machine_load(before, before, cpus=4)["busy"] == []


def test_live_snapshot_reads_this_machine() -> None:
    snap = busy.snapshot()
    fields = Path("/proc/stat").read_text().split("\n")[0].split()
    assert snap["total_ticks"] >= sum(int(x) for x in fields[1:9]) - 10**6 and snap["steal_ticks"] >= 0
    assert snap["loadavg"] is not None and len(snap["loadavg"]) == 3


def _verdicts(limit_us: int, critical: bool) -> list:
    tf_text = (
        "platform: p\nmeasurements:\n  m:\n    sampler: {interval_us: 500, loops: 3000, priority: 80,"
        " threads: [{name: all, count: 2}]}\n    gates:\n"
        "      - {name: avg, kind: avg, limit_us: 1}\n"
        f"      - {{name: max, kind: max, limit_us: {limit_us}, critical: {str(critical).lower()}}}\n"
    )
    return tf_text


def test_busy_note_only_when_a_bad_verdict_meets_a_busy_machine(tmp_path: Path) -> None:
    spec = tmp_path / "t.yaml"
    spec.write_text(_verdicts(10, False))
    m = load_thresholds(spec).measurements["m"]
    verdicts = evaluate(m, load_results(RT_TESTS / "ct-new-t2-H200.json"))
    assert {v.status.value for v in verdicts} == {"FAIL"}
    quiet = {"cpus": 2, "loadavg_before": [0.1, 0, 0], "loadavg_after": [0.9, 0, 0], "steal_percent": 0.0, "busy": []}
    noisy = {
        **quiet,
        "loadavg_before": [15.3, 0, 0],
        "busy": busy.busy_reasons({**quiet, "loadavg_before": [15.3, 0, 0]}),
    }
    assert len(busy_notes("m", quiet, verdicts)) == 1  # the figures, no note
    lines = busy_notes("m", noisy, verdicts)
    assert lines[0] == ("rtgate: m: load average 15.3 before, 0.9 after (2 CPUs); CPU steal 0 % during the measurement")
    assert lines[1].startswith(
        "rtgate: note: m: FAIL measured on a busy machine (load average 15.3 before "
        "measuring, on 2 CPUs (busy above 1))"
    )
    assert len(busy_notes("m", noisy, [])) == 1


@pytest.mark.skipif(not IS_ROOT, reason="needs root for SCHED_FIFO")
def test_run_prints_and_records_the_machine_load(tmp_path: Path) -> None:
    spec = tmp_path / "t.yaml"
    spec.write_text(
        "platform: p\nmeasurements:\n  m:\n    sampler: {interval_us: 1000, duration: 1s, priority: 80,"
        " threads: [{name: a, cpus: [0]}]}\n    gates:\n      - {name: max, kind: max, limit_us: 1}\n"
    )
    r = rtgate("run", str(spec), cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr  # 1 us: every machine fails it
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("rtgate: m: load average"))
    assert "CPU steal" in line and "(" + str(len(os.sched_getaffinity(0))) + " CPUs)" in line
    doc = json.loads((tmp_path / "rtgate-results/m.json").read_text())
    rec = doc["rtgate_run"]["machine_load"]
    env = json.loads((tmp_path / "rtgate-results/m.environment.json").read_text())
    assert env["machine_load"] == rec and len(rec["loadavg_before"]) == 3
    assert rec["steal_percent"] is not None and 0 <= rec["steal_percent"] <= 100
    # the note appears exactly when the record says the machine was busy
    assert ("rtgate: note: m: FAIL measured on a busy machine" in r.stdout) == bool(rec["busy"])
    # and the HTML report of these results shows it, with the system rtgate run recorded
    out = tmp_path / "r.html"
    r = rtgate("report", str(spec), str(tmp_path / "rtgate-results/m.json"), "-o", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    html = out.read_text()
    table = html[html.index('<table id="environment">') :]
    assert "m machine load" in table and "CPU steal" in table
    assert os.uname().release in table and "preemption" in table


# ------------------------------------------------------------------ shipped names everywhere


def test_shipped_names_work_in_every_command(tmp_path: Path) -> None:
    results = str(RT_TESTS / "ct-new-t2-H200.json")
    name = "two-thread-example.yaml"
    for args, ok in (
        (["validate", name], {0}),
        (["doctor", name], {0, 1}),
        (["check", name, results], {0, 1}),
        (["plot", name, results, "-o", str(tmp_path / "p.png")], {0}),
        (["report", name, results, "-o", str(tmp_path / "r.html")], {0}),
        (["export", "kcidb", name, results, "--build-id", "rtgate:b1", "-o", str(tmp_path / "k.json")], {0, 1}),
        (
            [
                "history",
                "add",
                "--db",
                str(tmp_path / "h.db"),
                "--thresholds",
                name,
                results,  # labelled with the kernel the results recorded
            ],
            {0},
        ),
    ):
        r = rtgate(*args, cwd=tmp_path)
        assert r.returncode in ok, (args, r.stdout, r.stderr)
        assert "no such threshold file" not in r.stderr
    r = rtgate("validate", "no-such-file.yaml", cwd=tmp_path)
    assert r.returncode == 2 and "no such threshold file" in r.stderr and "two-thread-example.yaml" in r.stderr
    # a file of that name in the current folder comes first
    (tmp_path / name).write_text(
        "platform: local\nmeasurements: {m: {sampler: {loops: 10},\n  gates: [{name: g, kind: max, limit_us: 1}]}}\n"
    )
    r = rtgate("validate", name, cwd=tmp_path)
    assert r.returncode == 0 and "local" in r.stdout, r.stdout + r.stderr


def test_pytest_plugin_takes_a_shipped_name(pytester: pytest.Pytester) -> None:
    results = RT_TESTS / "ct-new-t2-H200.json"
    r = pytester.runpytest_subprocess(
        "--rtgate-thresholds",
        "two-thread-example.yaml",
        "--rtgate-results",
        str(results),
        "--rtgate-accept-setup",
        "all",
        "--collect-only",
        "-q",
    )
    assert "a-max[A-t0]" in r.stdout.str(), r.stdout.str() + r.stderr.str()


# ------------------------------------------------------------------ critical


def test_a_critical_fail_is_listed_first_and_named(tmp_path: Path) -> None:
    spec = tmp_path / "t.yaml"
    run = load_results(RT_TESTS / "ct-new-t2-H200.json")
    spec.write_text(_verdicts(10, True))
    text = summary_table("p", evaluate(load_thresholds(spec).measurements["m"], run))
    reasons = [ln for ln in text.splitlines() if ln.startswith(("FAIL:", "CRITICAL FAIL:"))]
    assert reasons[0].startswith("CRITICAL FAIL: m::max[") and reasons[1].startswith("CRITICAL FAIL: m::max[")
    assert reasons[2].startswith("FAIL: m::avg[")
    assert text.splitlines()[-2] == "rtgate: CRITICAL: 2 critical gates failed: m::max[t0], m::max[t1]"
    assert text.splitlines()[-1].startswith("rtgate: FAIL: 0 passed, 4 failed")
    # not critical: the order of the file, no CRITICAL line; critical but passing: nothing either
    spec.write_text(_verdicts(10, False))
    plain = summary_table("p", evaluate(load_thresholds(spec).measurements["m"], run))
    assert "CRITICAL" not in plain and plain.splitlines()[-5].startswith("FAIL: m::avg[")
    spec.write_text(_verdicts(100000, True))
    assert "CRITICAL" not in summary_table("p", evaluate(load_thresholds(spec).measurements["m"], run))


# ------------------------------------------------------------------ plots


def test_histogram_plot_breaks_across_empty_latencies() -> None:
    hist = Histogram(unit="us", buckets=[(10, 11, 500), (11, 12, 40), (12, 13, 0), (13, 14, 2), (900, 901, 1)])
    run = RunResult(
        source="x",
        format="test",
        unit="us",
        threads=[ThreadResult(index=0, cycles=543, min=10, max=900, avg=11, cpu=0, histogram=hist)],
    )
    spec_m = load_thresholds(ROOT / "thresholds/default.yaml").measurements
    fig = histogram_figure(run, next(iter(spec_m.values())))
    line = fig.axes[0].lines[0]
    pts = list(zip(line.get_xdata(), line.get_ydata()))
    for (x0, y0), (x1, y1) in itertools.pairwise(pts):
        if not (math.isnan(x0) or math.isnan(x1)) and y0 == y1:
            assert x1 - x0 <= 1, (x0, x1, y0)  # a flat step is one bucket wide, never a line to the max
    assert (12, 0) not in pts and any(math.isnan(x) for x, _ in pts)
    # limit labels never overlap, even for limits close together
    fig.canvas.draw()
    boxes = [t.get_window_extent() for t in fig.axes[0].texts]
    assert len(boxes) >= 2
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not a.overlaps(b)
