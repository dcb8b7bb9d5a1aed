# SPDX-License-Identifier: GPL-2.0-or-later
"""doctor and run agree: every doctor check runs before each measurement of `rtgate run` and the pytest
plugin, its warnings printed and recorded; strict turns them into ERROR; a requirement this machine
cannot answer is never met. Against this machine's real /proc and /sys and the recorded system trees.
The tests of this topic that start no process: tests/unit/test_preflight_unit.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import IS_ROOT
from preflight_specs import SPEC, VOLATILE, two_measurements
from reference_environment import capture
from rtgate.core.thread_plan import plan_here
from rtgate.core.thresholds import load_thresholds
from rtgate.measure.conditions import CHECK_IDS
from rtgate.measure.preflight import preflight
from rtgate.measure.runner import find_sampler

needs_root = pytest.mark.skipif(not IS_ROOT or (os.cpu_count() or 1) < 2, reason="needs root and two CPUs")
# Checks whose answer moves on a shared machine between two looks: the load average, other people's RT tasks.


def _rtgate(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rtgate", *args], capture_output=True, text=True, timeout=timeout)


def _warnings_here(tmp_path: Path) -> list[Any]:
    """What preflight warns of on this machine for measurement a (which a strict run turns into ERROR)."""
    m = load_thresholds(two_measurements(tmp_path)).measurements["a"]
    return [c for c in preflight(find_sampler(), m, plan_here(m)).checks if c.status != "ok"]


# ---------------------------------------------------------------- live: run makes doctor's checks


def _doctor_warnings(stdout: str) -> set[tuple[str, str]]:
    """Doctor's findings for measurement a (one line per finding, naming the measurements it concerns)."""
    found = re.finditer(r"^(WARN|FAIL) \[([^\]]*)\] (.*)$", stdout, re.M)
    return {(m.group(1), m.group(3)) for m in found if "a" in m.group(2).split(", ")}


@needs_root
def test_run_prints_and_records_what_doctor_warns_of(tmp_path: Path) -> None:
    spec = two_measurements(tmp_path)
    doc = _rtgate("doctor", str(spec))
    out = tmp_path / "out"
    r = _rtgate("run", str(spec), "--measurement", "a", "--output-dir", str(out), "--json", str(tmp_path / "v.json"))
    assert r.returncode in (0, 1, 3), r.stderr
    results = json.loads((out / "a.json").read_text())
    record = results["rtgate_run"]["preflight"]
    environment = json.loads((out / "a.environment.json").read_text())
    assert environment["preflight"] == record
    for w in record:
        assert set(w) == {"status", "check", "what", "fix"} and w["status"] in ("warn", "fail"), w
        assert w["check"] in CHECK_IDS and w["fix"]
        # printed before measuring, one line with its fix
        assert f"rtgate: warning: a: {w['what']} (fix: {w['fix']})" in r.stderr.splitlines()
    printed = r.stderr.split("rtgate: warning: a:")
    assert len(printed) - 1 == len(record)
    # the same checks as doctor's, bar those whose answer moves between two looks
    recorded = {(w["status"].upper(), w["what"]) for w in record if w["check"] not in VOLATILE}
    said = {x for x in _doctor_warnings(doc.stdout) if not x[1].startswith(("the machine is busy", "real-time task"))}
    assert recorded == said, (doc.stdout, record)
    env = capture()
    if env["preemption"] != "PREEMPT_RT":  # this CI VM: a non-RT kernel is always worth a warning
        assert "preempt_rt" in {w["check"] for w in record}


@needs_root
def test_strict_measures_nothing_and_says_why(tmp_path: Path) -> None:
    if not _warnings_here(tmp_path):
        pytest.skip("this machine gives no preflight warning (a tuned real-time board)")
    out = tmp_path / "out"
    spec = two_measurements(tmp_path, top="strict: true", b="strict: false")
    r = _rtgate("run", str(spec), "--output-dir", str(out), "--json", str(tmp_path / "v.json"))
    assert r.returncode == 1, r.stderr
    verdicts = {v["measurement"]: v for v in json.loads((tmp_path / "v.json").read_text())["verdicts"]}
    assert verdicts["a"]["status"] == "ERROR" and verdicts["a"]["reason"].startswith("not measured: strict: ")
    assert not (out / "a.json").exists()  # not measured at all
    assert "strict" not in verdicts["b"]["reason"] and (out / "b.json").exists()
    # --strict on the command line: every measurement
    out2 = tmp_path / "out2"
    r = _rtgate(
        "run",
        str(two_measurements(tmp_path)),
        "--strict",
        "--output-dir",
        str(out2),
        "--json",
        str(tmp_path / "s.json"),
    )
    assert r.returncode == 1
    doc = json.loads((tmp_path / "s.json").read_text())
    assert [v["status"] for v in doc["verdicts"]] == ["ERROR", "ERROR"]
    assert all(v["reason"].startswith("not measured: strict: ") for v in doc["verdicts"])
    assert not out2.joinpath("a.json").exists() and not out2.joinpath("b.json").exists()


# ---------------------------------------------------------------- the pytest plugin


@needs_root
def test_plugin_strict_and_unmet_requirements_are_error_verdicts(pytester: pytest.Pytester, tmp_path: Path) -> None:
    if not _warnings_here(tmp_path):
        pytest.skip("this machine gives no preflight warning (a tuned real-time board)")
    pytester.path.joinpath("t.yaml").write_text(
        SPEC.format(top="", strict_a="    strict: true\n", strict_b="    require: {cpu_count: 4096}\n")
    )
    r = pytester.runpytest("t.yaml", "--rtgate-json", "v.json")
    r.assert_outcomes(failed=2)
    out = r.stdout.str()
    assert "ERROR: not measured: strict: " in out
    assert "ERROR: not measured: this file is for 4096 CPUs" in out
    doc = json.loads((pytester.path / "v.json").read_text())
    assert sorted((v["measurement"], v["status"]) for v in doc["verdicts"]) == [("a", "ERROR"), ("b", "ERROR")]
    assert not (pytester.path / "rtgate-results" / "p" / "a.json").exists()
    # --rtgate-strict: the same for a measurement whose file does not ask
    pytester.path.joinpath("u.yaml").write_text(SPEC.format(top="", strict_a="", strict_b=""))
    r = pytester.runpytest("u.yaml", "--rtgate-strict", "--rtgate-json", "u.json")
    r.assert_outcomes(failed=2)
    doc = json.loads((pytester.path / "u.json").read_text())
    assert [v["status"] for v in doc["verdicts"]] == ["ERROR", "ERROR"]
    assert all(v["reason"].startswith("not measured: strict: ") for v in doc["verdicts"])


REQUIRED = """\
platform: p
measurements:
  m:
{extra}    require: {require}
    sampler: {{duration: 1s, interval_us: 1000, priority: 80, threads: [{{name: t, cpus: [{cpu}]}}]}}
    gates: [{{name: g, kind: max, limit_us: 1000000}}]
"""
HERE = capture()
REQUIRES = {
    "architecture": "{architecture: not-this-arch}",
    "cpu_count": f"{{cpu_count: {(HERE.get('cpu_count') or 1) + 2}}}",
    "compatible": "{compatible: 'vendor,not-this-board'}",
    "dmi_product": "{dmi_product: Not This Product}",
    "preempt_rt": "{preempt_rt: true}",
    "bare_metal": "{bare_metal: true}",
    "rt_throttling_off": "{rt_throttling_off: true}",
    "isolated_cpus": "{isolated_cpus: true}",
    "governor": "{governor: not-a-governor}",
    "nothing": "{}",
}


@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
@pytest.mark.parametrize("cpu", ["0", "1000"], ids=["cpu-here", "cpu-missing"])
@pytest.mark.parametrize("name", sorted(REQUIRES))
def test_doctor_fails_exactly_where_run_refuses(
    tmp_path: Path, sampler: str, name: str, cpu: str, strict: bool
) -> None:
    """For every requirement (and a pinned CPU this machine lacks, and strict), doctor's failed check ids
    are the ones that keep run from measuring, with the same words. In-process: doctor's checks, then
    the measurement (one not refused measures its second)."""
    from rtgate.commands.doctor import measurement_checks
    from rtgate.measure.orchestrate import measure_and_judge

    path = tmp_path / "t.yaml"
    path.write_text(REQUIRED.format(require=REQUIRES[name], cpu=cpu, extra="    strict: true\n" if strict else ""))
    m = load_thresholds(path).measurements["m"]
    doctor_fails = [c for c in measurement_checks(sampler, m, "/", strict=False)[1] if c.status == "fail"]
    outcome = measure_and_judge(sampler, m, tmp_path / "out")
    assert [c.check for c in doctor_fails] == [c.check for c in outcome.refused]
    if "strict" not in [c.check for c in outcome.refused]:  # strict words name the load average: it moves
        assert [c.what for c in doctor_fails] == [c.what for c in outcome.refused]
    if cpu == "1000":
        assert "cpus" in [c.check for c in outcome.refused]
    if name not in ("nothing", "dmi_product", "compatible") or outcome.refused:
        assert all(v.status.value == "ERROR" for v in outcome.verdicts)
