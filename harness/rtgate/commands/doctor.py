# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate doctor [THRESHOLDS]: what on this system will distort a measurement, and how to fix it.

The same checks run before every measurement of `rtgate run` and the pytest plugin (measure/preflight.py):
what doctor prints as fail is what keeps run from measuring (its gates then ERROR), check for check."""

from __future__ import annotations

import argparse
import os
from typing import Any

from rtgate.commands import add_command
from rtgate.core.thread_plan import plan_here
from rtgate.core.thresholds import Measurement, load_thresholds
from rtgate.errors import SamplerError
from rtgate.measure import engine_check
from rtgate.measure.conditions import Check
from rtgate.measure.preflight import Preflight, engine_findings, judged_checks, system_checks
from rtgate.measure.runner import find_sampler
from rtgate.options import SAMPLER


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "doctor")
    p.add_argument("thresholds", nargs="?", metavar="THRESHOLDS", help="also check its require: conditions")
    p.add_argument("--root", default="/", metavar="DIR", help="read /proc, /sys and /boot under DIR (a copy)")
    p.add_argument("--strict", action="store_true", help="as rtgate run --strict: any warning fails")
    SAMPLER.add_to(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    # The engine looks at the machine (rtgate-sampler --check-only), as before every measurement and on
    # a board; doctor judges and explains what it found.
    sampler = find_sampler(args.sampler)
    root = os.path.abspath(args.root) if args.root != "/" else "/"
    live = root == "/"
    found: list[tuple[str, list[Check]]] = []  # measurement name ("" without a file), its checks
    env = None
    if not args.thresholds:
        answer = engine_check.ask(sampler, None, root)
        env = answer.system
        found.append(("", system_checks(env, {}, None, live=live, rt_tasks=answer.rt_tasks)))
    else:
        for m in load_thresholds(args.thresholds).measurements.values():
            try:
                system, checks = measurement_checks(sampler, m, root, args.strict)
                env = env or system
            except SamplerError as e:  # a plan the engine refuses: what `rtgate run` makes every gate ERROR with
                checks = [Check("fail", str(e), check="engine")]
            found.append((m.name, checks))
    if env is None:
        env = engine_check.ask(sampler, None, root).system
    print(
        f"rtgate doctor: kernel {env.get('kernel_release')}, {env.get('preemption')}, "
        f"{env.get('cpu_count')} CPUs, {env.get('cpu_model')}"
    )
    failed = False
    # A measurement whose require: fails will not run here: its other findings are noise beside
    # those of the measurements that will (unless none will).
    blocked = [name for name, checks in found if any(c.status == "fail" for c in checks)]
    runs = len(blocked) < len(found)
    # One line per finding, naming the measurements it concerns: 4 facts are 4 lines, not 4 per measurement.
    grouped: dict[tuple[str, str, str], list[str]] = {}
    for name, checks in found:
        for c in checks:
            if c.status != "fail" and name in blocked and runs:
                continue
            grouped.setdefault((c.status, c.what, c.fix), []).append(name)
    for (status, what, fix), names in grouped.items():
        prefix = f"[{', '.join(names)}] " if names != [""] else ""
        print(f"{status.upper():4} {prefix}{what}" + (f"\n     fix: {fix}" if fix and status != "ok" else ""))
        failed |= status == "fail"
    if blocked and runs:
        print(f"NOTE [{', '.join(blocked)}] will not run here (require: not met): its other findings are left out")
    return 1 if failed else 0


def measurement_checks(sampler: str, m: Measurement, root: str, strict: bool) -> tuple[dict[str, Any], list[Check]]:
    """The machine as the engine finds it for `m`, and doctor's checks of `m`, then what `rtgate run`
    would refuse to measure under."""
    plan = plan_here(m)
    live = root == "/"
    needs_rt = any(t.policy in ("fifo", "rr") for t in plan.threads)
    found, required = engine_findings(sampler, m, plan, root)
    env = found.system
    checked = Preflight(
        system=env,
        rt_before=found.rt_tasks,
        checks=system_checks(env, m.require, plan, live=live, rt_tasks=found.rt_tasks),
        unmet=[],
        requirements=required,
        needs_rt=needs_rt,
    )
    refused = checked.refusals(strict or m.strict)
    shown = judged_checks(checked.checks, needs_rt)
    return env, shown + [c for c in refused if c.check not in {s.check for s in shown}]
