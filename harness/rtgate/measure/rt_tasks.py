# SPDX-License-Identifier: GPL-2.0-or-later
"""Competing real-time tasks, as the measurement engine finds them (sampler/rtscan.c): SCHED_FIFO,
SCHED_RR and SCHED_DEADLINE tasks (kernel threads included) that may run on a measured CPU at or above
the sampler's priority there. Such a task can hold the CPU for as long as it likes, and the sampler's
latency then measures it, not the kernel. Known per-CPU kernel threads are listed as expected, with why."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from rtgate.core.validity import describe_task


@dataclass
class RtTask:
    """A real-time task that may preempt the sampler, and why it is expected there when it is."""

    pid: int  # the process (thread group) id
    tid: int
    comm: str
    policy: str  # FIFO, RR, DEADLINE
    priority: int | None  # rt_priority; None for DEADLINE, which preempts every FIFO and RR task
    cpus: list[int]  # where it may run
    kernel: bool
    on_cpus: list[int]  # the measured CPUs it can preempt the sampler on
    expected: str | None = None  # why it is expected; None: a competitor

    def describe(self) -> str:
        return describe_task(self.as_dict())

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
