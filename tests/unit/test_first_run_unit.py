# SPDX-License-Identifier: GPL-2.0-or-later
"""A first run that explains itself, in-process: steal and load figures, busy notes, critical gates, plots."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

from conftest import ROOT, RT_TESTS
from rtgate.core.gates import evaluate
from rtgate.core.model import Histogram, RunResult, ThreadResult
from rtgate.core.thresholds import load_thresholds
from rtgate.measure import busy
from rtgate.measure.orchestrate import busy_notes
from rtgate.parsers import load_results
from rtgate.reports.plots import histogram_figure
from rtgate.reports.text import summary_table


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
