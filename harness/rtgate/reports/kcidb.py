# SPDX-License-Identifier: GPL-2.0-or-later
"""KCIDB I/O v5.3 for KernelCI: gates as tests with PASS/FAIL, figures as DONE tests with a number.

Test ids must identify a test run uniquely among an origin's runs (KernelCI merges equal ids): each id carries a
digest of the build, the threshold files, the measurement and the results themselves (their figures, start time
and the machine they recorded), so two boards, two re-runs or two threshold files never share one, and exporting
the same results again gives the same ids. A figure known only as a range (a wide bucket, the overflow) has no
``number`` (a number is a point): its range is in ``misc.range`` and its comment.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

from rtgate.core.gates import Status, Verdict, thread_names
from rtgate.core.model import RunResult
from rtgate.core.recorded import recorded_environment
from rtgate.core.thresholds import Measurement
from rtgate.reports.described import describe_run
from rtgate.reports.verdicts_json import range_text, value_range

_STATUS = {Status.PASS: "PASS", Status.FAIL: "FAIL", Status.ERROR: "ERROR", Status.INCONCLUSIVE: "ERROR"}


def _node(text: str) -> str:
    """One element of a dotted path: dots would split it."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", text)


def run_digest(run: RunResult, *context: str) -> str:
    """A digest of the results (every figure, the start time and recorded machine, not the file's path) and of
    `context` (build, threshold files, measurement): the identity of one judged run."""
    fields = _known(dataclasses.asdict(run))
    fields.pop("source", None)
    text = json.dumps([fields, *context], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _known(value: Any) -> Any:
    """Without the fields a format does not say (None): a field the model gains later leaves the digest of
    the same results as it was."""
    if isinstance(value, dict):
        return {k: _known(v) for k, v in value.items() if v is not None}
    if isinstance(value, list) and value and isinstance(value[0], dict):  # threads; not a histogram's numbers
        return [_known(v) for v in value]
    return value


def start_time(run: RunResult) -> str | None:
    """When the measurement started, as RFC 3339 (rt-tests and rtgate-sampler write RFC 2822); None when the
    results do not say (cyclictest text output), or say it without a time zone."""
    text = run.start_time
    if not text:
        return None
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        try:
            when = datetime.fromisoformat(text)
        except ValueError:
            return None
    if when.tzinfo is None:
        return None
    return when.astimezone(timezone.utc).isoformat()


# A verdict's unit -> KCIDB's unit and the factor from rtgate's value (us, fraction, periods).
_VERDICT_UNITS: dict[str, tuple[str, float]] = {"%": ("%", 100.0), "periods": ("periods", 1.0)}
_SECONDS = ("s", 1e-6)


def _span(low: float | None, high: float | None, unit: str, scale: float) -> dict[str, Any]:
    """A range in misc: the ends in the number's unit (None: unbounded)."""
    return {
        "low": None if low is None else low * scale,
        "high": None if high is None else high * scale,
        "unit": unit,
        "why": "only a range is known: the histogram does not resolve it (a bucket wider than 1 us, its overflow)",
    }


@dataclasses.dataclass
class _Tests:
    """The document's tests, numbered in the order added; what every test of the run shares."""

    origin: str
    build_id: str
    digest: str
    env: dict[str, Any]
    start: str | None
    duration: float | None
    tests: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    def add(self, path: str, status: str, comment: str, number: dict[str, Any] | None, misc: dict[str, Any]) -> None:
        test: dict[str, Any] = {
            "id": f"{self.origin}:rtgate-{self.digest}:{path}:{len(self.tests)}",
            "build_id": self.build_id,
            "origin": self.origin,
            "path": path,
            "status": status,
            "environment": self.env,
            "comment": comment[:1000],
            "misc": {**misc, "run": self.digest},
        }
        if self.start is not None:
            test["start_time"] = self.start
        if self.duration:
            test["duration"] = round(self.duration, 3)
        if number is not None:
            test["number"] = number
        self.tests.append(test)


def _verdict_tests(out: _Tests, base: str, verdicts: list[Verdict]) -> None:
    """One test per verdict: its status, and its value as a number, or as a range in misc."""
    for v in verdicts:
        number = None
        misc: dict[str, Any] = {
            "kind": v.kind,
            "limit": v.limit,
            "bound": v.bound,
            "samples": v.samples,
            "critical": v.critical,
        }
        unit, scale = _VERDICT_UNITS.get(v.unit, _SECONDS)
        known = value_range(v)
        if known is not None:
            misc["range"] = _span(*known, unit, scale)
        elif v.value is not None:
            number = {"value": v.value * scale, "unit": unit}
            if unit != "periods":  # a count: no SI prefix
                number["prefix"] = "metric"
        out.add(
            f"{base}.{_node(v.gate)}.{_node(v.thread)}",
            _STATUS[v.status],
            (f"{v.status.value}: " if v.status in (Status.ERROR, Status.INCONCLUSIVE) else "") + v.reason,
            number,
            misc,
        )


def _figure_tests(out: _Tests, base: str, run: RunResult, m: Measurement | None) -> None:
    """One DONE test per thread and figure (min, avg, max, p99, p99.9): a number in seconds, or
    the range the histogram allows."""
    scale = run.units_per_us()
    names = thread_names(run, m)
    for t in run.threads:
        tid = names[t.index]
        figures: dict[str, tuple[float | None, float | None]] = {
            "min": (t.min, t.min),
            "avg": (t.avg, t.avg),
            "max": (t.max, t.max),
        }
        if t.histogram is not None:
            for q in (99.0, 99.9):
                r = t.histogram.percentile_range(q, t.max)
                if r is not None:
                    figures[f"p{q:g}".replace(".", "_")] = r
        for name, (low, high) in figures.items():
            if low is None and high is None:
                continue
            misc: dict[str, Any] = {"cycles": t.cycles, "missed_periods": t.missed}
            what = f"{name} latency of {t.describe()}"
            if low == high:
                assert high is not None
                out.add(
                    f"{base}.{_node(tid)}.{name}",
                    "DONE",
                    what,
                    {"value": high / scale * 1e-6, "unit": "s", "prefix": "metric"},
                    misc,
                )
                continue
            lo_us, hi_us = (None if x is None else x / scale for x in (low, high))
            misc["range"] = _span(lo_us, hi_us, "s", 1e-6)
            out.add(
                f"{base}.{_node(tid)}.{name}",
                "DONE",
                f"{what}: {range_text(lo_us, hi_us, 'us')} (only a range is known)",
                None,
                misc,
            )


def kcidb_document(
    origin: str,
    build_id: str,
    platform: str,
    measurement: str,
    run: RunResult,
    verdicts: list[Verdict],
    thresholds_digest: str = "",
    duration: float | None = None,
    m: Measurement | None = None,
) -> dict[str, Any]:
    """`thresholds_digest`: a digest of the threshold files' contents (two files judging the same results give
    different ids); `duration`: the measurement's length in seconds; `m`: the measurement, naming the
    threads of results that state no CPU (thread_names)."""
    base = f"rt-tests.rtgate.{_node(measurement)}"
    digest = run_digest(run, build_id, thresholds_digest, measurement)
    described = describe_run(run)  # the machine and load rtgate run recorded, each item or "unknown (why)"
    env_misc: dict[str, Any] = {
        "platform": platform,
        "source": run.source,
        "kernel_release": (recorded_environment(run).get("system") or {}).get("kernel_release"),
    }
    if described.recorded:  # results measured by rtgate run: the machine and load it recorded
        env_misc.update({"machine": described.machine, "conditions": described.measurement})
    env = {"comment": platform, "misc": env_misc}
    out = _Tests(origin, build_id, digest, env, start_time(run), duration)
    _verdict_tests(out, base, verdicts)
    _figure_tests(out, base, run, m)
    return {"version": {"major": 5, "minor": 3}, "tests": out.tests}
