# SPDX-License-Identifier: GPL-2.0-or-later
"""The harness's overhead on `rtgate run -D 10s`: rtgate run against the bare sampler, alternating.

    sudo .venv/bin/python benchmarks/run_overhead.py [--pairs 3] [--seconds 10] [--baseline DIR] [--phases N]

Overhead = (wall of rtgate run - wall of the same sampler command alone) / wall of the sampler.
Goal: <= 2 % (0.2 s at 10 s).

No lock wait is timed: this script takes the machine's measurement lock itself around each timed
run (bare sampler and rtgate run alike, so no other agent's measurement runs beside either) and
points the rtgate it times at a lock file of its own (RTGATE_LOCK_FILE), which it then takes at
once. CPU overhead (rtgate run's user + system time, its sampler's included, minus the bare
sampler's) is printed too: it holds still on a loaded machine where wall time does not.

--phases N: N more runs of each rtgate under strace (execve and exit_group only, through a seccomp
filter, so the rest runs untraced), split into the time from rtgate's start to the sampler's exec
and from the sampler's exit to rtgate's.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from common import median, need, run_measured

SPEC = """\
platform: bench
measurements:
  smp:
    sampler: {{duration: {s}s, interval_us: 1000, priority: 80, threads: [{{name: all, cpus: all}}]}}
    gates:
      - {{name: max, kind: max, limit_us: 100000}}
      - {{name: over-1ms, kind: miss_rate, above_us: 1000, rate: 5%}}
"""


@contextmanager
def machine_lock() -> Iterator[None]:
    """The machine-wide measurement lock, taken (and waited for) outside the timed span."""
    from rtgate.measure.lock import measurement_lock

    with open(os.devnull, "w") as quiet, measurement_lock("run_overhead benchmark", out=quiet):
        yield


def phases(argv: list[str], env: dict[str, str] | None, trace: str) -> tuple[float, float]:
    """(rtgate's start to its sampler's exec, the sampler's exit to rtgate's), in seconds, from strace -ttt."""
    strace = need("strace", "apt-get install strace")
    cmd = [strace, "-f", "-ttt", "--seccomp-bpf", "-e", "trace=execve,exit_group", "-e", "signal=none", "-o", trace]
    r = subprocess.run(cmd + argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode not in (0, 1, 3):
        sys.exit(f"rtgate run under strace failed: {r.stderr[-2000:]}")
    start = sampler_exec = sampler_exit = end = None
    sampler_pid = None
    for line in Path(trace).read_text().splitlines():
        pid, when, call = line.split(None, 2)
        if call.startswith("execve(") and call.rstrip().endswith("= 0"):
            if start is None:
                start = float(when)
            elif "rtgate-sampler" in call and sampler_pid is None:
                sampler_pid, sampler_exec = pid, float(when)
        elif call.startswith("exit_group("):
            if pid == sampler_pid:
                sampler_exit = float(when)
            end = float(when)  # rtgate's, the last one
    if None in (start, sampler_exec, sampler_exit, end):
        sys.exit(f"{trace}: no sampler seen")
    return sampler_exec - start, end - sampler_exit  # type: ignore[operator]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--baseline", metavar="DIR", help="another rtgate (PYTHONPATH=DIR), run in turn too")
    ap.add_argument("--phases", type=int, default=0, metavar="N", help="N runs of each rtgate under strace")
    ap.add_argument("--smoke", action="store_true", help="seconds: that the script still runs (the suite runs this)")
    args = ap.parse_args()
    if args.smoke:
        args.pairs, args.seconds, args.phases = 1, 1, 1
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "harness"))
    from rtgate.core.thresholds import load_thresholds
    from rtgate.measure.runner import find_sampler
    from rtgate.measure.sampler_args import sampler_args

    sampler = find_sampler()
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "t.yaml"
        spec.write_text(SPEC.format(s=args.seconds))
        m = load_thresholds(spec).measurements["smp"]
        bare = [sampler] + sampler_args(m, os.path.join(tmp, "bare.json"))
        full = [
            sys.executable,
            "-m",
            "rtgate",
            "run",
            str(spec),
            "--sampler",
            sampler,
            "--output-dir",
            tmp,
            "--junit",
            os.path.join(tmp, "j.xml"),
        ]
        own = dict(os.environ, RTGATE_LOCK_FILE=os.path.join(tmp, "lock"))  # never waited for
        programs = {"sampler": (bare, None), "rtgate run": (full, own)}
        if args.baseline:  # the same rtgate run, from another rtgate
            programs["baseline run"] = (full, dict(own, PYTHONPATH=os.path.abspath(args.baseline)))
        walls: dict[str, list[float]] = {name: [] for name in programs}
        cpus: dict[str, list[float]] = {name: [] for name in programs}
        for i in range(args.pairs):
            order = list(programs.items())
            for name, (argv, env) in order if i % 2 == 0 else order[::-1]:
                with machine_lock():
                    # Any verdict will do (a loaded host may FAIL a gate): only a usage or input error (2) is one.
                    wall, cpu, _ = run_measured(argv, ok=(0, 1, 3), env=env)
                walls[name].append(wall)
                cpus[name].append(cpu)
        split: dict[str, list[tuple[float, float]]] = {name: [] for name in list(programs)[1:]}
        for _ in range(args.phases):
            for name in split:
                argv, env = programs[name]
                with machine_lock():
                    split[name].append(phases(argv, env, os.path.join(tmp, "strace.txt")))
    s, sc = median(walls["sampler"]), median(cpus["sampler"])
    print(f"{args.pairs} alternating rounds of {args.seconds} s (lock waits excluded, medians):")
    print(f"  sampler alone   wall {s:.3f} s  CPU {sc:.3f} s")
    for name in list(programs)[1:]:
        r, rc = median(walls[name]), median(cpus[name])
        print(
            f"  {name:14s}  wall {r:.3f} s  CPU {rc:.3f} s  overhead {r - s:.3f} s wall "
            f"({100 * (r - s) / s:.2f} %), {rc - sc:.3f} s CPU"
        )
    for name, runs in split.items():
        if runs:
            before, after = median([b for b, _ in runs]), median([a for _, a in runs])
            print(
                f"  {name}: {len(runs)} traced runs: start to sampler exec {1000 * before:.0f} ms, "
                f"sampler exit to exit {1000 * after:.0f} ms (medians)"
            )


if __name__ == "__main__":
    main()
