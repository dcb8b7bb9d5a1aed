# SPDX-License-Identifier: GPL-2.0-or-later
"""`rtgate check` on a synthetic 24 h, 64-thread rtgate-sampler result (goal: <= 0.3 s wall).

    .venv/bin/python benchmarks/check_24h.py [--runs 5]

The result has full-range histograms (a long tail into the log-linear buckets) and block maxima
coarsened as the sampler does for 86400 one-second blocks; it is written once, then checked.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

THRESHOLDS = """\
platform: bench
measurements:
  smp:
    sampler: {duration: 24h, interval_us: 1000, threads: [{name: all, count: {threads}}]}
    gates:
      - {name: max, kind: max, limit_us: 100}
      - {name: p99.99, kind: percentile, percentile: 99.99, limit_us: 60}
      - {name: over-50, kind: miss_rate, above_us: 50, rate: 0.01%}
      - {name: avg, kind: avg, limit_us: 20}
      - {name: missed, kind: missed, max_count: 0}
"""


def bucket(v: int) -> tuple[int, int]:
    if v < 16384:
        return v, v + 1
    k = v.bit_length() - 1
    width = 1 << (k - 7)
    lo = (v // width) * width
    return lo, lo + width


def synthetic(path: Path, threads: int = 64, cycles: int = 86_400_000) -> None:
    rng = random.Random(1)
    out = []
    for i in range(threads):
        counts: dict[tuple[int, int], int] = {}
        left = cycles
        for v in range(5, 60):  # the body
            c = cycles // 70 if v < 40 else cycles // 4000
            counts[(v, v + 1)] = c
            left -= c
        for _ in range(3000):  # a long, sparse tail up to 40 ms
            lo_hi = bucket(int(60 * (1 + rng.paretovariate(1.2))) % 40000 + 60)
            counts[lo_hi] = counts.get(lo_hi, 0) + 1
            left -= 1
        counts[(20, 21)] += left
        blocks = [rng.randint(40, 90) for _ in range(2700)]  # 86400 blocks coarsened 5 times
        # rtgate check refuses a file that contradicts itself: sum and avg follow the histogram
        # (each sample at its bucket's low edge, exact below 16384 where buckets are 1 us wide)
        total = sum(lo * c for (lo, _), c in counts.items())
        out.append(
            {
                "index": i,
                "tid": 1000 + i,
                "cpu": i,
                "policy": "fifo",
                "priority": 80,
                "interval_us": 1000,
                "cycles": cycles,
                "min": 5,
                "max": max(hi - 1 for _, hi in counts),
                "avg": round(total / cycles, 2),
                "sum": total,
                "missed_periods": 0,
                "overflows": 0,
                "stop_reason": "duration",
                "first_wake_ns": 0,
                "last_wake_ns": 0,
                "overflow_cycles": [],
                "histogram": [[lo, hi, c] for (lo, hi), c in sorted(counts.items())],
                "block_maxima": {
                    "block_cycles": 32000,
                    "block_seconds": 32.0,
                    "partial_cycles": 0,
                    "partial_max": None,
                    "values": blocks,
                },
                "spikes": {"total": 0, "recorded": []},
            }
        )
    doc = {
        "file_version": 1,
        "cmdline:": "rtgate-sampler synthetic",
        "rt_test_version:": "0.1.0",
        "num_threads": threads,
        "resolution_in_ns": 0,
        "thread": {
            str(t["index"]): {
                "histogram": {},
                "cycles": cycles,
                "min": 5,
                "max": t["max"],
                "avg": t["avg"],
                "cpu": t["cpu"],
                "node": 0,
            }
            for t in out
        },
        "rtgate": {
            "format": 1,
            "complete": True,
            "stop_reason": "duration",
            "signal": None,
            "unit": "us",
            "elapsed_s": 86400.0,
            "threads": out,
        },
    }
    path.write_text(json.dumps(doc))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        res, spec = Path(tmp) / "r.json", Path(tmp) / "t.yaml"
        synthetic(res)
        spec.write_text(THRESHOLDS)
        walls = []
        for _ in range(args.runs):
            start = time.monotonic()
            r = subprocess.run(
                [sys.executable, "-m", "rtgate", "check", "--junit", f"{tmp}/j.xml", str(spec), str(res)],
                capture_output=True,
                text=True,
            )
            walls.append(time.monotonic() - start)
            if r.returncode not in (0, 1, 3):
                sys.exit(r.stderr)
        base = []
        for _ in range(args.runs):  # interpreter start and imports alone, for comparison
            start = time.monotonic()
            subprocess.run([sys.executable, "-c", "import rtgate.cli"], check=True)
            base.append(time.monotonic() - start)
        size = res.stat().st_size / 1e6
    walls.sort()
    base.sort()
    print(
        f"rtgate check, 24 h x 64 threads ({size:.1f} MB JSON), {args.runs} runs: "
        f"median {walls[len(walls) // 2]:.3f} s wall (best {walls[0]:.3f}); "
        f"python start + imports alone: {base[len(base) // 2]:.3f} s"
    )


if __name__ == "__main__":
    main()
