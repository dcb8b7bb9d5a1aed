# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate-sampler, cyclictest and a bare clock_nanosleep loop, side by side (issue 15, item 3).

    sudo .venv/bin/python benchmarks/fidelity_matrix.py [--rounds 3] [--seconds 2]
        [--threads 1,2,64] [--intervals 50,200,1000]

For every thread count and interval, each round runs the three programs back to back in a
rotating order, with the same options: SCHED_FIFO 80, -m (mlockall), PM QoS held at 0, every
thread pinned round-robin over the CPUs (what both samplers do by default), one interval for all
threads (-d 0), a fixed duration. The bare loop (bare_loop.c: one clock_nanosleep(TIMER_ABSTIME)
and one clock_gettime per period) runs one process per thread, pinned the same way.

Per configuration: the cycle-weighted average and the smallest latency of each run, the ratios
rtgate-sampler/cyclictest and rtgate-sampler/bare loop within each round (median and range over
the rounds), periods lost, and peak RSS (VmHWM, polled) of the two samplers. Lost periods: for
cyclictest duration/interval minus its samples per thread (it does not count them); for
rtgate-sampler the missed periods it counts (and the same shortfall); for the bare loop the
periods it overslept.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import median, need, run_measured

HERE = Path(__file__).resolve().parent
PRIO = "80"


def _weighted(threads: list[dict[str, float]]) -> tuple[float, float]:
    """Cycle-weighted average and smallest min over the threads that have samples."""
    threads = [t for t in threads if t["cycles"]]
    cycles = sum(t["cycles"] for t in threads)
    avg = sum(t["avg"] * t["cycles"] for t in threads) / cycles
    return avg, min(t["min"] for t in threads)


def run_sampler(prog: str, nthreads: int, interval: int, seconds: int, tmp: str) -> dict[str, float]:
    out = os.path.join(tmp, "r.json")
    opts = ["-m", "-p", PRIO, "-t", str(nthreads), "-i", str(interval), "-d", "0", "-D", str(seconds), "-q"]
    _wall, _cpu, rss = run_measured([prog, *opts, f"--json={out}"])
    # cyclictest writes "avg": -nan for a thread that got no sample (64 threads at -i 50)
    doc = json.loads(re.sub(r":\s*-?nan\b", ": null", Path(out).read_text()))
    avg, mn = _weighted(list(doc["thread"].values()))
    expected = seconds * 1_000_000 // interval
    shortfall = sum(max(0, expected - t["cycles"]) for t in doc["thread"].values())
    counted = sum(t.get("missed_periods", 0) for t in doc.get("rtgate", {}).get("threads", []))
    return {"avg": avg, "min": mn, "rss": rss, "shortfall": shortfall, "counted": counted}


def run_bare(binary: str, nthreads: int, interval: int, seconds: int) -> dict[str, float]:
    cpus = sorted(os.sched_getaffinity(0))
    loops = str(seconds * 1_000_000 // interval)
    procs = [
        subprocess.Popen(
            [binary, str(interval), loops, PRIO, str(cpus[i % len(cpus)])],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(nthreads)
    ]
    threads, missed = [], 0
    for p in procs:
        out, err = p.communicate(timeout=seconds * 20 + 60)
        m = re.search(r"Min: (\d+) Avg: ([\d.]+) Max: (\d+) Missed: (\d+)", out)
        if p.returncode != 0 or not m:
            sys.exit(f"bare_loop failed: {out} {err}")
        threads.append({"cycles": int(loops), "min": int(m.group(1)), "avg": float(m.group(2))})
        missed += int(m.group(4))
    avg, mn = _weighted(threads)
    return {"avg": avg, "min": mn, "rss": 0, "shortfall": missed, "counted": missed}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=2)
    ap.add_argument("--threads", default="1,2,64")
    ap.add_argument("--intervals", default="50,200,1000")
    ap.add_argument("--sampler", help="rtgate-sampler (default: the one installed beside this Python)")
    ap.add_argument("--smoke", action="store_true", help="seconds: that the script still runs (the suite runs this)")
    args = ap.parse_args()
    if args.smoke:
        args.rounds, args.seconds, args.threads, args.intervals = 1, 1, "1", "1000"
    if os.geteuid() != 0:
        sys.exit("run as root: SCHED_FIFO, mlockall and /dev/cpu_dma_latency")
    cyclictest = need("cyclictest", "apt-get install rt-tests")
    cc = need("cc", "apt-get install gcc")
    sys.path.insert(0, str(HERE.parent / "harness"))
    from rtgate.measure.runner import find_sampler

    sampler = find_sampler(args.sampler)
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        bare = os.path.join(tmp, "bare_loop")
        subprocess.run([cc, "-O2", "-o", bare, str(HERE / "bare_loop.c")], check=True)
        print(
            f"{args.rounds} rounds per configuration, {args.seconds} s per run, FIFO {PRIO}, -m, -d 0, "
            "threads pinned round-robin; order rotates each round"
        )
        print(
            f"{'threads':>7} {'-i':>5} | {'avg us: ours':>12} {'ct':>6} {'bare':>6} | {'ours/ct':>15} "
            f"{'ours/bare':>15} | {'min: ours/ct':>12} {'ours/bare':>9} | {'lost: ours':>10} {'(short)':>8} "
            f"{'ct':>6} {'bare':>6} | {'RSS KiB ours':>12} {'ct':>6}"
        )
        for nthreads in (int(x) for x in args.threads.split(",")):
            for interval in (int(x) for x in args.intervals.split(",")):
                runs: dict[str, list[dict[str, float]]] = {"ours": [], "ct": [], "bare": []}
                for r in range(args.rounds):
                    order = ["ours", "ct", "bare"]
                    order = order[r % 3 :] + order[: r % 3]
                    for name in order:
                        if name == "bare":
                            runs[name].append(run_bare(bare, nthreads, interval, args.seconds))
                        else:
                            prog = sampler if name == "ours" else cyclictest
                            runs[name].append(run_sampler(prog, nthreads, interval, args.seconds, tmp))

                def ratios(key: str, other: str, runs: dict[str, list[dict[str, float]]] = runs) -> list[float]:
                    return [o[key] / t[key] if t[key] else float("nan") for o, t in zip(runs["ours"], runs[other])]

                def span(v: list[float]) -> str:
                    return f"{median(v):.2f} {min(v):.2f}-{max(v):.2f}"

                med = {n: {k: median([x[k] for x in rs]) for k in rs[0]} for n, rs in runs.items()}
                print(
                    f"{nthreads:7d} {interval:5d} | {med['ours']['avg']:12.2f} {med['ct']['avg']:6.2f} "
                    f"{med['bare']['avg']:6.2f} | {span(ratios('avg', 'ct')):>15} {span(ratios('avg', 'bare')):>15} | "
                    f"{median(ratios('min', 'ct')):12.2f} {median(ratios('min', 'bare')):9.2f} | "
                    f"{med['ours']['counted']:10.0f} {med['ours']['shortfall']:8.0f} {med['ct']['shortfall']:6.0f} "
                    f"{med['bare']['counted']:6.0f} | {med['ours']['rss']:12.0f} {med['ct']['rss']:6.0f}",
                    flush=True,
                )
    print(f"{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
