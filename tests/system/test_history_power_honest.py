# SPDX-License-Identifier: GPL-2.0-or-later
"""What `history compare` prints as "a change of +/-X% would have been found with 80 % power" is
found at least 80 % of the time, through compare itself: its store, its family of lines (the
worst thread and each thread, max and p99.9, one min-P adjustment), its min_effect.

Per design, sessions of seeded synthetic runs (tests/history_sim.py: heavy-tailed run-to-run
host interference) without a change give a printed size; a fresh session where the new release
makes every latency 1 + that size longer is compared, and the line that printed it must say
REGRESSION. Before issue 46, five pairs printed +/-11 % where a 20 % change was found 1.5 % of
the time. In-process but about a minute: system tier."""

from __future__ import annotations

import math

import numpy as np
import pytest

from history_sim import host_state, latencies, run_result
from rtgate.history.compare import REGRESSION, Settings, compare
from rtgate.history.store import HistoryDB

SETTINGS = Settings(metrics=["max", "p99.9"])
DRAWS = 60


def _session(rng: np.random.Generator, n: int, paired: bool, scale: float, threads: int) -> HistoryDB:
    """n runs of each release, or n interleaved pairs (both runs of a pair share the host state)."""
    db = HistoryDB(":memory:")
    for i in range(n):
        host = host_state(rng, 0.4)
        for release, s in (("base", 1.0), ("new", scale)):
            if not paired:
                host = host_state(rng, 0.4)
            run = run_result([latencies(rng, 1500, host, s) for _ in range(threads)])
            db.add_run(run, "p", "m", release, pair_id=f"p{i}" if paired else None)
    return db


def _found_at_the_printed_size(n: int, paired: bool, threads: int, seed: int) -> tuple[int, int]:
    """(claims, found): sessions that printed a size, and how many found a change of that size
    on the line that printed it (each session's claim on a line chosen in turn)."""
    rng = np.random.default_rng(seed)
    claims = found = 0
    for draw in range(DRAWS):
        with _session(rng, n, paired, 1.0, threads) as db:
            lines = compare(db, "p", "m", "base", "new", SETTINGS, paired=paired).comparisons
        printed = [(k, c.detectable) for k, c in enumerate(lines) if c.detectable is not None]
        if not printed:
            assert all(c.out_of_reach for c in lines if c.decision != "not enough data")
            continue
        k, size = printed[draw % len(printed)]
        claims += 1
        with _session(rng, n, paired, 1.0 + size, threads) as db:
            again = compare(db, "p", "m", "base", "new", SETTINGS, paired=paired).comparisons
        found += again[k].decision == REGRESSION
    return claims, found


DESIGNS = [(5, False, 1), (8, False, 2), (6, True, 1), (10, True, 2)]
RESULTS: list[tuple[int, int]] = []


@pytest.mark.slow
@pytest.mark.parametrize(("n", "paired", "threads"), DESIGNS)
def test_the_printed_size_is_found_four_times_in_five(n: int, paired: bool, threads: int) -> None:
    claims, found = _found_at_the_printed_size(n, paired, threads, seed=460 + n)
    assert claims >= DRAWS // 2, claims  # these designs can promise something most of the time
    # >= 80 % within this test's sampling error (2.5 standard errors); pooled below, tighter
    assert found / claims >= 0.8 - 2.5 * math.sqrt(0.16 / claims), (found, claims)
    RESULTS.append((claims, found))


@pytest.mark.slow
def test_pooled_over_the_designs_the_printed_size_is_found_at_least_four_times_in_five() -> None:
    assert len(RESULTS) == len(DESIGNS), "runs after the designs above (file order)"
    claims, found = (sum(x) for x in zip(*RESULTS))
    assert found / claims >= 0.8, RESULTS


def test_five_pairs_of_two_threads_do_not_promise_a_twenty_percent_change() -> None:
    """Issue 46's case: five pairs, two threads, every latency x1.2. The change is rarely found
    (every line must move alike in all five pairs); whatever compare promises must be far above
    20 % or out of reach, never +/-11 %."""
    rng = np.random.default_rng(46)
    for _ in range(5):
        with _session(rng, 5, True, 1.2, 2) as db:
            lines = compare(db, "p", "m", "base", "new", SETTINGS, paired=True).comparisons
        for c in lines:
            assert c.out_of_reach or (c.detectable is not None and c.detectable > 0.2), (c.detectable, c.evidence)
