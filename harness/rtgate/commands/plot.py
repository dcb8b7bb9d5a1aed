# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate plot THRESHOLDS RESULTS...: PNG plots of results (histogram, latency over time)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rtgate.commands import add_command, add_results, add_thresholds
from rtgate.commands.results_args import map_results
from rtgate.core.thresholds import load_thresholds
from rtgate.safe_io import check_output_dir, write_bytes


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "plot")
    add_thresholds(p, "threshold file (path or shipped name) whose gate limits are drawn")
    add_results(p)
    p.add_argument("-o", "--output-dir", default=".", metavar="DIR")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from rtgate.reports.plots import histogram_figure, png, timeline_figure

    tf = load_thresholds(args.thresholds)
    out = Path(args.output_dir)
    check_output_dir(out)
    for i, (name, run) in enumerate(map_results(tf, args.results)):
        m = tf.measurements[name]
        for kind, fig in (
            ("histogram", histogram_figure(run, m, tf.platform)),
            ("timeline", timeline_figure(run, m, tf.platform)),
        ):
            path = out / f"{name}-{i}-{kind}.png"
            write_bytes(path, png(fig))
            print(f"wrote {path}")
    return 0
