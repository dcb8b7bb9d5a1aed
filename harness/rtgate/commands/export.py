# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate export kcidb|squad THRESHOLDS RESULTS...: KCIDB I/O v5.3 JSON for KernelCI, SQUAD for LKFT-style CI."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from rtgate.commands.common import add_accept_option
from rtgate.commands.results_args import map_results
from rtgate.core.setup import evaluate_measured, parse_accept
from rtgate.core.thresholds import load_thresholds
from rtgate.errors import RtgateError
from rtgate.reports.kcidb import kcidb_document
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
    add_accept_option(k)
    k.set_defaults(handler=handle)
    q = e.add_parser("squad", help="SQUAD tests, metrics and metadata; optionally submitted to a server")
    q.add_argument("thresholds", metavar="THRESHOLDS")
    q.add_argument("results", nargs="+", metavar="[MEASUREMENT=]RESULTS")
    q.add_argument(
        "-o",
        "--output-dir",
        metavar="DIR",
        help="write tests.json, metrics.json and metadata.json here (squad-client's submit takes them)",
    )
    q.add_argument(
        "--metadata",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="add to the metadata (repeatable), e.g. board=imx8mp-evk, build_url=...",
    )
    q.add_argument("--allow-inconclusive", action="store_true", help="INCONCLUSIVE is 'skip' instead of 'fail'")
    q.add_argument(
        "--submit",
        metavar="URL",
        default=os.environ.get("SQUAD_HOST"),
        help="SQUAD server to submit to (default $SQUAD_HOST); the token comes from $SQUAD_TOKEN",
    )
    for name in ("group", "project", "build", "environment"):
        q.add_argument(f"--{name}", metavar=name.upper(), help=f"SQUAD {name} (with --submit)")
    add_accept_option(q)
    q.set_defaults(handler=handle_squad)


def handle(args: argparse.Namespace) -> int:
    if not re.fullmatch(r"[a-z0-9_]+", args.origin):
        raise RtgateError(f"--origin {args.origin!r}: KCIDB origins are lower-case letters, digits and '_'")
    if not re.fullmatch(r"[a-z0-9_]+:.+", args.build_id):
        raise RtgateError(f"--build-id {args.build_id!r}: KCIDB ids are ORIGIN:ID")
    tf = load_thresholds(args.thresholds)
    accept = parse_accept(args.accept_setup)
    tests: list[dict[str, object]] = []
    doc: dict[str, object] = {"version": {"major": 5, "minor": 3}, "tests": tests}
    for number, (name, run) in enumerate(map_results(tf, args.results)):
        part = kcidb_document(
            args.origin,
            args.build_id,
            tf.platform,
            name,
            run,
            evaluate_measured(tf.measurements[name], run, accept),
            number,
        )
        tests.extend(part["tests"])
    text = json.dumps(doc, indent=2) + "\n"
    if args.output:
        write_text(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def handle_squad(args: argparse.Namespace) -> int:
    from rtgate.reports.squad import squad_documents, submit

    tf = load_thresholds(args.thresholds)
    accept = parse_accept(args.accept_setup)
    metadata: dict[str, object] = {"platform": tf.platform, "thresholds": ", ".join(tf.files)}
    runs = []
    for name, run in map_results(tf, args.results):
        runs.append((name, run, evaluate_measured(tf.measurements[name], run, accept)))
        release = (run.environment.get("system") or {}).get("kernel_release")
        if release:
            metadata.setdefault("kernel_release", release)
    for item in args.metadata:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise RtgateError(f"--metadata {item!r}: expected KEY=VALUE")
        metadata[key] = value
    allow = bool(args.allow_inconclusive or tf.allow_inconclusive)
    tests, metrics = squad_documents(tf.platform, runs, allow)
    documents = {"tests": tests, "metrics": metrics, "metadata": metadata}
    if args.output_dir:
        out = Path(args.output_dir)
        out.mkdir(parents=True, exist_ok=True)
        for name, doc in documents.items():
            write_text(out / f"{name}.json", json.dumps(doc, indent=2, sort_keys=True) + "\n")
    if args.submit:
        missing = [n for n in ("group", "project", "build", "environment") if not getattr(args, n)]
        if missing:
            raise RtgateError("--submit needs " + ", ".join(f"--{n}" for n in missing))
        token = os.environ.get("SQUAD_TOKEN")
        if not token:
            raise RtgateError("--submit needs the SQUAD API token in $SQUAD_TOKEN")
        testrun = submit(args.submit, token, args.group, args.project, args.build, args.environment, documents)
        print(f"rtgate: SQUAD test run {testrun}: {len(tests)} tests, {len(metrics)} metrics")
    elif not args.output_dir:
        sys.stdout.write(json.dumps(documents, indent=2, sort_keys=True) + "\n")
    return 0
