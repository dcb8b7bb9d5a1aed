"""Clopper-Pearson bounds against exact binomial sums and closed forms."""

from __future__ import annotations

import math

import pytest

from rtgate.core.stats import betainc, clopper_pearson_upper


def binom_cdf(k: int, n: int, p: float) -> float:
    return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k + 1))


def test_zero_events_closed_form() -> None:
    for n in (1, 10, 999, 3000, 1_000_000):
        assert clopper_pearson_upper(0, n, 0.95) == pytest.approx(1 - 0.05 ** (1 / n), rel=1e-12)


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
