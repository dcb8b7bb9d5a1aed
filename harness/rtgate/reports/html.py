# SPDX-License-Identifier: GPL-2.0-or-later
"""One self-contained HTML file: verdicts, plots (embedded), worst-case estimate, trend, environment."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import jinja2

from rtgate.core.gates import Status, Verdict
from rtgate.core.model import RunResult
from rtgate.core.thresholds import ThresholdFile
from rtgate.reports.described import describe_runs, labelled
from rtgate.reports.evt import estimate
from rtgate.reports.plots import gate_limit, histogram_figure, png, timeline_figure, trend_figure
from rtgate.reports.text import limit_text


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def render_report(
    tf: ThresholdFile,
    runs: dict[str, RunResult],
    verdicts: list[Verdict],
    history: Any | None = None,
) -> str:
    """`history`: a history.compare.ReportSection (trend, and the comparison in the CLI's words)."""
    sections = []
    for name, run in runs.items():
        m = tf.measurements.get(name)
        images = [{"alt": f"latency histogram of {name}", "data": _b64(png(histogram_figure(run, m, tf.platform)))}]
        est = None
        blocks = [t.block_maxima for t in run.threads if t.block_maxima and t.block_maxima.values]
        if blocks:
            images.append(
                {"alt": f"latency over time of {name}", "data": _b64(png(timeline_figure(run, m, tf.platform)))}
            )
            worst = max(blocks, key=lambda b: max(b.values))
            if len(worst.values) >= 2 and worst.block_seconds > 0:
                est = estimate([v / run.units_per_us() for v in worst.values], worst.block_seconds)
        sections.append({"title": f"Measurement {name}", "images": images, "estimate": est})
    if history is not None and history.per_release:
        figure = trend_figure(
            history.per_release, history.metric, gate_limit(history.limit_gates, history.metric), history.verdict
        )
        sections.append(
            {
                "title": "Trend over releases",
                "images": [{"alt": f"trend of {history.metric}", "data": _b64(png(figure))}],
                "estimate": None,
            }
        )
    # Every recorded condition, read from the results (and the environment file rtgate run wrote beside them).
    environment = dict(labelled(describe_runs(list(runs.items()))))
    statuses = {v.status for v in verdicts}
    overall = (
        "FAIL"
        if statuses & {Status.FAIL, Status.ERROR}
        else "INCONCLUSIVE"
        if Status.INCONCLUSIVE in statuses
        else "PASS"
    )
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")), autoescape=True)
    env.filters["limit_text"] = limit_text
    return env.get_template("report.html.jinja2").render(
        platform=tf.platform,
        description=tf.description,
        overall=overall,
        verdicts=verdicts,
        sections=sections,
        comparisons=history.comparisons if history is not None else [],
        comparison_lines=history.lines if history is not None else [],
        environment=environment,
    )
