# SPDX-License-Identifier: GPL-2.0-or-later
"""How often a rate gate says PASS, INCONCLUSIVE or FAIL, by sample count and true rate.

Synthetic results, seeded: for each n and each true rate (a multiple of the gate's limit), draw
the number of samples above the limit from Binomial(n, rate) and judge it as rtgate does
(rtgate.core.stats.decide_rate, the call gates.py and every rate gate make). Beside it, the rule
before issue 19 (FAIL as soon as the observed rate is above the limit) for comparison, and the
exact probabilities of PASS and FAIL (binomial tails up to the last count that passes and from the
first that fails), which the simulated shares estimate.

    .venv/bin/python benchmarks/gate_error_rates.py [--runs 2000] [--limit 0.001] [--seed 19]

A false PASS is a PASS when the true rate is at or above the limit; a false FAIL is a FAIL when it
is at or under it. Targets (issue 19): at 0.9x the limit, FAIL in at most 5 % of runs at every n;
at the limit, PASS in at most 5 %. Checked on the exact probabilities at the end (exit 1 if missed).
"""

from __future__ import annotations

import argparse
import functools
import sys
import time

import numpy as np

from rtgate.core.stats import binom_cdf, decide_rate

SIZES = (1_000, 3_000, 10_000, 30_000, 100_000, 1_000_000, 10_000_000)
FACTORS = (0.5, 0.9, 1.0, 1.1, 2.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=2000, help="simulated runs per cell (default 2000)")
    ap.add_argument("--limit", type=float, default=0.001, help="the gate's allowed rate (default 0.001)")
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--smoke", action="store_true", help="seconds: that the script still runs (the suite runs this)")
    a = ap.parse_args()
    if a.smoke:
        a.runs = 20
    rng = np.random.default_rng(a.seed)

    @functools.cache
    def verdict(k: int, n: int) -> str:
        return decide_rate(k, k, n, a.limit, a.confidence).verdict

    def edge(n: int, status: str) -> int:
        """The largest count that PASSes (-1: none), or the smallest that FAILs."""
        lo, hi = -1, n  # PASS: verdict(lo) passes; FAIL: verdict(hi) fails
        if status == "FAIL":
            lo, hi = 0, n
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if status == "PASS":
                lo, hi = (mid, hi) if verdict(mid, n) == "PASS" else (lo, mid)
            else:
                lo, hi = (lo, mid) if verdict(mid, n) == "FAIL" else (mid, hi)
        return lo if status == "PASS" else hi

    start = time.monotonic()
    print(f"limit {a.limit * 100:g} %, confidence {a.confidence:g}, {a.runs} runs per cell, seed {a.seed}")
    print(
        f"{'true rate':>9} {'n':>9}  {'PASS':>6} {'INCONC':>6} {'FAIL':>6}   {'old FAIL':>8}   "
        f"{'exact PASS':>10} {'exact FAIL':>10}"
    )
    missed: list[str] = []
    for factor in FACTORS:
        for n in SIZES:
            ks = rng.binomial(n, factor * a.limit, size=a.runs)
            counts = {"PASS": 0, "INCONCLUSIVE": 0, "FAIL": 0}
            for k in ks:
                counts[verdict(int(k), n)] += 1
            old_fail = int(np.sum(ks / n > a.limit))
            share = {s: c / a.runs for s, c in counts.items()}
            k_pass, k_fail = edge(n, "PASS"), edge(n, "FAIL")
            exact = {
                "PASS": binom_cdf(k_pass, n, factor * a.limit) if k_pass >= 0 else 0.0,
                "FAIL": 1.0 - binom_cdf(k_fail - 1, n, factor * a.limit),
            }
            print(
                f"{factor:>8g}x {n:>9d}  {share['PASS'] * 100:5.1f}% {share['INCONCLUSIVE'] * 100:5.1f}% "
                f"{share['FAIL'] * 100:5.1f}%   {old_fail / a.runs * 100:7.1f}%   "
                f"{exact['PASS'] * 100:9.2f}% {exact['FAIL'] * 100:9.2f}%"
            )
            for status, target_factor in (("FAIL", 0.9), ("PASS", 1.0)):
                if factor == target_factor and exact[status] > 0.05:
                    missed.append(f"{status} {exact[status] * 100:.2f} % at {factor:g}x, n={n}")
        print()
    print(f"{time.monotonic() - start:.1f} s")
    if missed:
        print("targets missed: " + "; ".join(missed))
        return 1
    print("targets met: FAIL <= 5 % at 0.9x the limit and PASS <= 5 % at the limit, at every n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
