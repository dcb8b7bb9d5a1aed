# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate estimate RESULTS: how high latency could go per hour, from block maxima (information only)."""

from __future__ import annotations

import argparse

from rtgate.commands import add_command
from rtgate.errors import RtgateError
from rtgate.parsers import load_results
from rtgate.reports.evt import estimate


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "estimate")
    p.add_argument("results", metavar="RESULTS", help="rtgate-sampler JSON (it holds block maxima)")
    p.add_argument(
        "--per-hour", type=float, default=1e-3, metavar="P", help="probability per hour of operation (default 0.001)"
    )
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    run = load_results(args.results)
    if not 0 < args.per_hour < 1:
        raise RtgateError("--per-hour must be between 0 and 1")
    found = False
    for t in run.threads:
        bm = t.block_maxima
        if bm is None or len(bm.values) < 2:
            continue
        found = True
        e = estimate([v / run.units_per_us() for v in bm.values], bm.block_seconds, args.per_hour)
        if e.valid:
            print(
                f"{t.describe()}: exceeded with probability {args.per_hour:g} per hour: {e.level:.1f} us "
                f"(95 % interval {e.interval[0]:.1f} to {e.interval[1]:.1f} us); checks hold: {'; '.join(e.checks)}"
            )
        else:
            # A figure whose own checks failed is no estimate: print why, not a number that reads as one.
            held = [c for c in e.checks if c not in e.failed]
            print(
                f"{t.describe()}: no reliable estimate: its checks failed: {'; '.join(e.failed)}"
                + (f" (held: {'; '.join(held)})" if held else "")
            )
    if not found:
        raise RtgateError(f"{args.results}: no block maxima (use rtgate-sampler JSON of a longer run)")
    return 0
