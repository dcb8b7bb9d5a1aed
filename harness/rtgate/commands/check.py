"""rtgate check THRESHOLDS RESULTS...: evaluate existing results (ours or real cyclictest's)."""

from __future__ import annotations

import argparse

from ..errors import RtgateError
from ..gates import Verdict, evaluate
from ..parsers import FORMATS, load_results
from ..thresholds import load_thresholds
from .common import add_report_options, report


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("check", help="evaluate results files against a threshold file")
    p.add_argument("thresholds", metavar="THRESHOLDS")
    p.add_argument("results", nargs="+", metavar="[MEASUREMENT=]RESULTS",
                   help="results file; prefix the measurement name when the file has several")
    p.add_argument("--format", choices=FORMATS, default="auto", help="results format (default: detect)")
    p.add_argument("--unit", choices=("us", "ns"), default="us", help="unit of text formats (default us)")
    add_report_options(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    tf = load_thresholds(args.thresholds)
    verdicts: list[Verdict] = []
    for item in args.results:
        name, sep, path = item.partition("=")
        if not sep or name not in tf.measurements:
            if sep and "/" not in name and name not in tf.measurements:
                raise RtgateError(f"no measurement {name!r} in {args.thresholds} "
                                  f"(measurements: {', '.join(tf.measurements)})")
            path = item
            if len(tf.measurements) != 1:
                raise RtgateError(f"{args.thresholds} has several measurements "
                                  f"({', '.join(tf.measurements)}): write MEASUREMENT={item}")
            name = next(iter(tf.measurements))
        verdicts.extend(evaluate(tf.measurements[name], load_results(path, args.format, args.unit)))
    return report(tf, verdicts, args)
