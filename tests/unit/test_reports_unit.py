# SPDX-License-Identifier: GPL-2.0-or-later
"""Reports in-process: the EVT estimate on known distributions, histogram plots checked for content, and
percentiles known only as a range staying ranges in KCIDB, SQUAD, JUnit, verdicts JSON and HTML."""

from __future__ import annotations

import io
import json
import math
import random
import shutil
from pathlib import Path

import pytest

from conftest import RT_TESTS, junit_figures
from in_process import rtgate
from report_specs import kcidb_tests, write_spec
from rtgate.core.thresholds import load_thresholds
from rtgate.parsers import load_results
from rtgate.reports.evt import estimate
from rtgate.reports.plots import describe, histogram_figure, png


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    return write_spec(tmp_path)


def _block_maxima(rng: random.Random, blocks: int, m: int) -> list[float]:
    """Exact draws of the max of m Exp(1) samples: F(z) = (1 - e^-z)^m."""
    return [-math.log(1 - rng.random() ** (1 / m)) for _ in range(blocks)]


def test_evt_interval_holds_the_true_quantile() -> None:
    m, per_hour = 1000, 0.01
    truth = -math.log(1 - (1 - per_hour) ** (1 / m))  # one block per hour: P(max > truth) = per_hour
    covered = 0
    for seed in range(10):
        e = estimate(
            _block_maxima(random.Random(seed), 300, m), block_seconds=3600.0, per_hour=per_hour, rounds=300, seed=seed
        )
        covered += e.interval[0] <= truth <= e.interval[1]
        assert e.valid, e.checks
    assert covered >= 8, covered


def test_evt_with_too_few_blocks_is_no_estimate() -> None:
    for n in (0, 1, 2):
        e = estimate([100.0 + i for i in range(n)], 1.0)
        assert not e.valid and "too few" in e.checks[0]


def test_evt_checks_its_assumptions() -> None:
    rng = random.Random(5)
    drifting = [v + i * 0.05 for i, v in enumerate(_block_maxima(rng, 200, 100))]
    e = estimate(drifting, 1.0)
    assert not e.valid and any("not stationary" in c for c in e.checks)
    # what failed is named apart from what held: "its checks failed" lists only the failures
    assert e.failed == [c for c in e.checks if "not stationary" in c]
    e = estimate(_block_maxima(rng, 10, 100), 1.0)
    assert not e.valid and any("too few" in c for c in e.checks)


def test_histogram_plot_content(spec: Path) -> None:
    # The report tests' gates, on the set-up ct-24-S-h300 was measured with (cyclictest -S -i 200 -l 5000):
    # judged, not refused, so the plot carries the verdicts `rtgate check` gives.
    spec.write_text(
        spec.read_text().replace(
            "{interval_us: 500, loops: 3000, priority: 80, threads: [{name: all, count: 2}]}",
            "{interval_us: 200, loops: 5000, priority: 80, threads: [{name: all, cpus: all}]}",
        )
    )
    m = load_thresholds(spec).measurements["smp"]
    fig = histogram_figure(load_results(RT_TESTS / "ct-24-S-h300.json"), m, "vm")
    d = describe(fig)
    assert d["yscale"] == "log"
    assert d["labels"] == ["cpu0 (max 894 us)", "cpu1 (max 155 us)"]  # -S pins them: named after their CPUs
    lines = [ln for ln in fig.axes[0].lines if ln.get_gid() == "limit"]
    assert sorted(ln.get_xdata()[0] for ln in lines) == [100, 500]  # the max limit and the miss-rate limit
    # each in its own style, labelled with its gate and what it asks; the miss-rate with its rate and measured share
    assert len({(str(ln.get_color()), str(ln.get_linestyle())) for ln in lines}) == 2
    # cpu0: 7 samples above 100 us and 4 missed periods of 5004: 0.2198 %
    # each limit led by its gate's verdict: cpu0's max 894 us > 500 us; 0.2198 % <= 1 %
    assert d["limits"] == [
        "PASS over-100: <= 1 % of samples above 100 us; measured 0.2198 % above or missed (worst thread)",
        "FAIL max: max <= 500 us",
    ]
    # titled by platform, measurement, kernel and date, not a file path, and the verdict
    assert d["title"] == (
        "Latency histogram: vm / smp\nkernel 6.18.44-fc-v669, 2026-11-21 14:36\nverdict FAIL (max FAIL, over-100 PASS)"
    )
    # the periods cpu0 missed (4, the JSON's count) have no bucket: the plot says so
    assert d["missed"] == ["missed periods (not in the histogram): cpu0 4, cpu1 0"]
    assert d["xscale"] == "linear"  # buckets of 8..184 us (the max, 894 us, is in -h 300's overflow), limits to 500
    import matplotlib.image as mpimg

    pixels = mpimg.imread(io.BytesIO(png(fig)), format="png")
    assert pixels.shape[0] > 200 and (pixels[:, :, :3].sum(axis=2) < 2.5).sum() > 2000  # drawn, not blank


def test_ranges_stay_ranges(tmp_path: Path) -> None:
    """cyclictest -h 15: p99 and p99.9 lie between 15 us (where the overflow starts) and 721 us (the max): KCIDB,
    SQUAD, JUnit, verdicts JSON and HTML say that range, and none of them a point."""
    spec = tmp_path / "t.yaml"
    spec.write_text(
        "platform: r\nmeasurements:\n  app:\n"
        "    sampler: {interval_us: 1000, duration: 4s, priority: 99, threads: [{name: all, count: 1}]}\n"
        "    gates:\n      - {name: p99, kind: percentile, percentile: 99, limit_us: 1000}\n"
    )
    results = RT_TESTS / "ct-24-t1-h15.json"
    tests = {t["path"]: t for t in kcidb_tests(tmp_path, spec, results)}
    # -t 1 without -a: cyclictest (libnuma) ran it on cpu 0 unasked; named t0, as its histogram text names it
    for path in ("rt-tests.rtgate.app.p99.t0", "rt-tests.rtgate.app.t0.p99", "rt-tests.rtgate.app.t0.p99_9"):
        assert "number" not in tests[path], path
        span = tests[path]["misc"]["range"]
        assert (span["low"], span["high"], span["unit"]) == (pytest.approx(15e-6), pytest.approx(721e-6), "s")
    assert tests["rt-tests.rtgate.app.t0.max"]["number"]["value"] == pytest.approx(721e-6)  # a point stays one

    r = rtgate("export", "squad", str(spec), str(results), "-o", "sq", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    metrics = json.loads((tmp_path / "sq" / "metrics.json").read_text())
    assert not [k for k in metrics if "p99" in k] and metrics["rtgate/r/app/t0-max"]["value"] == 721.0
    log = (tmp_path / "sq" / "log.txt").read_text()
    assert "rtgate/r/app/p99-t0: 15..721 us: only a range is known" in log and "t0-p99.9: 15..721 us" in log
    squad_tests = json.loads((tmp_path / "sq" / "tests.json").read_text())
    assert "15..721 us" in squad_tests["rtgate/r/app/p99-t0"]["log"]

    r = rtgate("check", str(spec), str(results), "--junit", "j.xml", "--json", "v.json", cwd=tmp_path)
    figures = junit_figures(tmp_path / "j.xml")["p99[t0]"]
    assert "value" not in figures and (figures["value_low"], figures["value_high"]) == ("15.0", "721.0")
    (verdict,) = json.loads((tmp_path / "v.json").read_text())["verdicts"]
    assert verdict["value_range"] == [15.0, 721.0]

    r = rtgate("report", str(spec), str(results), "-o", "r.html", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "<td>15..721 us</td>" in (tmp_path / "r.html").read_text()


def test_histogram_plot_goes_log_where_latencies_span_decades(spec: Path) -> None:
    from rtgate.core.model import Histogram, RunResult, ThreadResult

    m = load_thresholds(spec).measurements["smp"]
    buckets = [(lo, lo + 1, 100) for lo in range(10, 60)] + [(4000, 4001, 1)]
    run = RunResult(
        source="x",
        format="test",
        unit="us",
        threads=[
            ThreadResult(index=0, cycles=5001, min=10, max=4000, avg=30, cpu=0, histogram=Histogram("us", buckets))
        ],
    )
    fig = histogram_figure(run, m)
    assert describe(fig)["xscale"] == "log"
    # the lone 4 ms sample is a marker: a 1-us step is too narrow to see at 4 ms
    lone = [ln for ln in fig.axes[0].lines if ln.get_gid() == "lone"]
    assert [list(ln.get_xdata()) for ln in lone] == [[4000.5]]  # the middle of its 1-us bucket
    buckets = [(lo, lo + 1, 100) for lo in range(10, 60)]
    run.threads[0] = ThreadResult(
        index=0, cycles=5000, min=10, max=59, avg=30, cpu=0, histogram=Histogram("us", buckets)
    )
    assert describe(histogram_figure(run, m))["xscale"] == "linear"  # 10..500 us: under two decades


def test_plot_files_say_what_they_show(spec: Path) -> None:
    """<measurement>-histogram.png and -timeline.png; one measurement given two results keeps both,
    named by their files; every file written is printed with what it shows."""
    tmp = spec.parent
    shutil.copy(RT_TESTS / "ct-new-t2-H200.json", tmp / "a.json")
    shutil.copy(RT_TESTS / "ct-new-t2-H200.json", tmp / "b.json")
    r = rtgate("plot", str(spec), "smp=a.json", "-o", "one", cwd=tmp)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp / "one").iterdir()) == ["smp-histogram.png", "smp-timeline.png"]
    assert r.stdout.splitlines() == [
        f"wrote {Path('one') / 'smp-histogram.png'} (latency histogram of smp, a.json)",
        f"wrote {Path('one') / 'smp-timeline.png'} (block maxima over time of smp, a.json)",
    ]
    r = rtgate("plot", str(spec), "smp=a.json", "smp=b.json", "smp=a.json", "-o", "two", cwd=tmp)
    assert r.returncode == 0, r.stderr
    names = ["smp-a", "smp-b", "smp-a-2"]
    assert sorted(p.name for p in (tmp / "two").iterdir()) == sorted(
        f"{n}-{k}.png" for n in names for k in ("histogram", "timeline")
    )
    assert [line.split()[1] for line in r.stdout.splitlines()] == [
        str(Path("two") / f"{n}-{k}.png") for n in names for k in ("histogram", "timeline")
    ]
