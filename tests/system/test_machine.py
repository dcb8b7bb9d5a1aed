# SPDX-License-Identifier: GPL-2.0-or-later
"""The machine described as rteval does: each item against its source of truth, here and on a recorded board.
The tests of this topic that start no process: tests/unit/test_machine_unit.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from reference_machine import describe


def test_this_machine_matches_its_own_sources() -> None:
    m = describe()
    sysfs = Path("/sys/devices/system")
    assert m["clocksource"] == (sysfs / "clocksource/clocksource0/current_clocksource").read_text().strip()
    assert m["topology"]["online"] == list(range(os.cpu_count() or 0)) or m["topology"]["online"] is not None
    lscpu = shutil.which("lscpu")
    if lscpu:  # util-linux reads the same topology its own way
        rows = [
            r.split(",")
            for r in subprocess.run(
                [lscpu, "-p=CPU,CORE,SOCKET"], capture_output=True, text=True, check=True
            ).stdout.splitlines()
            if not r.startswith("#")
        ]
        for cpu, core, socket in rows:
            entry = m["topology"]["cpus"][int(cpu)]
            assert (entry["core"], entry["package"]) == (int(core), int(socket)), cpu
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if thp.exists():
        assert f"[{m['transparent_hugepage']}]" in thp.read_text()
    assert m["memory"]["total_kib"] == int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text())[1])
    assert m["architecture"] == os.uname().machine


def test_rt_kernel_threads_are_those_ps_lists() -> None:
    """procps reads the same /proc its own way: every kernel thread (kthreadd's children) under FIFO, RR or
    DEADLINE, with its priority."""
    ps = subprocess.run(
        ["ps", "-eo", "pid=,ppid=,cls=,rtprio=,comm="], capture_output=True, text=True, check=True, timeout=30
    ).stdout
    policies = {"FF": "FIFO", "RR": "RR", "DLN": "DEADLINE"}
    seen = set()
    for line in ps.splitlines():
        pid, ppid, cls, prio, comm = line.split(None, 4)
        if cls in policies and (ppid == "2" or pid == "2"):
            seen.add((int(pid), comm.strip(), policies[cls], int(prio) if prio.isdigit() else 0))
    listed = {(t["pid"], t["comm"], t["policy"], t["priority"]) for t in describe()["rt_kernel_threads"]}
    assert listed == seen
    assert [t["priority"] for t in describe()["rt_kernel_threads"]] == sorted(
        (t[3] for t in listed), reverse=True
    )  # highest first, as they preempt


# ---------------------------------------------------------------- board files that know their board


def test_a_board_file_refuses_another_machine(tmp_path: Path) -> None:
    """The shipped i.MX8MP file on this x86 VM: not measured, and the message names both machines."""
    import subprocess as sp
    import sys

    from conftest import ROOT

    r = sp.run(
        [
            sys.executable,
            "-m",
            "rtgate",
            "run",
            str(ROOT / "thresholds/boards/imx8mp-evk.yaml"),
            "--duration",
            "1s",
            "--json",
            "v.json",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    assert not (tmp_path / "rtgate-results" / "idle.json").exists()  # nothing was measured
    import json

    verdicts = json.loads((tmp_path / "v.json").read_text())["verdicts"]
    assert verdicts and all(v["status"] == "ERROR" for v in verdicts)
    reason = verdicts[0]["reason"]
    assert "this file is for aarch64, compatible fsl,imx8mp-evk, 4 CPUs; this machine is " in reason
    assert f"this machine is {os.uname().machine}" in reason
