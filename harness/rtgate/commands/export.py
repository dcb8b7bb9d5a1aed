# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate export kcidb|squad THRESHOLDS RESULTS...: KCIDB I/O v5.3 JSON for KernelCI, SQUAD for LKFT-style CI."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from pathlib import Path

from rtgate.commands import add_command, add_results, add_thresholds
from rtgate.commands.results_args import add_accept_setup, map_results
from rtgate.core.setup import evaluate_measured, parse_accept
from rtgate.core.thresholds import ThresholdFile, load_thresholds
from rtgate.errors import RtgateError
from rtgate.reports.duration import measured_seconds
from rtgate.reports.kcidb import kcidb_document
from rtgate.safe_io import write_text


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "export")
    e = p.add_subparsers(dest="export_command", metavar="FORMAT")
    e.required = True
    k = e.add_parser("kcidb", help="KCIDB I/O v5.3 JSON (KernelCI)")
    add_thresholds(k)
    add_results(k)
    k.add_argument("--origin", default="rtgate", help="your CI system's KCIDB origin (default rtgate)")
    k.add_argument("--build-id", required=True, metavar="ORIGIN:ID", help="the KCIDB build these tests ran on")
    k.add_argument("-o", "--output", metavar="FILE", help="default: stdout")
    add_accept_setup(k)
    k.set_defaults(handler=handle)
    q = e.add_parser("squad", help="SQUAD tests, metrics and metadata; optionally submitted to a server")
    add_thresholds(q)
    add_results(q)
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
    add_accept_setup(q)
    q.add_argument(
        "--submit",
        metavar="URL",
        help="SQUAD server to submit to (default $SQUAD_HOST, used only when --group, --project, --build and "
        "--environment are all given); the token comes from $SQUAD_TOKEN",
    )
    for name in ("group", "project", "build", "environment"):
        q.add_argument(f"--{name}", metavar=name.upper(), help=f"SQUAD {name} (with --submit)")
    q.set_defaults(handler=handle_squad)


def _thresholds_digest(tf: ThresholdFile) -> str:
    """The threshold files' contents (not their paths): results judged by two files export as two runs."""
    h = hashlib.sha256()
    for path in tf.files:
        try:
            h.update(Path(path).read_bytes())
        except OSError:
            h.update(str(path).encode())
    return h.hexdigest()[:16]


def handle(args: argparse.Namespace) -> int:
    if not re.fullmatch(r"[a-z0-9_]+", args.origin):
        raise RtgateError(f"--origin {args.origin!r}: KCIDB origins are lower-case letters, digits and '_'")
    if not re.fullmatch(r"[a-z0-9_]+:.+", args.build_id):
        raise RtgateError(f"--build-id {args.build_id!r}: KCIDB ids are ORIGIN:ID")
    tf = load_thresholds(args.thresholds)
    accept = parse_accept(args.accept_setup)
    tests: list[dict[str, object]] = []
    doc: dict[str, object] = {"version": {"major": 5, "minor": 3}, "tests": tests}
    digest = _thresholds_digest(tf)
    for name, run in map_results(tf, args.results):
        m = tf.measurements[name]
        verdicts = evaluate_measured(m, run, accept)
        duration = measured_seconds(run, m.sampler.interval_us)
        part = kcidb_document(args.origin, args.build_id, tf.platform, name, run, verdicts, digest, duration, m)
        tests.extend(part["tests"])
    ids = [t["id"] for t in tests]
    if len(set(ids)) != len(ids):  # the same results file given twice
        raise RtgateError("the same results are given twice: KCIDB would merge their tests")
    text = json.dumps(doc, indent=2) + "\n"
    if args.output:
        write_text(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def handle_squad(args: argparse.Namespace) -> int:
    from rtgate.reports.squad import squad_documents, squad_log, submit

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
    tests, metrics = squad_documents(tf.platform, runs, allow, tf.measurements)
    documents: dict[str, object] = {"tests": tests, "metrics": metrics, "metadata": metadata}
    log = squad_log(tf.platform, runs, tf.measurements)
    if log:
        documents["log"] = log
    if args.output_dir:
        out = Path(args.output_dir)
        out.mkdir(parents=True, exist_ok=True)
        for name, doc in documents.items():
            if isinstance(doc, str):
                write_text(out / f"{name}.txt", doc)  # what the submission sends as its `log` field
            else:
                write_text(out / f"{name}.json", json.dumps(doc, indent=2, sort_keys=True) + "\n")
    # An environment variable alone never turns an offline export into a submission (that could fail): $SQUAD_HOST
    # is the server only for a command that names where in SQUAD the results go.
    where = [getattr(args, n) for n in ("group", "project", "build", "environment")]
    url = args.submit or (os.environ.get("SQUAD_HOST") if all(where) else None)
    if url:
        missing = [n for n in ("group", "project", "build", "environment") if not getattr(args, n)]
        if missing:
            raise RtgateError("--submit needs " + ", ".join(f"--{n}" for n in missing))
        token = os.environ.get("SQUAD_TOKEN")
        if not token:
            raise RtgateError("--submit needs the SQUAD API token in $SQUAD_TOKEN")
        testrun = submit(url, token, args.group, args.project, args.build, args.environment, documents)
        print(f"rtgate: SQUAD test run {testrun}: {len(tests)} tests, {len(metrics)} metrics")
    elif not args.output_dir:
        sys.stdout.write(json.dumps(documents, indent=2, sort_keys=True) + "\n")
    return 0
