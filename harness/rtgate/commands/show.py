"""rtgate show RESULTS...: the figures of results files, in any supported format."""

from __future__ import annotations

import argparse

from rtgate.core.model import RunResult
from rtgate.parsers import FORMATS, load_results


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("show", help="print the figures of results files")
    p.add_argument("results", nargs="+", metavar="RESULTS")
    p.add_argument("--format", choices=FORMATS, default="auto", help="results format (default: detect)")
    p.add_argument("--unit", choices=("us", "ns"), default="us", help="unit of text formats (default us)")
    p.set_defaults(handler=handle)


def describe(run: RunResult) -> str:
    head = f"{run.source}: {run.format}, unit {run.unit}"
    if run.stop_reason:
        head += f", stopped by {run.stop_reason}" + (f" ({run.signal})" if run.signal else "")
    if not run.complete:
        head += ", INCOMPLETE (checkpoint)"
    lines = [head, "  THREAD  CPU  PRIO  CYCLES      MIN      AVG      MAX    P99.9  MISSED  OVERFLOW"]
    for t in run.threads:
        p999 = "-"
        if t.histogram is not None:
            v, over = t.histogram.percentile(99.9, t.max)
            p999 = "-" if v is None else (">=" if over else "") + f"{v:g}"
        lines.append(f"  {t.index:6d}  {'-' if t.cpu is None or t.cpu < 0 else t.cpu:>3}  "
                     f"{'-' if t.priority is None else t.priority:>4}  {t.cycles:6d}  "
                     f"{'-' if t.min is None else f'{t.min:g}':>7}  {'-' if t.avg is None else f'{t.avg:.2f}':>7}  "
                     f"{'-' if t.max is None else f'{t.max:g}':>7}  {p999:>7}  "
                     f"{'?' if t.missed is None else t.missed:>6}  "
                     f"{'-' if t.histogram is None else t.histogram.overflow:>8}")
    return "\n".join(lines)


def handle(args: argparse.Namespace) -> int:
    for path in args.results:
        print(describe(load_results(path, args.format, args.unit)))
    return 0
