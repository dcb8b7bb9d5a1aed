# SPDX-License-Identifier: GPL-2.0-or-later
"""One figure per run (max, avg, min, p99, p99.9, share above a latency) from the stored threads,
and the trend of a figure over releases.

Apart from the statistics (stats.py, numpy) so that `history trend` loads neither numpy nor a
histogram it does not need: at 10,000 runs, decoding every histogram was most of its time."""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import median
from typing import TYPE_CHECKING, Any

from rtgate.history.tail import overflow_range

if TYPE_CHECKING:
    from rtgate.history.store import HistoryDB, StoredThread


@dataclass(frozen=True)
class Interval:
    """A per-run figure known to lie in [lo, hi]: exact when lo == hi; a percentile inside an
    rt-tests overflow is [range_end, max] (or [range_end, inf) without a max)."""

    lo: float
    hi: float

    @property
    def censored(self) -> bool:
        return self.hi > self.lo


def histograms_needed(metrics: list[str]) -> str:
    """Which stored histograms these metrics read (HistoryDB.threads): every one for a share above
    a latency or the tail family, else only where a percentile lies in an overflow."""
    if any(m == "tail" or m.startswith("above_") for m in metrics):
        return "all"
    return "censored" if any(m in ("p99", "p99.9") for m in metrics) else "none"


def tail_fraction(t: StoredThread, limit_us: float, unit_scale: float = 1.0) -> float | None:
    """Share of the run's samples (missed periods count) above a limit, counted conservatively."""
    if t.histogram is None:
        return None
    limit = limit_us * unit_scale
    above = 0
    for lo, hi, c in t.histogram:
        if lo == "overflow" or hi is None or hi - 1 > limit:
            above += c
    n = t.cycles + (t.missed or 0)
    return (above + (t.missed or 0)) / n if n else None


def percentile_interval(t: StoredThread, q: float) -> Interval | None:
    """The stored percentile, or, when it lies in the overflow, the bound [range_end, max]."""
    key = "p99" if q == 99.0 else "p99.9"
    if t.figures.get(key) is not None:
        return Interval(float(t.figures[key]), float(t.figures[key]))  # type: ignore[arg-type]
    if not t.histogram:
        return None
    total = sum(c for _, _, c in t.histogram)
    in_buckets = sum(c for lo, _, c in t.histogram if lo != "overflow")
    end = overflow_range(t.histogram)
    if end is None or total == 0 or in_buckets >= max(1, math.ceil(q * total / 100.0 - 1e-9)):
        return None
    top = t.figures.get("max")
    return Interval(end, max(end, float(top)) if top is not None else math.inf)


def figure(t: StoredThread, metric: str) -> Interval | None:
    if metric.startswith("above_"):
        v = tail_fraction(t, float(metric[len("above_") :]))
    elif metric in ("p99", "p99.9"):
        return percentile_interval(t, float(metric[1:]))
    else:
        v = t.figures.get(metric)
    return None if v is None else Interval(float(v), float(v))


def intervals(threads: list[StoredThread], metric: str) -> dict[str, dict[int, Interval]]:
    """Per thread, and for the worst thread of each run, the figure of each run (by run id)."""
    per: dict[str, dict[int, Interval]] = {}
    worst: dict[int, Interval] = {}
    for t in threads:
        v = figure(t, metric)
        if v is None:
            continue
        per.setdefault(t.thread, {})[t.run_id] = v
        w = worst.get(t.run_id)
        worst[t.run_id] = v if w is None else Interval(max(w.lo, v.lo), max(w.hi, v.hi))
    per["worst"] = worst
    return per


def run_values(threads: list[StoredThread], metric: str) -> dict[str, list[float]]:
    """Per thread and worst, one value per run (a censored figure as its lower bound): for trends."""
    return {k: [v.lo for v in d.values()] for k, d in intervals(threads, metric).items()}


def per_release_values(db: HistoryDB, platform: str, measurement: str, metric: str) -> dict[str, list[float]]:
    """Per release in the order added, the metric of the worst thread of each valid run.

    Every release in a few queries; a stored figure is aggregated by the database, and only runs
    with a percentile in an overflow (a bound) have their histograms read."""
    from rtgate.history.store import STORED_FIGURES

    bad = db.error_runs(platform, measurement, None)
    out: dict[str, list[float]] = {release: [] for release in db.releases(platform, measurement)}
    if metric not in STORED_FIGURES:  # a share above a latency: from every histogram
        by_release: dict[str, list[StoredThread]] = {}
        for t in db.threads(platform, measurement, None, histograms_needed([metric])):
            if t.run_id not in bad:
                by_release.setdefault(t.kernel_release, []).append(t)
        return {release: run_values(by_release.get(release, []), metric).get("worst", []) for release in out}
    rows = [row for row in db.worst_figures(platform, measurement, metric) if row[1] not in bad]
    # A percentile a thread has only as a bound (in an overflow): that run from its histograms.
    bounded = [run for _, run, _, unknown in rows if unknown] if metric in ("p99", "p99.9") else []
    bounds = intervals(db.run_threads(bounded, "censored"), metric)["worst"] if bounded else {}
    for release, run, value, unknown in rows:
        if bounded and unknown:
            if run in bounds:
                out[release].append(bounds[run].lo)
        elif value is not None:
            out[release].append(float(value))
    return out


def trend(db: HistoryDB, platform: str, measurement: str, metric: str) -> list[dict[str, Any]]:
    """Per release in the order added: runs, median and range of the metric over the worst thread."""
    rows = []
    for release, values in per_release_values(db, platform, measurement, metric).items():
        rows.append(
            {
                "release": release,
                "runs": len(values),
                "median": median(values) if values else None,
                "min": min(values) if values else None,
                "max": max(values) if values else None,
            }
        )
    return rows
