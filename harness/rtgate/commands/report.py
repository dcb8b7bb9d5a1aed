# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate report THRESHOLDS RESULTS... -o report.html: one self-contained HTML report."""

from __future__ import annotations

import argparse

from rtgate.commands import add_command, add_results, add_thresholds
from rtgate.commands.results_args import add_accept_setup, map_results
from rtgate.core.setup import evaluate_measured, parse_accept
from rtgate.core.thresholds import load_thresholds
from rtgate.safe_io import check_output_file, write_text


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "report")
    add_thresholds(p)
    add_results(p)
    p.add_argument("-o", "--output", default="rtgate-report.html", metavar="FILE")
    p.add_argument(
        "--history",
        metavar="DB",
        help="add the trend over releases and the comparison of the last two (or --base/--new)",
    )
    p.add_argument("--base", metavar="RELEASE", help="with --history and --new: add a comparison")
    p.add_argument("--new", metavar="RELEASE")
    add_accept_setup(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from rtgate.reports.html import render_report

    check_output_file(args.output)  # before reading and rendering: fail now, not after
    tf = load_thresholds(args.thresholds)
    mapped = map_results(tf, args.results)
    accept = parse_accept(args.accept_setup)
    verdicts = [v for name, run in mapped for v in evaluate_measured(tf.measurements[name], run, accept)]
    section = None
    if args.history:
        from rtgate.history.compare import report_section

        name = mapped[0][0]
        gates = tf.measurements[name].gates
        section = report_section(args.history, tf.platform, name, gates, tf.history, args.base, args.new)
    html = render_report(tf, dict(mapped), verdicts, section)
    write_text(args.output, html)
    print(f"wrote {args.output}")
    return 0
