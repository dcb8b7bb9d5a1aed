"""The machine described as rteval does: each item against its source of truth, here and on a recorded board."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES
from rtgate.measure.environment import capture
from rtgate.measure.machine import describe

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
    assert m["irqs"]["affinity"] == {"24": {"cpus": [0, 1], "name": "arch_timer"},
                                     "25": {"cpus": [0, 1], "name": "eth0"}}
    cpus = m["topology"]["cpus"]
    assert sorted(cpus) == [0, 1, 2, 3] and m["topology"]["packages"] == 1
    assert [s["disabled"] for s in cpus[2]["idle_states"]] == [False, True]
    assert cpus[0]["idle_states"][1] == {"name": "cpu-pd-wait", "exit_latency_us": 500, "disabled": False}
    # Not in the recording: said so, never guessed.
    assert "smt" in m["unknown"] and m["topology"]["smt_control"] is None


def test_an_empty_tree_is_all_unknown(tmp_path: Path) -> None:
    m = describe(tmp_path)
    for item in ("clocksource", "cpuidle_driver", "timer_migration", "thp", "modules", "board", "topology"):
        assert item in m["unknown"], item
    assert m["clocksource"] is None and m["board"] == {}


def test_this_machine_matches_its_own_sources() -> None:
    m = describe()
    sysfs = Path("/sys/devices/system")
    assert m["clocksource"] == (sysfs / "clocksource/clocksource0/current_clocksource").read_text().strip()
    assert m["topology"]["online"] == list(range(os.cpu_count() or 0)) or m["topology"]["online"] is not None
    lscpu = shutil.which("lscpu")
    if lscpu:  # util-linux reads the same topology its own way
        rows = [r.split(",") for r in subprocess.run([lscpu, "-p=CPU,CORE,SOCKET"], capture_output=True, text=True,
                                                     check=True).stdout.splitlines() if not r.startswith("#")]
        for cpu, core, socket in rows:
            entry = m["topology"]["cpus"][int(cpu)]
            assert (entry["core"], entry["package"]) == (int(core), int(socket)), cpu
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if thp.exists():
        assert f"[{m['transparent_hugepage']}]" in thp.read_text()
    assert m["memory"]["total_kib"] == int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text())[1])
    assert m["architecture"] == os.uname().machine


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


def test_capture_carries_the_description() -> None:
    assert capture(BOARD)["machine"]["clocksource"] == "arch_sys_counter"
