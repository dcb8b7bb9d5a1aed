# SPDX-License-Identifier: GPL-2.0-or-later
"""The reference the engine's machine record (sampler/sysinfo.c) is held to, as rtgate captured it in
Python before the engine did.

The machine, described as rteval's report describes it: clocksource, CPU topology and SMT, idle states, PM QoS
holders, IRQ placement, timer migration, transparent hugepages, memory and NUMA, kernel modules, tuning services,
real-time kernel threads and their priorities, isolation as the kernel applies it, and the board's identity.

Every item is read from its source of truth under a root directory (``/`` or a fixture copy of another system's
/proc and /sys). An item that cannot be read is never guessed: it goes into ``unknown`` with the reason.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

# Services that change latency figures when they run: they move IRQs, pick idle states or governors, or retune.
TUNING_SERVICES = (
    "irqbalance",
    "tuned",
    "power-profiles-daemon",
    "thermald",
    "rtkit-daemon",
    "cpupower",
    "stalld",
    "tlp",
)


class _Reader:
    """Reads files under root; records why an item is unknown instead of raising."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.base = str(root).rstrip("/")  # plain strings: ~300 small files are read before every measurement
        self.unknown: dict[str, str] = {}

    def text(self, rel: str, item: str | None = None) -> str | None:
        try:
            with open(f"{self.base}/{rel}", encoding="utf-8", errors="replace") as f:
                return f.read().strip()
        except OSError as e:
            if item:
                self.unknown[item] = f"/{rel}: {e.strerror or e.__class__.__name__}"
            return None

    def bytes(self, rel: str, item: str) -> bytes | None:
        try:
            with open(f"{self.base}/{rel}", "rb") as f:
                return f.read()
        except OSError as e:
            self.unknown[item] = f"/{rel}: {e.strerror or e.__class__.__name__}"
            return None


def parse_cpulist(text: str) -> list[int]:
    """'0-2,5' -> [0, 1, 2, 5]; isolcpus flags such as 'managed_irq,domain,' are skipped."""
    cpus: list[int] = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d+)(?:-(\d+))?\s*", part)
        if m:
            cpus.extend(range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1))
    return cpus


def _cpulist(text: str | None) -> list[int] | None:
    return None if text is None else parse_cpulist(text)


def _selected(text: str | None) -> str | None:
    """'always [madvise] never' -> 'madvise'."""
    if text is None:
        return None
    m = re.search(r"\[([^\]]+)\]", text)
    return m.group(1) if m else text


def _topology(r: _Reader) -> dict[str, Any]:
    cpu_dir = r.root / "sys/devices/system/cpu"
    cpus: dict[int, dict[str, Any]] = {}
    for d in sorted(cpu_dir.glob("cpu[0-9]*"), key=lambda p: int(p.name[3:])):
        rel = str(d.relative_to(r.root))
        entry: dict[str, Any] = {}
        for key, name in (("core", "core_id"), ("package", "physical_package_id")):
            value = r.text(f"{rel}/topology/{name}")
            entry[key] = int(value) if value and value.lstrip("-").isdigit() else None
        entry["siblings"] = _cpulist(r.text(f"{rel}/topology/thread_siblings_list"))
        states = []
        for s in sorted((d / "cpuidle").glob("state[0-9]*"), key=lambda p: int(p.name[5:])):
            srel = str(s.relative_to(r.root))
            latency = r.text(f"{srel}/latency")
            states.append(
                {
                    "name": r.text(f"{srel}/name"),
                    "exit_latency_us": int(latency) if latency and latency.isdigit() else None,
                    "disabled": r.text(f"{srel}/disable") == "1",
                }
            )
        entry["idle_states"] = states
        cpus[int(d.name[3:])] = entry
    if not cpus:
        r.unknown["topology"] = "/sys/devices/system/cpu: no cpuN directories"
    smt = r.text("sys/devices/system/cpu/smt/control", "smt")
    siblings = [c["siblings"] for c in cpus.values() if c["siblings"]]
    return {
        "online": _cpulist(r.text("sys/devices/system/cpu/online", "online_cpus")),
        "smt_control": smt,
        "smt_active": (r.text("sys/devices/system/cpu/smt/active") == "1")
        if smt is not None
        else (any(len(s) > 1 for s in siblings) if siblings else None),
        "packages": len({c["package"] for c in cpus.values() if c["package"] is not None}) or None,
        "cpus": cpus,
    }


def _processes(r: _Reader) -> list[tuple[int, str, str]]:
    """(pid, comm, its /proc folder) of every process."""
    found: list[tuple[int, str, str]] = []
    try:
        names = os.listdir(f"{r.base}/proc")
    except OSError:
        return found
    for name in names:
        if name and name[0] in "0123456789":  # what glob("[0-9]*") listed
            comm = r.text(f"proc/{name}/comm")
            if comm is not None:
                found.append((int(name), comm, f"{r.base}/proc/{name}"))
    return found


def _pm_qos_holders(r: _Reader, procs: list[tuple[int, str, str]]) -> list[dict[str, Any]] | None:
    """Processes holding /dev/cpu_dma_latency open: each one's request caps how deep every CPU may idle."""
    if str(r.root) != "/":
        return None  # a fixture tree has no live file descriptors
    if os.geteuid() != 0:
        r.unknown["pm_qos_holders"] = "reading other processes' file descriptors needs root"
        return None
    holders = []
    for pid, comm, d in procs:
        fd_dir = f"{d}/fd"  # plain strings: every descriptor of every process, before each measurement
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"{fd_dir}/{fd}") == "/dev/cpu_dma_latency":
                    holders.append({"pid": pid, "comm": comm})
                    break
            except OSError:
                continue
    return holders


PF_KTHREAD = 0x00200000  # a /proc/<pid>/stat flag: a kernel thread
RT_POLICIES = {1: "FIFO", 2: "RR", 6: "DEADLINE"}  # sched_setscheduler's numbers
_SCHED_RESET_ON_FORK = 0x40000000


def may_be_rt(tid: int) -> bool:
    """One system call, not a /proc/<pid>/stat read (the kernel formats 52 fields for that), on the live
    machine: a task that is not real-time now is skipped; one that is, or has ended, is read and judged
    from its stat."""
    try:
        return (os.sched_getscheduler(tid) & ~_SCHED_RESET_ON_FORK) in RT_POLICIES
    except OSError:
        return True


def _rt_kernel_threads(r: _Reader, procs: list[tuple[int, str, str]]) -> list[dict[str, Any]] | None:
    """Kernel threads under a real-time policy, with their priorities: they preempt any sampler below them, so
    rteval lists them. Read from /proc/<pid>/stat (flags, rt_priority, policy); a kernel thread is one thread."""
    if not procs:
        r.unknown["rt_kernel_threads"] = "/proc: no process entries"
        return None
    live = r.base == ""
    found = []
    for pid, comm, d in procs:
        if live and not may_be_rt(pid):
            continue
        try:
            with open(f"{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            flags, priority, policy = int(fields[6]), int(fields[37]), int(fields[38])
        except (OSError, ValueError, IndexError):
            continue  # gone since the listing, or not a stat line
        if flags & PF_KTHREAD and policy in RT_POLICIES:
            found.append({"comm": comm, "pid": pid, "policy": RT_POLICIES[policy], "priority": priority})
    return sorted(found, key=lambda t: (-t["priority"], t["comm"], t["pid"]))


def _irqs(r: _Reader) -> dict[str, Any]:
    names: dict[str, str] = {}
    for line in (r.text("proc/interrupts", "irqs") or "").splitlines()[1:]:
        m = re.match(r"\s*(\d+):((?:\s+\d+)+)\s+(.*)$", line)
        if m:
            names[m.group(1)] = " ".join(m.group(3).split()[-1:])
    affinity: dict[str, Any] = {}
    for d in sorted((r.root / "proc/irq").glob("[0-9]*"), key=lambda p: int(p.name)):
        cpus = _cpulist(r.text(f"proc/irq/{d.name}/smp_affinity_list"))
        if cpus is not None:
            affinity[d.name] = {"cpus": cpus, "name": names.get(d.name)}
    return {"default_affinity": r.text("proc/irq/default_smp_affinity"), "affinity": affinity}


def _board(r: _Reader) -> dict[str, Any]:
    board: dict[str, Any] = {}
    for key in ("sys_vendor", "product_name", "board_name", "bios_version"):
        value = r.text(f"sys/class/dmi/id/{key}")
        if value:
            board[f"dmi_{key}"] = value
    compatible = None
    for rel in ("proc/device-tree/compatible", "sys/firmware/devicetree/base/compatible"):
        try:
            raw = (r.root / rel).read_bytes()
        except OSError:
            continue
        compatible = [c for c in raw.decode("utf-8", "replace").split("\0") if c]
        model = (r.root / rel).with_name("model")
        if model.is_file():
            board["dt_model"] = model.read_bytes().decode("utf-8", "replace").rstrip("\0")
        break
    if compatible is not None:
        board["dt_compatible"] = compatible
    if not board:
        r.unknown["board"] = "neither DMI (/sys/class/dmi/id) nor a devicetree (/proc/device-tree) is present"
    return board


def _meminfo(r: _Reader) -> dict[str, Any]:
    fields: dict[str, int] = {}
    for line in (r.text("proc/meminfo", "memory") or "").splitlines():
        m = re.match(r"(\w+):\s+(\d+)\s*kB", line)
        if m and m.group(1) in ("MemTotal", "MemAvailable", "HugePages_Total"):
            fields[m.group(1)] = int(m.group(2))
    nodes = sorted(int(d.name[4:]) for d in (r.root / "sys/devices/system/node").glob("node[0-9]*"))
    return {
        "total_kib": fields.get("MemTotal"),
        "available_kib": fields.get("MemAvailable"),
        "numa_nodes": nodes or None,
    }


def describe(root: Path = Path("/")) -> dict[str, Any]:
    r = _Reader(root)
    procs = _processes(r)
    comms = {comm for _, comm, _ in procs}
    modules = r.text("proc/modules", "modules")
    tuned = r.text("etc/tuned/active_profile")
    qos = r.bytes("dev/cpu_dma_latency", "pm_qos_value") if str(root) == "/" and os.geteuid() == 0 else None
    description: dict[str, Any] = {
        "clocksource": r.text("sys/devices/system/clocksource/clocksource0/current_clocksource", "clocksource"),
        "clocksources_available": (
            r.text("sys/devices/system/clocksource/clocksource0/available_clocksource") or ""
        ).split()
        or None,
        "topology": _topology(r),
        "cpuidle_driver": r.text("sys/devices/system/cpu/cpuidle/current_driver", "cpuidle_driver"),
        "cpuidle_governor": r.text("sys/devices/system/cpu/cpuidle/current_governor_ro")
        or r.text("sys/devices/system/cpu/cpuidle/current_governor"),
        "pm_qos_latency_us": int.from_bytes(qos[:4], "little", signed=True) if qos and len(qos) >= 4 else None,
        "pm_qos_holders": _pm_qos_holders(r, procs),
        "irqbalance_running": "irqbalance" in comms if procs else None,
        "irqs": _irqs(r),
        "timer_migration": r.text("proc/sys/kernel/timer_migration", "timer_migration"),
        "transparent_hugepage": _selected(r.text("sys/kernel/mm/transparent_hugepage/enabled", "thp")),
        "transparent_hugepage_defrag": _selected(r.text("sys/kernel/mm/transparent_hugepage/defrag")),
        "memory": _meminfo(r),
        "modules": sorted(line.split()[0] for line in modules.splitlines() if line.strip()) if modules else None,
        "services": sorted(s for s in TUNING_SERVICES if s in comms),
        "rt_kernel_threads": _rt_kernel_threads(r, procs),
        "tuned_profile": tuned,
        "isolated_cpus": _cpulist(r.text("sys/devices/system/cpu/isolated", "isolated_cpus")),
        "nohz_full_cpus": _cpulist(r.text("sys/devices/system/cpu/nohz_full")),
        "board": _board(r),
        "architecture": os.uname().machine if str(root) == "/" else None,
    }
    if description["nohz_full_cpus"] is None:
        r.unknown.setdefault("nohz_full_cpus", "/sys/devices/system/cpu/nohz_full: absent (CONFIG_NO_HZ_FULL off)")
    description["unknown"] = r.unknown
    return description
