# SPDX-License-Identifier: GPL-2.0-or-later
"""Peak RSS of rtgate-sampler against cyclictest, same options, alternating pairs (issue 15).

    sudo .venv/bin/python benchmarks/footprint.py [--pairs 3]

Peak RSS is each child's own VmHWM, polled every 20 ms (common.run_measured). Target: <= 1.0x
cyclictest in every configuration.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from common import median, need, run_measured

BASE = ["-q", "-i", "1000", "-l", "1000"]
CONFIGS = [
    ["-t", "1"],
    ["-t", "2"],
    ["-t", "64"],
    ["-S"],
    ["-m", "-p", "80", "-t", "1"],
    ["-m", "-p", "80", "-t", "2"],
    ["-m", "-p", "80", "-t", "64"],
    ["-m", "-p", "80", "-S"],
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--sampler", help="rtgate-sampler (default: the one installed beside this Python)")
    ap.add_argument("--smoke", action="store_true", help="seconds: that the script still runs (the suite runs this)")
    args = ap.parse_args()
    base, configs = BASE, CONFIGS
    if args.smoke:
        args.pairs, base, configs = 1, [*BASE[:-1], "100"], [["-t", "1"], ["-m", "-p", "80", "-t", "2"]]
    cyclictest = need("cyclictest", "apt-get install rt-tests")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "harness"))
    from rtgate.measure.runner import find_sampler

    sampler = find_sampler(args.sampler)
    print(f"{args.pairs} alternating pairs, {' '.join(base)} plus the options shown; peak RSS KiB (median, range)")
    print(f"{'options':18} {'rtgate-sampler':>20} {'cyclictest':>20} {'ratio':>6}")
    for opts in configs:
        got: dict[str, list[int]] = {"ours": [], "ct": []}
        for i in range(args.pairs):
            order = [("ours", sampler), ("ct", cyclictest)]
            for name, prog in order if i % 2 == 0 else order[::-1]:
                got[name].append(run_measured([prog, *base, *opts])[2])

        def cell(v: list[int]) -> str:
            return f"{median(v):.0f} ({min(v)}-{max(v)})"

        ratio = median(got["ours"]) / median(got["ct"])
        print(f"{' '.join(opts):18} {cell(got['ours']):>20} {cell(got['ct']):>20} {ratio:6.2f}", flush=True)


if __name__ == "__main__":
    main()
