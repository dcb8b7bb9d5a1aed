# SPDX-License-Identifier: GPL-2.0-or-later
"""The size history.power promises is found at least 80 % of the time by the test compare runs.

Known answers without the store: noise of a known law (normal, and Student's t with 3 degrees of
freedom, heavier-tailed than the model's normal core), a spread estimated from a first sample as
compare estimates it, the printed size from it, then a second sample shifted by that size and
judged by the exact one-sided rank test at the same level. The share found must be >= 80 % (the
size must not be a textbook one that is found 1.5 % of the time, issue 46), and not far above it
(a size that promises nothing is no answer either)."""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest

from rtgate.history.power import detectable_log
from rtgate.history.stats import mann_whitney_greater, signed_ranks

REPS = 600


def _noise(rng: np.random.Generator, law: str, n: int) -> np.ndarray:
    return rng.standard_normal(n) if law == "normal" else rng.standard_t(3, n) / math.sqrt(3)


@cache
def _signed_rank_tails(n: int) -> tuple[float, ...]:
    """P(W+ >= w) for w = 0 .. n(n+1)/2, counted over the 2**n sign patterns."""
    counts = [1]
    for k in range(1, n + 1):
        grown = counts + [0] * k
        for s, c in enumerate(counts):
            grown[s + k] += c
        counts = grown
    return tuple(sum(counts[w:]) / 2**n for w in range(len(counts)))


def _signed_rank_p(d: np.ndarray) -> float:
    """Exact one-sided p-value of Wilcoxon's signed-rank sum (no ties in continuous noise)."""
    return _signed_rank_tails(len(d))[math.ceil(sum(r for r in signed_ranks(list(d)) if r > 0))]


DESIGNS = [
    (5, True, 0.05, "normal"),
    (8, True, 0.01, "t3"),
    (12, True, 0.02, "normal"),
    (4, False, 0.05, "t3"),
    (6, False, 0.01, "normal"),
    (9, False, 0.02, "t3"),
]


@cache
def _share_found(n: int, paired: bool, level: float, law: str) -> float:
    """How often the printed size is found in REPS draws of this design (seeded: the same share
    whichever test, worker or order asks first)."""
    rng = np.random.default_rng(46 + n)
    found = 0
    for _ in range(REPS):
        if paired:
            spread = float(np.std(_noise(rng, law, n), ddof=1))
        else:
            a, b = _noise(rng, law, n), _noise(rng, law, n)
            spread = math.sqrt((np.var(a, ddof=1) + np.var(b, ddof=1)) / 2)
        size = detectable_log(spread, n, n, paired, level, 0.0)
        assert math.isfinite(size)
        if paired:
            found += _signed_rank_p(size + _noise(rng, law, n)) <= level
        else:
            found += mann_whitney_greater(list(size + _noise(rng, law, n)), list(_noise(rng, law, n))) <= level
    return found / REPS


@pytest.mark.parametrize(("n", "paired", "level", "law"), DESIGNS)
def test_the_promised_size_is_found_four_times_in_five(n: int, paired: bool, level: float, law: str) -> None:
    share = _share_found(n, paired, level, law)
    # >= 80 % within this test's own sampling error (2.5 standard errors: 4 points at 600
    # draws; the pooled check below holds it to 0.7 points), and not a size that promises nothing
    assert 0.8 - 2.5 * math.sqrt(0.16 / REPS) <= share <= 0.95, share


def test_pooled_over_the_designs_the_size_is_found_at_least_four_times_in_five() -> None:
    shares = [_share_found(*design) for design in DESIGNS]
    assert sum(shares) / len(shares) >= 0.8, shares


def test_what_no_p_value_can_reach_is_out_of_reach() -> None:
    """Five pairs give at best p = 1/32: at a family's level below it nothing can be found; four
    runs a side give 1/70."""
    assert detectable_log(0.3, 5, 5, True, 1 / 32, 0.05) < math.inf
    assert detectable_log(0.3, 5, 5, True, 1 / 33, 0.05) == math.inf
    assert detectable_log(0.3, 4, 4, False, 1 / 70, 0.05) < math.inf
    assert detectable_log(0.3, 4, 4, False, 1 / 71, 0.05) == math.inf
    assert detectable_log(0.3, 4, 4, False, 0.0, 0.05) == math.inf


def test_without_noise_the_size_is_min_effect() -> None:
    """Runs that do not vary find any change at all; the verdict still asks for min_effect."""
    assert detectable_log(0.0, 6, 6, False, 0.05, 0.05) == pytest.approx(math.log1p(0.05))
    assert detectable_log(0.0, 6, 6, True, 0.05, 0.05) == pytest.approx(math.log1p(0.05))


def test_more_runs_and_a_kinder_level_find_less() -> None:
    sizes = [detectable_log(0.5, n, n, True, 0.05, 0.0) for n in (5, 8, 12, 20, 29, 30, 31, 32, 60)]
    assert sizes == sorted(sizes, reverse=True), sizes
    assert sizes[5] / sizes[6] < 1.02  # the simulated (to 30 pairs) and the normal-theory sizes join
    assert detectable_log(0.5, 10, 10, False, 0.005, 0.0) > detectable_log(0.5, 10, 10, False, 0.05, 0.0)
