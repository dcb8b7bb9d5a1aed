# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate doctor [THRESHOLDS]: what on this system will distort a measurement, and how to fix it."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from rtgate.core.thresholds import Measurement, load_thresholds
from rtgate.measure.conditions import doctor, measured_cpus, rt_task_checks
from rtgate.measure.environment import capture
from rtgate.measure.rt_tasks import sampler_priorities, scan

DEFAULT_PRIORITY = 80  # the sampler's priority when no threshold file says


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("doctor", help="check this system before measuring")
    p.add_argument("thresholds", nargs="?", metavar="THRESHOLDS", help="also check its require: conditions")
    p.add_argument("--root", default="/", metavar="DIR", help="read /proc, /sys and /boot under DIR (a copy)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    env = capture(Path(args.root))
    live = args.root == "/"
    targets: list[tuple[str, dict[str, Any], list[int] | None, Measurement | None]] = [("", {}, None, None)]
    if args.thresholds:
        tf = load_thresholds(args.thresholds)
        targets = [(f"[{m.name}] ", m.require, measured_cpus(m), m) for m in tf.measurements.values()]
    failed = False
    print(
        f"rtgate doctor: kernel {env.get('kernel_release')}, {env.get('preemption')}, "
        f"{env.get('cpu_count')} CPUs, {env.get('cpu_model')}"
    )
    for prefix, require, measured, m in targets:
        checks = doctor(env, require, measured, live=live)
        if live:  # competing real-time tasks: the live system only
            priorities = sampler_priorities(m) if m else {c: DEFAULT_PRIORITY for c in os.sched_getaffinity(0)}
            checks += rt_task_checks(scan(priorities), require, priorities)
        for c in checks:
            print(
                f"{c.status.upper():4} {prefix}{c.what}"
                + (f"\n     fix: {c.fix}" if c.fix and c.status != "ok" else "")
            )
            failed |= c.status == "fail"
    return 1 if failed else 0
