# SPDX-License-Identifier: GPL-2.0-or-later
"""The measurement engine's own cost (issue 44): CPU of rtgate-sampler measuring with
`--measurement --require=no_competing_rt` (the scans before, about once a second while measuring,
and after; the record) minus the same measurement without them, in alternating pairs.

    sudo .venv/bin/python benchmarks/engine_cost.py [--pairs 5] [--seconds 60] [--smoke]

Goal: at most 0.1 % of one CPU, and off the measured CPUs. Two figures per pair: the whole
process's CPU (wait4: the measuring threads included, so the pair's difference carries their
noise) and the main thread's alone (its /proc stat, read until it ends: the engine's work is all
there), with the CPUs the main thread ran on. Each pair runs under the machine's measurement lock,
so no other agent's measurement runs beside it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import median

GOAL_PERCENT = 0.1
TICK = os.sysconf("SC_CLK_TCK")


def main_thread(pid: int) -> tuple[float, int] | None:
    """CPU seconds of the main thread so far, and the CPU it last ran on."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK, int(fields[36])


def run(argv: list[str]) -> tuple[float, float, set[int]]:
    """Process CPU seconds, main-thread CPU seconds and the CPUs the main thread was seen on."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    main_cpu, seen = 0.0, set()
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        got = main_thread(proc.pid)
        if got:
            main_cpu = got[0]
            seen.add(got[1])
        time.sleep(0.25)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)}: exit status {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, main_cpu, seen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--cpu", type=int, default=1, help="the measured CPU (default 1; the main thread goes elsewhere)")
    ap.add_argument("--smoke", action="store_true", help="2 pairs of 3 s")
    args = ap.parse_args()
    if args.smoke:
        args.pairs, args.seconds = 2, 3
    from rtgate.measure.lock import measurement_lock
    from rtgate.measure.runner import find_sampler

    sampler = find_sampler()
    bare = [sampler, "-q", "-m", "-p", "80", "-t", "1", "-a", str(args.cpu), "-i", "1000", "-D", f"{args.seconds}s"]
    engine = [*bare, "--measurement=engine_cost", "--require=no_competing_rt"]
    rows = []
    for i in range(args.pairs):
        with open(os.devnull, "w") as quiet, measurement_lock("engine_cost benchmark", out=quiet):
            order = [("bare", bare), ("engine", engine)] if i % 2 == 0 else [("engine", engine), ("bare", bare)]
            got = {name: run(argv) for name, argv in order}
        rows.append(got)
        b, e = got["bare"], got["engine"]
        print(
            f"pair {i + 1}: process CPU bare {b[0]:.3f} s, engine {e[0]:.3f} s; "
            f"main thread bare {b[1]:.3f} s, engine {e[1]:.3f} s on cpu {sorted(e[2])}",
            flush=True,
        )
    proc_diff = median([(r["engine"][0] - r["bare"][0]) / args.seconds * 100 for r in rows])
    main_diff = median([(r["engine"][1] - r["bare"][1]) / args.seconds * 100 for r in rows])
    ratio = median([r["engine"][0] / r["bare"][0] for r in rows if r["bare"][0] > 0])
    on_measured = any(args.cpu in r["engine"][2] for r in rows)
    print(f"{args.pairs} pairs of {args.seconds} s, measured cpu {args.cpu} (medians)")
    print(f"  process CPU, engine minus bare: {proc_diff:+.3f} % of one CPU (ratio {ratio:.3f}x)")
    print(f"  main thread CPU, engine minus bare: {main_diff:+.3f} % of one CPU (goal <= {GOAL_PERCENT} %)")
    print(f"  main thread seen on the measured cpu: {'yes' if on_measured else 'no'}")


if __name__ == "__main__":
    main()
