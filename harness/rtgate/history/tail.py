# SPDX-License-Identifier: GPL-2.0-or-later
"""Tail exceedance counts: how many samples of each run lie above a few thresholds.

One p99.9 per run throws away almost every sample; counting the samples above thresholds taken
from the pooled baseline (its 90th to 99.99th percentiles) keeps them all. The counts are exact
even when rt-tests' -h histogram overflowed, as long as the threshold lies inside its range:
every overflow sample is above it. Thresholds are therefore capped at the smallest histogram
range of the runs that overflowed."""

from __future__ import annotations

import math
from typing import Any

QUANTILES = (0.9, 0.99, 0.999, 0.9999)

Rows = list[list[Any]]  # [lo, hi, count] in us, hi None = open; ["overflow", range_end, count]


def overflow_range(rows: Rows) -> float | None:
    """The histogram's upper end when samples overflowed it, else None."""
    for lo, hi, c in rows:
        if lo == "overflow" and c:
            return float(hi)
    return None


def thresholds(base: list[Rows], quantiles: tuple[float, ...] = QUANTILES, cap: float | None = None) -> list[float]:
    """Bucket edges just above the pooled baseline's quantiles (count 'value >= T'), at most `cap`."""
    pooled: dict[tuple[float, float], float] = {}
    for rows in base:
        for lo, hi, c in rows:
            key = (float(hi), math.inf) if lo == "overflow" else (float(lo), math.inf if hi is None else float(hi))
            pooled[key] = pooled.get(key, 0) + c
    buckets = sorted(pooled.items())
    total = sum(c for _, c in buckets)
    out: set[float] = set()
    for q in quantiles:
        seen = 0.0
        for (lo, hi), c in buckets:
            seen += c
            if seen >= q * total:
                edge = hi if math.isfinite(hi) else lo  # above the quantile's bucket
                out.add(min(edge, cap) if cap is not None else edge)
                break
    return sorted(out)


def exceedances(rows: Rows, missed: int | None, threshold: float) -> tuple[float, float]:
    """(samples >= threshold, samples) for one thread; a missed period counts as above.

    A bucket that straddles the threshold (coarse log-width buckets) counts in proportion."""
    above, total = float(missed or 0), float(missed or 0)
    for lo, hi, c in rows:
        total += c
        if lo == "overflow":
            above += c if threshold <= hi else 0  # capped thresholds keep this exact
        elif lo >= threshold:
            above += c
        elif hi is not None and hi > threshold:
            above += c * (hi - threshold) / (hi - lo)
    return above, total
