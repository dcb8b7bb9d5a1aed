# SPDX-License-Identifier: GPL-2.0-or-later
"""require: as the measurement engine judges it (rtgate-sampler --check-only): on the recorded system
trees (--sysroot), on a tree that lacks what a requirement needs, and on this machine. doctor and every
measurement's preflight take these answers; Python has no second implementation of them."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES
from engine_require import engine_unmet
from preflight_specs import VOLATILE, two_measurements
from reference_environment import capture
from rtgate.core.thread_plan import plan_here
from rtgate.core.thresholds import load_thresholds
from rtgate.measure.conditions import doctor
from rtgate.measure.preflight import preflight, system_checks

SYSTEMS = FIXTURES / "systems"
BOARD = SYSTEMS / "rt-arm64"


def test_requirements_this_machine_cannot_answer_are_not_met(tmp_path: Path) -> None:
    env = capture(tmp_path)  # an empty tree: no cpufreq, no /proc/sys, no kernel config
    reasons = engine_unmet({"governor": "performance", "rt_throttling_off": True, "preempt_rt": True}, tmp_path)
    assert len(reasons) == 3 and all("cannot be judged here" in r for r in reasons), reasons
    checks = {c.check: c for c in doctor(env, {"governor": "performance", "rt_throttling_off": True}, None, False)}
    assert checks["governor"].status == "fail" and "cannot be judged here" in checks["governor"].what
    assert checks["rt_throttling"].status == "fail" and "cannot be judged here" in checks["rt_throttling"].what
    # without the requirement, an unreadable setting is a warning, never "ok"
    assert {c.check: c.status for c in doctor(env, {}, None, False)}["rt_throttling"] == "warn"


def test_requirements_on_the_recorded_trees() -> None:
    require = {"preempt_rt": True, "rt_throttling_off": True, "governor": "performance"}
    assert engine_unmet(require, SYSTEMS / "rt-arm64", [2, 3]) == []
    assert [r.split(";")[0] for r in engine_unmet(require, SYSTEMS / "nonrt-x86-vm", [1])] == [
        "requires a PREEMPT_RT kernel",
        "requires governor performance",
        "requires RT throttling off",
    ]
    assert not any("cannot be judged" in r for r in engine_unmet(require, SYSTEMS / "nonrt-x86-vm", [1]))


def test_requirements_on_this_machine() -> None:
    """This machine's real /proc and /sys: a requirement is met only where a value says so."""
    env = capture()
    governor = engine_unmet({"governor": "performance"})
    if not env["governors"]:
        assert governor == ["requires governor performance; cannot be judged here: no cpufreq governor on this machine"]
    else:
        assert (governor == []) == all(g == "performance" for g in env["governors"].values())
    throttling = engine_unmet({"rt_throttling_off": True})
    assert (throttling == []) == (env["sched_rt_runtime_us"] == -1)
    assert (engine_unmet({"preempt_rt": True}) == []) == (env["preemption"] == "PREEMPT_RT")


def test_preflight_of_a_measurement_is_doctors(tmp_path: Path, sampler: str) -> None:
    """The measurement's preflight and doctor's checks are one computation: same checks, same order."""
    m = load_thresholds(two_measurements(tmp_path, top="require: {governor: performance}")).measurements["a"]
    plan = plan_here(m)
    checked = preflight(sampler, m, plan)
    again = system_checks(checked.system, m.require, plan, live=True, rt_tasks=checked.rt_before)
    ok = [c.check for c in checked.checks if c.check not in VOLATILE]
    assert ok == [c.check for c in again if c.check not in VOLATILE]
    assert checked.record() == [c.as_dict() for c in checked.checks if c.status != "ok"]
    env = checked.system
    if not env["governors"]:
        assert checked.unmet == [
            "requires governor performance; cannot be judged here: no cpufreq governor on this machine"
        ]


def test_requirements_met_and_unmet() -> None:
    rt = capture(SYSTEMS / "rt-arm64")
    want = {
        "preempt_rt": True,
        "isolated_cpus": True,
        "governor": "performance",
        "bare_metal": True,
        "rt_throttling_off": True,
    }
    assert engine_unmet(want, SYSTEMS / "rt-arm64", [2, 3]) == []
    isolated = "requires isolated CPUs; cpu 1 not in isolcpus ([2, 3])"
    assert engine_unmet(want, SYSTEMS / "rt-arm64", [1, 2]) == [isolated]
    assert len(engine_unmet(want, SYSTEMS / "nonrt-x86-vm", [0])) == 5
    assert [c.status for c in doctor(rt, want, [2, 3], live=False)] == ["ok"] * 6


def test_an_arm64_guest_is_no_bare_metal() -> None:
    """QEMU's arm64 virt machine (what LAVA's qemu type boots for arm64) has no DMI and no cpuinfo flag:
    its devicetree says it is a guest, so require: bare_metal is unmet and doctor warns, as on x86."""
    guest = capture(SYSTEMS / "qemu-virt-arm64")
    assert guest["virtualisation"] == "QEMU (devicetree linux,dummy-virt)"
    why = "requires bare metal; running under QEMU (devicetree linux,dummy-virt)"
    assert engine_unmet({"bare_metal": True}, SYSTEMS / "qemu-virt-arm64", [0]) == [why]
    assert capture(SYSTEMS / "rt-arm64")["virtualisation"] is None  # a board's tree: no guest


def test_the_recorded_board_meets_its_own_file() -> None:
    from engine_require import engine_unmet

    board = {"preempt_rt": True, "compatible": "fsl,imx8mp-evk", "cpu_count": 4}
    assert engine_unmet(board, BOARD, [2, 3]) == []
    other = engine_unmet({"compatible": "rockchip,rk3568-evb", "cpu_count": 8}, BOARD, [2, 3])
    assert other == [
        "this file is for compatible rockchip,rk3568-evb, 8 CPUs; "
        "this machine is compatible fsl,imx8mp-evk, fsl,imx8mp, 4 CPUs"
    ]
    # A fixture tree does not say which architecture it ran on: unknown, so never a match.
    assert "an unknown architecture" in " ".join(engine_unmet({"architecture": "aarch64"}, BOARD, [2, 3]))


def test_a_governor_that_cannot_be_judged_is_not_met(tmp_path: Path) -> None:
    from engine_require import engine_unmet

    assert engine_unmet({"governor": "performance"}, tmp_path) == [  # no cpufreq at all
        "requires governor performance; cannot be judged here: no cpufreq governor on this machine"
    ]
