# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate's JUnit as its real readers take it: Jenkins' xunit schema, GitLab's fields, real times.

Jenkins' xunit plugin validates every file against junit-10.xsd (tests/schemas/) and skips one that fails, so
validation here uses that schema with libxml2's xmllint. GitLab reads only name, classname, file, time,
failure/error/skipped (with message) and system-out: the figures must be there too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped

from conftest import IS_ROOT, ROOT, RT_TESTS, junit_figures

SCHEMA = Path(__file__).resolve().parents[1] / "schemas" / "junit-10.xsd"

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
    r = subprocess.run([xmllint, "--noout", "--schema", str(SCHEMA), str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


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
    suite = next(iter(JUnitXml.fromfile(str(junit))))
    assert suite.time == pytest.approx(elapsed, abs=1e-3)  # junitparser writes ms
    assert sum(c.time for c in suite) == pytest.approx(elapsed, abs=5e-3)  # GitLab sums its cases


def test_pytest_plugin_junit_validates(pytester: pytest.Pytester, xmllint: str) -> None:
    (pytester.path / "board.yaml").write_text(THRESHOLDS)
    res = pytester.path / "results.json"
    res.write_text((RT_TESTS / "ct-new-t2-H200.json").read_text())
    r = pytester.runpytest("board.yaml", "--rtgate-results", str(res), "--junitxml=out.xml")
    assert r.ret == 1
    validate(pytester.path / "out.xml", xmllint)
