# SPDX-License-Identifier: GPL-2.0-or-later
"""How long a measurement took, for the reports that carry a duration (JUnit times, KCIDB)."""

from __future__ import annotations

from rtgate.core.model import RunResult


def measured_seconds(run: RunResult, interval_us: float | None = None) -> float | None:
    """How long a measurement took: the wall time the results record, or else the periods its busiest thread
    went through (sampled and missed) times its interval (cyclictest output records no wall time)."""
    if run.elapsed_s:
        return float(run.elapsed_s)
    spans = []
    for t in run.threads:
        interval = t.interval_us or interval_us
        if interval:
            spans.append((t.cycles + (t.missed or 0)) * interval / 1e6)
    return max(spans) if spans else None
