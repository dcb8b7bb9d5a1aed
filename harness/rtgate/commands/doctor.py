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
    targets: list[tuple[str, dict[str, Any], ThreadPlan | None]] = [("", {}, None)]
    if args.thresholds:
        tf = load_thresholds(args.thresholds)
        targets = [(f"[{m.name}] ", m.require, plan_here(m)) for m in tf.measurements.values()]
    failed = False
    print(
        f"rtgate doctor: kernel {env.get('kernel_release')}, {env.get('preemption')}, "
        f"{env.get('cpu_count')} CPUs, {env.get('cpu_model')}"
    )
    for prefix, require, plan in targets:
        for c in system_checks(env, require, plan, live=live):
            print(
                f"{c.status.upper():4} {prefix}{c.what}"
                + (f"\n     fix: {c.fix}" if c.fix and c.status != "ok" else "")
            )
            failed |= c.status == "fail"
    return 1 if failed else 0
