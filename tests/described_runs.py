# SPDX-License-Identifier: GPL-2.0-or-later
"""A saved results folder with a known machine, load and preflight record, and this machine's items read
straight from their sources: what the described-report tests of both tiers compare."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from conftest import ROOT, RT_TESTS

DEFAULT = str(ROOT / "thresholds" / "default.yaml")


LOAD = {
    "kind": "cpu",
    "cpus": [1],
    "cpu_percent": 93.5,
    "level": {"unit": "% CPU", "min": 25.0, "reached": 93.5},
    "problem": None,
}


PREFLIGHT = [
    {"status": "warn", "check": "smt", "what": "SMT is on: a sibling thread shares the core", "fix": "nosmt"},
    {"status": "fail", "check": "rt-throttling", "what": "RT throttling is on", "fix": "sysctl -w x=-1"},
]


def saved_folder(tmp_path: Path, environment: dict[str, Any]) -> Path:
    """A results folder as rtgate run leaves it: the results and <measurement>.environment.json beside them."""
    folder = tmp_path / "rtgate-results"
    folder.mkdir()
    shutil.copy(RT_TESTS / "ct-new-S-h300.json", folder / "smp.json")
    (folder / "smp.environment.json").write_text(
        json.dumps({"results": "smp.json", "state": "done", **environment}, default=str)
    )
    return folder / "smp.json"


def read_sys(rel: str) -> str:
    return Path(rel).read_text().strip()


def machine_truth() -> dict[str, str]:
    """This machine's items read straight from their sources, as the reports must show them."""
    cpuinfo = Path("/proc/cpuinfo").read_text()
    clock = "/sys/devices/system/clocksource/clocksource0/"
    return {
        "kernel": read_sys("/proc/sys/kernel/osrelease"),
        "architecture": os.uname().machine,
        "cpu_count": str(len(re.findall(r"^processor\s*:", cpuinfo, re.M))),
        "clocksource": f"{read_sys(clock + 'current_clocksource')} (available: "
        + ", ".join(read_sys(clock + "available_clocksource").split())
        + ")",
        "isolated_cpus": read_sys("/sys/devices/system/cpu/isolated") or "none",
    }
