# SPDX-License-Identifier: GPL-2.0-or-later
"""The permutation tests count each arrangement's group sum in integers (twice the rank scores),
enumerating every arrangement up to EXACT_LIMIT: known answers from Mann-Whitney's exact
distribution and from brute force over itertools, min-P adjustment included. Speed:
benchmarks/history_scale.py."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rtgate.history.figures import Interval
from rtgate.history.stats import (
    EXACT_LIMIT,
    MONTE_CARLO,
    gehan_scores,
    mann_whitney_greater,
    midranks,
    paired_adjusted,
    paired_family,
    two_sample_adjusted,
    two_sample_family,
)


def test_eight_against_eight_is_exact() -> None:
    """One line without ties: its p-value is Mann-Whitney's exact one (U counted by recursion),
    both ways, at the largest balanced design enumerated (12,870 arrangements)."""
    assert math.comb(16, 8) <= EXACT_LIMIT < math.comb(18, 9)
    rng = np.random.default_rng(3)
    for shift in (0.0, 0.5, 1.0, 2.0):
        base, new = list(rng.standard_normal(8)), list(rng.standard_normal(8) + shift)
        worse, better = two_sample_adjusted([gehan_scores([Interval(v, v) for v in base + new])], 8)
        assert worse[0] == pytest.approx(mann_whitney_greater(new, base), abs=1e-12)
        assert better[0] == pytest.approx(mann_whitney_greater(base, new), abs=1e-12)


def _brute_two_sample(scores: list[list[float]], n_base: int) -> tuple[list[float], list[float]]:
    """Min-P over every arrangement, by brute force: for each arrangement and cell, the share of
    arrangements whose group sum is at least (at most) its own."""
    n = len(scores[0])
    groups = list(itertools.combinations(range(n), n - n_base))
    sums = [[sum(row[i] for i in g) for g in groups] for row in scores]
    observed = [sum(row[n_base:]) for row in scores]
    out = []
    for sign in (1, -1):
        marginal = [[sum(sign * y >= sign * x for y in col) / len(groups) for x in col] for col in sums]
        least = [min(m[a] for m in marginal) for a in range(len(groups))]
        p_obs = [sum(sign * y >= sign * o for y in col) / len(groups) for col, o in zip(sums, observed)]
        out.append([sum(x <= p for x in least) / len(groups) for p in p_obs])
    return out[0], out[1]


def test_min_p_matches_brute_force_with_ties_and_censoring() -> None:
    """Three correlated lines of 5 against 6 runs (462 arrangements): Gehan scores with 'at
    least' figures, midranks with ties, and a line that cannot move (p 1 both ways)."""
    rng = np.random.default_rng(9)
    for shift in (0.0, 0.8):
        common = rng.standard_normal(11)
        common[5:] += shift
        a = np.round(common + 0.5 * rng.standard_normal(11), 1)
        censored = [Interval(v, math.inf if i % 4 == 0 else v) for i, v in enumerate(a)]
        scores = [
            gehan_scores(censored),
            [float(x) for x in midranks(list(np.round(common, 0)))],
            [3.0] * 11,
        ]
        worse, better = two_sample_adjusted(scores, 5)
        want_worse, want_better = _brute_two_sample(scores, 5)
        assert worse == pytest.approx(want_worse, abs=1e-12) and better == pytest.approx(want_better, abs=1e-12)
        assert worse[2] == better[2] == 1.0


def test_sign_flips_are_exact() -> None:
    """14 pairs (16,384 flips): one line's p-value is the share of every flip whose signed sum
    reaches the observed one, counted by brute force."""
    assert 2**14 <= EXACT_LIMIT
    ranks = [float(r) for r in range(1, 15)]
    signs = [1, 1, -1, 1, 1, 1, -1, 1, 1, -1, 1, 1, -1, 1]
    scores = [s * r for s, r in zip(signs, ranks)]
    observed = sum(scores)
    flips = [sum(f * r for f, r in zip(flip, ranks)) for flip in itertools.product((1, -1), repeat=14)]
    worse, better = paired_adjusted([scores])
    assert worse[0] == pytest.approx(sum(x >= observed for x in flips) / 2**14, abs=1e-12)
    assert better[0] == pytest.approx(sum(x <= observed for x in flips) / 2**14, abs=1e-12)


def test_scores_that_are_not_ranks_are_refused() -> None:
    with pytest.raises(ValueError, match="rank scores"):
        two_sample_adjusted([[0.1, 0.2, 0.3, 0.4, 0.5, 0.6]], 3)


def test_sampled_arrangements_keep_their_p_values() -> None:
    """Beyond EXACT_LIMIT (10 runs against 10, 184,756 arrangements), MONTE_CARLO random ones:
    within their error of the exact p-value, counted here by Mann-Whitney's recursion, and the
    smallest is 1 / (MONTE_CARLO + 1), never 0."""
    rng = np.random.default_rng(4)
    for shift in (0.0, 1.0, 5.0):
        base, new = list(rng.standard_normal(10)), list(rng.standard_normal(10) + shift)
        worse, _ = two_sample_adjusted([gehan_scores([Interval(v, v) for v in base + new])], 10)
        exact = mann_whitney_greater(new, base)
        assert abs(worse[0] - exact) <= 4 * math.sqrt(exact * (1 - exact) / MONTE_CARLO) + 1 / MONTE_CARLO
        assert worse[0] >= 1 / (MONTE_CARLO + 1)


def _brute_level(scores: list[list[float]], n_base: int, alpha: float) -> float:
    """The family's per-line level by brute force: the largest marginal p-value c / N whose
    min-P adjusted p-value is below alpha, the smaller over the two sides."""
    n = len(scores[0])
    groups = list(itertools.combinations(range(n), n - n_base))
    sums = [[sum(row[i] for i in g) for g in groups] for row in scores]
    levels = []
    for sign in (1, -1):
        marginal = [[sum(sign * y >= sign * x for y in col) for x in col] for col in sums]
        least = [min(m[a] for m in marginal) for a in range(len(groups))]
        declared = [c for c in range(1, len(groups) + 1) if sum(x <= c for x in least) / len(groups) < alpha]
        levels.append(max(declared, default=0) / len(groups))
    return min(levels)


def test_the_family_level_matches_brute_force() -> None:
    """The level the resolving power uses: one line keeps it at alpha's step (6 of 126
    arrangements below 0.05 at 4 against 5), lines that disagree lower it, lines that agree do
    not; checked against brute force over every arrangement."""
    rng = np.random.default_rng(12)
    one = [[float(x) for x in midranks(list(rng.standard_normal(9)))]]
    assert two_sample_family(one, 4, 0.05)[2] == pytest.approx(_brute_level(one, 4, 0.05)) == 6 / 126
    common = rng.standard_normal(9)
    agree = [[float(x) for x in midranks(list(common + 0.01 * rng.standard_normal(9)))] for _ in range(3)]
    apart = [[float(x) for x in midranks(list(rng.standard_normal(9)))] for _ in range(3)]
    for scores in (agree, apart):
        for alpha in (0.05, 0.1):
            assert two_sample_family(scores, 4, alpha)[2] == pytest.approx(_brute_level(scores, 4, alpha))
    assert two_sample_family(apart, 4, 0.05)[2] < two_sample_family(agree, 4, 0.05)[2]
    # pairs: five pairs whose lines share their signs keep 1/32; lines with other signs lose it
    same = [[1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 1.0, 4.0, 3.0, 5.0]]
    other = [[1.0, 2.0, 3.0, 4.0, 5.0], [-2.0, 1.0, 4.0, 3.0, 5.0]]
    assert paired_family(same, 0.05)[2] == pytest.approx(1 / 32)
    assert paired_family(other, 0.05)[2] == 0.0
