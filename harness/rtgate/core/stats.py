# SPDX-License-Identifier: GPL-2.0-or-later
"""Confidence bounds for rates (miss rates, missed periods, percentile exceedances).

Pure Python: boards and CI images need no SciPy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(ln_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def normal_quantile(q: float) -> float:
    """Inverse of the standard normal CDF (Acklam's rational approximation, ~1e-9 relative)."""
    a = (
        -3.969683028665376e01,
        2.209460984245205e02,
        -2.759285104469687e02,
        1.383577518672690e02,
        -3.066479806614716e01,
        2.506628277459239e00,
    )
    b = (
        -5.447609879822406e01,
        1.615858368580409e02,
        -1.556989798598866e02,
        6.680131188771972e01,
        -1.328068155288572e01,
    )
    c = (
        -7.784894002430293e-03,
        -3.223964580411365e-01,
        -2.400758277161838e00,
        -2.549732539343734e00,
        4.374664141464968e00,
        2.938163982698783e00,
    )
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00)
    if q < 0.02425:
        r = math.sqrt(-2.0 * math.log(q))
        return (((((c[0] * r + c[1]) * r + c[2]) * r + c[3]) * r + c[4]) * r + c[5]) / (
            (((d[0] * r + d[1]) * r + d[2]) * r + d[3]) * r + 1.0
        )
    if q > 1.0 - 0.02425:
        return -normal_quantile(1.0 - q)
    r = q - 0.5
    t = r * r
    return (
        (((((a[0] * t + a[1]) * t + a[2]) * t + a[3]) * t + a[4]) * t + a[5])
        * r
        / (((((b[0] * t + b[1]) * t + b[2]) * t + b[3]) * t + b[4]) * t + 1.0)
    )


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p)."""
    if k >= n:
        return 1.0
    return 1.0 - betainc(k + 1, n - k, p)


def _cdf_root(k: int, n: int, level: float, rel_tol: float) -> tuple[float, float]:
    """A bracket [lo, hi], hi - lo <= rel_tol * hi, around the p where P(X <= k | n, p) = level.

    P(X <= k | p) falls with p; its derivative is minus the Beta(k+1, n-k) density. Newton from
    the normal approximation (Cornish-Fisher), inside a bracket with f(lo) > 0 >= f(hi) that every
    evaluation narrows. 0 <= k < n, 0 < level < 1.
    """
    a, b = k + 1, n - k
    log_norm = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    # k is a median of Binomial(n, k/n), so P(X <= k | k/n) >= 1/2 and P(X <= k | (k+1)/n) <= 1/2.
    lo = k / n if level <= 0.5 else 0.0
    hi = (k + 1) / n if level >= 0.5 else 1.0
    z = normal_quantile(1.0 - level)
    mean = a / (a + b)
    sd = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0)))
    skew = 2.0 * (b - a) * math.sqrt(a + b + 1.0) / ((a + b + 2.0) * math.sqrt(a * b))
    p = mean + sd * (z + skew * (z * z - 1.0) / 6.0)
    p = min(max(p, lo + (hi - lo) * 1e-9), hi - (hi - lo) * 1e-9)
    for _ in range(200):
        f = binom_cdf(k, n, p) - level
        if f > 0:
            lo = p
        else:
            hi = p
        if hi - lo <= rel_tol * hi:
            break
        density = math.exp((a - 1) * math.log(p) + (b - 1) * math.log1p(-p) - log_norm)
        step = f / density if density > 0 else math.inf
        if abs(step) < rel_tol * p / 4:
            # Newton has converged: probe just across the root to close the bracket.
            nxt = p + rel_tol * p / 2 if f > 0 else p - rel_tol * p / 2
        else:
            nxt = p + step
        p = nxt if lo < nxt < hi else (lo + hi) / 2.0
    return lo, hi


# Outward margin on every bound, relative: the double-precision incomplete beta behind the bracket can
# sit a few 1e-9 on the wrong side of the exact root (measured against 60-digit sums, tests/test_stats.py).
# sampler/gate.c applies the same margin, so both sides give the same verdicts on the shared vectors.
CP_MARGIN = 1e-8


# Beyond this many trials the incomplete beta in doubles loses every digit (lgamma of 1e25 carries an
# absolute error above 1e9): bounds of larger counts come from the counts scaled down to it, outward
# (fewer trials at the same share give a wider interval). No run has this many periods (9 years at 1 us);
# only an edited file does.
MAX_EXACT_TRIALS = 2**48


def _scaled(k: int, n: int, up: bool) -> tuple[int, int]:
    """(k, n) scaled into MAX_EXACT_TRIALS, rounded so that the bound can only widen."""
    if n <= MAX_EXACT_TRIALS:
        return k, n
    if up:  # more events in fewer trials: a higher upper bound
        n2 = MAX_EXACT_TRIALS
        return min(n2, -(-k * n2 // n)), n2
    n2 = MAX_EXACT_TRIALS
    return k * n2 // n, n2  # fewer events: a lower lower bound


def _check(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be between 0 and 1")


def clopper_pearson_upper(k: int, n: int, confidence: float = 0.95, rel_tol: float = 1e-7) -> float:
    """One-sided upper bound of a binomial rate after k events in n trials.

    The true rate is below the bound with the given confidence. With k = 0 this is
    1 - (1 - confidence) ** (1 / n): a 0.1 % limit at 95 % needs about 3000 clean samples.
    The result is rounded up (by at most rel_tol + CP_MARGIN), never down: a gate never passes on rounding.
    """
    if n <= 0:
        return 1.0
    _check(confidence)
    k, n = _scaled(k, n, up=True)
    if k >= n:
        return 1.0
    if k == 0:  # 1 - (1 - c)^(1/n) without the cancellation of 1 - pow(...) at large n
        exact = -math.expm1(math.log1p(-confidence) / n)
    else:
        exact = _cdf_root(k, n, 1.0 - confidence, rel_tol)[1]
    return min(1.0, exact * (1.0 + CP_MARGIN))


def clopper_pearson_lower(k: int, n: int, confidence: float = 0.95, rel_tol: float = 1e-7) -> float:
    """One-sided lower bound: the true rate is above it with the given confidence.

    It solves P(X >= k | p) = 1 - confidence, that is P(X <= k - 1 | p) = confidence. Rounded
    down (by at most rel_tol + CP_MARGIN), never up: a gate never fails on rounding.
    """
    if n <= 0 or k <= 0:
        return 0.0
    _check(confidence)
    k, n = _scaled(min(k, n), n, up=False)
    if k <= 0:
        return 0.0
    if k == n:
        exact = math.exp(math.log1p(-confidence) / n)
    else:
        exact = _cdf_root(k - 1, n, confidence, rel_tol)[0]
    return exact * (1.0 - CP_MARGIN)


@dataclass(frozen=True)
class RateDecision:
    """A rate judged against its limit by both one-sided bounds.

    The event count may be known only as a range (a histogram overflow hides which samples are
    above the limit): the upper bound comes from the most events there could be, the lower
    bound from the fewest there must be.
    """

    verdict: str  # PASS, FAIL or INCONCLUSIVE
    lower: float  # lower confidence bound of the rate, from k_min
    upper: float  # upper confidence bound of the rate, from k_max


def decide_rate(k_min: int, k_max: int, n: int, allowed: float, confidence: float = 0.95) -> RateDecision:
    """PASS when the upper bound is at or under `allowed`, FAIL when the lower bound is above it."""
    upper = clopper_pearson_upper(k_max, n, confidence)
    lower = clopper_pearson_lower(k_min, n, confidence)
    if upper <= allowed:
        return RateDecision("PASS", lower, upper)
    if lower > allowed:
        return RateDecision("FAIL", lower, upper)
    return RateDecision("INCONCLUSIVE", lower, upper)


def clean_samples_to_pass(k: int, n: int, allowed: float, confidence: float = 0.95) -> int | None:
    """How many more samples, none of them above the limit, would make the upper bound pass."""
    if allowed <= 0.0 or allowed >= 1.0 or n > MAX_EXACT_TRIALS:
        return None
    alpha = 1.0 - confidence

    def passes(total: int) -> bool:
        return total > k and binom_cdf(k, total, allowed) <= alpha

    hi = max(n, k + 1)
    while not passes(hi):
        hi *= 2
        if hi > 2**40:
            return None
    lo = n - 1  # passes(lo) is false here, or the gate would have passed
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if passes(mid) else (mid, hi)
    while clopper_pearson_upper(k, hi, confidence) > allowed:  # the gate's own rule decides ties
        hi += 1
    return hi - n


def samples_to_fail(k: int, n: int, allowed: float, confidence: float = 0.95) -> int | None:
    """About how many more samples at the observed rate k/n would make the lower bound fail.

    None when the observed rate is at or under the limit (it would never fail at that rate).
    """
    if n <= 0 or k * 1.0 / n <= allowed or allowed <= 0.0:
        return None
    rate = k / n

    def fails(total: int) -> bool:
        events = min(total, round(rate * total))
        return clopper_pearson_lower(events, total, confidence) > allowed

    if fails(n):
        return 0
    hi = 2 * n
    while not fails(hi):
        hi *= 2
        if hi > 2**40:  # beyond any run (and beyond where doubles keep the sums exact enough)
            return None
    lo = n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fails(mid) else (mid, hi)
    return hi - n
