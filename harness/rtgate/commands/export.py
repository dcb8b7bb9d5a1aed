"""rtgate export kcidb THRESHOLDS RESULTS...: KCIDB I/O v5.3 JSON for KernelCI."""

from __future__ import annotations

import argparse
import json
import re
import sys

from rtgate.errors import RtgateError
from rtgate.core.gates import evaluate
from rtgate.reports.kcidb import kcidb_document
from rtgate.core.thresholds import load_thresholds
from rtgate.commands.results_args import map_results
from rtgate.safe_io import write_text


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("export", help="export verdicts and figures for other systems")
    e = p.add_subparsers(dest="export_command", metavar="FORMAT")
    e.required = True
    k = e.add_parser("kcidb", help="KCIDB I/O v5.3 JSON (KernelCI)")
    k.add_argument("thresholds", metavar="THRESHOLDS")
    k.add_argument("results", nargs="+", metavar="[MEASUREMENT=]RESULTS")
    k.add_argument("--origin", default="rtgate", help="your CI system's KCIDB origin (default rtgate)")
    k.add_argument("--build-id", required=True, metavar="ORIGIN:ID", help="the KCIDB build these tests ran on")
    k.add_argument("-o", "--output", metavar="FILE", help="default: stdout")
    k.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if not re.fullmatch(r"[a-z0-9_]+", args.origin):
        raise RtgateError(f"--origin {args.origin!r}: KCIDB origins are lower-case letters, digits and '_'")
    if not re.fullmatch(r"[a-z0-9_]+:.+", args.build_id):
        raise RtgateError(f"--build-id {args.build_id!r}: KCIDB ids are ORIGIN:ID")
    tf = load_thresholds(args.thresholds)
    doc: dict[str, object] = {"version": {"major": 5, "minor": 3}, "tests": []}
    for number, (name, run) in enumerate(map_results(tf, args.results)):
        part = kcidb_document(args.origin, args.build_id, tf.platform, name, run,
                              evaluate(tf.measurements[name], run), number)
        doc["tests"] += part["tests"]  # type: ignore[operator]
    text = json.dumps(doc, indent=2) + "\n"
    if args.output:
        write_text(args.output, text)
    else:
        sys.stdout.write(text)
    return 0
