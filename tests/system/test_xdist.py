# SPDX-License-Identifier: GPL-2.0-or-later
"""One measurement at a time on a machine: pytest-xdist workers and separate runs wait for each
other on the machine-wide lock; the rtgate summary and the figures survive xdist."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from junitparser import JUnitXml

from conftest import IS_ROOT, RT_TESTS
from junit_views import jenkins_view
from rtgate.measure.lock import measurement_lock
from rtgate.parsers import load_results
from rtgate.reports.duration import measured_seconds

pytest.importorskip("xdist")

TWO = """\
platform: pair
measurements:
{body}
"""
ONE = """\
  {name}:
    sampler: {{interval_us: 1000, duration: 3s, priority: 80, threads: [{{name: all, count: 1}}]}}
    gates:
      - {{name: max, kind: max, limit_us: 1000000}}
      - {{name: avg, kind: avg, limit_us: 1000000}}
"""


def _span(path: Path) -> tuple[int, int]:
    """The sampler's own start and end (CLOCK_REALTIME ns): comparable between processes."""
    doc = json.loads(path.read_text())["rtgate"]
    return doc["start_time_ns"], doc["end_time_ns"]


def test_lock_waits_and_says_for_whom(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RTGATE_LOCK_FILE", str(tmp_path / "lock"))
    held, release, said = threading.Event(), threading.Event(), []

    def holder() -> None:
        with measurement_lock("first"):
            held.set()
            release.wait(10)

    t = threading.Thread(target=holder)
    t.start()
    held.wait(10)

    class Out:
        def write(self, s: str) -> None:
            said.append(s)
            release.set()  # the second one is waiting now: let the first finish

        def flush(self) -> None:
            pass

    with measurement_lock("second", out=Out()):
        assert release.is_set()  # it got the lock only after saying it waits and the first let go
    t.join(10)
    text = "".join(said)
    assert "second: waiting for the machine's measurement lock" in text
    assert f"held by pid {os.getpid()}" in text and "measurement first" in text
    # and without contention, nothing is said
    said.clear()
    with measurement_lock("third", out=Out()):
        pass
    assert said == []


@pytest.mark.skipif(not IS_ROOT, reason="needs root for SCHED_FIFO")
@pytest.mark.slow
def test_xdist_workers_never_measure_at_once(pytester: pytest.Pytester) -> None:
    (pytester.path / "pair.yaml").write_text(TWO.format(body=ONE.format(name="first") + ONE.format(name="second")))
    r = pytester.runpytest_subprocess(
        "pair.yaml",
        "-n",
        "2",
        "-p",
        "xdist",
        "--junitxml=out.xml",
        "--rtgate-json",
        "v.json",
        "-W",
        "error",
        timeout=300,
    )
    out = r.stdout.str()
    r.assert_outcomes(passed=4)
    results = sorted((pytester.path / "rtgate-results").glob("gw*/pair/*.json"))
    results = [p for p in results if not p.name.endswith(".environment.json")]
    spans = {}
    for p in results:
        spans[p.stem] = _span(p)
    assert set(spans) == {"first", "second"}, results  # each ran once, in its worker's folder
    (_a0, a1), (b0, _b1) = sorted(spans.values())
    assert a1 <= b0, spans  # one after the other, never at once
    # the controller's summary holds every gate; the JSON and JUnit figures too
    assert "rtgate" in out and out.count("PASS         pair.yaml::") == 4, out
    doc = json.loads((pytester.path / "v.json").read_text())
    assert sorted(v["measurement"] for v in doc["verdicts"]) == ["first", "first", "second", "second"]
    # where each was measured travels from the workers too
    assert set(doc["environment"]["measurements"]) == {"first", "second"}
    assert doc["environment"]["machine"]["kernel"] == Path("/proc/sys/kernel/osrelease").read_text().strip()
    suite = next(iter(JUnitXml.fromfile(str(pytester.path / "out.xml"))))
    props = {p.name: p.value for p in suite.properties()}
    assert props["pair.yaml::first::max[t0]::status"] == "PASS"
    assert props["pair.yaml::second::avg[t0]::status"] == "PASS"


def test_xdist_summary_from_results(pytester: pytest.Pytester) -> None:
    """No sampler: the summary and figures of workers reach the controller (any machine)."""
    shutil.copy(RT_TESTS / "ct-24-S-h300.json", pytester.path / "results.json")
    (pytester.path / "board.yaml").write_text(
        "platform: board\nmeasurements:\n  m:\n    sampler: {interval_us: 200, loops: 5000, priority: 80,"
        " threads: [{name: all, count: 2}]}\n    gates:\n      - {name: max, kind: max, limit_us: 500}\n"
        "      - {name: avg, kind: avg, limit_us: 500}\n"
    )
    r = pytester.runpytest_subprocess(
        "board.yaml",
        "-n",
        "2",
        "-p",
        "xdist",
        "--rtgate-results",
        "results.json",
        "--junitxml=out.xml",
        "--rtgate-junit",
        "rt.xml",
        "-W",
        "error",
    )
    r.assert_outcomes(passed=3, failed=1)
    out = r.stdout.str()
    assert "FAIL         board.yaml::m::max[cpu0]  894 us (limit 500 us)" in out, out
    assert out.count("board.yaml::m::") >= 4
    rt = {c.name for s in JUnitXml.fromfile(str(pytester.path / "rt.xml")) for c in s}
    assert rt == {"max[cpu0]", "max[cpu1]", "avg[cpu0]", "avg[cpu1]"}
    # The measurement's duration came back from the worker that judged it: the suite's time, as `check` gives it.
    seconds = measured_seconds(load_results(RT_TESTS / "ct-24-S-h300.json"), 200)
    assert seconds is not None and seconds > 0.9
    [suite_view] = jenkins_view(pytester.path / "rt.xml")
    assert suite_view.duration == pytest.approx(seconds, abs=0.001)
    assert sum(c.duration for c in suite_view.cases) == pytest.approx(seconds, abs=0.001)
    suite = next(iter(JUnitXml.fromfile(str(pytester.path / "out.xml"))))
    props = {p.name: p.value for p in suite.properties()}
    assert props["board.yaml::m::max[cpu0]::value"] == "894 us"
    for case in suite:
        assert case.child(__import__("junitparser").Properties) is None  # valid xunit2: no testcase properties


def test_two_rtgate_runs_wait_for_each_other(tmp_path: Path) -> None:
    if not IS_ROOT:
        pytest.skip("needs root for SCHED_FIFO")
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "t.yaml").write_text(TWO.format(body=ONE.format(name=d).replace("3s", "8s")))
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "rtgate", "run", "t.yaml"],
            cwd=tmp_path / d,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for d in ("a", "b")
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    spans = []
    for d in ("a", "b"):
        spans.append(_span(tmp_path / d / "rtgate-results" / f"{d}.json"))
    (_a0, a1), (b0, _b1) = sorted(spans)
    assert a1 <= b0, spans
    assert any("waiting for the machine's measurement lock" in err for _, err in outs), outs


@pytest.mark.skipif(not IS_ROOT, reason="needs root for SCHED_FIFO")
def test_default_distribution_measures_once_and_every_report_agrees(pytester: pytest.Pytester) -> None:
    """-n 2 with pytest-xdist's default --dist load: the four gates of one measurement go to one
    worker, which measures it once; pytest's JUnit, rtgate's JUnit, its JSON and the terminal show
    that one run. The limits sit at the run's own maximum, so two runs would show different figures."""
    body = ONE.format(name="one").replace("threads: [{name: all, count: 1}]", "threads: [{name: all, count: 2}]")
    (pytester.path / "one.yaml").write_text(TWO.format(body=body))
    r = pytester.runpytest_subprocess(
        "one.yaml", "-n", "2", "-p", "xdist", "--junitxml=out.xml", "--rtgate-json", "v.json",
        "--rtgate-junit", "rt.xml", "-W", "error", timeout=300,
    )  # fmt: skip
    r.assert_outcomes(passed=4)
    results = [
        p
        for p in (pytester.path / "rtgate-results").glob("gw*/pair/*.json")
        if not p.name.endswith(".environment.json")
    ]
    assert len(results) == 1, results  # one worker measured, once
    doc = json.loads((pytester.path / "v.json").read_text())
    from_json = {(v["gate"], v["thread"]): v["value_text"] for v in doc["verdicts"]}
    assert len(from_json) == 4
    figures = {}
    suite = next(iter(JUnitXml.fromfile(str(pytester.path / "out.xml"))))
    for p in suite.properties():
        case, _, figure = p.name.rpartition("::")
        if figure == "value":
            figures[case.split("::", 2)[2]] = p.value
    assert figures == {f"{g}[{t}]": v for (g, t), v in from_json.items()}
    rt = {c.name for s in JUnitXml.fromfile(str(pytester.path / "rt.xml")) for c in s}
    assert rt == {f"{g}[{t}]" for g, t in from_json}
    out = r.stdout.str()
    for (g, t), value in from_json.items():
        assert f"one.yaml::one::{g}[{t}]  {value}" in out, out


def test_dist_each_is_refused(pytester: pytest.Pytester) -> None:
    (pytester.path / "one.yaml").write_text(TWO.format(body=ONE.format(name="one")))
    r = pytester.runpytest_subprocess("one.yaml", "-n", "2", "-p", "xdist", "--dist", "each")
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    assert "--dist each would run every measurement once per worker" in r.stderr.str()
