# SPDX-License-Identifier: GPL-2.0-or-later
"""Reports: KCIDB export validated by kcidb-io, the EVT estimate on known distributions, plots
checked for content, and the HTML report rendered in headless Chromium."""

from __future__ import annotations

import io
import json
import math
import random
import shutil
import subprocess
import sys
from datetime import timezone
from email.utils import parsedate_to_datetime
from pathlib import Path

import pytest

from conftest import RT_OPTS, RT_TESTS, junit_figures
from rtgate.core.thresholds import load_thresholds
from rtgate.parsers import load_results
from rtgate.reports.evt import estimate
from rtgate.reports.plots import describe, histogram_figure, png, timeline_figure

SPEC = """\
platform: vm
measurements:
  smp:
    sampler: {interval_us: 500, loops: 3000, priority: 80, threads: [{name: all, count: 2}]}  # as ct-new-t2-H200
    gates:
      - {name: max, kind: max, limit_us: 500}
      - {name: over-100, kind: miss_rate, above_us: 100, rate: 1%}
"""


def rtgate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rtgate", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    p = tmp_path / "t.yaml"
    p.write_text(SPEC)
    return p


@pytest.fixture(scope="module")
def sampler_json(sampler: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run") / "r.json"
    r = subprocess.run(
        [sampler, *RT_OPTS, "-t", "2", "-i", "200", "-l", "5000", "--block=0.05", "-q", f"--json={out}"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    return out


def test_kcidb_export_validates(tmp_path: Path, spec: Path, sampler_json: Path) -> None:
    out = tmp_path / "k.json"
    r = rtgate(
        "export",
        "kcidb",
        str(spec),
        str(RT_TESTS / "ct-new-t2-H200.json"),
        str(sampler_json),
        "--origin",
        "rtgate",
        "--build-id",
        "rtgate:build-1",
        "-o",
        str(out),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    validate_kcidb(doc)
    assert len({t["id"] for t in doc["tests"]}) == len(doc["tests"])
    r = rtgate(
        "export",
        "kcidb",
        str(spec),
        str(RT_TESTS / "ct-new-t2-H200.json"),
        "--build-id",
        "rtgate:build-1",
        "-o",
        str(out),
        cwd=tmp_path,
    )
    doc = json.loads(out.read_text())
    validate_kcidb(doc)
    tests = {t["path"]: t for t in doc["tests"]}
    gate = tests["rt-tests.rtgate.smp.max.t0"]
    assert gate["status"] == "FAIL" and gate["number"] == {
        "value": pytest.approx(1547e-6),
        "unit": "s",
        "prefix": "metric",
    }
    assert tests["rt-tests.rtgate.smp.max.t1"]["status"] == "PASS"
    figure = tests["rt-tests.rtgate.smp.t0.max"]
    assert figure["status"] == "DONE" and figure["number"]["value"] == pytest.approx(1547e-6)
    assert tests["rt-tests.rtgate.smp.over-100.t0"]["number"]["unit"] == "%"
    assert (
        rtgate("export", "kcidb", str(spec), str(sampler_json), "--build-id", "nocolon", cwd=tmp_path).returncode == 2
    )


def validate_kcidb(doc: dict) -> None:  # type: ignore[type-arg]
    """As the newest kcidb-io installed (the test extra asks for it) validates, after upgrading to its schema."""
    kcidb_io = pytest.importorskip("kcidb_io")
    kcidb_io.schema.V5_3.validate(doc)
    kcidb_io.schema.LATEST.validate(kcidb_io.schema.LATEST.upgrade(doc))


def _kcidb(tmp_path: Path, thresholds: Path, *results: Path, build: str = "rtgate:build-1") -> list[dict]:  # type: ignore[type-arg]
    out = tmp_path / "k.json"
    r = rtgate(
        "export", "kcidb", str(thresholds), *map(str, results), "--build-id", build, "-o", str(out), cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    validate_kcidb(doc)
    return doc["tests"]  # type: ignore[no-any-return]


def test_kcidb_ids_never_merge_boards_reruns_or_threshold_files(tmp_path: Path, spec: Path, sampler_json: Path) -> None:
    """KernelCI merges tests with equal ids: two boards, two re-runs of one build and two threshold files on the
    same results are all different test runs; the same results exported again are the same one."""
    board_a = RT_TESTS / "ct-new-t2-H200.json"
    doc = json.loads(board_a.read_text())
    doc["start_time"] = "Mon, 23 Nov 2026 14:00:00 +0000"  # a re-run with the same figures: only its start differs
    rerun = tmp_path / "rerun.json"
    rerun.write_text(json.dumps(doc))
    other = tmp_path / "other.yaml"
    other.write_text(SPEC.replace("limit_us: 500", "limit_us: 600"))
    exports = [
        _kcidb(tmp_path, spec, board_a),
        _kcidb(tmp_path, spec, sampler_json),  # another board: this machine
        _kcidb(tmp_path, spec, rerun),
        _kcidb(tmp_path, other, board_a),
    ]
    ids = [t["id"] for tests in exports for t in tests]
    assert len(ids) == len(set(ids)), "two exports share a test id"
    copy = tmp_path / "copy.json"
    copy.write_text(board_a.read_text())
    assert [t["id"] for t in _kcidb(tmp_path, spec, copy)] == [t["id"] for t in exports[0]]  # stable
    assert [t["id"] for t in _kcidb(tmp_path, spec, board_a, build="rtgate:build-2")] != [t["id"] for t in exports[0]]
    # start_time is the measurement's (the results' own), the same in every export of them
    started = parsedate_to_datetime(json.loads(board_a.read_text())["start_time"]).astimezone(timezone.utc)
    assert {t["start_time"] for t in exports[0]} == {started.isoformat()}
    assert {t["start_time"] for t in exports[2]} == {"2026-11-23T14:00:00+00:00"}
    assert all(t["duration"] > 0 for tests in exports for t in tests)


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
    tests = {t["path"]: t for t in _kcidb(tmp_path, spec, results)}
    for path in ("rt-tests.rtgate.app.p99.cpu0", "rt-tests.rtgate.app.cpu0.p99", "rt-tests.rtgate.app.cpu0.p99_9"):
        assert "number" not in tests[path], path
        span = tests[path]["misc"]["range"]
        assert (span["low"], span["high"], span["unit"]) == (pytest.approx(15e-6), pytest.approx(721e-6), "s")
    assert tests["rt-tests.rtgate.app.cpu0.max"]["number"]["value"] == pytest.approx(721e-6)  # a point stays one

    r = rtgate("export", "squad", str(spec), str(results), "-o", "sq", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    metrics = json.loads((tmp_path / "sq" / "metrics.json").read_text())
    assert not [k for k in metrics if "p99" in k] and metrics["rtgate/r/app/cpu0-max"]["value"] == 721.0
    log = (tmp_path / "sq" / "log.txt").read_text()
    assert "rtgate/r/app/p99-cpu0: 15..721 us: only a range is known" in log and "cpu0-p99.9: 15..721 us" in log
    squad_tests = json.loads((tmp_path / "sq" / "tests.json").read_text())
    assert "15..721 us" in squad_tests["rtgate/r/app/p99-cpu0"]["log"]

    r = rtgate("check", str(spec), str(results), "--junit", "j.xml", "--json", "v.json", cwd=tmp_path)
    figures = junit_figures(tmp_path / "j.xml")["p99[cpu0]"]
    assert "value" not in figures and (figures["value_low"], figures["value_high"]) == ("15.0", "721.0")
    (verdict,) = json.loads((tmp_path / "v.json").read_text())["verdicts"]
    assert verdict["value_range"] == [15.0, 721.0]

    r = rtgate("report", str(spec), str(results), "-o", "r.html", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "<td>15..721 us</td>" in (tmp_path / "r.html").read_text()


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
    m = load_thresholds(spec).measurements["smp"]
    fig = histogram_figure(load_results(RT_TESTS / "ct-24-S-h300.json"), m, "vm")
    d = describe(fig)
    assert d["yscale"] == "log"
    assert d["labels"] == ["cpu0 (max 894 us)", "cpu1 (max 155 us)"]
    lines = [ln for ln in fig.axes[0].lines if ln.get_gid() == "limit"]
    assert sorted(ln.get_xdata()[0] for ln in lines) == [100, 500]  # the max limit and the miss-rate limit
    # each in its own style, labelled with its gate and what it asks; the miss-rate with its rate and measured share
    assert len({(str(ln.get_color()), str(ln.get_linestyle())) for ln in lines}) == 2
    # cpu0: 7 samples above 100 us and 4 missed periods of 5004: 0.2198 %
    assert d["limits"] == ["over-100: <= 1 % of samples above 100 us; measured 0.2198 % above or missed (worst thread)",
                           "max: max <= 500 us"]  # fmt: skip
    # titled by platform, measurement, kernel and date, not a file path
    assert d["title"] == "Latency histogram: vm / smp\nkernel 6.18.44-fc-v669, 2026-11-21 14:36"
    assert d["xscale"] == "linear"  # buckets of 8..184 us (the max, 894 us, is in -h 300's overflow), limits to 500


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
    import matplotlib.image as mpimg

    pixels = mpimg.imread(io.BytesIO(png(fig)), format="png")
    assert pixels.shape[0] > 200 and (pixels[:, :, :3].sum(axis=2) < 2.5).sum() > 2000  # drawn, not blank


def test_timeline_plot_content(spec: Path, sampler_json: Path) -> None:
    run = load_results(sampler_json)
    fig = timeline_figure(run, load_thresholds(spec).measurements["smp"])
    d = describe(fig)
    # -t 2 pins its threads round-robin, as cyclictest: one line per thread, named by its CPU
    assert d["labels"][:2] == [f"cpu{t.cpu}" for t in run.threads[:2]] and all(t.cpu >= 0 for t in run.threads)
    points = fig.axes[0].lines[0].get_ydata()
    bm = run.threads[0].block_maxima
    assert bm is not None and len(bm.values) >= 15
    assert len(points) == len(bm.values) + (bm.partial_max is not None)  # the last, partial block too
    assert max(points) == run.threads[0].max


def test_html_report_renders_in_chromium(tmp_path: Path, spec: Path, sampler_json: Path, tool: object) -> None:
    chromium = tool("chromium", "chromium")  # type: ignore[operator]
    db = tmp_path / "h.db"
    for release in ("6.1", "6.2"):
        assert (
            rtgate(
                "history",
                "add",
                "--db",
                str(db),
                "--thresholds",
                str(spec),
                "--kernel-release",
                release,
                "--force-label",
                str(sampler_json),
                cwd=tmp_path,
            ).returncode
            == 0
        )
    html = tmp_path / "report.html"
    r = rtgate("report", str(spec), str(sampler_json), "--history", str(db), "-o", str(html), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    text = html.read_text()
    assert text.count('src="data:image/png;base64,') == 3 and "http" not in text.split("<body>")[1]
    shot = tmp_path / "shot.png"
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    r = subprocess.run(
        [chromium, *flags, "--window-size=1200,4000", f"--screenshot={shot}", html.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.exists(), r.stderr[-2000:]
    import matplotlib.image as mpimg

    pixels = mpimg.imread(str(shot))[:, :, :3]
    blue = (
        (abs(pixels[:, :, 0] - 0.12) < 0.06)
        & (abs(pixels[:, :, 1] - 0.47) < 0.06)
        & (abs(pixels[:, :, 2] - 0.71) < 0.06)
    ).sum()
    assert blue > 300, "the plots' lines (matplotlib blue) are not on the rendered page"
    dom = subprocess.run([chromium, *flags, "--dump-dom", html.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.stdout.count("<img") == 3 and 'id="verdicts"' in dom.stdout and "Trend over releases" in dom.stdout
    # A short run's estimate fails its own checks: said so, and no bold number that reads as a result.
    assert "unreliable, not shown" in dom.stdout and "exceeded with probability" not in dom.stdout
    assert shutil.which(chromium)


def test_plot_and_report_find_the_measurement_from_the_results(tmp_path: Path) -> None:
    """With several measurements, results that rtgate run wrote say which they are: no NAME= needed."""
    spec = tmp_path / "two.yaml"
    spec.write_text(SPEC + "  other:\n    sampler: {loops: 10}\n    gates: [{name: max, kind: max, limit_us: 5}]\n")
    results = tmp_path / "rtgate-results"
    results.mkdir()
    shutil.copy(RT_TESTS / "ct-24-S-h300.json", results / "smp.json")
    r = rtgate("plot", str(spec), "rtgate-results/smp.json", "-o", "plots", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "plots" / "smp-0-histogram.png").exists()
    r = rtgate("report", str(spec), "rtgate-results/smp.json", "-o", "r.html", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Measurement smp" in (tmp_path / "r.html").read_text()
    # a file that does not say which measurement it is: a one-line error naming the way out
    shutil.copy(RT_TESTS / "ct-24-S-h300.json", tmp_path / "loose.json")
    r = rtgate("plot", str(spec), "loose.json", cwd=tmp_path)
    assert r.returncode == 2 and "does not record which it is: write MEASUREMENT=loose.json" in r.stderr
