# SPDX-License-Identifier: GPL-2.0-or-later
"""The reference the engine's real-time task scan (sampler/rtscan.c) is held to: the Python scan that
rtgate ran before the engine did (tests compare the two on this machine and on fixture trees)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from reference_machine import PF_KTHREAD, RT_POLICIES, may_be_rt, parse_cpulist
from rtgate.measure.rt_tasks import RtTask

# Kernel threads every (RT) kernel runs per CPU or per interrupt: a latency figure includes them
# by design, so they are not noise. Matched on kernel threads only (a user task can take any name).
EXPECTED = [
    (re.compile(r"migration/\d+"), "per-CPU stopper: runs only to move tasks and for stop_machine"),
    (re.compile(r"(watchdog/\d+|watchdogd)"), "lockup detector / watchdog feeder: brief and periodic"),
    (re.compile(r"irq/\d+-.*"), "threaded interrupt handler (FIFO 50 by default): part of the kernel's latency"),
    (
        re.compile(r"(ksoftirqd|ktimers|ktimersoftd|irq_work|posixcputmr|rcuc|rcub|idle_inject)/\d+"),
        "per-CPU kernel housekeeping thread",
    ),
    (re.compile(r"(rcu_preempt|rcu_sched|rcuop/\d+|rcuog/\d+|rcub/\d+)"), "RCU kernel thread"),
]


def _expected(comm: str, kernel: bool, own: set[int], pid: int) -> str | None:
    if pid in own:
        return "the sampler's own thread"
    if kernel:
        for pattern, why in EXPECTED:
            if pattern.fullmatch(comm):
                return why
    return None


def _tasks(proc: str) -> list[tuple[int, int]]:
    """Every (pid, tid) under /proc, in order. os.listdir: a scan runs every second while measuring."""
    out: list[tuple[int, int]] = []
    for name in os.listdir(proc):
        if name.isdigit():
            try:
                out.extend((int(name), int(t)) for t in os.listdir(f"{proc}/{name}/task") if t.isdigit())
            except OSError:
                continue
    return sorted(out)


def scan(priorities: dict[int, int], own_pids: set[int] | None = None, root: Path = Path("/")) -> list[RtTask]:
    """Every RT task that may preempt a sampler thread: on a CPU of `priorities` at or above its priority."""
    own = own_pids or set()
    found: list[RtTask] = []
    proc = str(root / "proc")
    live = str(root) == "/"
    for pid, tid in _tasks(proc):
        if live and not may_be_rt(tid):
            continue
        base = f"{proc}/{pid}/task/{tid}"
        try:
            with open(f"{base}/stat", encoding="utf-8", errors="replace") as f:
                text = f.read()
            fields = text[text.rindex(")") + 2 :].split()
            policy = int(fields[38])  # field 41 of proc(5); fields[0] is field 3 (state)
            if policy not in RT_POLICIES:
                continue
            comm = text[text.index("(") + 1 : text.rindex(")")]
            rt_priority, flags = int(fields[37]), int(fields[6])
            with open(f"{base}/status", encoding="utf-8", errors="replace") as f:
                status = f.read()
        except (OSError, ValueError, IndexError):
            continue  # the task ended while we looked
        m = re.search(r"^Cpus_allowed_list:\s*(\S+)", status, re.M)
        cpus = parse_cpulist(m.group(1)) if m else []
        name = RT_POLICIES[policy]
        prio = None if name == "DEADLINE" else rt_priority
        on = [c for c in sorted(priorities) if c in cpus and (prio is None or prio >= priorities[c])]
        if not on:
            continue
        kernel = bool(flags & PF_KTHREAD)
        found.append(
            RtTask(
                pid=pid,
                tid=tid,
                comm=comm,
                policy=name,
                priority=prio,
                cpus=cpus,
                kernel=kernel,
                on_cpus=on,
                expected=_expected(comm, kernel, own, pid),
            )
        )
    return found


def competitors(tasks: list[dict[str, Any]] | list[RtTask]) -> list[dict[str, Any]]:
    """The unexpected ones, as dicts (from a scan or from a results file's record)."""
    out = []
    for t in tasks:
        d = t.as_dict() if isinstance(t, RtTask) else t
        if isinstance(d, dict) and not d.get("expected"):
            out.append(d)
    return out
