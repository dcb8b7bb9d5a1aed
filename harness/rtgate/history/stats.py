"""Rank statistics for run-to-run comparisons: small samples, heavy tails, no normality assumed."""

from __future__ import annotations

import math
import random
from functools import lru_cache
from statistics import median


@lru_cache(maxsize=None)
def _u_counts(m: int, n: int) -> tuple[int, ...]:
    """How many arrangements give each U = 0..m*n, for samples of m and n without ties."""
    if m == 0 or n == 0:
        return (1,)
    a, b = _u_counts(m - 1, n), _u_counts(m, n - 1)
    out = [0] * (m * n + 1)
    for u, c in enumerate(a):      # the largest value is one of the m: it beats all n
        out[u + n] += c
    for u, c in enumerate(b):      # the largest value is one of the n
        out[u] += c
    return tuple(out)


def mann_whitney_greater(x: list[float], y: list[float]) -> float:
    """One-sided p-value that x tends to be larger than y (Mann-Whitney U).

    Exact for small samples without ties; normal approximation with tie correction otherwise.
    """
    m, n = len(x), len(y)
    if m == 0 or n == 0:
        return 1.0
    u = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in x for b in y)
    ties = len(set(x) | set(y)) < m + n
    if not ties and m * n <= 900:
        counts = _u_counts(m, n)
        total = sum(counts)
        return sum(counts[int(round(u)):]) / total
    values = sorted(x + y)
    tie_sizes: dict[float, int] = {}
    for v in values:
        tie_sizes[v] = tie_sizes.get(v, 0) + 1
    big = m + n
    var = m * n / 12.0 * ((big + 1) - sum(t ** 3 - t for t in tie_sizes.values()) / (big * (big - 1)))
    if var <= 0:
        return 1.0
    z = (u - m * n / 2.0 - 0.5) / math.sqrt(var)  # continuity correction
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def bootstrap_median_diff(new: list[float], base: list[float], rounds: int = 2000,
                          seed: int = 1) -> tuple[float, float]:
    """A 95 % bootstrap interval of median(new) - median(base)."""
    rng = random.Random(seed)
    diffs = sorted(median(rng.choices(new, k=len(new))) - median(rng.choices(base, k=len(base)))
                   for _ in range(rounds))
    return diffs[int(0.025 * rounds)], diffs[int(0.975 * rounds) - 1]
