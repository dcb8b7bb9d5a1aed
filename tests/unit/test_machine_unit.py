# SPDX-License-Identifier: GPL-2.0-or-later
"""The machine described as rteval does, on recorded boards and this machine's /proc and /sys, in-process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import FIXTURES
from reference_environment import capture
from reference_machine import describe

BOARD = FIXTURES / "systems" / "rt-arm64"


def test_a_recorded_board() -> None:
    m = describe(BOARD)
    assert m["clocksource"] == "arch_sys_counter"
    assert m["cpuidle_driver"] == "psci_idle" and m["cpuidle_governor"] == "menu"
    assert m["isolated_cpus"] == [2, 3] and m["nohz_full_cpus"] == [2, 3]
    assert m["board"] == {"dt_compatible": ["fsl,imx8mp-evk", "fsl,imx8mp"], "dt_model": "NXP i.MX8MPlus EVK board"}
    assert m["timer_migration"] == "0" and m["transparent_hugepage"] == "never"
    assert m["tuned_profile"] == "realtime-variant"
    assert m["memory"]["total_kib"] == 6008292 and m["memory"]["numa_nodes"] == [0]
    assert m["modules"] == ["fsl_imx8_ddr_perf", "imx8mp_hsio_blk_ctrl"]
    assert m["irqs"]["affinity"] == {
        "24": {"cpus": [0, 1], "name": "arch_timer"},
        "25": {"cpus": [0, 1], "name": "eth0"},
    }
    cpus = m["topology"]["cpus"]
    assert sorted(cpus) == [0, 1, 2, 3] and m["topology"]["packages"] == 1
    assert [s["disabled"] for s in cpus[2]["idle_states"]] == [False, True]
    assert cpus[0]["idle_states"][1] == {"name": "cpu-pd-wait", "exit_latency_us": 500, "disabled": True}
    # Not in the recording: said so, never guessed.
    assert "smt" in m["unknown"] and m["topology"]["smt_control"] is None


def test_an_empty_tree_is_all_unknown(tmp_path: Path) -> None:
    m = describe(tmp_path)
    for item in ("clocksource", "cpuidle_driver", "timer_migration", "thp", "modules", "board", "topology"):
        assert item in m["unknown"], item
    assert m["clocksource"] is None and m["board"] == {}


@pytest.mark.skipif(os.geteuid() != 0, reason="reading other processes' descriptors and PM QoS needs root")
def test_pm_qos_holders_are_seen() -> None:
    fd = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
    try:
        os.write(fd, (7).to_bytes(4, "little"))
        m = describe()
        assert {"pid": os.getpid(), "comm": Path("/proc/self/comm").read_text().strip()} in m["pm_qos_holders"]
        # The effective value is the lowest request of all holders: ours (7 us) or a stricter one.
        assert m["pm_qos_latency_us"] is not None and m["pm_qos_latency_us"] <= 7
    finally:
        os.close(fd)


def test_rt_kernel_threads_of_a_recorded_board() -> None:
    threads = describe(BOARD)["rt_kernel_threads"]
    # the user task rt-app at FIFO 80 is no kernel thread: the sampler's competitors are checked elsewhere
    assert threads == [
        {"comm": "irq/25-eth0", "pid": 61, "policy": "FIFO", "priority": 50},
        {"comm": "ktimers/2", "pid": 15, "policy": "FIFO", "priority": 1},
    ]
    assert describe(FIXTURES / "systems" / "nonrt-x86-vm")["unknown"]["rt_kernel_threads"] == (
        "/proc: no process entries"
    )


def test_capture_carries_the_description() -> None:
    assert capture(BOARD)["machine"]["clocksource"] == "arch_sys_counter"


@pytest.mark.parametrize("value", ['"4"', "true", "0", "4.5"])
def test_cpu_count_must_be_a_count(tmp_path: Path, value: str) -> None:
    from rtgate.core.thresholds import load_thresholds
    from rtgate.errors import ThresholdsError

    spec = tmp_path / "t.yaml"
    spec.write_text(
        f"platform: p\nrequire: {{cpu_count: {value}}}\nmeasurements:\n  m:\n"
        "    sampler: {duration: 1s, threads: [{name: a, cpus: [0]}]}\n"
        "    gates: [{name: max, kind: max, limit_us: 10}]\n"
    )
    with pytest.raises(ThresholdsError) as e:
        load_thresholds(str(spec))
    assert "cpu_count" in str(e.value) and ":2" in str(e.value)


def _machine(**over: object) -> dict:
    base: dict = {
        "topology": {
            "cpus": {
                0: {
                    "siblings": [0, 2],
                    "idle_states": [
                        {"name": "C1", "exit_latency_us": 2, "disabled": False},
                        {"name": "C6", "exit_latency_us": 133, "disabled": False},
                    ],
                }
            },
            "smt_active": True,
        },
        "pm_qos_latency_us": 2000000000,
        "pm_qos_holders": [{"pid": 9, "comm": "pulseaudio"}],
        "irqbalance_running": True,
        "timer_migration": "1",
        "transparent_hugepage": "always",
        "clocksource": "hpet",
    }
    base.update(over)
    return base


def test_doctor_names_each_spoiler_with_its_fix() -> None:
    from rtgate.measure.conditions import machine_checks

    checks = {c.what.split(":")[0].split(" (")[0]: c for c in machine_checks(_machine(), [0], {})}
    text = "\n".join(c.what for c in checks.values())
    assert "exit latency up to 133 us are enabled on cpu 0" in text
    assert "pulseaudio (9)" in text and "SMT is active: cpu 2 share cores" in text
    assert "irqbalance is running" in text and "timer_migration is on" in text
    assert "transparent hugepages are 'always'" in text and "clocksource is hpet" in text
    assert all(c.status == "warn" and c.fix for c in checks.values())


def test_doctor_is_quiet_on_a_tuned_machine() -> None:
    from rtgate.measure.conditions import machine_checks

    tuned = _machine(
        pm_qos_latency_us=0,
        pm_qos_holders=[],
        irqbalance_running=False,
        timer_migration="0",
        transparent_hugepage="never",
        clocksource="tsc",
        topology={"cpus": {0: {"siblings": [0], "idle_states": []}}, "smt_active": False},
    )
    assert [c.status for c in machine_checks(tuned, [0], {})] == ["ok"]


def test_isolated_but_ticking_cpus_are_flagged() -> None:
    from rtgate.measure.conditions import machine_checks

    isolation = {"isolcpus": {"cpus": [2, 3]}, "nohz_full": {"cpus": [2, 3]}}
    text = [c.what for c in machine_checks({}, [2, 3], isolation)]
    assert text == ["measured cpu 2,3 isolated but not in rcu_nocbs: the tick and RCU callbacks still run there"]


def test_the_kernel_config_is_read_from_proc_config_gz(tmp_path: Path) -> None:
    """/proc/config.gz (no /boot/config-<release>) is unpacked by zlib: the preemption lines among the rest,
    a later line winning as the kernel's own parser has it; a damaged file is no config, never an error."""
    import gzip

    from reference_environment import preemption_model

    (tmp_path / "proc").mkdir()
    lines = ["# CONFIG_PREEMPT_NONE is not set", "CONFIG_HZ=250", "CONFIG_PREEMPT_VOLUNTARY=y"]
    lines += [f"CONFIG_X{i}=y" for i in range(5000)] + ["CONFIG_PREEMPT_DYNAMIC=y", "CONFIG_PREEMPT_VOLUNTARY=n"]
    lines += ["CONFIG_PREEMPT=y", " CONFIG_PREEMPT_RT=y", "xCONFIG_PREEMPT_RT=y"]  # neither starts a line
    data = gzip.compress(("\n".join(lines) + "\n").encode())
    (tmp_path / "proc/config.gz").write_bytes(data)
    assert preemption_model(tmp_path, "6.1.0", None) == ("PREEMPT", "kernel config (PREEMPT_DYNAMIC boot default)")
    (tmp_path / "proc/config.gz").write_bytes(data[: len(data) // 2])  # cut short
    assert preemption_model(tmp_path, "6.1.0", None) == ("unknown", "no source")
    (tmp_path / "proc/config.gz").write_bytes(b"CONFIG_PREEMPT_RT=y\n")  # not gzip
    assert preemption_model(tmp_path, "6.1.0", None) == ("unknown", "no source")
