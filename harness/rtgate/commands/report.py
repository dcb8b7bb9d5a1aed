# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate report THRESHOLDS RESULTS... -o report.html: one self-contained HTML report."""

from __future__ import annotations

import argparse

from rtgate.commands import add_command
from rtgate.commands.results_args import map_results
from rtgate.core.setup import evaluate_measured
from rtgate.core.thresholds import load_thresholds
from rtgate.safe_io import write_text


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "report")
    p.add_argument("thresholds", metavar="THRESHOLDS")
    p.add_argument("results", nargs="+", metavar="[MEASUREMENT=]RESULTS")
    p.add_argument("-o", "--output", default="rtgate-report.html", metavar="FILE")
    p.add_argument("--history", metavar="DB", help="add the trend of the worst max over releases")
    p.add_argument("--base", metavar="RELEASE", help="with --history and --new: add a comparison")
    p.add_argument("--new", metavar="RELEASE")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from rtgate.reports.html import render_report

    tf = load_thresholds(args.thresholds)
    mapped = map_results(tf, args.results)
    verdicts = [v for name, run in mapped for v in evaluate_measured(tf.measurements[name], run)]
    trend_values = None
    comparisons = None
    if args.history:
        from rtgate.history.compare import Settings, _values, compare_releases
        from rtgate.history.store import HistoryDB

        name = mapped[0][0]
        with HistoryDB(args.history) as db:
            trend_values = {
                r: _values(db.threads(tf.platform, name, r), "max").get("worst", [])
                for r in db.releases(tf.platform, name)
            }
            if args.base and args.new:
                comparisons = compare_releases(db, tf.platform, name, args.base, args.new, Settings(**tf.history))
    html = render_report(tf, dict(mapped), verdicts, trend_values, comparisons)
    write_text(args.output, html)
    print(f"wrote {args.output}")
    return 0
