# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate plot THRESHOLDS RESULTS...: PNG plots of results (histogram, latency over time)."""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

from rtgate.commands import add_command, add_results, add_thresholds
from rtgate.commands.results_args import map_results
from rtgate.core.model import RunResult
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
    mapped = map_results(tf, args.results)
    for (name, run), stem in zip(mapped, plot_stems(mapped)):
        m = tf.measurements[name]
        for kind, what, fig in (
            ("histogram", "latency histogram", histogram_figure(run, m, tf.platform)),
            ("timeline", "block maxima over time", timeline_figure(run, m, tf.platform)),
        ):
            path = out / f"{stem}-{kind}.png"
            write_bytes(path, png(fig))
            print(f"wrote {path} ({what} of {name}, {run.source})")
    return 0


def plot_stems(mapped: list[tuple[str, RunResult]]) -> list[str]:
    """Each plot's name says what it shows: <measurement>-histogram.png; a measurement given several
    results adds each one's file name (idle-run2-histogram.png), and a number when those repeat too."""
    counts = Counter(name for name, _ in mapped)
    stems: list[str] = []
    for name, run in mapped:
        stem = name if counts[name] == 1 else f"{name}-{_safe(Path(run.source).stem)}"
        base, n = stem, 2
        while stem in stems:
            stem, n = f"{base}-{n}", n + 1
        stems.append(stem)
    return stems


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:60] or "results"
