# SPDX-License-Identifier: GPL-2.0-or-later
"""The history's own random draws (rtgate.history.draws, SplitMix64 in numpy): the reference
generator's words, the same stream however it is taken, and draws that are uniform where the
tests need them (indices, coin flips, k-subsets), checked by chi-square at a fixed seed."""

from __future__ import annotations

import itertools
import math
from statistics import NormalDist

import numpy as np
import pytest

from rtgate.history.draws import GAMMA, MASK, Draws
from rtgate.history.stats import MONTE_CARLO, hodges_lehmann, paired_adjusted, shift_interval, signed_ranks


def _splitmix64(seed: int, count: int) -> list[int]:
    """The generator word by word, in Python integers: what the numpy blocks must reproduce."""
    out, x = [], seed & MASK
    for _ in range(count):
        x = (x + GAMMA) & MASK
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        out.append(z ^ (z >> 31))
    return out


def _chi2_limit(df: int, p: float = 1e-4) -> float:
    """The chi-square value exceeded with chance p (Wilson and Hilferty's approximation)."""
    z = NormalDist().inv_cdf(1 - p)
    return float(df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3)


def _chi2(counts: np.ndarray, expected: float) -> float:
    return float(((counts - expected) ** 2 / expected).sum())


def test_the_words_are_splitmix64s() -> None:
    """The reference C generator's first words (computed from Steele, Lea and Flood's code)."""
    assert [int(w) for w in Draws(0).words(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    assert [int(w) for w in Draws(1234567).words(2)] == [0x599ED017FB08FC85, 0x2C73F08458540FA5]
    for seed in (1, 2**63 + 5, MASK, -1):
        assert [int(w) for w in Draws(seed).words(500)] == _splitmix64(seed, 500)


def test_the_stream_is_the_same_however_it_is_taken() -> None:
    whole = Draws(7).words(1000)
    d = Draws(7)
    parts = np.concatenate([d.words(1), d.words(0), d.words(499), d.words(500)])
    assert np.array_equal(whole, parts)
    assert np.array_equal(Draws(7).subsets(50, 9, 4), Draws(7).subsets(50, 9, 4))
    # subsets are drawn in blocks of rows: the same as keys from one block of words, sorted
    keys = Draws(9).words(5000 * 20).reshape(5000, 20) >> np.uint64(5) << np.uint64(5) | np.arange(20, dtype=np.uint64)
    want = np.zeros((5000, 20), dtype=bool)
    np.put_along_axis(want, np.argsort(keys, axis=1)[:, :7], True, axis=1)
    assert np.array_equal(Draws(9).subsets(5000, 20, 7), want)
    assert not np.array_equal(Draws(7).subsets(50, 9, 4), Draws(8).subsets(50, 9, 4))


@pytest.mark.parametrize("n", [2, 7, 10, 100])
def test_indices_below_n_are_uniform(n: int) -> None:
    draws = Draws(11).below(n, (1000, 100))
    assert draws.min() >= 0 and draws.max() < n
    counts = np.bincount(draws.ravel(), minlength=n)
    assert _chi2(counts, draws.size / n) < _chi2_limit(n - 1)


def test_coins_are_fair_and_independent() -> None:
    flips = Draws(12).coins((20000, 20))
    assert flips.shape == (20000, 20) and flips.dtype == bool
    for column in flips.T:  # every bit position of the words, each balanced
        assert abs(column.mean() - 0.5) < 4 * math.sqrt(0.25 / len(column))
    pairs = np.bincount((2 * flips[:, :-1] + flips[:, 1:]).ravel(), minlength=4)  # neighbours: 4 equal cells
    assert _chi2(pairs, pairs.sum() / 4) < _chi2_limit(3)


def test_every_k_subset_is_equally_likely() -> None:
    """All 20 subsets of 3 of 6 as often as each other; at 10 of 20 (the 10-vs-10 runs design),
    each column and each pair of columns as often as a uniform subset has them."""
    rows = Draws(13).subsets(60000, 6, 3)
    assert (rows.sum(axis=1) == 3).all()
    index = {s: i for i, s in enumerate(itertools.combinations(range(6), 3))}
    counts = np.bincount([index[tuple(np.flatnonzero(r))] for r in rows], minlength=20)
    assert _chi2(counts, len(rows) / 20) < _chi2_limit(19)
    big = Draws(14).subsets(MONTE_CARLO, 20, 10)
    assert (big.sum(axis=1) == 10).all()
    share = big.mean(axis=0)
    assert np.abs(share - 0.5).max() < 4.5 * math.sqrt(0.25 / MONTE_CARLO)
    both = (big[:, :, None] & big[:, None, :]).mean(axis=0)[np.triu_indices(20, 1)]
    p = 10 * 9 / (20 * 19)
    assert np.abs(both - p).max() < 4.5 * math.sqrt(p * (1 - p) / MONTE_CARLO)


def test_edge_subsets_and_bad_requests() -> None:
    assert Draws(1).subsets(3, 4, 0).sum() == 0 and Draws(1).subsets(3, 4, 4).all()
    with pytest.raises(ValueError):
        Draws(1).subsets(3, 4, 5)
    with pytest.raises(ValueError):
        Draws(1).below(0, (2, 2))


def test_sampled_sign_flips_keep_their_p_values() -> None:
    """Beyond EXACT_LIMIT (15 pairs, 32,768 flips) the sign-flip test samples MONTE_CARLO of them:
    within their error of the exact p-value, counted here over every flip."""
    rng = np.random.default_rng(5)
    for shift in (0.0, 0.3, 1.0):
        ranks = signed_ranks(list(rng.standard_normal(15) + shift))
        worse, better = paired_adjusted([ranks])
        signs = 1 - 2 * ((np.arange(2**15)[:, None] >> np.arange(15)) & 1)
        flips = signs @ np.asarray(ranks)
        observed = sum(ranks)
        for got, exact in ((worse[0], np.mean(flips >= observed)), (better[0], np.mean(flips <= observed))):
            assert abs(got - exact) <= 4 * math.sqrt(exact * (1 - exact) / MONTE_CARLO) + 1 / MONTE_CARLO


def test_bootstrap_interval_covers_the_shift() -> None:
    """The 95 % interval of the Hodges-Lehmann shift holds the true shift in about 95 % of
    seeded samples (10 against 10 normal runs; the percentile bootstrap runs a little short at
    this size), and always holds its own estimate."""
    rng = np.random.default_rng(6)
    held = 0
    trials = 200
    for k in range(trials):
        base, new = list(rng.standard_normal(10)), list(rng.standard_normal(10) + 2.0)
        lo, hi = shift_interval(new, base, seed=k + 1)
        held += lo <= 2.0 <= hi
        assert lo <= hodges_lehmann(new, base) <= hi
    assert 0.86 <= held / trials <= 0.99
    assert shift_interval([1.0, 2.0, 3.0], [1.0]) == shift_interval([1.0, 2.0, 3.0], [1.0])
