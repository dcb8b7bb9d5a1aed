# SPDX-License-Identifier: GPL-2.0-or-later
"""Confidence bounds for rates (miss rates, missed periods, percentile exceedances).

Pure Python: boards and CI images need no SciPy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

_LN_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT_HALF_PI = math.sqrt(0.5 * math.pi)
_SQRT_HALF = math.sqrt(0.5)


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


def _log1pmx(y: float) -> float:
    """log(1 + y) - y without the cancellation near 0."""
    if y <= -1.0:  # x * r rounded up to r, x a few 1e-16 under 1: the density is 0 there
        return -math.inf
    if abs(y) > 0.5:
        return math.log1p(y) - y
    # log(1 + y) = 2 atanh(t) with t = y / (2 + y); 2 t - y = -y^2 / (2 + y) is the leading term.
    t = y / (2.0 + y)
    t2 = t * t
    lead = -y * y / (2.0 + y)
    power, j, rest = 2.0 * t * t2, 3.0, 0.0
    while True:
        term = power / j
        rest += term
        if abs(term) <= 1e-17 * abs(lead):
            return lead + rest
        power *= t2
        j += 2.0


def _lgamma_star(x: float) -> float:
    """ln(Gamma(x) / (sqrt(2 pi) x^(x - 1/2) e^-x)), what Stirling's formula leaves of lgamma (x > 0).

    lgamma itself is large (1.5e9 at 8.64e7 trials): a sum of three of them loses 1e-7 of the incomplete
    beta to rounding alone, a few units at 2^48. The remainder is small and exact to ~1e-14."""
    if x >= 10.0:
        y = 1.0 / x
        y2 = y * y
        return y * (1.0 / 12 - y2 * (1.0 / 360 - y2 * (1.0 / 1260 - y2 * (1.0 / 1680 - y2 / 1188))))
    return math.lgamma(x) - (x - 0.5) * math.log(x) + x - _LN_SQRT_2PI


# Temme's uniform asymptotic expansion of the incomplete beta for large a and b. The Beta(a, b) variable t
# maps to zeta by  zeta^2 / 2 = x0 ln(x0 / t) + (1 - x0) ln((1 - x0) / (1 - t)),  sign(zeta) = sign(t - x0),
# x0 = a / r, r = a + b. In zeta the density is  K sqrt(r / 2 pi) exp(-r zeta^2 / 2) h(zeta),  with
# K = Gamma*(r) / (Gamma*(a) Gamma*(b)) and h(zeta) = sigma zeta / (t - x0), sigma^2 = x0 (1 - x0), h(0) = 1.
# The Taylor coefficients of h are polynomials in gamma = (1 - 2 x0) / sigma (a series reversion, derived
# and checked in tests/unit/test_stats.py); each term integrates in closed form against the Gaussian:
#   N_j(w) = int_w^inf v^j exp(-v^2 / 2) dv = w^(j-1) exp(-w^2 / 2) + (j - 1) N_(j-2)(w),
#   N_0 = sqrt(pi / 2) erfc(w / sqrt 2),  and a tail is  K / sqrt(2 pi) sum_j h_j(gamma) r^(-j/2) N_j(w).
# Term j is of the order (w^2 / A)^(j/2), A = a b / r: the series is cut at _TEMME_H's length and used
# where A >= _TEMME_MIN_A and w^2 <= _TEMME_W2 A; the continued fraction serves everywhere else.
# h_j's coefficients, of gamma^0, gamma^1, ..., gamma^j:
_TEMME_H: tuple[tuple[float, ...], ...] = (
    (1.0,),
    (0.0, -0.3333333333333333),
    (0.25, 0.0, 0.08333333333333333),
    (0.0, -0.06666666666666667, 0.0, -0.014814814814814815),
    (0.010416666666666666, 0.0, 0.006944444444444444, 0.0, 0.0011574074074074073),
    (0.0, 0.004761904761904762, 0.0, 0.0026455026455026454, 0.0, 0.0003527336860670194),
    (-0.0026041666666666665, 0.0, -0.004270833333333333, 0.0, -0.0016087962962962963, 0.0, -0.0001787551440329218),
    (0.0, 0.0015873015873015873, 0.0, 0.0014109347442680777, 0.0, 0.00041152263374485596, 0.0, 3.919263178522438e-05),
    (
        -9.765625e-05,
        0.0,
        -0.00018973214285714286,
        0.0,
        -0.00011140046296296297,
        0.0,
        -2.6225382128159905e-05,
        0.0,
        -2.185448510679992e-06,
    ),
    (
        0.0,
        -0.00018037518037518038,
        0.0,
        -0.0002541285874619208,
        0.0,
        -0.00012265512265512266,
        0.0,
        -2.502983984465466e-05,
        0.0,
        -1.85406221071516e-06,
    ),
    (
        5.154079861111111e-05,
        0.0,
        0.00019845329624905517,
        0.0,
        0.00018232529315738641,
        0.0,
        7.050181076374308e-05,
        0.0,
        1.2445067011429629e-05,
        0.0,
        8.296711340953087e-07,
    ),
)
_TEMME_MIN_A = 200.0
_TEMME_W2 = 0.25
# Each h_j has the parity of j: its nonzero coefficients, highest first (Horner in gamma^2).
_TEMME_ROWS = tuple(row[j::-2] for j, row in enumerate(_TEMME_H))


class _BetaTails:
    """Both tails of Beta(a, b) at x, each computed where it is small, and the density there."""

    __slots__ = ("a", "b", "down", "front0", "norm", "r", "temme", "up", "w2_max")

    def __init__(self, a: float, b: float) -> None:
        a, b = float(a), float(b)
        r = a + b
        self.a, self.b, self.r = a, b, r
        k = math.exp(_lgamma_star(r) - _lgamma_star(a) - _lgamma_star(b))
        # x^a (1 - x)^b / B(a, b) = front0 exp(-r zeta^2 / 2): its value at x0, from Stirling, times K.
        self.front0 = math.sqrt(a * b / r) * k / math.sqrt(2.0 * math.pi)
        spread = a * b / r
        self.temme = spread >= _TEMME_MIN_A
        self.w2_max = _TEMME_W2 * spread
        self.norm = k / math.sqrt(2.0 * math.pi)
        if self.temme:
            gamma, scale, shrink = (b - a) / math.sqrt(a * b), 1.0, 1.0 / math.sqrt(r)
            g2 = gamma * gamma
            up = []
            for j, row in enumerate(_TEMME_ROWS):  # h_j(gamma) r^(-j/2)
                v = 0.0
                for c in row:
                    v = v * g2 + c
                up.append(v * scale * (gamma if j % 2 else 1.0))
                scale *= shrink
            self.up = tuple(up)
            self.down = tuple(v if j % 2 == 0 else -v for j, v in enumerate(up))

    def at(self, x: float) -> tuple[float, float, float]:
        """(I_x(a, b), 1 - I_x(a, b), the Beta(a, b) density at x), 0 < x < 1."""
        a, b = self.a, self.b
        d = x * self.r - a  # (x - x0) r
        e = -a * _log1pmx(d / a) - b * _log1pmx(-d / b)  # r zeta^2 / 2, without the cancellation of logs
        g = math.exp(-e)
        front = self.front0 * g  # x^a (1 - x)^b / B(a, b)
        density = front / (x * (1.0 - x))
        if self.temme and 2.0 * e <= self.w2_max:
            w = math.sqrt(2.0 * e)
            hs = self.up if d >= 0 else self.down
            n2, n1 = _SQRT_HALF_PI * math.erfc(w * _SQRT_HALF), g  # N_(j-2), N_(j-1)
            tail = hs[0] * n2 + hs[1] * n1
            wg = g
            for j in range(2, len(hs)):
                wg *= w
                n2, n1 = n1, wg + (j - 1) * n2
                tail += hs[j] * n1
            tail *= self.norm
            return (1.0 - tail, tail, density) if d >= 0 else (tail, 1.0 - tail, density)
        below = x < (a + 1.0) / (self.r + 2.0)
        if front == 0.0:  # far out in a tail (a bisection step): no continued fraction of 10^4 terms for 0
            return (0.0, 1.0, 0.0) if below else (1.0, 0.0, 0.0)
        if below:
            low = front * _betacf(a, b, x) / a
            return low, 1.0 - low, density
        if x < 0.5 and a.is_integer():
            high = self._binomial_sum(x, front)
        else:
            high = front * _betacf(b, a, 1.0 - x) / b  # 1 - x is exact from 0.5 up
        return 1.0 - high, high, density

    def _binomial_sum(self, x: float, front: float) -> float:
        """1 - I_x(a, b) for integer a as P(Bin(a + b - 1, x) <= a - 1), its a terms summed from the largest.

        The continued fraction of the upper tail takes 1 - x, which in doubles carries 1e-16 / x of relative
        error; at x = 2.5e-9 (98 events in 4.8e10) that moved the bound by 4.5e-8, past CP_MARGIN. Here x
        enters only through ratios. Used where A < _TEMME_MIN_A and x < 1/2, so a < 2 _TEMME_MIN_A."""
        a, b = self.a, self.b
        term = front / (x * b)  # P(Bin(a + b - 1, x) = a - 1) = x^(a-1) (1 - x)^b / (b B(a, b))
        ratio = (1.0 - x) / x
        total = 0.0
        i = a - 1.0
        while term > 1e-17 * total:
            total += term
            if i <= 0.0:
                break
            term *= i / (self.r - i) * ratio  # P(= i - 1) / P(= i) = i (1 - x) / ((r - i) x)
            i -= 1.0
        return total


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    return _BetaTails(a, b).at(x)[0]


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
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    return _BetaTails(k + 1, n - k).at(p)[1]


def _newton_bracket(
    a: float, b: float, p: float, step: float, lo: float, hi: float, rel_tol: float
) -> tuple[float, float] | None:
    """A bracket around the root from Newton's step at p alone, when Newton's error bound makes it narrow.

    f' = -density and f'' / f' = psi' = (a-1)/t - (b-1)/(1-t), which falls in t. On J = [p - 2|step|,
    p + 2|step|], |psi'| <= m1 (its larger end) and the density stays within exp(2 m1 |step|) of its value
    at p; while that is below 2, f changes sign in J, so the root r is there, and Taylor's remainder gives
    |r - (p + step)| <= max|f''| (r - p)^2 / (2 |f'(p)|) <= 2 m1 exp(2 m1 |step|) step^2.
    """
    reach = 2.0 * abs(step)
    left, right = p - reach, p + reach
    if not (0.0 < left and right < 1.0):
        return None
    m1 = max(abs((a - 1.0) / left - (b - 1.0) / (1.0 - left)), abs((a - 1.0) / right - (b - 1.0) / (1.0 - right)))
    if m1 * reach >= 0.5:
        return None
    err = 2.0 * m1 * math.exp(m1 * reach) * step * step * 1.01  # 1 %: the rounding of these sums
    root = p + step
    if 2.0 * err > rel_tol * (root + err) or root - err < lo or root + err > hi:
        return None
    return root - err, root + err


def _cdf_root(k: int, n: int, level: float, rel_tol: float) -> tuple[float, float]:
    """A bracket [lo, hi], hi - lo <= rel_tol * hi, around the p where P(X <= k | n, p) = level.

    P(X <= k | p) = 1 - I_p(k+1, n-k) falls with p; its derivative is minus the Beta(k+1, n-k) density.
    Newton from the normal approximation (Cornish-Fisher), inside a bracket with f(lo) > 0 >= f(hi) that
    every evaluation narrows. Each tail is computed where it is small, so f keeps its relative precision
    at levels near 0 and near 1. 0 <= k < n, 0 < level < 1.
    """
    a, b = float(k + 1), float(n - k)
    tails = _BetaTails(a, b)
    # k is a median of Binomial(n, k/n), so P(X <= k | k/n) >= 1/2 and P(X <= k | (k+1)/n) <= 1/2.
    lo = k / n if level <= 0.5 else 0.0
    hi = (k + 1) / n if level >= 0.5 else 1.0
    z = normal_quantile(1.0 - level)
    mean = a / (a + b)
    sd = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0)))
    skew = 2.0 * (b - a) * math.sqrt(a + b + 1.0) / ((a + b + 2.0) * math.sqrt(a * b))
    p = mean + sd * (z + skew * (z * z - 1.0) / 6.0)
    p = min(max(p, lo + (hi - lo) * 1e-9), hi - (hi - lo) * 1e-9)
    if not lo < p < hi:  # that nudge is below the spacing of doubles next to 1 (k = n - 1 at 3e7 trials)
        p = (lo + hi) / 2.0
    low_side = level > 0.5
    complement = 1.0 - level
    for _ in range(200):
        lower, upper, density = tails.at(p)
        f = complement - lower if low_side else upper - level
        if f > 0:
            lo = p
        else:
            hi = p
        if hi - lo <= rel_tol * hi:
            break
        step = f / density if density > 0 else math.inf
        closed = _newton_bracket(a, b, p, step, lo, hi, rel_tol)
        if closed:
            return closed
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
    # The gate's own rule decides ties. Its bound sits up to 1.1e-7 above the exact one: at 1e14 trials
    # that is 1e7 counts, so they are searched (doubling, then halving), not stepped through one by one.
    step = 1
    while clopper_pearson_upper(k, hi + step - 1, confidence) > allowed:
        step *= 2
    lo, hi = hi + step // 2 - 1, hi + step - 1  # fails at lo (or lo < the first hi), passes at hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if clopper_pearson_upper(k, mid, confidence) <= allowed else (mid, hi)
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
