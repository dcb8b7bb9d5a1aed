# SPDX-License-Identifier: GPL-2.0-or-later
"""How fast the CLI starts: `rtgate --version`, `rtgate validate`, `rtgate check --help`.

    .venv/bin/python benchmarks/cli_start.py [--runs 10] [--baseline DIR] [--smoke]

Goal: `rtgate --version` and `rtgate validate` <= 0.08 s of CPU. CPU time (user + system) and peak
RSS, medians of alternating runs, beside `python -c pass` (the floor no command goes under).
--baseline DIR: another rtgate there (a copy of a revision's harness/ directory, run with
PYTHONPATH=DIR), run alternately with this one and reported as ratios.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from common import median, run_timed

DEFAULT = str(Path(__file__).resolve().parent.parent / "thresholds" / "default.yaml")
COMMANDS = {
    "rtgate --version": ["-m", "rtgate", "--version"],
    "rtgate validate": ["-m", "rtgate", "validate", DEFAULT],
    "rtgate check --help": ["-m", "rtgate", "check", "--help"],
    "python -c pass": ["-c", "pass"],
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--baseline", metavar="DIR", help="another rtgate (PYTHONPATH=DIR), for ratios")
    ap.add_argument("--smoke", action="store_true", help="seconds: that the script still runs (the suite runs this)")
    args = ap.parse_args()
    if args.smoke:
        args.runs = 1
    versions = {"this": dict(os.environ)}
    if args.baseline:
        versions["baseline"] = dict(os.environ, PYTHONPATH=os.path.abspath(args.baseline))
    print(f"{args.runs} alternating runs each; CPU s (user + system) and peak RSS MiB, medians")
    print(
        f"{'command':22}"
        + "".join(f"{v + ' CPU':>15}{'RSS':>7}" for v in versions)
        + ("  CPU ratio" if args.baseline else "")
    )
    for label, argv in COMMANDS.items():
        got: dict[str, dict[str, list[float]]] = {v: {"cpu": [], "rss": []} for v in versions}
        for i in range(args.runs):
            for name, env in versions.items() if i % 2 == 0 else reversed(versions.items()):
                _, cpu, peak = run_timed([sys.executable, *argv], env=env)
                got[name]["cpu"].append(cpu)
                got[name]["rss"].append(peak / 1024)
        row = "".join(f"{median(g['cpu']):15.3f}{median(g['rss']):7.1f}" for g in got.values())
        if args.baseline:
            row += f"  {median(got['this']['cpu']) / max(0.001, median(got['baseline']['cpu'])):9.2f}"
        print(f"{label:22}{row}", flush=True)


if __name__ == "__main__":
    main()
