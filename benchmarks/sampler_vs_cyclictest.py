# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate-sampler against Debian's cyclictest: same options, alternating runs, ratios side by side.

    sudo .venv/bin/python benchmarks/sampler_vs_cyclictest.py [--pairs 6] [--loops 20000]

Reports CPU time per cycle, peak RSS, and min/avg/p99 latency (medians over the runs), and the
ratios rtgate-sampler / cyclictest. Targets: CPU per cycle <= 0.9x, peak RSS <= 0.5x, min/avg no worse.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from common import median, need, run_measured


def p99(hist: dict[str, int], cycles: int, overflow_at: int) -> float:
    rank = 0.99 * cycles
    seen = 0
    for k in sorted(hist, key=int):
        seen += hist[k]
        if seen >= rank:
            return float(k)
    return float(overflow_at)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=6)
    ap.add_argument("--loops", type=int, default=20000)
    ap.add_argument("--interval", type=int, default=200)
    ap.add_argument("--sampler", help="rtgate-sampler (default: the one installed beside this Python)")
    ap.add_argument("--smoke", action="store_true", help="seconds: that the script still runs (the suite runs this)")
    args = ap.parse_args()
    if args.smoke:
        args.pairs, args.loops = 1, 500
    cyclictest = need("cyclictest", "apt-get install rt-tests")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "harness"))
    from rtgate.measure.runner import find_sampler

    args.sampler = find_sampler(args.sampler)
    hist = 2000
    opts = ["-m", "-S", "-p", "80", "-i", str(args.interval), "-d", "0", "-l", str(args.loops), "-q", "-h", str(hist)]
    figures: dict[str, dict[str, list[float]]] = {
        n: {k: [] for k in ("cpu", "rss", "min", "avg", "p99")} for n in ("rtgate-sampler", "cyclictest")
    }
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.pairs):
            order = [("rtgate-sampler", args.sampler), ("cyclictest", cyclictest)]
            if i % 2:
                order.reverse()  # alternate who goes first
            for name, prog in order:
                out = os.path.join(tmp, f"{name}.json")
                _, cpu, rss = run_measured([prog, *opts, f"--histfile={tmp}/h", f"--json={out}"])
                doc = json.load(open(out))
                threads = doc["thread"].values()
                cycles = sum(t["cycles"] for t in threads)
                f = figures[name]
                f["cpu"].append(cpu / cycles * 1e6)  # us of CPU per cycle
                f["rss"].append(rss)
                f["min"].append(median([t["min"] for t in threads]))
                f["avg"].append(median([t["avg"] for t in threads]))
                f["p99"].append(median([p99(t["histogram"], t["cycles"], hist) for t in threads]))
    print(f"{args.pairs} alternating pairs, options: {' '.join(opts)} (medians)")
    print(f"{'':16} {'CPU us/cycle':>13} {'peak RSS KiB':>13} {'min us':>7} {'avg us':>7} {'p99 us':>7}")
    for name, f in figures.items():
        print(
            f"{name:16} {median(f['cpu']):13.3f} {median(f['rss']):13.0f} {median(f['min']):7.1f} "
            f"{median(f['avg']):7.2f} {median(f['p99']):7.1f}"
        )
    ours, theirs = figures["rtgate-sampler"], figures["cyclictest"]
    print(
        f"{'ratio':16} {median(ours['cpu']) / median(theirs['cpu']):13.2f} "
        f"{median(ours['rss']) / median(theirs['rss']):13.2f} "
        f"{median(ours['min']) / median(theirs['min']):7.2f} {median(ours['avg']) / median(theirs['avg']):7.2f} "
        f"{median(ours['p99']) / median(theirs['p99']):7.2f}"
    )


if __name__ == "__main__":
    main()
