# SPDX-License-Identifier: GPL-2.0-or-later
"""The thread plan of a measurement: which thread runs where, at which priority, under which label.

Computed once from a threshold file's measurement and read by everything that needs it: the
sampler's arguments and native gates, preflight and the competing-task scan, load placement, the
gates collected before a run, and the reconciliation of results with what was asked.

Two ways to plan, because `cpus: all` means "one thread per CPU" and only a machine or a run can
say how many that is:
- ``plan_on(m, cpus)``: the threads the sampler will run on a machine whose usable CPUs are `cpus`
  (``local_cpus()`` for this one).
- ``plan_for_results(m, nthreads)``: the threads a run of `nthreads` threads was asked to have,
  whatever machine it ran on; under `cpus: all` thread i is placed on CPU i, as cyclictest -S and
  rtgate-sampler place it on a machine whose CPUs are all usable (the results do not say which were).

Threads are named after the CPU they ran on, by one rule for every format of a run (named_cpu):
the CPU the results state, else the CPU the plan places the thread on. Histogram text, T: lines and
-v samples state no CPU, JSON does: without the plan, one run would be `t0` in one and `cpu0` in the
other, and history keys and JUnit names would change with the format.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rtgate.core.model import RunResult, ThreadResult
    from rtgate.core.thresholds import Measurement, ThreadGroup

RT_POLICIES = ("fifo", "rr")


@dataclass(frozen=True)
class PlannedThread:
    """One thread the sampler runs for a measurement: where, and how."""

    index: int  # the sampler's thread number
    label: str  # its thread group (rtla's context for the timerlat backend)
    cpu: int | None  # pinned CPU; None: not pinned, or one per CPU on a machine not known here
    one_per_cpu: bool  # from a `cpus: all` group
    policy: str
    priority: int
    interval_us: int  # the base interval plus its distance
    expected_periods: int | None  # with loops: the periods it runs; with a duration: its periods in it

    @property
    def rt_priority(self) -> int:
        """Its priority as other real-time tasks see it: 0 for a non-real-time policy."""
        return self.priority if self.policy in RT_POLICIES else 0


@dataclass(frozen=True)
class ThreadPlan:
    """The threads of one measurement, in the sampler's order."""

    measurement: str
    threads: tuple[PlannedThread, ...]
    fixed_count: int | None  # the thread count when no machine is needed to know it (no `cpus: all`)
    usable_cpus: tuple[int, ...]  # what `cpus: all` and unpinned threads may use (empty: not known)
    duration_s: float | None  # how long the measurement runs, when set in time

    @property
    def count(self) -> int:
        return len(self.threads)

    def labels(self, nthreads: int | None = None) -> list[str | None]:
        """Each thread's group, in the sampler's order; to `nthreads` places (None past the plan)."""
        n = self.count if nthreads is None else nthreads
        labels: list[str | None] = [t.label for t in self.threads]
        return (labels + [None] * n)[:n]

    @property
    def measured_cpus(self) -> list[int] | None:
        """The CPUs the threads are pinned to, in order of first use; None when a thread is not pinned."""
        cpus: list[int] = []
        for t in self.threads:
            if t.cpu is None:
                return None
            if t.cpu not in cpus:
                cpus.append(t.cpu)
        return cpus

    @property
    def priorities(self) -> dict[int, int]:
        """Per CPU a thread may run on, the lowest priority of a thread there (0 for non-RT policies:
        every RT task preempts those). An unpinned thread may run on any usable CPU."""
        out: dict[int, int] = {}
        for t in self.threads:
            for c in [t.cpu] if t.cpu is not None else self.usable_cpus:
                out[c] = min(out.get(c, t.rt_priority), t.rt_priority)
        return out

    @property
    def expected_seconds(self) -> float | None:
        """How long the run lasts: its duration, or the slowest thread's loops; None when unbounded."""
        if self.duration_s is not None:
            return float(self.duration_s)
        periods = [(t.expected_periods or 0) * t.interval_us for t in self.threads if t.expected_periods is not None]
        return max(periods) / 1e6 if periods else None


def local_cpus() -> list[int]:
    """The CPUs this process may use: where `cpus: all` and unpinned threads run on this machine."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def _fixed_count(m: Measurement) -> int | None:
    if any(g.cpus == "all" for g in m.sampler.threads):
        return None
    return sum(_listed_count(g) for g in m.sampler.threads)


def _listed_count(g: ThreadGroup) -> int:
    """Threads of a group that is not `cpus: all`: its count, or one per CPU listed (one if unpinned)."""
    return g.count if g.count is not None else len(g.cpus or [1])


def _build(
    m: Measurement, counts: list[int], all_cpus: Sequence[int] | None, usable: Sequence[int], duration_s: int | None
) -> ThreadPlan:
    s = m.sampler
    duration = duration_s if duration_s is not None else s.duration_s  # --duration replaces duration and loops
    loops = None if duration_s is not None else s.loops
    threads: list[PlannedThread] = []
    for g, count in zip(s.threads, counts):
        for i in range(count):
            if g.cpus == "all":  # without the machine's CPUs: the i-th thread on CPU i (see the module doc)
                cpu = (all_cpus[i] if i < len(all_cpus) else None) if all_cpus is not None else i
            elif isinstance(g.cpus, list):
                cpu = g.cpus[i % len(g.cpus)]
            else:
                cpu = None
            interval = s.interval_us + len(threads) * s.distance_us
            bounds = [n for n in (loops, duration * 1_000_000 // interval if duration else None) if n is not None]
            periods = min(bounds) if bounds else None  # the first of loops and duration ends it
            threads.append(
                PlannedThread(
                    index=len(threads),
                    label=g.name,
                    cpu=cpu,
                    one_per_cpu=g.cpus == "all",
                    policy=g.policy,
                    priority=g.priority,
                    interval_us=interval,
                    expected_periods=periods,
                )
            )
    return ThreadPlan(
        measurement=m.name,
        threads=tuple(threads),
        fixed_count=_fixed_count(m),
        usable_cpus=tuple(usable),
        duration_s=float(duration) if duration is not None else None,
    )


def plan_on(m: Measurement, cpus: Sequence[int], duration_s: int | None = None) -> ThreadPlan:
    """The threads the sampler (or rtla) runs on a machine whose usable CPUs are `cpus`.

    duration_s: the --duration override (a run length instead of the file's duration or loops)."""
    counts = [len(cpus) if g.cpus == "all" else _listed_count(g) for g in m.sampler.threads]
    return _build(m, counts, cpus, cpus, duration_s)


def plan_here(m: Measurement, duration_s: int | None = None) -> ThreadPlan:
    """The plan on this machine."""
    return plan_on(m, local_cpus(), duration_s)


def plan_for_results(m: Measurement, nthreads: int, duration_s: int | None = None) -> ThreadPlan:
    """The threads a run of `nthreads` threads was asked to have, on whatever machine it ran.

    A `cpus: all` group takes the threads the other groups leave, its i-th thread on CPU i; rtla's
    contexts share them evenly."""
    groups = m.sampler.threads
    counts: list[int] = []
    if m.backend == "timerlat":
        counts = [nthreads // len(groups)] * len(groups)
    else:
        for g in groups:
            counts.append(max(0, nthreads - sum(counts)) if g.cpus == "all" else _listed_count(g))
    return _build(m, counts, None, (), duration_s)


# planned_cpus' mark for a thread the plan pins to no CPU (None: no plan, or a thread beyond it).
UNPINNED = -1


def named_cpu(stated: int | None, planned: int | None) -> int | None:
    """The CPU a thread ran on: the one its results state (-1: they say it was not pinned), else the
    one the plan places it on; None when neither says."""
    if stated is not None:
        return stated if stated >= 0 else None
    return planned if planned is not None and planned >= 0 else None


def naming_cpus(planned: list[int | None], run: RunResult) -> list[int | None]:
    """planned_cpus as thread_name reads them for `run`. A thread that neither the plan nor the run's command
    line pins is named by its index even where its results state a CPU: cyclictest with libnuma pins thread N
    to CPU N unasked and says so only in its JSON, where its histogram text, T: lines and -v samples state no
    CPU, and one run keeps its names in every format. Elsewhere a CPU the results state names the thread."""
    unasked = run.measured_setup is not None and run.measured_setup.pinned is False
    return planned if unasked else [None if c == UNPINNED else c for c in planned]


def thread_name(t: ThreadResult, planned: int | None = None) -> str:
    """cpu1 after the CPU it ran on (stated, else planned: named_cpu), t0 when unknown, and t0 when
    naming_cpus says the plan pins it nowhere."""
    if planned == UNPINNED:
        return f"t{t.index}"
    cpu = named_cpu(t.cpu, planned)
    return f"cpu{cpu}" if cpu is not None else f"t{t.index}"


def planned_cpus(m: Measurement | None, nthreads: int) -> list[int | None]:
    """Per thread position of a run of `nthreads` threads, the CPU the plan places it on (UNPINNED: on
    none; None: no threshold file, or beyond the plan; rtla states every CPU itself)."""
    if m is None or m.backend == "timerlat":
        return [None] * nthreads
    plan = plan_for_results(m, nthreads).threads
    cpus: list[int | None] = [UNPINNED if t.cpu is None and not t.one_per_cpu else t.cpu for t in plan]
    return (cpus + [None] * nthreads)[:nthreads]


def plan_anywhere(m: Measurement) -> ThreadPlan:
    """The plan as far as it holds on any machine (a LAVA job is made on another one than it runs on):
    a `cpus: all` group has no thread in it, and fixed_count is None."""
    return plan_for_results(m, 0)
