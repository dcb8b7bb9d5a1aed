# SPDX-License-Identifier: GPL-2.0-or-later
"""The reference the engine's system record (sampler/sysinfo.c) is held to: the Python capture rtgate
made before the engine did. What the system looked like when it was measured: kernel, preemption
model, isolation, governors, RT throttling, virtualisation, load average. Reads a root directory, so
fixture copies of another system's /proc, /sys and /boot work the same as the live ones."""

from __future__ import annotations

import os
import re
import zlib
from pathlib import Path
from typing import Any

from reference_machine import describe, parse_cpulist


def _read(root: Path, rel: str) -> str | None:
    try:
        return (root / rel).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _kernel_config(root: Path, release: str | None) -> dict[str, str]:
    text = _read(root, f"boot/config-{release}") if release else None
    if text is None and (root / "proc/config.gz").is_file():
        try:
            # zlib reads the gzip stream itself (wbits 16 + 15): the gzip module costs ~1 ms to import
            text = zlib.decompress((root / "proc/config.gz").read_bytes(), 31).decode()
        except (OSError, zlib.error):
            text = None
    # Only the ~10 preemption lines of ~10,000: one search over the text, not a match per line.
    return dict(_PREEMPT_OPTION.findall(text or ""))


_PREEMPT_OPTION = re.compile(r"^(CONFIG_PREEMPT\w*)=(\w+)", re.M)


def preemption_model(root: Path, release: str | None, version: str | None, cmdline: str = "") -> tuple[str, str]:
    """(model, how we know): PREEMPT_RT, PREEMPT, VOLUNTARY, NONE or unknown."""
    if _read(root, "sys/kernel/realtime") == "1":
        return "PREEMPT_RT", "/sys/kernel/realtime"
    config = _kernel_config(root, release)
    if config.get("CONFIG_PREEMPT_RT") == "y":
        return "PREEMPT_RT", "kernel config"
    if version and "PREEMPT_RT" in version:
        return "PREEMPT_RT", "kernel version"
    dynamic = _read(root, "sys/kernel/debug/sched/preempt")  # e.g. "none voluntary (full)"
    if dynamic:
        m = re.search(r"\((\w+)\)", dynamic)
        if m:
            return {"full": "PREEMPT", "voluntary": "VOLUNTARY", "none": "NONE"}.get(
                m.group(1), m.group(1)
            ), "/sys/kernel/debug/sched/preempt"
    names = {"full": "PREEMPT", "voluntary": "VOLUNTARY", "none": "NONE"}
    boot = re.search(r"(?:^|\s)preempt=(none|voluntary|full)\b", cmdline)
    if boot and (config.get("CONFIG_PREEMPT_DYNAMIC") == "y" or "PREEMPT_DYNAMIC" in (version or "")):
        return names[boot.group(1)], "preempt= on the kernel command line (PREEMPT_DYNAMIC)"
    for key, model in (
        ("CONFIG_PREEMPT", "PREEMPT"),
        ("CONFIG_PREEMPT_VOLUNTARY", "VOLUNTARY"),
        ("CONFIG_PREEMPT_NONE", "NONE"),
    ):
        if config.get(key) == "y":
            is_dynamic = config.get("CONFIG_PREEMPT_DYNAMIC") == "y"
            return model, "kernel config" + (" (PREEMPT_DYNAMIC boot default)" if is_dynamic else "")
    if version and re.search(r"\bPREEMPT\b", version):
        return "PREEMPT", "kernel version (PREEMPT_DYNAMIC: mode unknown)" if "DYNAMIC" in version else "kernel version"
    return "unknown", "no source"


def _virtualisation(root: Path, cpuinfo: str) -> str | None:
    for rel in ("sys/hypervisor/type", "sys/class/dmi/id/sys_vendor", "sys/class/dmi/id/product_name"):
        text = _read(root, rel) or ""
        for vendor in ("QEMU", "KVM", "VMware", "Microsoft", "Xen", "innotek", "Amazon EC2", "Google"):
            if vendor.lower() in text.lower():
                return vendor
    if re.search(r"^flags\s*:.*\bhypervisor\b", cpuinfo, re.M):
        return "hypervisor (cpuinfo flag)"
    return _devicetree_virtualisation(root)


# An Arm guest has neither DMI nor a cpuinfo flag: its devicetree says so. QEMU's virt machine (KVM
# or TCG) is "linux,dummy-virt"; a KVM or Xen guest's tree has a /hypervisor node.
DT_ROOTS = ("proc/device-tree", "sys/firmware/devicetree/base")
QEMU_VIRT = "linux,dummy-virt"


def _devicetree_virtualisation(root: Path) -> str | None:
    for base in DT_ROOTS:
        try:
            raw = (root / base / "hypervisor" / "compatible").read_bytes()
        except OSError:
            raw = None
        if raw is not None:
            first = raw.decode("utf-8", "replace").split("\0")[0]
            return f"hypervisor (devicetree {first or 'hypervisor node'})"
        try:
            compatible = (root / base / "compatible").read_bytes().decode("utf-8", "replace").split("\0")
        except OSError:
            continue
        return f"QEMU (devicetree {QEMU_VIRT})" if QEMU_VIRT in compatible else None
    return None


def loadavg(root: Path = Path("/")) -> list[float] | None:
    """The 1, 5 and 15 minute load averages, as capture() records them: one small read, for after a
    measurement (capture() as a whole walks /proc and takes 0.1 s)."""
    fields = (_read(root, "proc/loadavg") or "").split()[:3]
    return [float(x) for x in fields] if fields else None


def capture(root: Path = Path("/")) -> dict[str, Any]:
    release = _read(root, "proc/sys/kernel/osrelease")
    version = _read(root, "proc/sys/kernel/version")
    cmdline = _read(root, "proc/cmdline") or ""
    model, source = preemption_model(root, release, version, cmdline)
    params = {}
    for word in cmdline.split():
        key, _, value = word.partition("=")
        if key in ("isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity"):
            params[key] = {"value": value, "cpus": parse_cpulist(value)}
    cpuinfo = _read(root, "proc/cpuinfo") or ""
    models = re.findall(r"^(?:model name|Model|Hardware)\s*:\s*(.+)$", cpuinfo, re.M)
    governors = {}
    cpu_dir = root / "sys/devices/system/cpu"
    for gov in sorted(cpu_dir.glob("cpu[0-9]*/cpufreq/scaling_governor")):
        governors[int(gov.parent.parent.name[3:])] = gov.read_text().strip()
    runtime = _read(root, "proc/sys/kernel/sched_rt_runtime_us")
    period = _read(root, "proc/sys/kernel/sched_rt_period_us")
    return {
        "kernel_release": release,
        "kernel_version": version,
        "preemption": model,
        "preemption_source": source,
        "cmdline": cmdline,
        "isolation": params,
        "cpu_model": models[0] if models else None,
        "cpu_count": len(re.findall(r"^processor\s*:", cpuinfo, re.M)) or None,
        "governors": governors,
        "sched_rt_runtime_us": int(runtime) if runtime and re.fullmatch(r"-?\d+", runtime) else None,
        "sched_rt_period_us": int(period) if period and period.isdigit() else None,
        "virtualisation": _virtualisation(root, cpuinfo),
        "loadavg": loadavg(root),
        "machine": describe(root),
        "root": str(root) if str(root) != "/" else None,
        "euid": os.geteuid() if str(root) == "/" else None,
    }
