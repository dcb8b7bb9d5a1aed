# SPDX-License-Identifier: GPL-2.0-or-later
"""doctor's checks and require: against the recorded system trees and this machine's /proc and /sys."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from in_process import rtgate as _rtgate
from preflight_specs import two_measurements
from reference_environment import capture
from rtgate.core.thread_plan import plan_here
from rtgate.core.thresholds import load_thresholds
from rtgate.errors import ThresholdsError
from rtgate.measure.conditions import CHECK_IDS, doctor

SYSTEMS = FIXTURES / "systems"


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


def test_strict_in_threshold_files(tmp_path: Path) -> None:
    tf = load_thresholds(two_measurements(tmp_path, top="strict: true", b="strict: false"))
    assert (tf.measurements["a"].strict, tf.measurements["b"].strict) == (True, False)
    tf = load_thresholds(two_measurements(tmp_path, b="strict: true"))
    assert (tf.measurements["a"].strict, tf.measurements["b"].strict) == (False, True)
    with pytest.raises(ThresholdsError) as e:
        load_thresholds(two_measurements(tmp_path, a="strict: yes please"))
    assert str(e.value) == f"{tmp_path / 't.yaml'}:4: measurements.a.strict: must be true or false, not 'yes please'"
    r = _rtgate("validate", str(two_measurements(tmp_path, top="strict: 1")))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "strict: must be true or false" in r.stderr


def test_the_rt_scan_reads_only_tasks_that_may_be_real_time() -> None:
    """scan's one-system-call filter: this (SCHED_OTHER) process is skipped; a task it cannot ask about
    (ended, or never was) is read and judged as before, never silently dropped."""
    from reference_machine import may_be_rt

    assert os.sched_getscheduler(0) == os.SCHED_OTHER
    assert not may_be_rt(os.getpid())
    assert may_be_rt(2**22 + 1)  # above pid_max's ceiling: no such task


def test_a_thread_pinned_to_an_isolated_cpu_is_measured_there(tmp_path: Path) -> None:
    """On a board booted isolcpus=N the kernel leaves CPU N out of rtgate's own affinity, yet that is
    where the file pins its thread: an isolated CPU counts as available, one neither allowed nor
    isolated does not (this machine's affinity, plus what its record says the kernel isolates)."""
    from rtgate.measure.preflight import pinned_lacking

    spec = tmp_path / "t.yaml"
    spec.write_text(
        "platform: p\nmeasurements:\n  m:\n    sampler: {duration: 2s, threads: [{name: a, cpus: [61]}]}\n"
        "    gates: [{name: max, kind: max, limit_us: 100}]\n"
    )
    m = load_thresholds(spec).measurements["m"]
    plan = plan_here(m)
    env = capture()
    lacking = [c for c in pinned_lacking(plan, env, live=True) if c.check == "cpus"]
    assert lacking and "pinned cpu 61 not available here" in lacking[0].what
    env["machine"] = {**env["machine"], "isolated_cpus": [61]}
    assert [c for c in pinned_lacking(plan, env, live=True) if c.check == "cpus"] == []
