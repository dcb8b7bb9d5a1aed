# SPDX-License-Identifier: GPL-2.0-or-later
"""How busy the machine was around a measurement: the load average before and after, and the CPU
steal (time a hypervisor gave this VM's CPUs to someone else) over the measurement, from /proc/stat.
A FAIL measured on a busy machine says more about the machine's neighbours than about the kernel:
`rtgate run` prints these figures beside the verdict and records them with the results."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

# Above these, a machine is busy enough to spoil a latency figure: more runnable tasks than half
# its CPUs, or more than a few percent of CPU time stolen by the hypervisor.
BUSY_LOAD_PER_CPU = 0.5
BUSY_STEAL_PERCENT = 3.0


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def snapshot(root: Path = Path("/")) -> dict[str, Any]:
    """Load average and the aggregate /proc/stat CPU times (ticks) now."""
    out: dict[str, Any] = {"time": time.time(), "loadavg": None, "steal_ticks": None, "total_ticks": None}
    try:
        out["loadavg"] = [float(x) for x in (root / "proc/loadavg").read_text().split()[:3]]
    except (OSError, ValueError):
        pass
    try:
        for line in (root / "proc/stat").read_text().splitlines():
            if line.startswith("cpu "):
                # user nice system idle iowait irq softirq steal guest guest_nice; guest time is
                # already counted in user and nice, so it is left out of the total.
                ticks = [int(x) for x in line.split()[1:]]
                out["total_ticks"] = sum(ticks[:8])
                out["steal_ticks"] = ticks[7] if len(ticks) > 7 else 0
                break
    except (OSError, ValueError):
        pass
    return out


def machine_load(before: dict[str, Any], after: dict[str, Any], cpus: int | None = None) -> dict[str, Any]:
    """The record kept with the results: figures, and why the machine counts as busy (empty: quiet)."""
    cpus = cpus or _cpu_count()
    steal = None
    if before.get("total_ticks") is not None and after.get("total_ticks") is not None:
        total = after["total_ticks"] - before["total_ticks"]
        if total > 0:
            steal = round(100.0 * (after["steal_ticks"] - before["steal_ticks"]) / total, 2)
    record: dict[str, Any] = {
        "cpus": cpus,
        "loadavg_before": before.get("loadavg"),
        "loadavg_after": after.get("loadavg"),
        "steal_percent": steal,
        "busy": [],
    }
    record["busy"] = busy_reasons(record)
    return record


def busy_reasons(record: dict[str, Any]) -> list[str]:
    """Why a machine_load record shows a busy machine: load average above half the CPUs before the
    measurement (after it, the 1-minute average holds rtgate's own load and sampler), or steal."""
    reasons = []
    cpus = record.get("cpus") or 1
    before = record.get("loadavg_before")
    if before and before[0] > BUSY_LOAD_PER_CPU * cpus:
        reasons.append(
            f"load average {before[0]:g} before measuring, on {cpus} CPU{'s' if cpus != 1 else ''} "
            f"(busy above {BUSY_LOAD_PER_CPU * cpus:g})"
        )
    steal = record.get("steal_percent")
    if steal is not None and steal > BUSY_STEAL_PERCENT:
        reasons.append(f"{steal:g} % of CPU time stolen by the hypervisor (busy above {BUSY_STEAL_PERCENT:g} %)")
    return reasons


def describe(record: dict[str, Any]) -> str:
    """'load average 15.3 before, 16 after (2 CPUs); CPU steal 0.4 %'."""

    def la(x: Any) -> str:
        return f"{x[0]:g}" if x else "unknown"

    steal = record.get("steal_percent")
    return (
        f"load average {la(record.get('loadavg_before'))} before, {la(record.get('loadavg_after'))} after "
        f"({record.get('cpus')} CPUs); CPU steal {'unknown' if steal is None else f'{steal:g} %'} "
        "during the measurement"
    )
