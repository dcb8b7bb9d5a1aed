# SPDX-License-Identifier: GPL-2.0-or-later
"""SQUAD (the results store LKFT uses): tests, metrics and metadata as its submit API takes them.

SQUAD's ``POST /api/submit/<group>/<project>/<build>/<environment>`` takes three JSON documents, as form fields
or files named ``tests``, ``metrics`` and ``metadata`` (squad-client's ``submit`` sends the same three):

- tests: ``{"<suite>/<test>": {"result": "pass"|"fail"|"skip", "log": "..."}}``. One test per gate and thread
  under the suite ``rtgate/<platform>/<measurement>``; FAIL, ERROR and INCONCLUSIVE are ``fail`` (INCONCLUSIVE is
  ``skip`` where it is allowed), so nothing unmeasured reads as a pass.
- metrics: ``{"<suite>/<metric>": {"value": x, "unit": "us"}}``: each gate's measured figure and each thread's
  min/avg/max/p99/p99.9. A metric is a number, so a figure known only as a range (a wide histogram bucket, the
  overflow) is no metric: the gate's test log and the test run's log (the ``log`` field) give the range.
- metadata: a flat object: platform, threshold file, kernel release, board, and whatever the caller adds.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from rtgate.core.gates import Status, Verdict, thread_names
from rtgate.core.model import RunResult, ThreadResult
from rtgate.core.thresholds import Measurement
from rtgate.errors import RtgateError
from rtgate.reports.verdicts_json import range_text, value_range

_SLUG = re.compile(r"[^A-Za-z0-9_.-]")


def _slug(text: str) -> str:
    """SQUAD splits a test name at '/': keep each part free of it."""
    return _SLUG.sub("_", text)


def _result(v: Verdict, allow_inconclusive: bool) -> str:
    if v.status == Status.PASS:
        return "pass"
    if v.status == Status.INCONCLUSIVE and allow_inconclusive:
        return "skip"
    return "fail"


def _gate_metric(v: Verdict) -> dict[str, Any] | None:
    if v.value is None or value_range(v) is not None:
        return None
    if v.unit == "%":
        return {"value": v.value * 100.0, "unit": "%"}
    return {"value": v.value, "unit": v.unit or "us"}


def _thread_figures(run: RunResult, t: ThreadResult) -> dict[str, tuple[float | None, float | None]]:
    """A thread's figures in us as (low, high): equal ends where the figure is known, a range where not."""
    scale = run.units_per_us()
    figures: dict[str, tuple[float | None, float | None]] = {
        name: (None if x is None else x / scale,) * 2 for name, x in (("min", t.min), ("avg", t.avg), ("max", t.max))
    }
    if t.histogram is not None:
        for q in (99.0, 99.9):
            r = t.histogram.percentile_range(q, t.max)
            if r is not None:
                figures[f"p{q:g}"] = (r[0] / scale, None if r[1] is None else r[1] / scale)
    return figures


def _range_note(name: str, low: float | None, high: float | None, unit: str) -> str:
    why = "only a range is known (a wide histogram bucket or its overflow), so no metric"
    return f"{name}: {range_text(low, high, unit)}: {why}"


def squad_log(
    platform: str,
    runs: list[tuple[str, RunResult, list[Verdict]]],
    measurements: Mapping[str, Measurement] | None = None,
) -> str:
    """The test run's log: every figure that is no metric because only a range of it is known.

    measurements: the threshold file's, naming the threads of results that state no CPU (thread_names)."""
    lines = []
    for measurement, run, verdicts in runs:
        suite = f"rtgate/{_slug(platform)}/{_slug(measurement)}"
        for v in verdicts:
            known = value_range(v)
            if known is not None:
                low, high = known
                if v.unit == "%":
                    low, high = (None if x is None else x * 100.0 for x in known)
                lines.append(_range_note(f"{suite}/{_slug(v.gate)}-{_slug(v.thread)}", low, high, v.unit or "us"))
        names = thread_names(run, (measurements or {}).get(measurement))
        for t in run.threads:
            for fig, (low, high) in _thread_figures(run, t).items():
                if low != high:
                    lines.append(_range_note(f"{suite}/{names[t.index]}-{fig}", low, high, "us"))
    return "".join(line + "\n" for line in lines)


def squad_documents(
    platform: str,
    runs: list[tuple[str, RunResult, list[Verdict]]],
    allow_inconclusive: bool = False,
    measurements: Mapping[str, Measurement] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The tests and metrics documents for the measurements given as (name, results, verdicts)."""
    tests: dict[str, Any] = {}
    metrics: dict[str, Any] = {}
    for measurement, run, verdicts in runs:
        suite = f"rtgate/{_slug(platform)}/{_slug(measurement)}"
        for v in verdicts:
            name = f"{_slug(v.gate)}-{_slug(v.thread)}"
            # ERROR and INCONCLUSIVE arrive as fail: the log says which, first
            log = f"{v.status.value}: {v.reason}" if v.status in (Status.ERROR, Status.INCONCLUSIVE) else v.reason
            if value_range(v) is not None:
                log += f"\n(the figure is {v.value_text}: only a range is known, so no metric)"
            tests[f"{suite}/{name}"] = {"result": _result(v, allow_inconclusive), "log": log}
            figure = _gate_metric(v)
            if figure is not None:
                metrics[f"{suite}/{name}"] = figure
        names = thread_names(run, (measurements or {}).get(measurement))
        for t in run.threads:
            for fig, (low, high) in _thread_figures(run, t).items():
                if low is not None and low == high:  # a range is no metric (squad_log names it)
                    metrics[f"{suite}/{names[t.index]}-{fig}"] = {"value": high, "unit": "us"}
    return tests, metrics


def submit(
    url: str,
    token: str,
    group: str,
    project: str,
    build: str,
    environment: str,
    documents: dict[str, Any],
    timeout: float = 60.0,
) -> str:
    """POST the documents to a SQUAD server; returns the id of the test run it created."""
    parts = [urllib.parse.quote(p, safe="") for p in (group, project, build, environment)]
    endpoint = url.rstrip("/") + "/api/submit/" + "/".join(parts)
    fields = {k: v if isinstance(v, str) else json.dumps(v) for k, v in documents.items()}  # the log is text
    body = urllib.parse.urlencode(fields).encode()
    request = urllib.request.Request(endpoint, data=body, method="POST", headers={"Auth-Token": token})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return str(response.read().decode("utf-8", "replace")).strip()
    except urllib.error.HTTPError as e:
        detail = e.read().decode("utf-8", "replace").strip().splitlines()
        raise RtgateError(
            f"SQUAD refused the submission ({e.code}): {detail[0] if detail else e.reason}", path=endpoint
        ) from None
    except (urllib.error.URLError, OSError) as e:
        raise RtgateError(f"cannot reach SQUAD: {getattr(e, 'reason', e)}", path=endpoint) from None
