#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""One measurement followed through rtgate's modules: `measure_and_judge` of a short real measurement, traced
with sys.setprofile. Every call from one rtgate module into another is an entry; an entry into a module of an
earlier stage of the pipeline (plan -> preflight -> engine -> results -> judge -> report) than its caller's is a
climb back up. Calls of methods (a verdict's or a plan's properties: the data passed along) count only with
--methods. Prints the modules entered, the entries and climbs, and each stage-to-stage step in order.

    sudo .venv/bin/python benchmarks/module_walk.py [--seconds 1] [--smoke]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

# Stage of each module, by the longest matching prefix; a module no prefix matches is "other". The driver
# (orchestrate: calls each stage in turn) and the file helpers (safe_io: used by every stage) are no stage.
STAGES = {
    "rtgate.core.thresholds": "plan",
    "rtgate.core.spec": "plan",
    "rtgate.core.thread_plan": "plan",
    "rtgate.core.timerlat_spec": "plan",
    "rtgate.measure.sampler_args": "plan",
    "rtgate.measure.native_gates": "plan",
    "rtgate.measure.preflight": "preflight",
    "rtgate.measure.engine_check": "preflight",
    "rtgate.measure.conditions": "preflight",
    "rtgate.measure.rt_tasks": "preflight",
    "rtgate.measure.orchestrate": "driver",
    "rtgate.measure.runner": "engine",
    "rtgate.measure.lock": "engine",
    "rtgate.measure.stop": "engine",
    "rtgate.measure.busy": "engine",
    "rtgate.measure.timerlat": "engine",
    "rtgate.safe_io": "io",
    "rtgate.parsers": "results",
    "rtgate.core.model": "results",
    "rtgate.core.recorded": "results",
    "rtgate.core": "judge",
    "rtgate.reports": "report",
    "rtgate.commands": "report",
}
ORDER = ["plan", "preflight", "engine", "results", "judge", "report"]
SPEC = """\
platform: walk
measurements:
  walk:
    sampler: {{interval_us: 1000, duration: {seconds}s, priority: 80, threads: [{{name: a, cpus: all}}]}}
    gates:
      - {{name: max, kind: max, limit_us: 100000000}}
"""


def stage(module: str) -> str:
    best = max((p for p in STAGES if module == p or module.startswith(p + ".")), key=len, default=None)
    return STAGES[best] if best else "other"


def walk(args: argparse.Namespace) -> tuple[list[tuple[str, str]], Any]:
    from rtgate.core.thresholds import load_thresholds
    from rtgate.measure.orchestrate import measure_and_judge
    from rtgate.measure.runner import find_sampler

    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "walk.yaml"
        spec.write_text(SPEC.format(seconds=args.seconds))
        m = load_thresholds(spec).measurements["walk"]
        sampler = find_sampler()
        entries: list[tuple[str, str]] = []

        def profile(frame: FrameType, event: str, arg: object) -> None:
            if event != "call" or frame.f_back is None:
                return
            callee = frame.f_globals.get("__name__", "")
            caller = frame.f_back.f_globals.get("__name__", "")
            if not (callee.startswith("rtgate.") and caller.startswith("rtgate.") and callee != caller):
                return
            # A module's own functions, not the methods of the objects it defines (a verdict's or a plan's
            # properties are the data being passed along, not a step of the walk).
            function = frame.f_globals.get(frame.f_code.co_name)
            if args.methods or getattr(function, "__code__", None) is frame.f_code:
                entries.append((caller, callee))

        sys.setprofile(profile)
        try:
            outcome = measure_and_judge(sampler, m, Path(tmp) / "out")
        finally:
            sys.setprofile(None)
    return entries, outcome


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=1)
    ap.add_argument("--methods", action="store_true", help="count calls of methods (of data objects) too")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    entries, outcome = walk(args)
    modules = Counter(callee for _, callee in entries)
    staged = [(a, b) for a, b in entries if stage(a) in ORDER and stage(b) in ORDER]
    climbs = [(a, b) for a, b in staged if ORDER.index(stage(b)) < ORDER.index(stage(a))]
    steps: list[str] = []
    for a, b in entries:
        if stage(a) != stage(b) and (not steps or steps[-1] != f"{stage(a)} -> {stage(b)}"):
            steps.append(f"{stage(a)} -> {stage(b)}")
    print(f"verdicts: {[v.status.value for v in outcome.verdicts]}")
    print(f"modules entered: {len(modules)}; entries: {len(entries)}; climbs back up: {len(climbs)}")
    for name, n in modules.most_common():
        print(f"  {n:4d}  {stage(name):9s}  {name}")
    print("stage steps, in order:")
    for s in steps:
        print(f"  {s}")
    if climbs:
        print("climbs (caller -> callee), each once:")
        for (a, b), n in Counter(climbs).most_common():
            print(f"  {n:4d}  {a} -> {b}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
