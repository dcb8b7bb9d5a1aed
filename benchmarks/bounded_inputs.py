# SPDX-License-Identifier: GPL-2.0-or-later
"""Inputs built to cost time or memory, each answered with a verdict or a one-line error
(goal: <= 5 s wall and <= 500 MB peak RSS for any input <= 64 MB).

    .venv/bin/python benchmarks/bounded_inputs.py [--smoke]

--smoke uses small sizes (a few seconds in all): the cases still run end to end. Threshold-file
cases go through `rtgate validate`, results through `rtgate check`. The parsers' own worst inputs
(rtla, -v, histogram text) are another script's.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import watch_child

GOAL_S, GOAL_MB = 5.0, 500

GROUP = """\
platform: b
measurements:
  m:
    sampler: {{interval_us: 1000, duration: 10s, threads: [{{name: a, cpus: '{cpus}'}}]}}
    gates: [{{name: g, kind: max, limit_us: 100}}]
"""

THREADS = """\
platform: b
measurements:
  m:
    sampler: {interval_us: 200, loops: 5000}
    gates: [{name: max, kind: max, limit_us: 100000}, {name: p, kind: percentile, percentile: 99, limit_us: 1000}]
"""


def measured(argv: list[str]) -> tuple[float, int, int, str]:
    """Wall seconds, peak RSS (KiB), exit status and the first line of stderr of one run."""
    wall, _, peak, status, err = watch_child(argv)
    return wall, peak, status, (err.strip().splitlines() or [""])[0]


TEMPLATE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "rt-tests" / "ct-new-S-h300.json"


def threads_json(n: int) -> str:
    """A cyclictest JSON (the fixture's header) with n identical threads."""
    doc = json.loads(TEMPLATE.read_text())
    doc["cmdline:"] = f"cyclictest -m -t {n} -p 80 -i 200 -l 5000 -q -h 300 --json=x.json"
    doc["num_threads"] = n
    one = {"histogram": {"20": 5000}, "cycles": 5000, "min": 20, "max": 20, "avg": 20.0, "node": -1}
    doc["thread"] = {str(i): {**one, "cpu": i % 2} for i in range(n)}
    return json.dumps(doc)


def cases(smoke: bool, d: Path) -> list[tuple[str, list[str]]]:
    rtgate = [sys.executable, "-m", "rtgate"]
    out = []
    (d / "cpus.yaml").write_text(GROUP.format(cpus="0-99999999"))
    out.append(("cpus: '0-99999999'", rtgate + ["validate", str(d / "cpus.yaml")]))
    n = 50_000 if smoke else 500_000
    (d / "list.yaml").write_text("platform: b\nx: [" + ",".join(["1"] * n) + "]\n")
    out.append(
        (
            f"YAML list of {n} values ({(d / 'list.yaml').stat().st_size >> 10} KiB)",
            rtgate + ["validate", str(d / "list.yaml")],
        )
    )
    (d / "dup.yaml").write_text(THREADS.replace("limit_us: 100000}", "limit_us: 5, limit_us: 100000}"))
    out.append(("a duplicate key", rtgate + ["validate", str(d / "dup.yaml")]))
    (d / "threads.yaml").write_text(THREADS)
    # 1,025 threads is the most any results file may hold (parsers/common.py MAX_COLUMNS): a verdict;
    # more is refused whatever the file's size.
    for n in (500, 1_025, 2_000) if smoke else (1_025, 2_000, 200_000):
        path = d / f"t{n}.json"
        path.write_text(threads_json(n))
        out.append(
            (
                f"check, {n} threads ({path.stat().st_size / 2**20:.1f} MB JSON)",
                rtgate + ["check", str(d / "threads.yaml"), str(path)],
            )
        )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="small sizes: check the script runs")
    args = ap.parse_args()
    over = 0
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'input':<44} {'wall s':>7} {'peak MB':>8} {'exit':>4}  answer")
        for name, argv in cases(args.smoke, Path(tmp)):
            wall, peak, rc, first = measured(argv)
            if "Traceback" in first or "internal error" in first:
                print(f"{name}: not rtgate's own error: {first}", file=sys.stderr)
                return 1
            met = wall <= GOAL_S and peak / 1024 <= GOAL_MB
            over += not met
            answer = (first.replace(tmp + "/", "")[:90] or "verdicts") + ("" if met else "  (over goal)")
            print(f"{name:<44} {wall:7.2f} {peak / 1024:8.0f} {rc:4}  {answer}")
    print(f"goal <= {GOAL_S:g} s and <= {GOAL_MB} MB: {'met' if not over else f'{over} over'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
