# SPDX-License-Identifier: GPL-2.0-or-later
"""Rank statistics for run-to-run comparisons: small samples, heavy tails, no normality assumed."""

from __future__ import annotations

import math
from functools import cache, lru_cache

import numpy as np

from rtgate.history.draws import Draws
from rtgate.history.figures import Interval


@cache
def rank_sum_counts(m: int, n: int) -> tuple[int, ...]:
    """How many arrangements give each U = 0..m*n, for samples of m and n without ties."""
    if m == 0 or n == 0:
        return (1,)
    a, b = rank_sum_counts(m - 1, n), rank_sum_counts(m, n - 1)
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
        counts = rank_sum_counts(m, n)
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


# --- Censoring-aware, permutation-calibrated tests ---------------------------------------------
#
# Runs are the unit of every test: a release's runs are exchangeable with the other release's
# under "no change", whatever the run-to-run spread, so permuting whole runs gives exact
# false-alarm rates without a model of that spread (it is heavy-tailed on real hosts).
#
# Every score is a rank score, a multiple of 1/2 (Gehan's, midranks, signed ranks): twice it is
# an integer, so is each arrangement's group sum, and a cell's permutation distribution is a
# count per sum (np.bincount) instead of a sort of every arrangement's value.

EXACT_LIMIT = 20000  # enumerate every arrangement up to this many (more cost more than sampling: measured)
MONTE_CARLO = 20000  # else sample this many


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
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    first = 0
    while first < len(order):
        last = first
        while last + 1 < len(order) and values[order[last + 1]] == values[order[first]]:
            last += 1
        for k in order[first : last + 1]:
            ranks[k] = (first + last) / 2 + 1
        first = last + 1
    return np.asarray(ranks)


def _integer_scores(scores: list[list[float]]) -> np.ndarray:
    """Twice the rank scores, as integers (cells x runs)."""
    twice = 2.0 * np.asarray(scores, dtype=float)
    whole = np.rint(twice)
    if not np.array_equal(twice, whole):
        raise ValueError("the permutation tests take rank scores (multiples of 1/2)")
    return whole.astype(np.int64)


def _sums_by_size(q: np.ndarray, low: int, high: int) -> dict[int, np.ndarray]:
    """Per group size j in [low, high], the sums of q's columns over every group of j columns
    (cells x groups). Built a column at a time, keeping only the sizes that can still end in
    [low, high]."""
    n = q.shape[1]
    sums = {0: np.zeros((q.shape[0], 1), dtype=np.int64)}
    for i in range(n):
        after = n - i - 1
        grown: dict[int, np.ndarray] = {}
        for j in range(max(0, low - after), min(i + 1, high) + 1):
            parts = [sums[j]] if j in sums else []
            if j - 1 in sums:
                parts.append(sums[j - 1] + q[:, i : i + 1])
            if parts:
                grown[j] = np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]
        sums = grown
    return sums


def _group_sums(q: np.ndarray, size: int | None) -> np.ndarray:
    """The sums of q's columns over every group of `size` columns, or of any size (None), as
    cells x groups: each half's group sums, then every pairing of a group of one half with one
    of the other, so the work follows the number of groups, not their members."""
    n, cells = q.shape[1], q.shape[0]
    h = n // 2
    if size is None:
        lo, hi = (np.concatenate(list(_sums_by_size(p, 0, p.shape[1]).values()), axis=1) for p in (q[:, :h], q[:, h:]))
        every: np.ndarray = (lo[:, :, None] + hi[:, None, :]).reshape(cells, -1)
        return every
    lo_sums = _sums_by_size(q[:, :h], max(0, size - (n - h)), min(h, size))
    hi_sums = _sums_by_size(q[:, h:], max(0, size - h), min(n - h, size))
    blocks = [
        (lo[:, :, None] + hi_sums[size - j][:, None, :]).reshape(cells, -1)
        for j, lo in lo_sums.items()
        if size - j in hi_sums
    ]
    return np.concatenate(blocks, axis=1)


def _sampled_sums(q: np.ndarray, members: np.ndarray) -> np.ndarray:
    """The sums of q's columns over sampled groups (members: groups x runs, 0 or 1), cells x groups:
    a float product (BLAS: 4x faster than numpy's integer one), exact for these small integers."""
    sums: np.ndarray = np.rint(q.astype(float) @ members.T).astype(np.int64)
    return sums


def _adjusted(
    sums: np.ndarray, observed: np.ndarray, exact: bool, alpha: float = 0.05
) -> tuple[list[float], list[float], float]:
    """Single-step min-P adjusted p-values (Westfall and Young), one-sided each way: a cell's
    p-value is the chance that the smallest marginal p-value over all cells reaches its own. The
    family's chance of any false alarm stays at alpha without Bonferroni, and when every cell
    moves together the smallest p-value is that of one test alone (1/32 at five pairs). Min-P,
    not max-T: rank statistics with ties have lumpy, unequal ranges that max-T would mix.

    sums: each arrangement's group sum per cell (cells x arrangements, integers). A marginal
    p-value is kept as its count of arrangements at or beyond the sum: same order, no rounding.

    Also the family's per-line level at alpha: the largest marginal p-value a cell can have and
    still be declared (its adjusted p-value below alpha), the smaller of the two sides; 0 when no
    cell could be. Cells that disagree (different arrangements extreme for each) lower it toward
    alpha / cells; cells that move together keep it at alpha. The resolving power uses it."""
    total = sums.shape[1]
    low = sums.min(axis=1)
    least = (np.full(total, total), np.full(total, total))  # worse, better
    at_obs: tuple[list[int], list[int]] = ([], [])
    for k, row in enumerate(sums - low[:, None]):
        per_sum = np.bincount(row)
        for side, beyond in enumerate((np.cumsum(per_sum[::-1])[::-1], np.cumsum(per_sum))):  # >= / <= each sum
            np.minimum(least[side], beyond[row], out=least[side])
            obs = int(observed[k] - low[k])
            inside = 0 <= obs < len(beyond)
            at_obs[side].append(int(beyond[obs]) if inside else total if (obs < 0) == (side == 0) else 0)
    out = []
    for side in (0, 1):
        hits = [int(np.count_nonzero(least[side] <= c)) for c in at_obs[side]]
        out.append([h / total if exact else (h + 1) / (total + 1) for h in hits])
    # Declared: h arrangements at or below its count, h / total < alpha (exact) or (h + 1) /
    # (total + 1) < alpha; so a count below the (h_max + 1)-th smallest least.
    h_max = math.ceil(alpha * total) - 1 if exact else math.ceil(alpha * (total + 1)) - 2
    level = min((int(np.partition(side, h_max)[h_max]) - 1) / total if 0 <= h_max < total else 0.0 for side in least)
    return out[0], out[1], max(0.0, level)


def _spread_out(live: np.ndarray, ps: tuple[list[float], list[float], float]) -> tuple[list[float], list[float], float]:
    """The live cells' p-values in place, 1 for the cells whose scores cannot move."""
    out = []
    for side in ps[:2]:
        full = [1.0] * len(live)
        for i, p in zip(np.flatnonzero(live), side):
            full[int(i)] = p
        out.append(full)
    return out[0], out[1], ps[2]


def two_sample_adjusted(scores: list[list[float]], n_base: int, seed: int = 1) -> tuple[list[float], list[float]]:
    """Permutation test that the last runs ('new') score higher (worse) or lower (better) than the
    first n_base, one row of rank scores per cell: per cell, the min-P adjusted p-values (worse,
    better). Every arrangement up to EXACT_LIMIT of them, else MONTE_CARLO random ones."""
    return two_sample_family(scores, n_base, 0.05, seed)[:2]


def two_sample_family(
    scores: list[list[float]], n_base: int, alpha: float, seed: int = 1
) -> tuple[list[float], list[float], float]:
    """two_sample_adjusted, and the family's per-line level at alpha (see _adjusted)."""
    q = _integer_scores(scores)
    live = (q != q[:, :1]).any(axis=1)  # all equal: nothing can move
    if not live.any():
        return [1.0] * len(q), [1.0] * len(q), 0.0
    q = q[live]
    n_total = q.shape[1]
    n_new = n_total - n_base
    exact = math.comb(n_total, n_new) <= EXACT_LIMIT
    if exact:
        sums = _group_sums(q, n_new)
    else:
        members = Draws(seed).subsets(MONTE_CARLO, n_total, n_new)
        sums = _sampled_sums(q, members.astype(float))
    return _spread_out(live, _adjusted(sums, q[:, n_base:].sum(axis=1), exact, alpha))


def paired_adjusted(scores: list[list[float]], seed: int = 1) -> tuple[list[float], list[float]]:
    """Sign-flip permutation test over pairs (positive score: the pair's new run is worse); under
    "no change" either run of a pair could have been the new one. Per cell, adjusted (worse,
    better). A flip's signed sum is twice the sum over the pairs left unflipped less a constant:
    that sum is what is counted."""
    return paired_family(scores, 0.05, seed)[:2]


def paired_family(scores: list[list[float]], alpha: float, seed: int = 1) -> tuple[list[float], list[float], float]:
    """paired_adjusted, and the family's per-line level at alpha (see _adjusted)."""
    q = _integer_scores(scores)
    live = (q != 0).any(axis=1)
    if not live.any():
        return [1.0] * len(q), [1.0] * len(q), 0.0
    q = q[live]
    pairs = q.shape[1]
    exact = 2**pairs <= EXACT_LIMIT
    if exact:
        sums = _group_sums(q, None)
    else:
        kept = Draws(seed).coins((MONTE_CARLO, pairs))  # the pairs left unflipped
        sums = _sampled_sums(q, kept.astype(float))
    return _spread_out(live, _adjusted(sums, q.sum(axis=1), exact, alpha))


def two_sample_max_test(scores: list[list[float]], n_base: int, seed: int = 1) -> tuple[float, float, int, int]:
    """The family's p-values (worse, better) over cells, and the cell most against "no change"
    each way."""
    worse, better = two_sample_adjusted(scores, n_base, seed)
    return min(worse), min(better), int(np.argmin(worse)), int(np.argmin(better))


def paired_max_test(scores: list[list[float]], seed: int = 1) -> tuple[float, float, int, int]:
    """As two_sample_max_test, for pairs (sign flips)."""
    worse, better = paired_adjusted(scores, seed)
    return min(worse), min(better), int(np.argmin(worse)), int(np.argmin(better))


def _median(a: np.ndarray) -> np.ndarray:
    """np.median over the last axis, the same numbers (the mean of the two middle values of an
    even count), without np.median's masked-array check: it imports numpy.ma, ~30 ms a command.
    A sort, not np.partition: numpy's vectorised sort of 2000 rows of 100 was 5x faster than its
    selection with two middle ranks (0.5 against 2.6 ms), for the same order statistics."""
    n = a.shape[-1]
    ordered = np.sort(a, axis=-1)
    middle: np.ndarray = ordered[..., n // 2] if n % 2 else (ordered[..., n // 2 - 1] + ordered[..., n // 2]) / 2.0
    return middle


def _quantile(ordered: np.ndarray, q: float) -> float:
    """np.quantile's default of sorted values (linear between order statistics, Hyndman and
    Fan's type 7), the same arithmetic, without np.unique: it imports numpy.ma, ~30 ms a command."""
    at = (len(ordered) - 1) * q
    below = math.floor(at)
    a, b = float(ordered[below]), float(ordered[min(below + 1, len(ordered) - 1)])
    t = at - below
    return b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t


def hodges_lehmann(new: list[float], base: list[float] | None = None) -> float:
    """The shift the rank tests estimate: the median of all differences new - base (two samples),
    or of the Walsh averages of paired differences (base None: `new` holds the differences)."""
    a = np.asarray(new, dtype=float)
    if base is None:
        i, j = np.triu_indices(len(a))
        return float(_median((a[i] + a[j]) / 2.0))
    return float(_median((a[:, None] - np.asarray(base, dtype=float)[None, :]).reshape(-1)))


@lru_cache(maxsize=8)  # a comparison's few sample sizes; bounded for a caller of many
def _resamples(seed: int, rounds: int, *sizes: int) -> tuple[np.ndarray, ...]:
    """The bootstrap's draws of run indices, one rounds x size block per sample, from one stream:
    the lines of a comparison share their sizes and seed, so they are drawn once (read-only)."""
    draws = Draws(seed)
    blocks = tuple(draws.below(n, (rounds, n)) for n in sizes)
    for block in blocks:
        block.flags.writeable = False
    return blocks


def shift_interval(
    new: list[float], base: list[float] | None = None, rounds: int = 2000, seed: int = 1
) -> tuple[float, float]:
    """A 95 % bootstrap interval of hodges_lehmann (runs, or pairs, resampled)."""
    a = np.asarray(new, dtype=float)
    if base is None:
        pick = _resamples(seed, rounds, len(a))[0]
        sa = a[pick]
        i, j = np.triu_indices(len(a))
        est = _median((sa[:, i] + sa[:, j]) / 2.0)
    else:
        b = np.asarray(base, dtype=float)
        pick_a, pick_b = _resamples(seed, rounds, len(a), len(b))
        est = _median((a[pick_a][:, :, None] - b[pick_b][:, None, :]).reshape(rounds, -1))
    ordered = np.sort(est)
    return _quantile(ordered, 0.025), _quantile(ordered, 0.975)


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
