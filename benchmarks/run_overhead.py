# SPDX-License-Identifier: GPL-2.0-or-later
"""The harness's overhead on `rtgate run -D 10s`: rtgate run against the bare sampler, alternating.

    sudo .venv/bin/python benchmarks/run_overhead.py [--pairs 3] [--seconds 10] [--baseline DIR]

Overhead = (wall of rtgate run - wall of the same sampler command alone) / wall of the sampler.
Goal: <= 2 % (0.2 s at 10 s).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from common import median, run_measured

SPEC = """\
platform: bench
measurements:
  smp:
    sampler: {{duration: {s}s, interval_us: 1000, priority: 80, threads: [{{name: all, cpus: all}}]}}
    gates:
      - {{name: max, kind: max, limit_us: 100000}}
      - {{name: over-1ms, kind: miss_rate, above_us: 1000, rate: 5%}}
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--baseline", metavar="DIR", help="another rtgate (PYTHONPATH=DIR), run in turn too")
    ap.add_argument("--smoke", action="store_true", help="seconds: that the script still runs (the suite runs this)")
    args = ap.parse_args()
    if args.smoke:
        args.pairs, args.seconds = 1, 1
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
        programs = {"sampler": (bare, None), "rtgate run": (full, None)}
        if args.baseline:  # the same rtgate run, from another rtgate
            programs["baseline run"] = (full, dict(os.environ, PYTHONPATH=os.path.abspath(args.baseline)))
        walls: dict[str, list[float]] = {name: [] for name in programs}
        for i in range(args.pairs):
            order = list(programs.items())
            for name, (argv, env) in order if i % 2 == 0 else order[::-1]:
                # Any verdict will do (a loaded host may FAIL a gate): only a usage or input error (2) is one.
                wall, _, _ = run_measured(argv, ok=(0, 1, 3), env=env)
                walls[name].append(wall)
    s = median(walls["sampler"])
    print(f"{args.pairs} alternating rounds of {args.seconds} s: sampler alone {s:.3f} s", end="")
    for name in list(programs)[1:]:
        r = median(walls[name])
        print(f", {name} {r:.3f} s (overhead {r - s:.3f} s, {100 * (r - s) / s:.2f} %)", end="")
    print()


if __name__ == "__main__":
    main()
