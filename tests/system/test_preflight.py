# SPDX-License-Identifier: GPL-2.0-or-later
"""doctor and run agree: every doctor check runs before each measurement of `rtgate run` and the pytest
plugin, its warnings printed and recorded; strict turns them into ERROR; a requirement this machine
cannot answer is never met. Against this machine's real /proc and /sys and the recorded system trees."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, IS_ROOT, ROOT
from rtgate.core.thread_plan import plan_here
from rtgate.core.thresholds import load_thresholds
from rtgate.errors import ThresholdsError
from rtgate.measure.conditions import CHECK_IDS, doctor, unmet
from rtgate.measure.environment import capture
from rtgate.measure.preflight import preflight, system_checks

SYSTEMS = FIXTURES / "systems"
needs_root = pytest.mark.skipif(not IS_ROOT or (os.cpu_count() or 1) < 2, reason="needs root and two CPUs")
# Checks whose answer moves on a shared machine between two looks: the load average, other people's RT tasks.
VOLATILE = {"busy", "competing_rt", "expected_rt"}

SPEC = """\
platform: p
{top}measurements:
  a:
{strict_a}    sampler: {{duration: 1s, interval_us: 1000, priority: 80, threads: [{{name: t, cpus: [1]}}]}}
    gates: [{{name: g, kind: max, limit_us: 1000000}}]
  b:
{strict_b}    sampler: {{duration: 1s, interval_us: 1000, priority: 80, threads: [{{name: t, cpus: [1]}}]}}
    gates: [{{name: g, kind: max, limit_us: 1000000}}]
"""


def _spec(tmp_path: Path, top: str = "", a: str = "", b: str = "") -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(
        SPEC.format(
            top=f"{top}\n" if top else "",
            strict_a=f"    {a}\n" if a else "",
            strict_b=f"    {b}\n" if b else "",
        )
    )
    return path


def _rtgate(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rtgate", *args], capture_output=True, text=True, timeout=timeout)


def _warnings_here(tmp_path: Path) -> list[Any]:
    """What preflight warns of on this machine for measurement a (which a strict run turns into ERROR)."""
    m = load_thresholds(_spec(tmp_path)).measurements["a"]
    return [c for c in system_checks(capture(), m.require, plan_here(m), live=True) if c.status != "ok"]


# ---------------------------------------------------------------- every check has an id


@pytest.mark.parametrize(
    "root",
    [Path("/"), SYSTEMS / "rt-arm64", SYSTEMS / "nonrt-x86-vm"],
    ids=["this-machine", "rt-arm64", "nonrt-x86-vm"],
)
def test_every_check_has_a_documented_id(root: Path) -> None:
    env = capture(root)
    require = {"preempt_rt": True, "governor": "performance", "rt_throttling_off": True, "isolated_cpus": True}
    readme = (ROOT / "doc" / "conditions.rst").read_text()
    for measured in (None, [1]):
        for req in ({}, require):
            checks = doctor(env, req, measured, live=root == Path("/"))
            assert checks
            for c in checks:
                assert c.check in CHECK_IDS, c
                if c.status != "ok":
                    assert f"``{c.check}``" in readme, f"doc/conditions.rst does not list the check id {c.check}"
                    assert c.fix, c


# ---------------------------------------------------------------- requirements that cannot be judged


def test_requirements_this_machine_cannot_answer_are_not_met(tmp_path: Path) -> None:
    env = capture(tmp_path)  # an empty tree: no cpufreq, no /proc/sys, no kernel config
    reasons = unmet({"governor": "performance", "rt_throttling_off": True, "preempt_rt": True}, env, None)
    assert len(reasons) == 3 and all("cannot be judged here" in r for r in reasons), reasons
    checks = {c.check: c for c in doctor(env, {"governor": "performance", "rt_throttling_off": True}, None, False)}
    assert checks["governor"].status == "fail" and "cannot be judged here" in checks["governor"].what
    assert checks["rt_throttling"].status == "fail" and "cannot be judged here" in checks["rt_throttling"].what
    # without the requirement, an unreadable setting is a warning, never "ok"
    assert {c.check: c.status for c in doctor(env, {}, None, False)}["rt_throttling"] == "warn"


def test_requirements_on_the_recorded_trees() -> None:
    rt, vm = capture(SYSTEMS / "rt-arm64"), capture(SYSTEMS / "nonrt-x86-vm")
    require = {"preempt_rt": True, "rt_throttling_off": True, "governor": "performance"}
    assert unmet(require, rt, [2, 3]) == []
    assert [r.split(";")[0] for r in unmet(require, vm, [1])] == [
        "requires a PREEMPT_RT kernel",
        "requires governor performance",
        "requires RT throttling off",
    ]
    assert not any("cannot be judged" in r for r in unmet(require, vm, [1]))


def test_requirements_on_this_machine() -> None:
    """This machine's real /proc and /sys: a requirement is met only where a value says so."""
    env = capture()
    governor = unmet({"governor": "performance"}, env, None)
    if not env["governors"]:
        assert governor == ["requires governor performance; cannot be judged here: no cpufreq governor on this machine"]
    else:
        assert (governor == []) == all(g == "performance" for g in env["governors"].values())
    throttling = unmet({"rt_throttling_off": True}, env, None)
    assert (throttling == []) == (env["sched_rt_runtime_us"] == -1)
    assert (unmet({"preempt_rt": True}, env, None) == []) == (env["preemption"] == "PREEMPT_RT")


def test_doctor_fails_a_governor_it_cannot_judge(tmp_path: Path) -> None:
    spec = tmp_path / "t.yaml"
    spec.write_text(
        "platform: p\nrequire: {governor: performance}\nmeasurements:\n  m:\n"
        "    sampler: {duration: 1s, threads: [{name: t, cpus: [0]}]}\n"
        "    gates: [{name: g, kind: max, limit_us: 100}]\n"
    )
    r = _rtgate("doctor", str(spec), "--root", str(SYSTEMS / "rt-arm64"))
    assert r.returncode == 0, r.stdout  # its governors are all performance
    r = _rtgate("doctor", str(spec), "--root", str(tmp_path))
    assert r.returncode == 1
    assert "FAIL [m] requires governor performance; cannot be judged here: no cpufreq governor" in r.stdout


# ---------------------------------------------------------------- the strict setting in threshold files


def test_strict_in_threshold_files(tmp_path: Path) -> None:
    tf = load_thresholds(_spec(tmp_path, top="strict: true", b="strict: false"))
    assert (tf.measurements["a"].strict, tf.measurements["b"].strict) == (True, False)
    tf = load_thresholds(_spec(tmp_path, b="strict: true"))
    assert (tf.measurements["a"].strict, tf.measurements["b"].strict) == (False, True)
    with pytest.raises(ThresholdsError) as e:
        load_thresholds(_spec(tmp_path, a="strict: yes please"))
    assert str(e.value) == f"{tmp_path / 't.yaml'}:4: measurements.a.strict: must be true or false, not 'yes please'"
    r = _rtgate("validate", str(_spec(tmp_path, top="strict: 1")))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "strict: must be true or false" in r.stderr


# ---------------------------------------------------------------- live: run makes doctor's checks


def _doctor_warnings(stdout: str) -> set[tuple[str, str]]:
    """Doctor's findings for measurement a (one line per finding, naming the measurements it concerns)."""
    found = re.finditer(r"^(WARN|FAIL) \[([^\]]*)\] (.*)$", stdout, re.M)
    return {(m.group(1), m.group(3)) for m in found if "a" in m.group(2).split(", ")}


@needs_root
def test_run_prints_and_records_what_doctor_warns_of(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
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
    spec = _spec(tmp_path, top="strict: true", b="strict: false")
    r = _rtgate("run", str(spec), "--output-dir", str(out), "--json", str(tmp_path / "v.json"))
    assert r.returncode == 1, r.stderr
    verdicts = {v["measurement"]: v for v in json.loads((tmp_path / "v.json").read_text())["verdicts"]}
    assert verdicts["a"]["status"] == "ERROR" and verdicts["a"]["reason"].startswith("not measured: strict: ")
    assert not (out / "a.json").exists()  # not measured at all
    assert "strict" not in verdicts["b"]["reason"] and (out / "b.json").exists()
    # --strict on the command line: every measurement
    out2 = tmp_path / "out2"
    r = _rtgate("run", str(_spec(tmp_path)), "--strict", "--output-dir", str(out2), "--json", str(tmp_path / "s.json"))
    assert r.returncode == 1
    doc = json.loads((tmp_path / "s.json").read_text())
    assert [v["status"] for v in doc["verdicts"]] == ["ERROR", "ERROR"]
    assert all(v["reason"].startswith("not measured: strict: ") for v in doc["verdicts"])
    assert not out2.joinpath("a.json").exists() and not out2.joinpath("b.json").exists()


def test_preflight_of_a_measurement_is_doctors(tmp_path: Path) -> None:
    """The measurement's preflight and doctor's checks are one computation: same checks, same order."""
    m = load_thresholds(_spec(tmp_path, top="require: {governor: performance}")).measurements["a"]
    plan = plan_here(m)
    checked = preflight(m, plan)
    again = system_checks(checked.system, m.require, plan, live=True, rt_tasks=checked.rt_before)
    ok = [c.check for c in checked.checks if c.check not in VOLATILE]
    assert ok == [c.check for c in again if c.check not in VOLATILE]
    assert checked.record() == [c.as_dict() for c in checked.checks if c.status != "ok"]
    env = checked.system
    if not env["governors"]:
        assert checked.unmet == [
            "requires governor performance; cannot be judged here: no cpufreq governor on this machine"
        ]


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
@pytest.mark.parametrize("cpu", ["0", "1000"], ids=["cpu-here", "cpu-missing"])  # below the loader's 1024 CPUs
@pytest.mark.parametrize("name", sorted(REQUIRES))
def test_doctor_fails_exactly_where_run_refuses(tmp_path: Path, name: str, cpu: str, strict: bool) -> None:
    """For every requirement (and a pinned CPU this machine lacks, and strict), doctor's failed check ids
    are the ones that keep run from measuring, with the same words. In-process: doctor's checks, then
    the measurement (its sampler a path that does not exist: a measurement not refused ends ERROR there)."""
    from rtgate.commands.doctor import measurement_checks
    from rtgate.measure.orchestrate import measure_and_judge

    path = tmp_path / "t.yaml"
    path.write_text(REQUIRED.format(require=REQUIRES[name], cpu=cpu, extra="    strict: true\n" if strict else ""))
    m = load_thresholds(path).measurements["m"]
    doctor_fails = [c for c in measurement_checks(m, capture(), live=True, strict=False) if c.status == "fail"]
    outcome = measure_and_judge(str(tmp_path / "no-sampler"), m, tmp_path / "out")
    assert outcome.run is None
    assert [c.check for c in doctor_fails] == [c.check for c in outcome.refused]
    if "strict" not in [c.check for c in outcome.refused]:  # strict words name the load average: it moves
        assert [c.what for c in doctor_fails] == [c.what for c in outcome.refused]
    if cpu == "1000":
        assert "cpus" in [c.check for c in outcome.refused]
    if name not in ("nothing", "dmi_product", "compatible") or outcome.refused:
        assert all(v.status.value == "ERROR" for v in outcome.verdicts)
