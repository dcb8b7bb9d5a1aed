# SPDX-License-Identifier: GPL-2.0-or-later
"""`rtgate check --junit` on a synthetic 24 h rtgate-sampler result, 64 and 256 threads (--threads: others).

    .venv/bin/python benchmarks/check_24h.py [--runs 5] [--baseline DIR] [--smoke]

Goals: 24 h x 64 threads <= 0.15 s of CPU, memory <= 3x the JSON's size, 256 threads linear.
Memory is the peak RSS above that of the same command on a 1-thread result (the interpreter,
the imports and the code are the same: what is left grows with the data).

The result has full-range histograms (a long tail into the log-linear buckets) and block maxima
coarsened as the sampler does for 86400 one-second blocks, and is self-consistent
(sum and avg follow the histogram): rtgate check refuses a file that contradicts itself.
--no-junit: check alone (its text report), without the JUnit file. --baseline DIR: another rtgate there
(a copy of a revision's harness/ directory, run with PYTHONPATH=DIR), run alternately with this one and
reported as ratios. --smoke: 4 threads, one run, seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from common import median, run_timed

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


def thresholds(threads: int) -> str:
    return THRESHOLDS.replace("{threads}", str(threads))


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


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """CPU s, wall s and peak RSS KiB of `rtgate ...argv` (exit 0, 1 or 3: a verdict)."""
    wall, cpu, peak = run_timed([sys.executable, "-m", "rtgate", *argv], ok=(0, 1, 3), env=env)
    return cpu, wall, peak


def refused(argv: list[str], name: str, env: dict[str, str]) -> bool:
    """Whether that rtgate refuses the result (exit 2: main refused 1024 threads); says so if it does."""
    r = subprocess.run([sys.executable, "-m", "rtgate", *argv], env=env, capture_output=True, text=True)
    if r.returncode != 2:
        return False
    print(f"  {name:8}  refused: {(r.stderr.strip().splitlines() or [''])[-1][:150]}")
    return True


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", default="64,256")
    ap.add_argument("--baseline", metavar="DIR", help="another rtgate (pip install --target DIR), for ratios")
    ap.add_argument("--smoke", action="store_true", help="seconds: that the script still runs (the suite runs this)")
    ap.add_argument("--no-junit", action="store_true", help="check alone, without the JUnit report")
    args = ap.parse_args()
    if args.smoke:
        args.runs, args.threads = 1, "4"
    versions = {"this": dict(os.environ)}
    if args.baseline:
        versions["baseline"] = dict(os.environ, PYTHONPATH=os.path.abspath(args.baseline))
    with tempfile.TemporaryDirectory() as tmp:
        for threads in (int(n) for n in args.threads.split(",")):
            res, spec = Path(tmp) / f"r{threads}.json", Path(tmp) / f"t{threads}.yaml"
            synthetic(res, threads)
            spec.write_text(thresholds(threads))
            size_kib = res.stat().st_size / 1024
            junit = [] if args.no_junit else ["--junit", f"{tmp}/j.xml"]
            check = ["check", *junit, str(spec), str(res)]
            one, one_spec = Path(tmp) / "r1.json", Path(tmp) / "t1.yaml"  # the same imports and code
            synthetic(one, 1)
            one_spec.write_text(thresholds(1))
            start = ["check", *(["--junit", f"{tmp}/j1.xml"] if junit else []), str(one_spec), str(one)]
            what = "rtgate check" + ("" if args.no_junit else " --junit")
            print(f"{what}, 24 h x {threads} threads ({size_kib / 1024:.2f} MB JSON), {args.runs} runs:")
            reading = {name: env for name, env in versions.items() if not refused(check, name, env)}
            figures: dict[str, dict[str, list[float]]] = {v: {"cpu": [], "wall": [], "mem": []} for v in reading}
            for i in range(args.runs):  # alternating: the machine's load hits both alike
                for name, env in reading.items() if i % 2 == 0 else reversed(reading.items()):
                    cpu, wall, peak = measure(check, env)
                    _, _, base = measure(start, env)
                    figures[name]["cpu"].append(cpu)
                    figures[name]["wall"].append(wall)
                    figures[name]["mem"].append(max(0, peak - base))
            for name, f in figures.items():
                cpu, mem = median(f["cpu"]), median(f["mem"])
                print(
                    f"  {name:8}  CPU {cpu:.3f} s  wall {median(f['wall']):.3f} s  "
                    f"memory {mem / 1024:.1f} MiB = {mem / size_kib:.1f}x the JSON"
                )
            if "baseline" in figures and "this" in figures:
                b, t = figures["baseline"], figures["this"]
                print(
                    f"  this / baseline: CPU {median(t['cpu']) / median(b['cpu']):.2f}x, "
                    f"memory {median(t['mem']) / max(1.0, median(b['mem'])):.2f}x"
                )


if __name__ == "__main__":
    main()
