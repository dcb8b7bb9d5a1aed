# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate doctor [THRESHOLDS]: what on this system will distort a measurement, and how to fix it.

The same checks run before every measurement of `rtgate run` and the pytest plugin (measure/preflight.py)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rtgate.commands import add_command
from rtgate.core.thread_plan import ThreadPlan, plan_here
from rtgate.core.thresholds import load_thresholds
from rtgate.measure.environment import capture
from rtgate.measure.preflight import system_checks


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "doctor")
    p.add_argument("thresholds", nargs="?", metavar="THRESHOLDS", help="also check its require: conditions")
    p.add_argument("--root", default="/", metavar="DIR", help="read /proc, /sys and /boot under DIR (a copy)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    env = capture(Path(args.root))
    live = args.root == "/"
    targets: list[tuple[str, dict[str, Any], ThreadPlan | None]] = [("", {}, None)]  # name, require, plan
    if args.thresholds:
        tf = load_thresholds(args.thresholds)
        targets = [(m.name, m.require, plan_here(m)) for m in tf.measurements.values()]
    failed = False
    print(
        f"rtgate doctor: kernel {env.get('kernel_release')}, {env.get('preemption')}, "
        f"{env.get('cpu_count')} CPUs, {env.get('cpu_model')}"
    )
    found = [(name, system_checks(env, require, plan, live=live)) for name, require, plan in targets]
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
