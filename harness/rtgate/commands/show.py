# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate show RESULTS...: the figures of results files, in any supported format."""

from __future__ import annotations

import argparse

from rtgate.commands import add_command
from rtgate.core.gate_kinds import percentile_text
from rtgate.core.model import RunResult, ThreadResult
from rtgate.parsers import FORMATS, load_results


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "show")
    p.add_argument("results", nargs="+", metavar="RESULTS")
    p.add_argument("--format", choices=FORMATS, default="auto", help="results format (default: detect)")
    p.add_argument(
        "--unit",
        choices=("us", "ns"),
        default=None,
        help="unit of text formats (default us); refused when the results state another",
    )
    p.set_defaults(handler=handle)


def _avg(run: RunResult, avg: float | None) -> str:
    if avg is None:
        return "-"
    if run.format in ("histogram-text", "summary-text"):
        return f"{avg:g}..{avg + 1:g}"  # printed truncated: the true average lies in [avg, avg + 1)
    return f"{avg:.2f}"


def _missed(t: ThreadResult) -> str:
    if t.missed is None:
        return "?"
    return f"{t.missed}..{t.missed_upper}" if t.missed_upper is not None else str(t.missed)


def describe(run: RunResult) -> str:
    head = f"{run.source}: {run.format}, unit {run.unit}"
    if run.stop_reason:
        head += f", stopped by {run.stop_reason}" + (f" ({run.signal})" if run.signal else "")
    if not run.complete:
        head += ", INCOMPLETE (checkpoint)"
    setup = run.measured_setup
    if setup is not None and setup.stopped_early:
        head += f", STOPPED EARLY ({setup.stopped_early})"
    lines = [head, "  THREAD  CPU  PRIO  CYCLES      MIN      AVG      MAX        P99.9  MISSED  OVERFLOW"]
    for t in run.threads:
        # A range (lo..hi) where a wide bucket or the histogram overflow hides the exact value.
        p999 = (percentile_text(t.histogram, 99.9, t.max, 1) if t.histogram is not None else None) or "-"
        lines.append(
            f"  {t.index:6d}  {'-' if t.cpu is None or t.cpu < 0 else t.cpu:>3}  "
            f"{'-' if t.priority is None else t.priority:>4}  {t.cycles:6d}  "
            f"{'-' if t.min is None else f'{t.min:g}':>7}  {_avg(run, t.avg):>7}  "
            f"{'-' if t.max is None else f'{t.max:g}':>7}  {p999:>11}  "
            f"{_missed(t):>6}  "
            f"{'-' if t.histogram is None else t.histogram.overflow:>8}"
        )
    return "\n".join(lines)


def handle(args: argparse.Namespace) -> int:
    for path in args.results:
        print(describe(load_results(path, args.format, args.unit)))
    return 0
