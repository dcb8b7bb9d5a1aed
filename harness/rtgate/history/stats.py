# SPDX-License-Identifier: GPL-2.0-or-later
"""Rank statistics for run-to-run comparisons: small samples, heavy tails, no normality assumed."""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass
from functools import cache, lru_cache
from statistics import median

import numpy as np


@cache
def _u_counts(m: int, n: int) -> tuple[int, ...]:
    """How many arrangements give each U = 0..m*n, for samples of m and n without ties."""
    if m == 0 or n == 0:
        return (1,)
    a, b = _u_counts(m - 1, n), _u_counts(m, n - 1)
    out = [0] * (m * n + 1)
    for u, c in enumerate(a):  # the largest value is one of the m: it beats all n
        out[u + n] += c
    for u, c in enumerate(b):  # the largest value is one of the n
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
        return sum(counts[round(u) :]) / total
    values = sorted(x + y)
    tie_sizes: dict[float, int] = {}
    for v in values:
        tie_sizes[v] = tie_sizes.get(v, 0) + 1
    big = m + n
    var = m * n / 12.0 * ((big + 1) - sum(t**3 - t for t in tie_sizes.values()) / (big * (big - 1)))
    if var <= 0:
        return 1.0
    z = (u - m * n / 2.0 - 0.5) / math.sqrt(var)  # continuity correction
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def bootstrap_median_diff(
    new: list[float], base: list[float], rounds: int = 2000, seed: int = 1
) -> tuple[float, float]:
    """A 95 % bootstrap interval of median(new) - median(base)."""
    rng = random.Random(seed)
    diffs = sorted(median(rng.choices(new, k=len(new))) - median(rng.choices(base, k=len(base))) for _ in range(rounds))
    return diffs[int(0.025 * rounds)], diffs[int(0.975 * rounds) - 1]


# --- Censoring-aware, permutation-calibrated tests ---------------------------------------------
#
# Runs are the unit of every test: a release's runs are exchangeable with the other release's
# under "no change", whatever the run-to-run spread, so permuting whole runs gives exact
# false-alarm rates without a model of that spread (it is heavy-tailed on real hosts).

EXACT_LIMIT = 20000  # enumerate every arrangement up to this many, else sample this many
MONTE_CARLO = 20000


@dataclass(frozen=True)
class Interval:
    """A per-run figure known to lie in [lo, hi]: exact when lo == hi; a percentile inside an
    rt-tests overflow is [range_end, max] (or [range_end, inf) without a max)."""

    lo: float
    hi: float

    @property
    def censored(self) -> bool:
        return self.hi > self.lo


def gehan_scores(values: list[Interval]) -> list[float]:
    """Gehan's generalised Wilcoxon score of each value against the pooled others: +1 for each
    value it certainly exceeds, -1 for each that certainly exceeds it, 0 when the intervals
    overlap (so "at least x" counts only where it is certain). Without censoring this is
    2 * midrank - (N + 1): the Mann-Whitney test."""
    lo = np.array([v.lo for v in values])
    hi = np.array([v.hi for v in values])
    above = (lo[:, None] > hi[None, :]).sum(axis=1)
    below = (hi[:, None] < lo[None, :]).sum(axis=1)
    return [float(x) for x in above - below]


def midranks(values: list[float]) -> np.ndarray:
    """Ranks 1..N, ties sharing their average rank."""
    a = np.asarray(values, dtype=float)
    order = a.argsort(kind="mergesort")
    ranks = np.empty(len(a))
    ranks[order] = np.arange(1, len(a) + 1)
    for v in np.unique(a):
        tied = a == v
        if tied.sum() > 1:
            ranks[tied] = ranks[tied].mean()
    return ranks


@lru_cache(maxsize=16)
def _all_arrangements(n_total: int, n_new: int) -> np.ndarray:
    rows = np.zeros((math.comb(n_total, n_new), n_total))
    for i, chosen in enumerate(itertools.combinations(range(n_total), n_new)):
        rows[i, list(chosen)] = 1.0
    rows.setflags(write=False)
    return rows


def _group_indicators(n_total: int, n_new: int, rng: np.random.Generator) -> tuple[np.ndarray, bool]:
    """Rows of 0/1 marking the 'new' runs: every arrangement, or a random sample of them."""
    if math.comb(n_total, n_new) <= EXACT_LIMIT:
        return _all_arrangements(n_total, n_new), True
    rows = np.zeros((MONTE_CARLO, n_total))
    for i in range(MONTE_CARLO):
        rows[i, rng.choice(n_total, n_new, replace=False)] = 1.0
    return rows, False


def two_sample_max_test(scores: list[list[float]], n_base: int, seed: int = 1) -> tuple[float, float, int, int]:
    """Permutation test that the last runs ('new') score higher than the first n_base ('base').

    `scores` holds one row per test cell (e.g. a threshold and thread), one score per run, base
    runs first. Each cell's statistic is its standardised rank sum over the new runs; the test
    statistic is the largest over the cells, so the cell where a change shows decides, and
    permuting whole runs keeps the cells' correlation: no Bonferroni needed within the family.
    Returns (p_worse, p_better, cell most against 'no change' for worse, for better)."""
    s = np.asarray(scores, dtype=float)
    _cells, n_total = s.shape
    n_new = n_total - n_base
    s = s - s.mean(axis=1, keepdims=True)
    # Permutation variance of a group sum of centred scores: constant for every arrangement.
    sd = np.sqrt(n_base * n_new / (n_total * (n_total - 1.0)) * (s**2).sum(axis=1))
    live = sd > 0
    if not live.any():
        return 1.0, 1.0, 0, 0
    s, sd = s[live], sd[live]
    index = np.flatnonzero(live)
    rows, exact = _group_indicators(n_total, n_new, np.random.default_rng(seed))
    z = rows @ s.T / sd  # arrangements x cells
    observed = np.concatenate([np.zeros(n_base), np.ones(n_new)]) @ s.T / sd
    out = []
    for sign in (1.0, -1.0):
        stat, obs = (sign * z).max(axis=1), (sign * observed).max()
        hits = int((stat >= obs - 1e-9).sum())
        out.append(hits / len(stat) if exact else (hits + 1) / (len(stat) + 1))
    return out[0], out[1], int(index[observed.argmax()]), int(index[observed.argmin()])


def paired_max_test(scores: list[list[float]], seed: int = 1) -> tuple[float, float, int, int]:
    """Sign-flip permutation test over pairs: one row per cell, one signed score per pair
    (positive: the new run of the pair is worse). Under "no change" either run of a pair could
    have been the new one, so each score's sign is a coin flip. Same max-over-cells statistic and
    return value as two_sample_max_test."""
    s = np.asarray(scores, dtype=float)
    _cells, pairs = s.shape
    sd = np.sqrt((s**2).sum(axis=1))
    live = sd > 0
    if not live.any():
        return 1.0, 1.0, 0, 0
    s, sd = s[live], sd[live]
    index = np.flatnonzero(live)
    if 2**pairs <= EXACT_LIMIT:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=pairs)))
        exact = True
    else:
        signs = np.random.default_rng(seed).choice((1.0, -1.0), size=(MONTE_CARLO, pairs))
        exact = False
    z = signs @ s.T / sd
    observed = s.sum(axis=1) / sd
    out = []
    for sign in (1.0, -1.0):
        stat, obs = (sign * z).max(axis=1), (sign * observed).max()
        hits = int((stat >= obs - 1e-9).sum())
        out.append(hits / len(stat) if exact else (hits + 1) / (len(stat) + 1))
    return out[0], out[1], int(index[observed.argmax()]), int(index[observed.argmin()])


def signed_ranks(diffs: list[float]) -> list[float]:
    """Wilcoxon's signed ranks: robust to a few pairs with huge differences (heavy tails)."""
    d = np.asarray(diffs, dtype=float)
    nonzero = d != 0
    out = np.zeros(len(d))
    if nonzero.any():
        out[nonzero] = np.sign(d[nonzero]) * midranks(list(np.abs(d[nonzero])))
    return [float(x) for x in out]
