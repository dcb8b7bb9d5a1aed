# SPDX-License-Identifier: GPL-2.0-or-later
"""Rank statistics for run-to-run comparisons: small samples, heavy tails, no normality assumed."""

from __future__ import annotations

import itertools
import math
import random
from functools import cache, lru_cache
from statistics import median

import numpy as np

from rtgate.history.figures import Interval


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
    chosen = rng.random((MONTE_CARLO, n_total)).argsort(axis=1)[:, :n_new]
    rows = np.zeros((MONTE_CARLO, n_total))
    np.put_along_axis(rows, chosen, 1.0, axis=1)
    return rows, False


def _marginal_p(sorted_col: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per value, the share of the permutation distribution at or above it."""
    return (len(sorted_col) - np.searchsorted(sorted_col, values - 1e-9, side="left")) / len(sorted_col)


def _column_p(sorted_col: np.ndarray, values: np.ndarray) -> np.ndarray:
    """_marginal_p of every value of a column, computed once per distinct value: rank statistics
    take few, and searching 20,000 unsorted values was most of a comparison's time."""
    distinct, where = np.unique(values, return_inverse=True)
    return _marginal_p(sorted_col, distinct)[where.reshape(-1)]


def _adjusted(z: np.ndarray, observed: np.ndarray, exact: bool, live: np.ndarray) -> tuple[list[float], list[float]]:
    """Single-step min-P adjusted p-values (Westfall and Young), one-sided each way: a cell's
    p-value is the chance that the smallest marginal p-value over all cells reaches its own. The
    family's chance of any false alarm stays at alpha without Bonferroni, and when every cell
    moves together the smallest p-value is that of one test alone (1/32 at five pairs). Min-P,
    not max-T: rank statistics with ties have lumpy, unequal ranges that max-T would mix."""
    out: list[list[float]] = []
    for sign in (1.0, -1.0):
        t = sign * z
        cols = np.sort(t, axis=0)
        min_p = np.min([_column_p(cols[:, k], t[:, k]) for k in range(t.shape[1])], axis=0)
        ps = []
        for k, obs in enumerate(sign * observed):
            p_obs = float(_marginal_p(cols[:, k], np.array([obs]))[0])
            hits = int((min_p <= p_obs + 1e-12).sum())
            ps.append(hits / len(t) if exact else (hits + 1) / (len(t) + 1))
        full = [1.0] * len(live)
        for i, p in zip(np.flatnonzero(live), ps):
            full[int(i)] = p
        out.append(full)
    return out[0], out[1]


def two_sample_adjusted(scores: list[list[float]], n_base: int, seed: int = 1) -> tuple[list[float], list[float]]:
    """Permutation test that the last runs ('new') score higher (worse) or lower (better) than the
    first n_base, one row of scores per cell: per cell, the max-T adjusted p-values (worse, better)."""
    s = np.asarray(scores, dtype=float)
    n_total = s.shape[1]
    n_new = n_total - n_base
    s = s - s.mean(axis=1, keepdims=True)
    # Permutation variance of a group sum of centred scores: constant for every arrangement.
    sd = np.sqrt(n_base * n_new / (n_total * (n_total - 1.0)) * (s**2).sum(axis=1))
    live = sd > 0
    if not live.any():
        return [1.0] * len(s), [1.0] * len(s)
    rows, exact = _group_indicators(n_total, n_new, np.random.default_rng(seed))
    z = rows @ s[live].T / sd[live]
    observed = np.concatenate([np.zeros(n_base), np.ones(n_new)]) @ s[live].T / sd[live]
    return _adjusted(z, observed, exact, live)


def paired_adjusted(scores: list[list[float]], seed: int = 1) -> tuple[list[float], list[float]]:
    """Sign-flip permutation test over pairs (positive score: the pair's new run is worse); under
    "no change" either run of a pair could have been the new one. Per cell, adjusted (worse, better)."""
    s = np.asarray(scores, dtype=float)
    pairs = s.shape[1]
    sd = np.sqrt((s**2).sum(axis=1))
    live = sd > 0
    if not live.any():
        return [1.0] * len(s), [1.0] * len(s)
    if 2**pairs <= EXACT_LIMIT:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=pairs)))
        exact = True
    else:
        signs = np.random.default_rng(seed).choice((1.0, -1.0), size=(MONTE_CARLO, pairs))
        exact = False
    z = signs @ s[live].T / sd[live]
    observed = s[live].sum(axis=1) / sd[live]
    return _adjusted(z, observed, exact, live)


def two_sample_max_test(scores: list[list[float]], n_base: int, seed: int = 1) -> tuple[float, float, int, int]:
    """The family's p-values (worse, better) over cells, and the cell most against "no change"
    each way."""
    worse, better = two_sample_adjusted(scores, n_base, seed)
    return min(worse), min(better), int(np.argmin(worse)), int(np.argmin(better))


def paired_max_test(scores: list[list[float]], seed: int = 1) -> tuple[float, float, int, int]:
    """As two_sample_max_test, for pairs (sign flips)."""
    worse, better = paired_adjusted(scores, seed)
    return min(worse), min(better), int(np.argmin(worse)), int(np.argmin(better))


def hodges_lehmann(new: list[float], base: list[float] | None = None) -> float:
    """The shift the rank tests estimate: the median of all differences new - base (two samples),
    or of the Walsh averages of paired differences (base None: `new` holds the differences)."""
    a = np.asarray(new, dtype=float)
    if base is None:
        i, j = np.triu_indices(len(a))
        return float(np.median((a[i] + a[j]) / 2.0))
    return float(np.median(a[:, None] - np.asarray(base, dtype=float)[None, :]))


def shift_interval(
    new: list[float], base: list[float] | None = None, rounds: int = 2000, seed: int = 1
) -> tuple[float, float]:
    """A 95 % bootstrap interval of hodges_lehmann (runs, or pairs, resampled)."""
    rng = np.random.default_rng(seed)
    a = np.asarray(new, dtype=float)
    sa = a[rng.integers(0, len(a), (rounds, len(a)))]
    if base is None:
        i, j = np.triu_indices(len(a))
        est = np.median((sa[:, i] + sa[:, j]) / 2.0, axis=1)
    else:
        b = np.asarray(base, dtype=float)
        sb = b[rng.integers(0, len(b), (rounds, len(b)))]
        est = np.median((sa[:, :, None] - sb[:, None, :]).reshape(rounds, -1), axis=1)
    lo, hi = np.quantile(est, [0.025, 0.975])
    return float(lo), float(hi)


def normal_quantile(p: float) -> float:
    """z with P(Z < z) = p."""
    from statistics import NormalDist

    return NormalDist().inv_cdf(p)


def t_quantile(p: float, df: float) -> float:
    """Student's t quantile by a Cornish-Fisher expansion: small samples get the wider quantile."""
    z = normal_quantile(p)
    if df <= 0:
        return math.inf
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def signed_ranks(diffs: list[float]) -> list[float]:
    """Wilcoxon's signed ranks: robust to a few pairs with huge differences (heavy tails)."""
    d = np.asarray(diffs, dtype=float)
    nonzero = d != 0
    out = np.zeros(len(d))
    if nonzero.any():
        out[nonzero] = np.sign(d[nonzero]) * midranks(list(np.abs(d[nonzero])))
    return [float(x) for x in out]
