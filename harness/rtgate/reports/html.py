# SPDX-License-Identifier: GPL-2.0-or-later
"""One self-contained HTML file: verdicts, plots (embedded), worst-case estimate, trend, environment."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import jinja2

from rtgate.core import validity
from rtgate.core.gates import Status, Verdict
from rtgate.core.model import RunResult
from rtgate.core.thresholds import ThresholdFile
from rtgate.measure import busy
from rtgate.reports.evt import estimate
from rtgate.reports.plots import histogram_figure, png, timeline_figure, trend_figure
from rtgate.reports.text import limit_text


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _recorded_environment(run: RunResult) -> dict[str, Any]:
    """What `rtgate run` recorded about a measurement: in memory when it has just run, else the
    <measurement>.environment.json written beside the results (when it is about these results)."""
    env = dict(run.environment)
    if env.get("system"):
        return env
    source = Path(run.source)
    try:
        doc = json.loads(validity.environment_path(source).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        doc = None
    if isinstance(doc, dict) and doc.get("results") == source.name:
        env = {**doc, **env}
    record = env.get(validity.RECORD)
    if isinstance(record, dict):
        env.setdefault("machine_load", record.get("machine_load"))
        env.setdefault("load", record.get("load"))
    return env


def render_report(
    tf: ThresholdFile,
    runs: dict[str, RunResult],
    verdicts: list[Verdict],
    trend: dict[str, list[float]] | None = None,
    comparisons: list[Any] | None = None,
) -> str:
    sections = []
    environment: dict[str, Any] = {}
    for name, run in runs.items():
        m = tf.measurements.get(name)
        images = [{"alt": f"latency histogram of {name}", "data": _b64(png(histogram_figure(run, m)))}]
        est = None
        blocks = [t.block_maxima for t in run.threads if t.block_maxima and t.block_maxima.values]
        if blocks:
            images.append({"alt": f"latency over time of {name}", "data": _b64(png(timeline_figure(run, m)))})
            worst = max(blocks, key=lambda b: max(b.values))
            if len(worst.values) >= 2 and worst.block_seconds > 0:
                est = estimate([v / run.units_per_us() for v in worst.values], worst.block_seconds)
        sections.append({"title": f"Measurement {name}", "images": images, "estimate": est})
        recorded = _recorded_environment(run)
        system: dict[str, Any] = recorded["system"] if isinstance(recorded.get("system"), dict) else {}
        for key in ("kernel_release", "preemption", "cpu_model", "cpu_count", "virtualisation", "sched_rt_runtime_us"):
            if system.get(key) is not None:
                environment[key] = system[key]
        machine = system.get("machine") or {}
        board = machine.get("board") or {}
        for label, value in (
            ("clocksource", machine.get("clocksource")),
            ("cpuidle", machine.get("cpuidle_driver")),
            ("PM QoS latency (us)", machine.get("pm_qos_latency_us")),
            ("SMT active", (machine.get("topology") or {}).get("smt_active")),
            ("irqbalance running", machine.get("irqbalance_running")),
            ("timer_migration", machine.get("timer_migration")),
            ("transparent hugepages", machine.get("transparent_hugepage")),
            ("isolated CPUs (kernel)", machine.get("isolated_cpus")),
            ("board", board.get("dt_model") or board.get("dmi_product_name")),
        ):
            if value not in (None, "", []):
                environment[label] = value
        load = recorded.get("load")
        if isinstance(load, dict) and load.get("kind"):
            environment[f"{name} load"] = load["kind"]
        machine_load = recorded.get("machine_load")
        if isinstance(machine_load, dict):
            environment[f"{name} machine load"] = busy.describe(machine_load)
            if machine_load.get("busy"):
                environment[f"{name} busy machine"] = "; ".join(machine_load["busy"])
    if trend:
        sections.append(
            {
                "title": "Trend over releases",
                "images": [{"alt": "trend", "data": _b64(png(trend_figure(trend, "max")))}],
                "estimate": None,
            }
        )
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
        comparisons=comparisons or [],
        environment=environment,
    )
