# SPDX-License-Identifier: GPL-2.0-or-later
"""Measurement conditions in-process: environment capture of recorded trees and this machine, require:, no load."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import FIXTURES
from in_process import rtgate
from reference_environment import capture

SYSTEMS = FIXTURES / "systems"


def test_capture_an_rt_board() -> None:
    env = capture(SYSTEMS / "rt-arm64")
    assert env["preemption"] == "PREEMPT_RT" and env["preemption_source"] == "/sys/kernel/realtime"
    assert env["kernel_release"] == "6.6.52-rt43-imx8mp"
    assert env["isolation"]["isolcpus"]["cpus"] == [2, 3] and env["isolation"]["nohz_full"]["cpus"] == [2, 3]
    assert env["cpu_count"] == 4 and env["governors"] == {
        0: "performance",
        1: "performance",
        2: "performance",
        3: "performance",
    }
    assert env["sched_rt_runtime_us"] == -1 and env["virtualisation"] is None
    assert env["loadavg"] == [0.08, 0.03, 0.01]


def test_capture_a_non_rt_vm() -> None:
    env = capture(SYSTEMS / "nonrt-x86-vm")
    assert env["preemption"] == "VOLUNTARY" and "preempt=" in env["preemption_source"]
    assert env["cpu_model"] == "Intel Xeon Processor (Icelake)" and env["cpu_count"] == 2
    assert env["virtualisation"] == "QEMU" and env["sched_rt_runtime_us"] == 950000
    assert env["isolation"] == {}


def test_capture_this_machine() -> None:
    env = capture()
    assert env["kernel_release"] == os.uname().release
    assert env["preemption"] in ("PREEMPT_RT", "PREEMPT", "VOLUNTARY", "NONE", "unknown")
    assert env["cpu_count"] == os.cpu_count() and len(env["loadavg"]) == 3


def test_doctor_on_the_rt_board() -> None:
    r = rtgate("doctor", "--root", str(SYSTEMS / "rt-arm64"))
    assert r.returncode == 0, r.stdout
    assert "OK   kernel 6.6.52-rt43-imx8mp is PREEMPT_RT" in r.stdout
    assert "OK   RT throttling is off" in r.stdout and "OK   no hypervisor detected" in r.stdout
    assert "WARN" not in r.stdout


def test_doctor_on_the_vm_with_requirements(tmp_path: Path) -> None:
    spec = tmp_path / "t.yaml"
    spec.write_text(
        "platform: p\nrequire: {preempt_rt: true, governor: performance}\nmeasurements:\n"
        "  m:\n    sampler: {duration: 5s, threads: [{name: a, cpus: [1]}]}\n"
        "    require: {isolated_cpus: true}\n    gates: [{name: g, kind: max, limit_us: 80}]\n"
    )
    r = rtgate("doctor", str(spec), "--root", str(SYSTEMS / "nonrt-x86-vm"))
    assert r.returncode == 1, r.stdout
    lines = r.stdout.splitlines()
    # doctor's checks stay warnings; the requirements fail, with the words run refuses to measure under
    assert any(ln.startswith("WARN [m] kernel 6.1.0-26-amd64 is VOLUNTARY") for ln in lines)
    assert any(ln.startswith("WARN [m] measured cpu 1 not isolated") for ln in lines)
    assert any(ln.startswith("WARN [m] governor not performance on cpu0 (schedutil), cpu1 (schedutil)") for ln in lines)
    assert any(ln.startswith("FAIL [m] requires a PREEMPT_RT kernel; 6.1.0-26-amd64 is VOLUNTARY") for ln in lines)
    assert any(ln.startswith("FAIL [m] requires isolated CPUs; cpu 1 not in isolcpus") for ln in lines)
    assert any(ln.startswith("FAIL [m] requires governor performance; cpu1 is schedutil") for ln in lines)
    assert any(ln.startswith("WARN [m] RT throttling is active (sched_rt_runtime_us=950000") for ln in lines)
    assert any(ln.startswith("WARN [m] running under QEMU") for ln in lines)
    assert "fix: echo -1 > /proc/sys/kernel/sched_rt_runtime_us" in r.stdout


def test_unmet_requirement_is_an_error_not_a_measurement(tmp_path: Path) -> None:
    spec = tmp_path / "t.yaml"
    spec.write_text(
        "platform: p\nrequire: {bare_metal: true, preempt_rt: true}\nmeasurements:\n"
        "  m:\n    sampler: {duration: 5s, threads: [{name: a, count: 1}]}\n"
        "    gates: [{name: g, kind: max, limit_us: 1000000}]\n"
    )
    env = capture()
    if env["preemption"] == "PREEMPT_RT" and not env["virtualisation"]:
        pytest.skip("this machine meets the requirements")
    r = rtgate("run", str(spec), "--json", "v.json", cwd=tmp_path)
    assert r.returncode == 1
    doc = json.loads((tmp_path / "v.json").read_text())
    assert [v["status"] for v in doc["verdicts"]] == ["ERROR"]
    assert doc["verdicts"][0]["reason"].startswith("not measured: requires")
    assert not (tmp_path / "rtgate-results" / "m.json").exists()
