# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate check THRESHOLDS RESULTS...: evaluate existing results (ours or real cyclictest's)."""

from __future__ import annotations

import argparse

from rtgate.commands import add_command, add_results, add_thresholds
from rtgate.commands.common import add_report_options, check_report_outputs, report
from rtgate.commands.results_args import add_accept_setup, add_cmdline, map_results
from rtgate.core.gates import Verdict
from rtgate.core.setup import evaluate_measured, parse_accept
from rtgate.core.thresholds import load_thresholds
from rtgate.parsers import FORMATS
from rtgate.reports.duration import measured_seconds


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "check")
    add_thresholds(p)
    add_results(p)
    p.add_argument("--format", choices=FORMATS, default="auto", help="results format (default: detect)")
    p.add_argument(
        "--unit",
        choices=("us", "ns"),
        default=None,
        help="unit of text formats (default us); refused when the results state another",
    )
    add_accept_setup(p)
    add_cmdline(p)
    add_report_options(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    check_report_outputs(args)  # before any result is read or verdict printed
    tf = load_thresholds(args.thresholds)
    accept = parse_accept(args.accept_setup)
    verdicts: list[Verdict] = []
    durations: dict[str, float] = {}
    mapped = map_results(tf, args.results, args.format, args.unit, args.cmdline)
    for name, run in mapped:
        verdicts.extend(evaluate_measured(tf.measurements[name], run, accept))
        seconds = measured_seconds(run, tf.measurements[name].sampler.interval_us) or 0.0
        durations[name] = durations.get(name, 0.0) + seconds
    return report(tf, verdicts, args, durations, runs=mapped)
