# SPDX-License-Identifier: GPL-2.0-or-later
"""Clopper-Pearson bounds against exact binomial sums and closed forms."""

from __future__ import annotations

import importlib.util
import math
import random
from decimal import Context, Decimal, localcontext
from fractions import Fraction
from pathlib import Path

import pytest

from rtgate.core.stats import (
    _TEMME_H,
    _TEMME_MIN_A,
    _TEMME_W2,
    _BetaTails,
    betainc,
    clean_samples_to_pass,
    clopper_pearson_lower,
    clopper_pearson_upper,
    decide_rate,
    samples_to_fail,
)

_spec = importlib.util.spec_from_file_location(
    "make_rate_vectors", Path(__file__).resolve().parent.parent / "vectors" / "make_rate_vectors.py"
)
assert _spec and _spec.loader
exact = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(exact)  # the independent generator of the shared vectors: direct sums, 60 digits


def binom_cdf(k: int, n: int, p: float) -> float:
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


def test_zero_events_closed_form() -> None:
    for n in (1, 10, 999, 3000, 1_000_000):
        assert clopper_pearson_upper(0, n, 0.95) == pytest.approx(1 - 0.05 ** (1 / n), rel=2e-8)


@pytest.mark.parametrize("k, n, conf", [(1, 10, 0.95), (5, 1000, 0.95), (3, 3000, 0.99), (40, 500, 0.9)])
def test_bound_leaves_alpha_below(k: int, n: int, conf: float) -> None:
    p = clopper_pearson_upper(k, n, conf)
    alpha = 1 - conf
    assert binom_cdf(k, n, p) <= alpha  # rounded up, never down
    assert binom_cdf(k, n, p * (1 - 1e-6)) > alpha  # and tight
    assert p > k / n


def test_large_counts_stay_exact() -> None:
    from rtgate.core.stats import binom_cdf as exact_cdf

    k, n = 216_000, 86_400_000
    p = clopper_pearson_upper(k, n, 0.95)
    assert exact_cdf(k, n, p) <= 0.05 < exact_cdf(k, n, p * (1 - 1e-6))


def test_all_events_and_no_trials() -> None:
    assert clopper_pearson_upper(10, 10) == 1.0
    assert clopper_pearson_upper(0, 0) == 1.0


def test_betainc_symmetry_and_known_value() -> None:
    assert betainc(2, 3, 0.4) == pytest.approx(0.5248, abs=1e-4)
    assert betainc(3, 2, 0.6) == pytest.approx(1 - betainc(2, 3, 0.4), abs=1e-12)


def test_a_tenth_of_a_percent_needs_about_3000_clean_samples() -> None:
    assert clopper_pearson_upper(0, 2994, 0.95) > 0.001
    assert clopper_pearson_upper(0, 2995, 0.95) <= 0.001


@pytest.mark.parametrize(
    "k, n, conf", [(1, 10, 0.95), (5, 1000, 0.95), (3, 3000, 0.99), (40, 500, 0.9), (10, 10, 0.95), (999, 1000, 0.95)]
)
def test_lower_bound_leaves_alpha_above(k: int, n: int, conf: float) -> None:
    p = clopper_pearson_lower(k, n, conf)
    alpha = 1 - conf
    upper_tail = 1 - binom_cdf(k - 1, n, p)  # P(X >= k | p)
    assert upper_tail <= alpha  # rounded down, never up
    assert 1 - binom_cdf(k - 1, n, p * (1 + 1e-6)) > alpha  # and tight
    assert p < k / n


def test_lower_bound_closed_forms() -> None:
    assert clopper_pearson_lower(0, 100) == 0.0
    assert clopper_pearson_lower(1, 1000) == pytest.approx(1 - 0.95 ** (1 / 1000), rel=1e-6)
    assert clopper_pearson_lower(10, 10) == pytest.approx(0.05 ** (1 / 10), rel=2e-8)  # rounded down by CP_MARGIN


def test_decisions_mirror_each_other() -> None:
    assert decide_rate(947, 947, 1_000_000, 0.001).verdict == "PASS"
    assert decide_rate(948, 948, 1_000_000, 0.001).verdict == "INCONCLUSIVE"
    assert decide_rate(1052, 1052, 1_000_000, 0.001).verdict == "INCONCLUSIVE"
    assert decide_rate(1053, 1053, 1_000_000, 0.001).verdict == "FAIL"
    # A count known only as a range: the fewest decide FAIL, the most decide PASS.
    assert decide_rate(1, 594, 3988, 0.01).verdict == "INCONCLUSIVE"
    assert decide_rate(60, 594, 3988, 0.01).verdict == "FAIL"
    assert decide_rate(0, 20, 3988, 0.01).verdict == "PASS"


def test_clean_samples_to_pass_is_the_first_count_that_passes() -> None:
    for k, n, allowed in ((0, 999, 0.001), (3, 1000, 0.001), (999, 1_000_000, 0.001), (5, 300, 0.01)):
        more = clean_samples_to_pass(k, n, allowed)
        assert more is not None and more > 0
        assert clopper_pearson_upper(k, n + more) <= allowed < clopper_pearson_upper(k, n + more - 1)


def test_samples_to_fail_at_the_observed_rate() -> None:
    assert samples_to_fail(5, 10_000, 0.001) is None  # under the limit: never fails at that rate
    more = samples_to_fail(15, 10_000, 0.001)  # 0.15 %
    assert more is not None and more > 0
    total = 10_000 + more
    assert clopper_pearson_lower(round(0.0015 * total), total) > 0.001
    assert samples_to_fail(16, 10_000, 0.001) == 0  # fails already


PRECISE = [
    (0, 10),
    (0, 3000),
    (0, 10**7),
    (0, 10**9),
    (1, 10**6),
    (2, 10**5),
    (5, 50),
    (9, 10),
    (10, 10),
    (60, 3988),
    (99, 100),
    (1000, 10**6),
    (3, 3000),
]


@pytest.mark.parametrize("k, n", PRECISE)
@pytest.mark.parametrize("conf", [0.95, 0.999])
def test_bounds_round_outward_against_60_digit_sums(k: int, n: int, conf: float) -> None:
    """The upper bound was below the exact one in 6 of 13 precise cases (by up to 3.2e-9 relative; 1 - pow()
    at k = 0 and large n lost more): never below it now, never above it for the lower bound, and still
    within 1e-7 of it. The exact bounds: bisection on direct binomial sums in 60 digits."""
    import sys
    from decimal import Decimal

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "vectors"))
    import make_rate_vectors as exact

    c = Decimal(str(conf))
    if k < n:
        eu = exact.upper(k, n, c)
        u = Decimal(clopper_pearson_upper(k, n, conf))
        assert u >= eu and (u - eu) / eu < Decimal("2e-7"), (u, eu)
    if k > 0:
        el = exact.lower(k, n, c)
        lo = Decimal(clopper_pearson_lower(k, n, conf))
        assert lo <= el and (el - lo) / el < Decimal("2e-7"), (lo, el)


@pytest.mark.parametrize("k, n", [(1, 2**63), (2**62, 2**64), (10**20, 10**25), (0, 10**25), (10**25, 10**25)])
def test_counts_beyond_doubles_give_outward_bounds_not_overflow(k: int, n: int) -> None:
    """`C: 9223372036854775807` on a T: line with its missed-period bound reached n ~ 1e25: the incomplete
    beta overflowed (stats.py: math range error, an internal error). Scaled into 2^48 trials, outward."""
    d = decide_rate(k, k, n, 0.01)
    assert 0.0 <= d.lower <= k / n <= d.upper <= 1.0
    assert clean_samples_to_pass(k, n, 0.01) is None or n <= 2**48


# ---- the fast incomplete beta (Temme's expansion, stable front): against the exact sums and its own derivation


def _trim(p: list[Fraction]) -> list[Fraction]:
    while p and p[-1] == 0:
        p = p[:-1]
    return p


def _poly_add(p: list[Fraction], q: list[Fraction]) -> list[Fraction]:
    out = [Fraction(0)] * max(len(p), len(q))
    for i, c in enumerate(p):
        out[i] += c
    for i, c in enumerate(q):
        out[i] += c
    return _trim(out)


def _poly_mul(p: list[Fraction], q: list[Fraction]) -> list[Fraction]:
    out = [Fraction(0)] * max(0, len(p) + len(q) - 1)
    for i, c in enumerate(p):
        if c:
            for j, d in enumerate(q):
                out[i + j] += c * d
    return _trim(out)


Series = list[list[Fraction]]  # coefficient of zeta^j: a polynomial in gamma


def _compose(f: Series, u: Series, order: int) -> Series:
    """f(u(zeta)) to zeta^order, u without a constant term."""
    out: Series = [[] for _ in range(order + 1)]
    power: Series = [[Fraction(1)]] + [[] for _ in range(order)]
    for coef in f[: order + 1]:
        for j in range(order + 1):
            out[j] = _poly_add(out[j], _poly_mul(coef, power[j]))
        nxt: Series = [[] for _ in range(order + 1)]
        for i, c in enumerate(power):
            for j, d in enumerate(u[: order + 1 - i]):
                nxt[i + j] = _poly_add(nxt[i + j], _poly_mul(c, d))
        power = nxt
    return out


def temme_h(order: int) -> Series:
    """h(zeta) = zeta / u(zeta) as a series in zeta with coefficients polynomial in gamma, exact.

    With u = (t - x0) / sigma, zeta^2 / 2 = sum_{m >= 2} e_m u^m / m where e_m = sigma^m ((-1)^m x0^(1-m)
    + (1-x0)^(1-m)) = V_(m-1), V_0 = 0, V_1 = 1, V_j = -gamma V_(j-1) + V_(j-2) (x0 and x0 - 1 are the roots
    of y^2 + gamma sigma y - sigma^2). So zeta = u g(u), g = sqrt(sum 2 e_m u^(m-2) / m); reversing it gives
    u(zeta) and h = g(u(zeta))."""
    gamma = [Fraction(0), Fraction(-1)]  # -gamma
    v: Series = [[], [Fraction(1)]]
    while len(v) < order + 4:
        v.append(_poly_add(_poly_mul(gamma, v[-1]), v[-2]))
    big_g = [[c * Fraction(2, m) for c in v[m - 1]] for m in range(2, order + 4)]
    g: Series = [[Fraction(1)]]
    for j in range(1, order + 2):  # g = sqrt(G), g_0 = 1
        acc = big_g[j]
        for i in range(1, j):
            acc = _poly_add(acc, [-c for c in _poly_mul(g[i], g[j - i])])
        g.append([c / 2 for c in acc])
    q: Series = [[Fraction(1)]]
    for j in range(1, order + 2):  # q = 1 / g
        acc2: list[Fraction] = []
        for i in range(1, j + 1):
            acc2 = _poly_add(acc2, _poly_mul(g[i], q[j - i]))
        q.append([-c for c in acc2])
    u: Series = [[], [Fraction(1)]] + [[] for _ in range(order)]
    for _ in range(order + 2):  # u = zeta q(u): one more exact order each round
        u = [[]] + _compose(q, u, order + 1)[: order + 1]
    return _compose(g, u, order)


def test_temme_coefficients_are_the_series_reversion() -> None:
    h = [_trim(p) for p in temme_h(len(_TEMME_H) - 1)]
    assert h[1] == [0, Fraction(-1, 3)]  # h = 1 - gamma zeta / 3 + (gamma^2 / 12 + 1 / 4) zeta^2 + ...
    assert h[2] == [Fraction(1, 4), 0, Fraction(1, 12)]
    assert h[3] == [0, Fraction(-1, 15), 0, Fraction(-2, 135)]  # by hand: -gamma (2 gamma^2 + 9) / 135
    for j, (table, exact) in enumerate(zip(_TEMME_H, h)):
        padded = exact + [Fraction(0)] * (j + 1 - len(exact))
        assert len(table) == len(padded) == j + 1
        assert all(math.isclose(t, float(e), rel_tol=1e-15, abs_tol=1e-300) for t, e in zip(table, padded)), j


_DIGITS = Context(prec=60)
# Bernoulli numbers B_2m as (numerator, denominator), m = 1..9: Stirling's series for ln Gamma.
_BERNOULLI = ((1, 6), (-1, 30), (1, 42), (-1, 30), (5, 66), (-691, 2730), (7, 6), (-3617, 510), (43867, 798))


def _pi() -> Decimal:
    """pi to 60 digits (Machin: 16 atan(1/5) - 4 atan(1/239))."""

    def atan_inv(m: int) -> Decimal:
        x, total, j, sign = Decimal(1) / m, Decimal(0), 1, 1
        power = x
        while power > Decimal("1e-70"):
            total += sign * power / j
            power /= m * m
            j, sign = j + 2, -sign
        return total

    with localcontext(_DIGITS):
        return 16 * atan_inv(5) - 4 * atan_inv(239)


_LN_2PI = (2 * _pi()).ln(_DIGITS)


def ln_factorial(m: int) -> Decimal:
    """ln(m!) to ~55 digits: exact below 2000, Stirling's series (9 terms, error < 1e-60) above."""
    with localcontext(_DIGITS):
        if m < 2000:
            return Decimal(math.factorial(m)).ln()
        x = Decimal(m + 1)
        s = (x - Decimal("0.5")) * x.ln() - x + _LN_2PI / 2
        for i, (num, den) in enumerate(_BERNOULLI, start=1):
            s += Decimal(num) / (den * 2 * i * (2 * i - 1) * x ** (2 * i - 1))
        return s


def ref_cdf(k: int, n: int, p: float) -> Decimal:
    """P(X <= k | n, p) to ~40 digits, summing the binomial terms of the tail that does not hold the mode,
    from the one next to k outward (each from the last by the ratio of consecutive terms) until they vanish:
    ~10 standard deviations of terms, whatever n. The first term from ln-factorials."""
    if k < 0:
        return Decimal(0)
    if k >= n or p <= 0.0:
        return Decimal(1)
    if p >= 1.0:
        return Decimal(0)
    with localcontext(_DIGITS):
        big_p = Decimal(p)
        big_q = 1 - big_p
        below = k < math.floor((n + 1) * p)  # k under the mode: the terms fall from k down
        i = k if below else k + 1
        ln_term = ln_factorial(n) - ln_factorial(i) - ln_factorial(n - i) + i * big_p.ln() + (n - i) * big_q.ln()
        term = ln_term.exp()
        total = Decimal(0)
        while term > total * Decimal("1e-45") and 0 <= i <= n:
            total += term
            if below:
                term = term * i * big_q / ((n - i + 1) * big_p)
                i -= 1
            else:
                term = term * (n - i) * big_p / ((i + 1) * big_q)
                i += 1
        return total if below else 1 - total


def test_reference_cdf_is_the_direct_sum() -> None:
    """ref_cdf (from k outward) against make_rate_vectors.cdf (every term from 0), both 60 digits."""
    for k, n, p in (
        (0, 10, 0.3),
        (3, 3000, 0.002),
        (40, 500, 0.1),
        (60, 3988, 0.01),
        (999, 1000, 0.998),
        (50, 100, 0.5),
    ):
        assert abs(ref_cdf(k, n, p) - exact.cdf(k, n, Decimal(p))) < Decimal("1e-40"), (k, n, p)


TOL = Decimal("2e-7") + Decimal("1e-8")  # rel_tol of the bracket + CP_MARGIN


def check_bounds_against_sums(k: int, n: int, conf: float) -> None:
    """The upper bound leaves at most alpha below it and is within TOL of the exact root; the lower likewise."""
    alpha = 1 - Decimal(str(conf))
    if k < n:
        u = clopper_pearson_upper(k, n, conf)
        assert ref_cdf(k, n, u) <= alpha, ("upper below the exact bound", k, n, conf)
        assert ref_cdf(k, n, float(Decimal(u) / (1 + TOL))) > alpha, ("upper too wide", k, n, conf)
    if k > 0:
        lo = clopper_pearson_lower(k, n, conf)
        assert 1 - ref_cdf(k - 1, n, lo) <= alpha, ("lower above the exact bound", k, n, conf)
        assert 1 - ref_cdf(k - 1, n, float(Decimal(lo) * (1 + TOL))) > alpha, ("lower too wide", k, n, conf)


def random_cases(seed: int, count: int, most: int) -> list[tuple[int, int, float]]:
    """(k, n, confidence): n log-uniform in [10, 2^48]; k or n - k at most `most` (the sums' reach), k
    log-uniform so that small counts, the continued fraction's and the expansion's ranges and the
    switch between them all come up; confidence in [0.9, 0.999]."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        n = int(math.exp(rng.uniform(math.log(10), math.log(2**48))))
        k = min(n, int(math.exp(rng.uniform(0, math.log(most + 1)))))
        if rng.random() < 0.2:
            k = n - k  # counts near n: rates near 1
        conf = rng.uniform(0.9, 0.999)
        out.append((k, n, conf))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_random_bounds_against_exact_sums(seed: int) -> None:
    for k, n, conf in random_cases(seed, 50, 100_000):
        check_bounds_against_sums(k, n, conf)


@pytest.mark.parametrize("spread", [0.99, 1.01, 2.0])
@pytest.mark.parametrize("n", [10**4, 86_400_000, 2**48])
@pytest.mark.parametrize("conf", [0.9, 0.999])
def test_bounds_where_the_expansion_takes_over(spread: float, n: int, conf: float) -> None:
    """Where the expansion replaces the continued fraction (a b / (a + b) = _TEMME_MIN_A) it has the fewest
    terms' worth of accuracy: both sides of the switch, rates near 0 and near 1."""
    k = k_for_spread(spread * _TEMME_MIN_A, n)
    check_bounds_against_sums(k, n, conf)
    check_bounds_against_sums(n - k, n, conf)


@pytest.mark.parametrize("seed", range(2))
def test_density_at_the_bounds_is_exact_at_any_size(seed: int) -> None:
    """Beyond the sums' reach (k and n - k both above 1e5, n up to 2^48), the expansion's terms shrink with
    a b / (a + b); what could still go wrong is rounding, and it all passes through the front factor
    x^a (1-x)^b / B(a, b) and the exponent of exp(-r zeta^2 / 2): the density checks both, against ln-factorials
    in 60 digits. (The lgamma difference of the old code was off by a factor e at 2^48 and 1e-7 at 1e8.)"""
    rng = random.Random(seed)
    for _ in range(100):
        n = int(math.exp(rng.uniform(math.log(10), math.log(2**48))))
        k = rng.randint(0, n - 1)
        conf = rng.uniform(0.9, 0.999)
        x = clopper_pearson_upper(k, n, conf)
        if x >= 1.0:
            continue
        a, b = k + 1, n - k
        density = _BetaTails(a, b).at(x)[2]
        with localcontext(_DIGITS):
            big_x = Decimal(x)
            ln_ref = (
                ln_factorial(n)
                - ln_factorial(k)
                - ln_factorial(n - k - 1)
                + k * big_x.ln()
                + (n - k - 1) * (1 - big_x).ln()
            )
            ref = ln_ref.exp()
        assert abs(Decimal(density) / ref - 1) < Decimal("1e-7"), (k, n, conf, density, ref)


def k_for_spread(spread: float, n: int) -> int:
    """The k with k (n - k) / n = spread (the smaller root), n >= 4 spread."""
    return round((n - math.sqrt(n * n - 4 * spread * n)) / 2)


def test_expansion_agrees_with_the_continued_fraction_at_large_counts() -> None:
    """Between the sums' reach and 1e9 (a b / (a + b)), the continued fraction still converges in its 10^4
    terms: the expansion's tails at the bounds match it to 1e-10 of the bound (the tail's difference over
    the density: how far the root moves)."""
    rng = random.Random(3)
    for _ in range(40):
        spread = math.exp(rng.uniform(math.log(1e4), math.log(1e9)))
        n = int(math.exp(rng.uniform(math.log(4.1 * spread), math.log(2**48))))
        k = k_for_spread(spread, n)
        if rng.random() < 0.3:
            k = n - k
        conf = rng.uniform(0.9, 0.999)
        for x, a, b in (
            (clopper_pearson_upper(k, n, conf), k + 1, n - k),
            (clopper_pearson_lower(k, n, conf), k, n - k + 1),
        ):
            fast, slow = _BetaTails(a, b), _BetaTails(a, b)
            slow.temme = False
            assert fast.temme
            low, _, density = fast.at(x)
            assert abs(low - slow.at(x)[0]) <= 1e-10 * density * x, (k, n, conf, x)


@pytest.mark.parametrize("n", [31_393_542, 10**9, 2**48])
def test_one_event_short_of_all_where_doubles_crowd_near_1(n: int) -> None:
    """k = n - 1: the start, nudged 1e-9 of the bracket inside it, rounded to 1.0 (a division by zero).
    The exact upper bound is confidence^(1/n) (P(X <= n - 1) = 1 - p^n)."""
    exact_bound = math.exp(math.log(0.95) / n)
    u = clopper_pearson_upper(n - 1, n, 0.95)
    assert exact_bound <= u <= exact_bound + 2.1e-7


def test_the_c_gates_carry_the_same_expansion() -> None:
    """sampler/gate.c evaluates the same series (its verdicts: tests/system/test_vectors.py and
    test_stats_random.py): the same coefficients, switch and range."""
    import re

    source = (Path(__file__).resolve().parents[2] / "sampler" / "gate.c").read_text()
    table = source.split("temme_h[TEMME_TERMS][TEMME_TERMS] = {", 1)[1].split("};", 1)[0]
    rows = [[float(v) for v in row.split(",") if v.strip()] for row in re.findall(r"\{([^{}]*)\}", table)]
    assert rows == [list(row) for row in _TEMME_H]
    assert re.search(r"#define TEMME_TERMS (\d+)", source)[1] == str(len(_TEMME_H))  # type: ignore[index]
    assert float(re.search(r"#define TEMME_MIN_A (\S+)", source)[1]) == _TEMME_MIN_A  # type: ignore[index]
    assert float(re.search(r"#define TEMME_W2 (\S+)", source)[1]) == _TEMME_W2  # type: ignore[index]


def test_clean_samples_to_pass_at_large_counts_is_searched() -> None:
    """At 1e11 trials the bound's outward rounding (up to 1.1e-7) spans 1e4 counts: they are searched, and
    the answer is still the first count the gate's own rule passes (stepping took minutes at 1e14 in C)."""
    n, k = 10**11, 27
    allowed = clopper_pearson_upper(k, n, 0.92) * (1 - 1e-3)
    more = clean_samples_to_pass(k, n, allowed, 0.92)
    assert more is not None and more > 0
    assert clopper_pearson_upper(k, n + more, 0.92) <= allowed < clopper_pearson_upper(k, n + more - 1, 0.92)
