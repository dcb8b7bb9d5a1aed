# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate's JUnit as its real readers take it: Jenkins' xunit schema, GitLab's fields, real times.

Jenkins' xunit plugin validates every file against junit-10.xsd (tests/schemas/) and skips one that fails, so
validation here uses that schema, as published today and in its older revision, with libxml2's xmllint. What
GitLab and Jenkins then show is read back by their rules (tests/junit_views.py): the reason as text, the figures,
names that do not collide, and the measurement's duration.
"""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped

from conftest import IS_ROOT, ROOT, RT_TESTS, junit_figures
from junit_views import gitlab_view, jenkins_view
from rtgate.parsers import load_results

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"
# the xunit plugin's schema as published now, and the revision before (xunit 2.3.1): see tests/schemas/README.md
JENKINS_SCHEMAS = [SCHEMAS / "junit-10.xsd", SCHEMAS / "junit-10-xunit-2.3.1.xsd"]

# A threshold file whose gates give every status on the recorded two-thread cyclictest run:
# t0 has max 1547 us with 3 samples in the -H 200 overflow, t1 max 145 us; neither counts missed periods.
THRESHOLDS = """\
platform: readers
measurements:
  app:
    sampler: {interval_us: 500, duration: 1s, priority: 80, threads: [{name: all, count: 2}]}
    gates:
      - {name: max, kind: max, limit_us: 1000}
      - {name: p99, kind: percentile, percentile: 99, limit_us: 100}
      - {name: few-over-150, kind: miss_rate, above_us: 150, rate: 0.1%}
      - {name: missed, kind: missed, max_count: 0}
      - {name: on-cpu3, kind: max, cpus: [3], limit_us: 1000}
"""


def rtgate(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rtgate", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def validate(path: Path, xmllint: str) -> None:
    for schema in JENKINS_SCHEMAS:
        r = subprocess.run([xmllint, "--noout", "--schema", str(schema), str(path)], capture_output=True, text=True)
        assert r.returncode == 0, f"{schema.name}: {r.stderr}"


def read_as_users_do(path: Path, duration: float | None = None) -> None:
    """What GitLab and Jenkins show of a JUnit file rtgate wrote: every failing, erroneous or skipped case has its
    reason and figures as a string (not a hash dump), no two cases share GitLab's key, each case's output and the
    suite's properties have the figures, and the times are a real duration (`duration`, when known, to 1 ms)."""
    cases = gitlab_view(path)
    assert cases
    keys = [c.key for c in cases]
    assert len(set(keys)) == len(keys), "GitLab would merge cases with the same suite, classname and name"
    figures = junit_figures(path)
    for c in cases:
        assert c.name and c.classname and c.suite, c
        if c.status == "success":
            continue
        assert isinstance(c.output, str), f"{c.name}: GitLab shows {c.output!r}"
        assert f"status: {figures[c.name]['status']}" in c.output, c.output
        assert f"kind: {figures[c.name]['kind']}" in c.output, c.output
    for suite in jenkins_view(path):
        assert suite.cases
        for case in suite.cases:
            assert f"{case.name}::status" in suite.properties
            assert case.stdout and "figures: status=" in case.stdout
            if case.status == "FAILED":
                assert case.error_details and "\n" not in case.error_details  # the one-line "Error Message"
                assert case.stacktrace and case.stacktrace.startswith(case.error_details.rstrip("\u2026"))
            if case.status == "SKIPPED":
                assert case.skipped_message and case.skipped_message.startswith("INCONCLUSIVE:")
        assert suite.duration == pytest.approx(sum(c.duration for c in suite.cases), abs=1e-3)
        if duration is not None:
            assert suite.duration == pytest.approx(duration, abs=1e-3)
    assert sum(c.execution_time for c in cases) == pytest.approx(sum(s.duration for s in jenkins_view(path)), abs=1e-3)


@pytest.fixture(scope="module")
def xmllint(tool) -> str:  # type: ignore[no-untyped-def]
    return tool("xmllint", "libxml2-utils")


@pytest.mark.parametrize("allow", [False, True])
def test_check_junit_validates_and_shows_figures_to_gitlab(tmp_path: Path, xmllint: str, allow: bool) -> None:
    spec = tmp_path / "t.yaml"
    spec.write_text(THRESHOLDS)
    junit = tmp_path / "out.xml"
    args = ["check", str(spec), str(RT_TESTS / "ct-new-t2-H200.json"), "--junit", str(junit)]
    r = rtgate(*args, *(["--allow-inconclusive"] if allow else []))
    assert r.returncode in (1, 3), r.stderr
    validate(junit, xmllint)
    xml = JUnitXml.fromfile(str(junit))
    assert "skipped" not in xml._elem.attrib
    cases = {c.name: c for suite in xml for c in suite}
    kinds = {type(c.result[0]) if c.result else None for c in cases.values()}
    # the fixture gives at least a FAIL (max; missed: 3..9 derived from its -l 3000) and an ERROR (no cpu 3)
    assert Failure in kinds and Error in kinds
    figures = junit_figures(junit)
    for name, case in cases.items():
        # Jenkins: the figures as testsuite properties; GitLab: a figures line in system-out, the reason as message.
        assert figures[name]["status"] in ("PASS", "FAIL", "ERROR", "INCONCLUSIVE"), name
        out = case.system_out or ""
        assert f"status={figures[name]['status']}" in out and f"kind={figures[name]['kind']}" in out, name
        for result in case.result:
            assert result.message, f"{name}: empty message"
            if isinstance(result, Skipped):
                assert allow and result.message.startswith("INCONCLUSIVE:")
    assert figures["max[t0]"]["value"] == "1547.0" and figures["max[t0]"]["limit"] == "1000.0"
    assert figures["max[t0]"]["limit_text"] == "1000 us" and figures["max[t0]"]["unit"] == "us"  # units beside figures
    assert "max 1547 us > 1000 us" in cases["max[t0]"].result[0].message
    # cyclictest records no wall time: the duration is the periods each thread went through times the interval
    run = load_results(str(RT_TESTS / "ct-new-t2-H200.json"))
    periods = max(t.cycles + (t.missed or 0) for t in run.threads)
    read_as_users_do(junit, periods * 500 / 1e6)
    shown = {c.name: c for c in gitlab_view(junit)}
    assert shown["max[t0]"].status == "failed" and "max 1547 us > 1000 us" in shown["max[t0]"].output
    assert shown["on-cpu3[all]"].status == "error" and "cpu" in shown["on-cpu3[all]"].output


@pytest.mark.skipif(not IS_ROOT, reason="needs root for SCHED_FIFO and mlockall")
def test_run_junit_carries_the_measurements_real_time(tmp_path: Path, xmllint: str) -> None:
    spec = tmp_path / "t.yaml"
    spec.write_text(THRESHOLDS.replace("count: 2", "count: 1"))
    junit = tmp_path / "out.xml"
    r = rtgate("run", str(spec), "--duration", "2s", "--junit", str(junit), "--output-dir", "res", cwd=tmp_path)
    assert r.returncode in (0, 1, 3), r.stderr
    validate(junit, xmllint)
    elapsed = json.loads((tmp_path / "res" / "app.json").read_text())["rtgate"]["elapsed_s"]
    assert elapsed >= 2.0
    read_as_users_do(junit, elapsed)
    root = ET.parse(junit).getroot()
    assert float(root.get("time", "")) == pytest.approx(elapsed, abs=1e-3)  # junit-10.xsd: three decimals at most


def test_pytest_plugin_junit_validates(pytester: pytest.Pytester, xmllint: str) -> None:
    (pytester.path / "board.yaml").write_text(THRESHOLDS)
    res = pytester.path / "results.json"
    res.write_text((RT_TESTS / "ct-new-t2-H200.json").read_text())
    r = pytester.runpytest("board.yaml", "--rtgate-results", str(res), "--junitxml=out.xml", "--rtgate-junit=rt.xml")
    assert r.ret == 1
    validate(pytester.path / "out.xml", xmllint)
    validate(pytester.path / "rt.xml", xmllint)
    read_as_users_do(pytester.path / "rt.xml")
    failed = [c for c in gitlab_view(pytester.path / "out.xml") if c.status != "success"]
    assert failed and all(isinstance(c.output, str) and c.output for c in failed)  # pytest's own: text too


def test_lava_results_junit_reads_as_users_do(tmp_path: Path, xmllint: str) -> None:
    from test_lava import LOG

    log = tmp_path / "run.log"
    log.write_text("".join(json.dumps(x) + "\n" for x in LOG))
    junit = tmp_path / "j.xml"
    thresholds = str(ROOT / "thresholds" / "two-thread-example.yaml")
    r = rtgate("lava", "results", str(log), "--thresholds", thresholds, "--junit", str(junit))
    assert r.returncode == 1, r.stdout + r.stderr
    validate(junit, xmllint)
    read_as_users_do(junit)
    assert {c.name: c.status for c in gitlab_view(junit)} == {
        "a-max[A-cpu0]": "failed",
        "b-over-100us[B-cpu1]": "success",
    }
