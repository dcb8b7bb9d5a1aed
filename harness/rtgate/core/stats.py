"""Confidence bounds for miss rates. Pure Python: boards and CI images need no SciPy."""

from __future__ import annotations

import math


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
    ln_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                + a * math.log(x) + b * math.log1p(-x))
    front = math.exp(ln_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def normal_quantile(q: float) -> float:
    """Inverse of the standard normal CDF (Acklam's rational approximation, ~1e-9 relative)."""
    a = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
         1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00)
    b = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
         6.680131188771972e+01, -1.328068155288572e+01)
    c = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
         -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00)
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00)
    if q < 0.02425:
        r = math.sqrt(-2.0 * math.log(q))
        return (((((c[0] * r + c[1]) * r + c[2]) * r + c[3]) * r + c[4]) * r + c[5]) / \
            ((((d[0] * r + d[1]) * r + d[2]) * r + d[3]) * r + 1.0)
    if q > 1.0 - 0.02425:
        return -normal_quantile(1.0 - q)
    r = q - 0.5
    t = r * r
    return (((((a[0] * t + a[1]) * t + a[2]) * t + a[3]) * t + a[4]) * t + a[5]) * r / \
        (((((b[0] * t + b[1]) * t + b[2]) * t + b[3]) * t + b[4]) * t + 1.0)


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p)."""
    if k >= n:
        return 1.0
    return 1.0 - betainc(k + 1, n - k, p)


def clopper_pearson_upper(k: int, n: int, confidence: float = 0.95, rel_tol: float = 1e-7) -> float:
    """One-sided upper bound of a binomial rate after k events in n trials.

    The true rate is below the bound with the given confidence. With k = 0 this is
    1 - (1 - confidence) ** (1 / n): a 0.1 % limit at 95 % needs about 3000 clean samples.
    The result is rounded up (by at most rel_tol), never down: a gate never passes on rounding.
    """
    if n <= 0:
        return 1.0
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be between 0 and 1")
    if k >= n:
        return 1.0
    alpha = 1.0 - confidence
    if k == 0:
        return 1.0 - alpha ** (1.0 / n)
    # f(p) = P(X <= k | p) - alpha falls with p; its derivative is minus the Beta(k+1, n-k)
    # density. Newton from the normal approximation, inside a bracket [lo, hi] with
    # f(lo) > 0 >= f(hi) that every evaluation narrows; hi is what we return.
    a, b = k + 1, n - k
    log_norm = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    lo, hi = k / n, 1.0  # P(X <= k | k/n) >= 1/2 > alpha: k is a median
    # Start at the Beta(a, b) quantile by Cornish-Fisher: close enough for 2-3 Newton steps.
    z = normal_quantile(confidence)
    mean = a / (a + b)
    sd = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0)))
    skew = 2.0 * (b - a) * math.sqrt(a + b + 1.0) / ((a + b + 2.0) * math.sqrt(a * b))
    p = mean + sd * (z + skew * (z * z - 1.0) / 6.0)
    p = min(max(p, lo + (1.0 - lo) * 1e-9), 1.0 - 1e-12)
    for _ in range(200):
        f = binom_cdf(k, n, p) - alpha
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
    return hi
