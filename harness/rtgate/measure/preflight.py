# SPDX-License-Identifier: GPL-2.0-or-later
"""Before a measurement: every check `rtgate doctor` makes, and the threshold file's `require:`.

`rtgate doctor` prints these checks; every measurement (`rtgate run`, the pytest plugin) runs the
same ones first, prints its warnings and keeps them with the results, so the two never disagree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rtgate.core import validity
from rtgate.core.thread_plan import ThreadPlan, local_cpus
from rtgate.core.thresholds import Measurement
from rtgate.measure.conditions import Check, doctor, rt_task_checks, unmet
from rtgate.measure.environment import capture
from rtgate.measure.rt_tasks import RtTask, competitors, scan

DEFAULT_PRIORITY = 80  # the sampler's priority when no threshold file says


@dataclass
class Preflight:
    system: dict[str, Any]  # the environment as captured before measuring
    rt_before: list[RtTask]  # real-time tasks that can preempt the sampler, before it starts
    checks: list[Check]  # every doctor check: ok, warn and fail
    unmet: list[str]  # requirements of the threshold file this machine does not meet: not measured

    @property
    def warnings(self) -> list[Check]:
        return [c for c in self.checks if c.status != "ok"]

    def record(self) -> list[dict[str, str]]:
        """The warnings as the results keep them (validity record and run.environment["preflight"])."""
        return [c.as_dict() for c in self.warnings]


def system_checks(
    env: dict[str, Any],
    require: dict[str, Any],
    plan: ThreadPlan | None,
    live: bool,
    rt_tasks: list[RtTask] | None = None,
) -> list[Check]:
    """doctor's checks for one measurement's plan (None: no threshold file). live: this machine, not a
    copy of its /proc and /sys; only then are privileges, load and real-time tasks looked at."""
    checks = doctor(env, require, plan.measured_cpus if plan else None, live=live)
    if live:
        priorities = plan.priorities if plan else {c: DEFAULT_PRIORITY for c in local_cpus()}
        tasks = scan(priorities) if rt_tasks is None else rt_tasks
        checks += rt_task_checks(tasks, require, priorities)
    return checks


def competing_text(tasks: list[Any], lead: str) -> str:
    return f"{lead} " + ", ".join(t.describe() if isinstance(t, RtTask) else validity.describe_task(t) for t in tasks)


def preflight(m: Measurement, plan: ThreadPlan) -> Preflight:
    """Look at this machine before measuring `m` as planned."""
    system = capture()
    before = scan(plan.priorities)
    reasons = unmet(m.require, system, plan.measured_cpus)
    if m.require.get("no_competing_rt") and competitors(before):
        reasons.append(
            competing_text(competitors(before), "requires no competing real-time task on the measured CPUs; found")
        )
    if m.backend == "timerlat":
        from rtgate.measure import timerlat

        reasons += timerlat.unavailable(m)
    checks = system_checks(system, m.require, plan, live=True, rt_tasks=before)
    return Preflight(system=system, rt_before=before, checks=checks, unmet=reasons)
