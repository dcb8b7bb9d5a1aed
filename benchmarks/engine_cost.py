# SPDX-License-Identifier: GPL-2.0-or-later
"""The measurement engine's own cost (issue 44): CPU of rtgate-sampler measuring with
`--measurement --require=no_competing_rt` (the scans before, about once a second while measuring,
and after; the record) minus the same measurement without them, in alternating pairs.

    sudo .venv/bin/python benchmarks/engine_cost.py [--pairs 5] [--seconds 60] [--smoke]

Goal: at most 0.1 % of one CPU, and off the measured CPUs. Two figures per pair: the whole
process's CPU (wait4: the measuring threads included, so the pair's difference carries their
noise) and the main thread's alone (its schedstat, read until it ends: the engine's work is all
there), with the CPUs the main thread ran on. Each pair runs under the machine's measurement lock,
so no other agent's measurement runs beside it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import median

GOAL_PERCENT = 0.1


def main_thread(pid: int) -> tuple[float, int] | None:
    """CPU seconds of the main thread so far (schedstat: nanoseconds, where stat's utime and stime
    are sampled at ticks), and the CPU it last ran on."""
    try:
        ns = int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[0])
        text = Path(f"/proc/{pid}/task/{pid}/stat").read_text()
    except (OSError, ValueError, IndexError):
        return None
    return ns / 1e9, int(text.rsplit(")", 1)[1].split()[36])


class NotMeasured(Exception):
    """The engine refused to measure: another session's real-time task was on the measured CPU."""


def run(argv: list[str]) -> tuple[float, float, float, set[int]]:
    """Process CPU seconds, main-thread CPU seconds (in all, and from 1 s after the start to its
    end: while measuring) and the CPUs the main thread was seen on."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    main_cpu, settled, seen = 0.0, None, set()
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        got = main_thread(proc.pid)
        if got:
            main_cpu = got[0]
            seen.add(got[1])
            if settled is None and time.monotonic() - start >= 1.0:
                settled = main_cpu
        time.sleep(0.25)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode == 1 and "--measurement=engine_cost" in argv:
        raise NotMeasured()
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)}: exit status {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, main_cpu, main_cpu - (settled or 0.0), seen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument(
        "--cpu",
        type=int,
        default=None,
        help="the measured CPU (default: the last one no other real-time task competes for; the main thread goes "
        "elsewhere)",
    )
    ap.add_argument("--smoke", action="store_true", help="2 pairs of 3 s")
    ap.add_argument(
        "--sampler-arg", action="append", default=[], help="one more sampler argument for both runs (e.g. a --load=...)"
    )
    args = ap.parse_args()
    if args.smoke:
        args.pairs, args.seconds = 2, 3
    from rtgate.measure.lock import measurement_lock
    from rtgate.measure.runner import find_sampler

    sampler = find_sampler()
    if args.cpu is None:  # a shared runner's own real-time jobs hold a CPU: --require=no_competing_rt refuses there
        from rtgate.measure.engine_check import free_cpu

        args.cpu = free_cpu(sampler, 80)
    options = f"-q -m -p 80 -t 1 -a {args.cpu} -i 1000 -D {args.seconds}s".split()
    bare = [sampler, *options, *args.sampler_arg]
    engine = [*bare, "--measurement=engine_cost", "--require=no_competing_rt"]
    rows: list[dict[str, tuple[float, float, float, set[int]]]] = []
    refused = 0
    while len(rows) < args.pairs:
        i = len(rows)
        try:
            with open(os.devnull, "w") as quiet, measurement_lock("engine_cost benchmark", out=quiet):
                order = [("bare", bare), ("engine", engine)] if i % 2 == 0 else [("engine", engine), ("bare", bare)]
                got = {name: run(argv) for name, argv in order}
        except NotMeasured:
            refused += 1
            if refused > 3 * args.pairs:
                sys.exit("other sessions' real-time tasks kept the measured CPU busy: no pair measured")
            print(f"pair {i + 1}: not measured (a competing real-time task on cpu {args.cpu}): again", flush=True)
            time.sleep(5)
            continue
        rows.append(got)
        b, e = got["bare"], got["engine"]
        print(
            f"pair {i + 1}: process CPU bare {b[0]:.3f} s, engine {e[0]:.3f} s; main thread bare {b[1]:.3f} s "
            f"({b[2]:.3f} s measuring), engine {e[1]:.3f} s ({e[2]:.3f} s measuring) on cpu {sorted(e[3])}",
            flush=True,
        )

    def pct(f: Callable[[dict[str, tuple[float, float, float, set[int]]]], float]) -> float:
        return median([f(r) / args.seconds * 100 for r in rows])

    proc_diff = pct(lambda r: r["engine"][0] - r["bare"][0])
    main_diff = pct(lambda r: r["engine"][1] - r["bare"][1])
    during_diff = pct(lambda r: r["engine"][2] - r["bare"][2])
    ratio = median([r["engine"][0] / r["bare"][0] for r in rows if r["bare"][0] > 0])
    on_measured = any(args.cpu in r["engine"][3] for r in rows)
    print(f"{args.pairs} pairs of {args.seconds} s, measured cpu {args.cpu} (medians, % of one CPU)")
    print(f"  process CPU, engine minus bare: {proc_diff:+.3f} % (ratio {ratio:.3f}x; the threads' noise included)")
    print(f"  main thread, engine minus bare: {main_diff:+.3f} % (setup: machine record, first scan, included)")
    print(f"  main thread while measuring, engine minus bare: {during_diff:+.3f} % (goal <= {GOAL_PERCENT} %)")
    print(f"  main thread seen on the measured cpu: {'yes' if on_measured else 'no'}")


if __name__ == "__main__":
    main()
