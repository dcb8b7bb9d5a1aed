# SPDX-License-Identifier: GPL-2.0-or-later
"""Before a measurement: every check `rtgate doctor` makes, and the threshold file's `require:`.

`rtgate doctor` prints these checks; every measurement (`rtgate run`, the pytest plugin) runs the
same ones first, prints its warnings and keeps them with the results, so the two never disagree."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rtgate.core.thread_plan import ThreadPlan, local_cpus
from rtgate.core.thresholds import Measurement
from rtgate.errors import SamplerError
from rtgate.measure import engine_check
from rtgate.measure.conditions import Check, doctor, rt_task_checks
from rtgate.measure.rt_tasks import RtTask


@dataclass
class Preflight:
    """The machine as looked at before a measurement: its description, checks and unmet requirements."""

    system: dict[str, Any]  # the environment as captured before measuring
    rt_before: list[RtTask]  # real-time tasks that can preempt the sampler, before it starts
    checks: list[Check]  # every doctor check: ok, warn and fail
    unmet: list[str]  # requirements of the threshold file this machine does not meet: not measured
    requirements: list[Check] = field(default_factory=list)  # the same, as checks with their ids
    needs_rt: bool = True  # the plan has a SCHED_FIFO/RR thread: without the privilege nothing is measured

    def refusals(self, strict: bool) -> list[Check]:
        """Why the measurement is not made: unmet requirements, no privilege for its real-time threads, or
        with strict any warning. `rtgate doctor` prints exactly these as fail (judged_checks), `rtgate run`
        and the plugin make every gate ERROR with them."""
        fails = [c for c in judged_checks(self.checks, self.needs_rt) if c.status == "fail"]
        if fails or self.requirements:
            return self.requirements + fails
        if strict and self.warnings:
            return [Check("fail", "strict: " + "; ".join(c.what for c in self.warnings), check="strict")]
        return []

    @property
    def warnings(self) -> list[Check]:
        return [c for c in self.checks if c.status != "ok"]

    def record(self) -> list[dict[str, str]]:
        """The warnings as the results keep them (validity record and run.environment["preflight"])."""
        return [c.as_dict() for c in self.warnings]


# A doctor check that fails because of a requirement: the requirement's own check is the one that fails
# (and keeps run from measuring); the doctor check stays the warning it is without the requirement.
REQUIREMENT_OF = {
    "preempt_rt": "require.preempt_rt",
    "rt_throttling": "require.rt_throttling_off",
    "isolcpus": "require.isolated_cpus",
    "governor": "require.governor",
    "hypervisor": "require.bare_metal",
    "competing_rt": "require.no_competing_rt",
}


def judged_checks(checks: list[Check], needs_rt: bool) -> list[Check]:
    """doctor's checks as run judges them: only what keeps run from measuring stays fail."""
    out = []
    for c in checks:
        if c.status == "fail" and (c.check in REQUIREMENT_OF or (c.check == "privilege" and not needs_rt)):
            c = Check("warn", c.what, c.fix, c.check)
        out.append(c)
    return out


def system_checks(
    env: dict[str, Any],
    require: dict[str, Any],
    plan: ThreadPlan | None,
    live: bool,
    rt_tasks: list[RtTask],
) -> list[Check]:
    """doctor's checks for one measurement's plan (None: no threshold file, the sampler's threads at
    the engine's DEFAULT_PRIORITY on every CPU). live: this machine, not a copy of its /proc and /sys; only then
    are privileges, load and the real-time tasks the engine found (`rt_tasks`) looked at."""
    checks = doctor(env, require, plan.measured_cpus if plan else None, live=live)
    if live:
        priorities = plan.priorities if plan else {c: engine_check.DEFAULT_PRIORITY for c in local_cpus()}
        checks += rt_task_checks(rt_tasks, require, priorities)
    return checks


def isolated_here(env: dict[str, Any]) -> set[int]:
    """The CPUs the kernel isolates: left out of rtgate's own affinity, yet a thread may be pinned there
    (as the engine allows, sampler/sysprep.c), and that is where a board's budget is measured."""
    machine = env.get("machine")
    listed = machine.get("isolated_cpus") if isinstance(machine, dict) else None
    return {c for c in listed or [] if isinstance(c, int)}


def pinned_lacking(plan: ThreadPlan, env: dict[str, Any], live: bool) -> list[Check]:
    """The plan's pinned CPUs this machine lacks, as a failed check (none: the plan can run here)."""
    pinned = sorted({t.cpu for t in plan.threads if t.cpu is not None})
    have = set(local_cpus()) | isolated_here(env) if live else set(range(int(env.get("cpu_count") or 0)))
    lacking = [c for c in pinned if c not in have]
    if not lacking or not (live or have):
        return []
    return [
        Check(
            "fail",
            f"pinned cpu {','.join(map(str, lacking))} not available here (this machine lets rtgate use "
            f"cpu {','.join(map(str, sorted(have))) or 'none'})",
            fix="pin the threads to CPUs this machine has (cpus: in the threshold file)",
            check="cpus",
        )
    ]


def engine_findings(
    sampler: str, m: Measurement, plan: ThreadPlan, root: str = "/", words: list[str] | None = None
) -> tuple[engine_check.Findings, list[Check]]:
    """What the engine finds for `m` on this machine (or the copy under `root`), and every requirement
    of `m` not met there, as failed checks: the threshold file's `require:` as the engine judged it,
    pinned CPUs the machine lacks, the timerlat backend's tools. doctor and every measurement take
    them from here, so doctor fails exactly where run would refuse to measure. `words`: the plan as the
    engine will run it (default: compiled here).

    A plan pinned to CPUs the machine lacks is one the engine refuses outright: that alone is said
    then, beside the machine as the engine finds it without the plan."""
    live = root == "/"
    try:
        found = engine_check.ask(sampler, m, root, words=words)
    except SamplerError:
        found = engine_check.ask(sampler, None, root)
        lacking = pinned_lacking(plan, found.system, live)
        if not lacking:
            raise
        return found, lacking
    # "timerlat": what the timerlat backend needs of the machine (rtla, root, the tracer), as the engine found it
    out = [Check("fail", reason, check=key if key == "timerlat" else f"require.{key}") for key, reason in found.unmet]
    out += pinned_lacking(plan, found.system, live)
    return found, out


def preflight(sampler: str, m: Measurement, plan: ThreadPlan, words: list[str] | None = None) -> Preflight:
    """Look at this machine before measuring `m` as planned (`words`: as compiled for the engine): the
    engine's findings, judged."""
    found, required = engine_findings(sampler, m, plan, words=words)
    checks = system_checks(found.system, m.require, plan, live=True, rt_tasks=found.rt_tasks)
    return Preflight(
        system=found.system,
        rt_before=found.rt_tasks,
        checks=checks,
        unmet=[c.what for c in required],
        requirements=required,
        needs_rt=any(t.policy in ("fifo", "rr") for t in plan.threads),
    )
