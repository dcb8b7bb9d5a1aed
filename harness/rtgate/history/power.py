# SPDX-License-Identifier: GPL-2.0-or-later
"""The resolving power of a comparison: the change its runs would find at least 80 % of the time.

What compare prints as "a change of +/-X% would have been found with 80 % power" must hold for
the test compare runs, not for a textbook one: a rank test whose exact p-values come in steps
(five pairs: 1/32 at best), at the family's per-line level (the min-P adjustment over every
metric and thread line lowers it below alpha when the lines disagree), with the verdict's
min_effect, and with a spread that is itself estimated from a handful of runs. A normal
approximation with t quantiles ignored all four: at five pairs it printed +/-11 % for data where a
20 % change was found 1.5 % of the time (issue 46).

So the size is found by simulation, with the project's seeded draws (draws.py): the runs' log
figures as noise around the release's level, the new release shifted by delta; per trial, the
smallest delta at which the one-sided rank test (signed ranks of the pairs' log ratios,
Mann-Whitney for runs; both in closed form through Walsh averages or pairwise differences, so no
search per trial) reaches the family's level and the estimated change reaches min_effect; the
size is the 80th percentile of those deltas. The noise's scale is the one the runs show, divided
per trial by the spread a pilot sample of the same design shows: a spread estimated from four
pairs is as often too small as too large, and the printed size must hold on average over that,
which a point estimate does not. The noise is normal, and again Student's t with 3 degrees of
freedom (a shared host's run-to-run spread is heavy-tailed, and at a few runs an outlier breaks
the separation a rank test needs); the larger size is printed. Large designs, where the
simulation would cost more than the command's time and the normal approximation is close, use
that approximation."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from rtgate.history.draws import Draws
from rtgate.history.stats import rank_sum_counts

POWER = 0.8
TRIALS = 2000  # the 80th percentile to about +-1 % of its probability
# Simulated up to these designs (the work grows with the Walsh averages, n (n + 1) / 2, or the
# pairwise differences, m n); beyond, normal theory, checked against the simulation to 60 pairs
# and 30 runs a side at levels down to 1e-4.
SIMULATED_PAIRS = 30
SIMULATED_DIFFERENCES = 200
# The 80th percentile of the trials' sizes is taken at its upper 99 % bound: the simulation's own
# error must not turn 80 % into 78 %. Normal theory aims at the same share.
TARGET = POWER + 2.33 * math.sqrt(POWER * (1 - POWER) / TRIALS)
WILCOXON_EFFICIENCY = 3 / math.pi  # a rank test's runs beside a t-test's, for normal noise
SEED = 46


@lru_cache(maxsize=64)
def _signed_rank_counts(n: int) -> tuple[int, ...]:
    """How many of the 2**n sign patterns give each signed-rank sum W+ = 0 .. n(n+1)/2."""
    counts = [1]
    for k in range(1, n + 1):
        grown = counts + [0] * k
        for w, c in enumerate(counts):
            grown[w + k] += c
        counts = grown
    return tuple(counts)


def _critical(counts: tuple[int, ...], level: float) -> int | None:
    """The smallest statistic w whose one-sided p-value P(W >= w) is at most level, or None."""
    total = sum(counts)
    tail = 0
    best = None
    for w in range(len(counts) - 1, -1, -1):
        tail += counts[w]
        if tail / total > level:
            break
        best = w
    return best


SHAPES = ("normal", "t3")  # the noise laws the size must hold for; the larger size is printed


def _noise(draws: Draws, shape: str, rows: int, n: int) -> np.ndarray:
    """Noise of unit standard deviation: normal, or Student's t with 3 degrees of freedom (the
    run-to-run spread of a shared host is heavy-tailed; at a few runs a rank test then needs a
    larger shift, as an outlier breaks the separation it must see)."""
    z = draws.normals((rows, n))
    if shape == "normal":
        return z
    # chi2(3) = chi2(2) + chi2(1): an exponential (-2 log u) and a squared normal
    u = ((draws.words(rows * n) >> np.uint64(11)).astype(float) + 1.0) * 2.0**-53
    chi2 = -2.0 * np.log(u).reshape(rows, n) + draws.normals((rows, n)) ** 2
    t: np.ndarray = z / np.sqrt(chi2 / 3.0) / math.sqrt(3.0)
    return t


def _spread_of(a: np.ndarray, n_base: int, paired: bool) -> np.ndarray:
    """Per row, the spread compare estimates: of the pairs' differences, or pooled within releases."""
    if paired:
        s: np.ndarray = a.std(axis=1, ddof=1)
        return s
    b, n = a[:, :n_base], a[:, n_base:]
    pooled = (b.var(axis=1, ddof=1) * (n_base - 1) + n.var(axis=1, ddof=1) * (n.shape[1] - 1)) / (a.shape[1] - 2)
    spread: np.ndarray = np.sqrt(pooled)
    return spread


@lru_cache(maxsize=64)
def _trial_thresholds(n_base: int, n_new: int, paired: bool, rank: int, shape: str) -> tuple[np.ndarray, np.ndarray]:
    """Per trial, for noise of unit scale: the shift at which the rank test reaches its critical
    statistic (rank: its index among the ordered Walsh averages or pairwise differences), and
    the estimated change's departure from the true shift (Hodges-Lehmann), each divided by the
    spread a pilot sample of the same design shows: the runs' spread is an estimate, and how far
    it falls from the truth depends on the noise's law (for normal noise, sigma / s ~
    sqrt(df / chi2(df)))."""
    draws = Draws(SEED + 1000 * n_base + n_new + (1 << 20) * paired + (1 << 21) * SHAPES.index(shape))
    units = n_new if paired else n_base + n_new
    scale = 1.0 / _spread_of(_noise(draws, shape, TRIALS, units), n_base, paired)
    if paired:  # W+ = #{Walsh averages > -delta}: the test reaches w when delta > -(w-th largest)
        z = _noise(draws, shape, TRIALS, n_new)
        i, j = np.triu_indices(n_new)
        walsh = (z[:, i] + z[:, j]) / 2.0
        crit, mid = _order_statistics(walsh, len(i) - rank)
        return -crit * scale, mid * scale
    x = _noise(draws, shape, TRIALS, n_base)
    y = _noise(draws, shape, TRIALS, n_new)
    crit, mid = _order_statistics((x[:, :, None] - y[:, None, :]).reshape(TRIALS, -1), rank - 1)  # U = #{x - y < delta}
    return crit * scale, -mid * scale


def _order_statistics(a: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the k-th smallest value (from 0) and the median (the rows are sorted in place)."""
    n = a.shape[1]
    a.sort(axis=1)  # numpy's sort of short rows beat its partition at three ranks: measured
    return a[:, k], (a[:, (n - 1) // 2] + a[:, n // 2]) / 2.0


def _normal_theory(spread: float, n_base: int, n_new: int, paired: bool, level: float, min_log: float) -> float:
    """Large designs: the normal approximation of the rank test (Student's t quantiles for the
    estimated spread), widened by 2 / n: against the simulation at 15 to 40 runs or pairs, the
    plain approximation fell up to 5 % short (the rank test's steps), the widened one did not."""
    from rtgate.history.stats import t_quantile

    df = n_new - 1 if paired else n_base + n_new - 2
    se = spread * (math.sqrt(1 / n_new) if paired else math.sqrt(1 / n_base + 1 / n_new))
    widen = (1 + 2 / min(n_new, n_new if paired else n_base)) / math.sqrt(WILCOXON_EFFICIENCY)
    test = (t_quantile(1 - level, df) + t_quantile(TARGET, df)) * se * widen
    return max(test, min_log + t_quantile(TARGET, df) * se * widen)


def detectable_log(spread: float, n_base: int, n_new: int, paired: bool, level: float, min_effect: float) -> float:
    """The log-ratio change found with 80 % power by the one-sided rank test at `level` (the
    family's per-line level) that also clears min_effect; inf when no p-value of these runs can
    reach the level. `spread`: the standard deviation of the runs' log figures (of the pairs'
    log differences, paired; pooled within releases, unpaired)."""
    if n_new < 2 or (not paired and n_base < 2) or not level > 0:
        return math.inf
    min_log = math.log1p(min_effect)
    counts = _signed_rank_counts(n_new) if paired else None
    if (n_new > SIMULATED_PAIRS) if paired else (n_base * n_new > SIMULATED_DIFFERENCES):
        smallest = 0.5**n_new if paired else 1 / math.comb(n_base + n_new, n_new)
        return _normal_theory(spread, n_base, n_new, paired, level, min_log) if smallest <= level else math.inf
    counts = counts or rank_sum_counts(n_base, n_new)
    w = _critical(counts, level)
    if w is None:
        return math.inf
    # rank: the order statistic the critical value points at (W+ >= w: the w-th largest Walsh
    # average; U >= w: the w-th smallest difference)
    at_rank = math.ceil(TARGET * TRIALS)
    sizes = []
    for shape in SHAPES:
        at, hl = _trial_thresholds(0 if paired else n_base, n_new, paired, w, shape)
        need = np.maximum(spread * at, min_log - spread * hl)
        sizes.append(float(np.partition(need, at_rank)[at_rank]))
    return max(sizes)
