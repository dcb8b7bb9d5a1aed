# SPDX-License-Identifier: GPL-2.0-or-later
"""The kernel command line a job asks for: a measurement's `require: isolated_cpus` needs its
CPUs isolated by the kernel (isolcpus, nohz_full, rcu_nocbs), which only the boot can do.

The words are merged into the job's own kernel arguments (--kernel-args): a key the user already
gives is kept when it covers the CPUs, and refused when it does not, so a job never carries two
values for one key (the kernel takes the last, silently)."""

from __future__ import annotations

from collections.abc import Iterable

from rtgate.core.thread_plan import plan_anywhere
from rtgate.core.thresholds import Measurement
from rtgate.errors import RtgateError

ISOLATION_KEYS = ("isolcpus", "nohz_full", "rcu_nocbs")
# isolcpus= may start with flags before its CPU list (Documentation/admin-guide/kernel-parameters.txt).
_ISOLCPUS_FLAGS = ("nohz", "domain", "managed_irq")


def cpulist(cpus: Iterable[int]) -> str:
    """The kernel's cpu-list form: 1,3-5."""
    out: list[str] = []
    ordered = sorted(set(cpus))
    start = prev = ordered[0]
    for c in [*ordered[1:], None]:
        if c is not None and c == prev + 1:
            prev = c
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if c is not None:
            start = prev = c
    return ",".join(out)


def parse_cpulist(text: str) -> set[int] | None:
    """The CPUs of a cpu-list (flags of isolcpus= skipped); None when it is not one."""
    cpus: set[int] = set()
    for item in text.split(","):
        if item in _ISOLCPUS_FLAGS:
            continue
        lo, _, hi = item.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            return None
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus or None


def isolated_cpus(measurements: Iterable[Measurement]) -> dict[int, str]:
    """Per CPU the kernel must isolate, the first measurement that requires it (require.isolated_cpus:
    the CPUs its threads are pinned to)."""
    out: dict[int, str] = {}
    for m in measurements:
        if not m.require.get("isolated_cpus"):
            continue
        pinned = plan_anywhere(m).measured_cpus
        if m.backend != "sampler" or any(g.cpus == "all" for g in m.sampler.threads) or not pinned:
            raise RtgateError(
                f"measurement {m.name}: require.isolated_cpus needs its threads pinned to CPUs "
                "(sampler.threads: cpus: [N, ...]) for the job to isolate them on the kernel command line"
            )
        for c in pinned:
            out.setdefault(c, m.name)
    return out


def isolation_words(cpus: dict[int, str]) -> list[str]:
    return [f"{key}={cpulist(cpus)}" for key in ISOLATION_KEYS] if cpus else []


def merge_kernel_args(given: str, cpus: dict[int, str]) -> str:
    """`given` with isolcpus=, nohz_full= and rcu_nocbs= for `cpus` added; a key `given` already has
    is kept if it covers them, else refused (naming --kernel-args, the key and the measurement)."""
    words = given.split()
    for key in ISOLATION_KEYS if cpus else ():
        mine = [w for w in words if w.startswith(key + "=")]
        if not mine:
            words.append(f"{key}={cpulist(cpus)}")
            continue
        have = parse_cpulist(mine[-1].split("=", 1)[1]) or set()
        missing = sorted(set(cpus) - have)
        if missing:
            raise RtgateError(
                f"--kernel-args: {mine[-1]} leaves out cpu {cpulist(missing)}, which measurement "
                f"{cpus[missing[0]]} requires isolated (require.isolated_cpus): add it, or drop {key}= "
                "and rtgate adds it"
            )
    return " ".join(words)
