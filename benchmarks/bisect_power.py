#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Latency bisection by simulation: how often `rtgate history bisect` finds the commit that
regressed, and how many runs it takes, against a fixed number of runs per step.

    python benchmarks/bisect_power.py [--reps 200] [--commits 64]     (--smoke: in seconds)
    python benchmarks/bisect_power.py errors [--reps 2000]            (one step's error rates)

Each bisection: `--commits` synthetic commits after a known-good one, the first bad one drawn
at random; every commit from it on makes every latency x1.2, x1.5 or x3. A run is one thread of
`--samples` latencies from tests/history_sim.py (a gamma body, host interference whose level is
log-Student-t from run to run) at the spread that matches this VM: 24 runs of 2 s measured here
at load 4-12 gave a per-run p99.9 whose log has sd 0.90 and median absolute deviation 0.56; the
simulation's, 1.0 and 0.44. The figure is the run's p99.9. The host drifts: its interference
level rises linearly x1.0 -> x`--drift` from the baseline's runs to the last step, as
history_power.py models this VM (x1.3 moves the median p99.9 by x1.35).

Designs, each a real bisection (halve the range on each answer; an undecided step is git
bisect's skip: the next commit beside it is tried):
- fixed 5: 5 runs of each step against 20 baseline runs, the rank test `history compare`
  makes (Mann-Whitney, alpha 0.05 one-sided): BAD when it finds the step worse;
- sequential, unpaired: `bisect.decide_metric` against `--base-runs` baseline runs measured
  before the bisection (each used once per step);
- sequential, paired: each candidate run interleaved with a run of the known-good kernel (in
  random order within the pair): drift cancels within a pair.
Runs counted: every run measured for the bisection, baseline runs included."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from statistics import mean, median

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from history_sim import host_state, latencies  # noqa: E402
from rtgate.history.bisect import BAD, GOOD, Design, decide_metric  # noqa: E402
from rtgate.history.stats import mann_whitney_greater  # noqa: E402

SPREAD = 0.7  # host interference spread: this VM's measured per-run p99.9 spread (benchmarks/README.md)
LEVELS = 13  # host levels drawn ahead, x1.0 .. x`--drift`


class Host:
    """This host in a simulation: per-run p99.9 figures drawn from pools simulated ahead, one per
    host interference level (a run is a few ms of numpy: a bisection of thousands of runs is not)."""

    def __init__(self, rng: np.random.Generator, samples: int, drift: float, pool: int = 3000) -> None:
        self.rng = rng
        self.levels = np.linspace(1.0, drift, LEVELS)
        self.pools = [np.array([self._simulate(level, samples) for _ in range(pool)]) for level in self.levels]
        self.level = 1.0

    def _simulate(self, level: float, samples: int) -> float:
        host = host_state(self.rng, SPREAD) * level
        return float(np.percentile(np.floor(latencies(self.rng, samples, host)), 99.9))

    def run(self, scale: float) -> float:
        """One run's p99.9 (integer us, as stored) at the host's level now, every latency x scale."""
        i = int(np.argmin(abs(self.levels - self.level)))
        return float(np.floor(self.pools[i][self.rng.integers(len(self.pools[i]))] * scale))


def _step_fixed(host: Host, base: list[float], scale: float, runs: int) -> tuple[str, int]:
    new = [host.run(scale) for _ in range(runs)]
    return (BAD if mann_whitney_greater(new, base) < 0.05 else GOOD), runs


def _step_sequential(host: Host, base: list[float], scale: float, design: Design, paired: bool) -> tuple[str, int]:
    """One step: its runs measured ahead (up to --max-runs) and judged once; the test stops at
    its first decision, as the wrapper would have stopped measuring. (answer, runs measured)."""
    if paired:  # each pair in random order: the host's level is the same for both runs
        pairs = [(host.run(1.0), host.run(scale)) for _ in range(design.max_runs)]
        step = decide_metric([], [], design, "p99.9", pairs)
        return step.decision, 2 * step.runs
    step = decide_metric(base, [host.run(scale) for _ in range(min(design.max_runs, len(base)))], design, "p99.9")
    return step.decision, step.runs


def bisect_once(
    rng: np.random.Generator, host: Host, args: argparse.Namespace, factor: float, how: str
) -> tuple[bool, int]:
    """One bisection: (found the first bad commit, runs measured)."""
    first_bad = int(rng.integers(1, args.commits + 1))
    host.level = 1.0
    paired = how == "paired"
    base = [host.run(1.0) for _ in range(0 if paired else (20 if how == "fixed" else args.base_runs))]
    runs = len(base)
    good, bad = 0, args.commits  # commit 0 known good, the last known bad
    skipped: set[int] = set()
    steps_planned = max(1, int(np.ceil(np.log2(args.commits))))
    step = 0
    design = Design(error=args.error, max_runs=args.max_runs, worse_by=args.worse_by or factor)
    while bad - good > 1:
        candidates = sorted(
            (c for c in range(good + 1, bad) if c not in skipped), key=lambda c: abs(c - (good + bad) / 2)
        )
        if not candidates:
            return False, runs  # every commit between skipped: git bisect names a range, not the commit
        commit = candidates[0]
        host.level = 1 + (args.drift - 1) * min(1.0, (step + 1) / steps_planned)
        scale = factor if commit >= first_bad else 1.0
        if how == "fixed":
            answer, used = _step_fixed(host, base, scale, 5)
        else:
            answer, used = _step_sequential(host, list(base) if not paired else base, scale, design, paired)
        runs += used
        step += 1
        if answer == GOOD:
            good = commit
        elif answer == BAD:
            bad = commit
        else:
            skipped.add(commit)
    return bad == first_bad, runs


def table(args: argparse.Namespace) -> None:
    print(
        f"bisect_power: {args.reps} bisections per cell over {args.commits} commits, p99.9 of 1 thread x "
        f"{args.samples} samples, host drift x1.0 -> x{args.drift:g}; sequential: --error {args.error:g} "
        f"--max-runs {args.max_runs}, --worse-by {'the factor' if args.worse_by is None else args.worse_by}, "
        f"{args.base_runs} baseline runs unpaired"
    )
    host = Host(np.random.default_rng(1), args.samples, args.drift, args.pool)
    print(f"{'regression':>10} {'design':>20} {'right commit':>13} {'runs median':>12} {'mean':>7} {'max':>6}")
    for factor in args.factors:
        for how in args.designs:
            rng = np.random.default_rng(int(factor * 1000) + len(how))
            results = [bisect_once(rng, host, args, factor, how) for _ in range(args.reps)]
            right = sum(r for r, _ in results) / len(results)
            runs = [n for _, n in results]
            name = {"fixed": "fixed 5 runs/step", "unpaired": "sequential unpaired", "paired": "sequential paired"}[how]
            print(
                f"{'x' + format(factor, 'g'):>10} {name:>20} {right:>13.1%} {median(runs):>12.0f} "
                f"{mean(runs):>7.1f} {max(runs):>6}",
                flush=True,
            )


def errors(args: argparse.Namespace) -> None:
    """One step's wrong decisions and runs, paired: a good commit (x1) and one exactly at the factor."""
    print(f"one step, paired, --error {args.error:g} --max-runs {args.max_runs}: {args.reps} steps per cell")
    print(f"{'worse-by':>8} {'true':>6} {'GOOD':>7} {'BAD':>7} {'undecided':>10} {'pairs mean':>10}")
    for factor in args.factors:
        for true in (1.0, factor):
            rng = np.random.default_rng(int(factor * 100 + true * 10))
            host = Host(rng, args.samples, 1.0, args.pool)
            design = Design(error=args.error, max_runs=args.max_runs, worse_by=factor)
            counts = {"good": 0, "bad": 0, "undecided": 0}
            used = []
            for _ in range(args.reps):
                base: list[float] = []
                answer, n = _step_sequential(host, base, true, design, True)
                counts[answer] += 1
                used.append(n / 2)
            print(
                f"{'x' + format(factor, 'g'):>8} {'x' + format(true, 'g'):>6} "
                + " ".join(f"{counts[k] / args.reps:>{w}.1%}" for k, w in (("good", 7), ("bad", 7), ("undecided", 10)))
                + f" {mean(used):>10.1f}",
                flush=True,
            )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", nargs="?", default="table", choices=["table", "errors"])
    p.add_argument("--smoke", action="store_true", help="seconds: that the script still runs (the suite runs this)")
    p.add_argument("--reps", type=int, default=200)
    p.add_argument("--commits", type=int, default=64)
    p.add_argument("--samples", type=int, default=2000)
    p.add_argument("--drift", type=float, default=1.3)
    p.add_argument("--error", type=float, default=0.01)
    p.add_argument("--max-runs", type=int, default=300)
    p.add_argument("--worse-by", type=float, help="declared factor (default: the true one of each case)")
    p.add_argument("--base-runs", type=int, default=300)
    p.add_argument("--pool", type=int, default=3000, help="runs simulated ahead per host level")
    p.add_argument("--factors", type=lambda x: [float(v) for v in x.split(",")], default=[1.2, 1.5, 3.0])
    p.add_argument("--designs", type=lambda x: x.split(","), default=["fixed", "unpaired", "paired"])
    args = p.parse_args()
    if args.smoke:
        args.reps, args.commits, args.samples, args.factors, args.pool = 2, 8, 1000, [3.0], 50
        args.base_runs, args.max_runs = 40, 40
    start = time.monotonic()
    if args.mode == "errors":
        errors(args)
    else:
        table(args)
    print(f"({time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
