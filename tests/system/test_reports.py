# SPDX-License-Identifier: GPL-2.0-or-later
"""Reports: KCIDB export validated by kcidb-io, the EVT estimate on known distributions, plots
checked for content, and the HTML report rendered in headless Chromium.
The tests of this topic that start no process: tests/unit/test_reports_unit.py."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import timezone
from email.utils import parsedate_to_datetime
from pathlib import Path

import pytest

from conftest import RT_OPTS, RT_TESTS
from report_specs import SPEC, kcidb_tests, validate_kcidb, write_spec
from rtgate.core.thresholds import load_thresholds
from rtgate.parsers import load_results
from rtgate.reports.plots import describe, timeline_figure


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    return write_spec(tmp_path)


def rtgate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rtgate", *args], capture_output=True, text=True, cwd=cwd)


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
        kcidb_tests(tmp_path, spec, board_a),
        kcidb_tests(tmp_path, spec, sampler_json),  # another board: this machine
        kcidb_tests(tmp_path, spec, rerun),
        kcidb_tests(tmp_path, other, board_a),
    ]
    ids = [t["id"] for tests in exports for t in tests]
    assert len(ids) == len(set(ids)), "two exports share a test id"
    copy = tmp_path / "copy.json"
    copy.write_text(board_a.read_text())
    assert [t["id"] for t in kcidb_tests(tmp_path, spec, copy)] == [t["id"] for t in exports[0]]  # stable
    assert [t["id"] for t in kcidb_tests(tmp_path, spec, board_a, build="rtgate:build-2")] != [
        t["id"] for t in exports[0]
    ]
    # start_time is the measurement's (the results' own), the same in every export of them
    started = parsedate_to_datetime(json.loads(board_a.read_text())["start_time"]).astimezone(timezone.utc)
    assert {t["start_time"] for t in exports[0]} == {started.isoformat()}
    assert {t["start_time"] for t in exports[2]} == {"2026-11-23T14:00:00+00:00"}
    assert all(t["duration"] > 0 for tests in exports for t in tests)


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
        # The virtual time budget lets the page finish loading and decoding its images before the shot:
        # without it a loaded machine once got a screenshot with the plots not yet drawn.
        [
            chromium,
            *flags,
            "--window-size=1200,4000",
            "--virtual-time-budget=10000",
            f"--screenshot={shot}",
            html.as_uri(),
        ],
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
    assert (tmp_path / "plots" / "smp-histogram.png").exists()
    r = rtgate("report", str(spec), "rtgate-results/smp.json", "-o", "r.html", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Measurement smp" in (tmp_path / "r.html").read_text()
    # a file that does not say which measurement it is: a one-line error naming the way out
    shutil.copy(RT_TESTS / "ct-24-S-h300.json", tmp_path / "loose.json")
    r = rtgate("plot", str(spec), "loose.json", cwd=tmp_path)
    assert r.returncode == 2 and "does not record which it is: write MEASUREMENT=loose.json" in r.stderr
