# SPDX-License-Identifier: GPL-2.0-or-later
"""KCIDB I/O v5.3 for KernelCI: gates as tests with PASS/FAIL, figures as DONE tests with a number."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

from rtgate.core.gates import Status, Verdict
from rtgate.core.model import RunResult
from rtgate.core.recorded import recorded_environment
from rtgate.reports.described import describe_run

_STATUS = {Status.PASS: "PASS", Status.FAIL: "FAIL", Status.ERROR: "ERROR", Status.INCONCLUSIVE: "ERROR"}


def _node(text: str) -> str:
    """One element of a dotted path: dots would split it."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", text)


def kcidb_document(
    origin: str,
    build_id: str,
    platform: str,
    measurement: str,
    run: RunResult,
    verdicts: list[Verdict],
    run_number: int = 0,
) -> dict[str, Any]:
    """run_number keeps test ids unique when several runs go into one submission."""
    base = f"rt-tests.rtgate.{_node(measurement)}"
    start = datetime.now(timezone.utc).isoformat()
    described = describe_run(run)  # the machine and load rtgate run recorded, each item or "unknown (why)"
    env_misc: dict[str, Any] = {
        "platform": platform,
        "source": run.source,
        "kernel_release": (recorded_environment(run).get("system") or {}).get("kernel_release"),
    }
    if described.recorded:  # results measured by rtgate run: the machine and load it recorded
        env_misc.update({"machine": described.machine, "conditions": described.measurement})
    env = {"comment": platform, "misc": env_misc}
    tests: list[dict[str, Any]] = []

    def add(path: str, status: str, comment: str, number: dict[str, Any] | None, misc: dict[str, Any]) -> None:
        test: dict[str, Any] = {
            "id": f"{origin}:{build_id}:{run_number}:{path}:{len(tests)}",
            "build_id": build_id,
            "origin": origin,
            "path": path,
            "status": status,
            "start_time": start,
            "environment": env,
            "comment": comment[:1000],
            "misc": misc,
        }
        if number is not None:
            test["number"] = number
        tests.append(test)

    for v in verdicts:
        number = None
        if v.value is not None:
            if v.unit == "%":
                number = {"value": v.value * 100.0, "unit": "%", "prefix": "metric"}
            elif v.unit == "periods":  # a count: no SI prefix ("5 periods", not "5 periods" scaled)
                number = {"value": v.value, "unit": "periods"}
            else:
                number = {"value": v.value * 1e-6, "unit": "s", "prefix": "metric"}
        add(
            f"{base}.{_node(v.gate)}.{_node(v.thread)}",
            _STATUS[v.status],
            (f"{v.status.value}: " if v.status == Status.INCONCLUSIVE else "") + v.reason,
            number,
            {"kind": v.kind, "limit": v.limit, "bound": v.bound, "samples": v.samples, "critical": v.critical},
        )
    scale = run.units_per_us()
    for t in run.threads:
        tid = f"cpu{t.cpu}" if t.cpu is not None and t.cpu >= 0 else f"t{t.index}"
        figures = {"min": t.min, "avg": t.avg, "max": t.max}
        if t.histogram is not None:
            for q in (99.0, 99.9):
                pv, over = t.histogram.percentile(q, t.max)
                if pv is not None and not over:
                    figures[f"p{q:g}".replace(".", "_")] = pv
        for name, value in figures.items():
            if value is not None:
                add(
                    f"{base}.{_node(tid)}.{name}",
                    "DONE",
                    f"{name} latency of {t.describe()}",
                    {"value": value / scale * 1e-6, "unit": "s", "prefix": "metric"},
                    {"cycles": t.cycles, "missed_periods": t.missed},
                )
    return {"version": {"major": 5, "minor": 3}, "tests": tests}
