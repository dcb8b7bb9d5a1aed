# SPDX-License-Identifier: GPL-2.0-or-later
"""The drift guard: was the host the same when the two releases were measured?

A busier or quieter host moves latency tails as much as a kernel change does, so each run keeps
a small fingerprint of its environment (read from what environment.py captured, or from the
results' own sysinfo), and a comparison is refused when the fingerprints of the two releases
differ beyond tolerance: a different command line, governor, hypervisor or CPU, or a median
load or CPU steal that moved too far."""

from __future__ import annotations

import re
from dataclasses import dataclass
from statistics import median
from typing import Any

from rtgate.history.numbers import plain

# What names the machine: two releases measured on different machines are never compared.
MACHINE = ("board", "cpu_model", "cpu_count", "virtualisation")
# The host's set-up, compared as sets of values: any difference is drift.
CATEGORICAL = ("cmdline", "governors", "clocksource", "load_kind")
LOAD_FLOOR = 1.0  # per CPU: below it a load change is judged against one runnable task per CPU


@dataclass
class Tolerance:
    load_per_cpu: float = 0.1  # relative change of the median 1-minute load per CPU (see differences)
    steal_pct: float = 2.0  # CPU steal, percentage points, difference of the medians


def _steal(system: dict[str, Any]) -> float | None:
    """CPU steal in percent, under whichever name the environment capture gives it."""
    for key, value in system.items():
        if "steal" in key and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def fingerprint(environment: dict[str, Any]) -> dict[str, Any]:
    system = environment.get("system") or {}
    sysinfo = environment.get("sysinfo") or {}
    fp: dict[str, Any] = {"kernel_release": system.get("kernel_release") or sysinfo.get("release")}
    cmdline = system.get("cmdline")
    if isinstance(cmdline, str):
        # The image and initrd paths name the kernel: they differ between releases by design.
        fp["cmdline"] = " ".join(w for w in cmdline.split() if not re.match(r"(BOOT_IMAGE|initrd)=", w))
    governors = system.get("governors")
    if isinstance(governors, dict) and governors:
        fp["governors"] = ",".join(sorted({str(g) for g in governors.values()}))
    for key in ("virtualisation", "cpu_model", "cpu_count", "preemption"):
        if system.get(key) is not None:
            fp[key] = system[key]
    found = system.get("machine")
    machine: dict[str, Any] = found if isinstance(found, dict) else {}
    board: dict[str, Any] = machine["board"] if isinstance(machine.get("board"), dict) else {}
    identity = board.get("dt_compatible") or [board.get(k) for k in ("dmi_sys_vendor", "dmi_product_name")]
    if any(identity):
        fp["board"] = " ".join(str(x) for x in identity if x)
    if machine.get("clocksource"):
        fp["clocksource"] = machine["clocksource"]
    load = environment.get("load")
    if isinstance(load, dict) and load.get("kind"):
        fp["load_kind"] = load["kind"]
        level = load.get("level")
        if isinstance(level, dict) and isinstance(level.get("reached"), (int, float)):
            fp["load_level"] = f"{level['reached']:g} {level.get('unit')}"  # recorded, not compared
    cpus = system.get("cpu_count") or 1
    loads = [x for x in (system.get("loadavg"), environment.get("loadavg_after")) if isinstance(x, list) and x]
    if loads:  # the 1-minute load before and after the run, per CPU
        fp["load_per_cpu"] = round(sum(float(x[0]) for x in loads) / len(loads) / cpus, 3)
    steal = _steal(system)
    if steal is not None:
        fp["steal_pct"] = steal
    return {k: v for k, v in fp.items() if v is not None}


def _sets(base: list[dict[str, Any]], new: list[dict[str, Any]], keys: tuple[str, ...]) -> list[str]:
    out = []
    for key in keys:
        b = {str(f[key]) for f in base if key in f}
        n = {str(f[key]) for f in new if key in f}
        if b and n and b != n:
            out.append(f"{key}: {' | '.join(sorted(b))} (base) vs {' | '.join(sorted(n))} (new)")
    return out


def machine_differences(base: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[str]:
    """What says the two groups of runs were measured on different machines, one line each."""
    return _sets(base, new, MACHINE)


def unknown_environment(fingerprints: list[dict[str, Any]]) -> int:
    """Runs whose results carry no environment (other tools' output): drift cannot be seen in them."""
    return sum(1 for f in fingerprints if not set(f) - {"kernel_release"})


def differences(
    base: list[dict[str, Any]], new: list[dict[str, Any]], tolerance: Tolerance, numeric: bool = True
) -> list[str]:
    """What differs between the two groups of runs beyond tolerance, one line each.

    A field missing from either group is not compared. `numeric=False` skips load and steal: runs
    interleaved in pairs share the host's state by design. Load is compared relative to itself:
    on a host already at load 7 one more busy task is a small absolute change and a large
    change of what the sampler competes with; below LOAD_FLOOR per CPU the floor is the scale."""
    out = _sets(base, new, CATEGORICAL)
    if not numeric:
        return out
    b_load = [float(f["load_per_cpu"]) for f in base if "load_per_cpu" in f]
    n_load = [float(f["load_per_cpu"]) for f in new if "load_per_cpu" in f]
    if b_load and n_load:
        b, n = median(b_load), median(n_load)
        if abs(n - b) / max(b, n, LOAD_FLOOR) > tolerance.load_per_cpu:
            out.append(
                f"load_per_cpu: median {plain(b)} (base) vs {plain(n)} (new), a change of "
                f"{abs(n - b) / max(b, n, LOAD_FLOOR):.0%} beyond tolerance {tolerance.load_per_cpu:.0%}"
            )
    b_steal = [float(f["steal_pct"]) for f in base if "steal_pct" in f]
    n_steal = [float(f["steal_pct"]) for f in new if "steal_pct" in f]
    if b_steal and n_steal and abs(median(n_steal) - median(b_steal)) > tolerance.steal_pct:
        out.append(
            f"steal_pct: median {plain(median(b_steal))} (base) vs {plain(median(n_steal))} (new), "
            f"tolerance {plain(tolerance.steal_pct)} points"
        )
    return out
