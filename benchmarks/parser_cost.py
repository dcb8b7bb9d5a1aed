# SPDX-License-Identifier: GPL-2.0-or-later
"""Cost of reading hostile results files: wall time and peak RSS of `rtgate show` on each.

The inputs are the largest of each format rtgate must answer (up to its 64 MiB limit) and the
ones that used to cost gigabytes (a 50 MB rtla file, a histogram row of 3 million columns, 107 MB
of -v samples). Every one must end, within 5 s and 500 MB, in a verdict-ready result or a
one-line error (exit 2, no traceback).

    .venv/bin/python benchmarks/parser_cost.py [--keep DIR] [--smoke]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

MB = 2**20


def _fill(path: Path, head: str, line: Callable[[int], str], size: int, tail: str = "") -> None:
    with path.open("w") as f:
        f.write(head)
        written, i = len(head), 0
        chunk: list[str] = []
        while written < size:
            s = line(i)
            chunk.append(s)
            written += len(s)
            i += 1
            if len(chunk) >= 10000:
                f.write("".join(chunk))
                chunk.clear()
        f.write("".join(chunk) + tail)


def inputs(d: Path, scale: int = 1) -> dict[str, Path]:
    """Every input; --smoke divides their sizes by `scale` (seconds instead of minutes, no limit reached)."""
    out: dict[str, Path] = {}
    # -v samples of one thread up to the limit (honest, consistent, so they are read to the end)
    p = d / "verbose-63M.txt"
    _fill(p, "", lambda i: f"{0:>8}:{i:>8}:{10 + i % 50:>8}\n", 63 * MB // scale)
    out["-v 63 MiB (read whole)"] = p
    p = d / "verbose-107M.txt"
    _fill(p, "", lambda i: f"{0:>8}:{i:>8}:{10 + i % 50:>8}\n", 107 * MB // scale)
    out["-v 107 MiB"] = p
    # histogram text: one row of 3 million columns (6 MB)
    p = d / "hist-3M-columns.txt"
    p.write_text("# Histogram\n000000 " + "\t".join(["000001"] * (3_000_000 // scale)) + "\n")
    out["histogram row, 3M columns"] = p
    # histogram text: as many rows as the limit allows, one column
    p = d / "hist-rows.txt"
    _fill(p, "# Histogram\n", lambda i: f"{i:06d} 000001\n", 40 * MB // scale)
    out["histogram 40 MiB of rows"] = p
    # rtla: 50 MB of rows, then 50 MB after the summary
    head = "# RTLA timerlat histogram\n# Time unit is microseconds (us)\nIndex   IRQ-000   Thr-000\n"
    p = d / "rtla-50M-rows.txt"
    _fill(p, head, lambda i: f"{i:<8}{1:>10}{1:>10}\n", 50 * MB // scale)
    out["rtla 50 MiB of rows"] = p
    p = d / "rtla-50M-tail.txt"
    summary = "over: 0 0\ncount: 1 1\nmin: 5 5\navg: 5 5\nmax: 5 5\n"
    _fill(p, head + "5 1 1\n" + summary, lambda i: "x" * 79 + "\n", 50 * MB // scale)
    out["rtla 50 MiB after the summary"] = p
    # JSON: 3 million histogram buckets in one thread (41 MB), and as many as the limit allows
    for n, name in (
        (3_000_000 // scale, "rt-tests JSON, 3M buckets"),
        (790_000 // scale, "rt-tests JSON, 790k (read whole)"),
    ):
        p = d / f"json-{n}-buckets.json"
        with p.open("w") as f:
            f.write(f'{{"thread": {{"0": {{"cycles": {n}, "min": 0, "max": {n - 1}, "avg": 1.0, "histogram": {{')
            f.write(", ".join(f'"{i}": 1' for i in range(n)))
            f.write("}}}}\n")
        out[name] = p
    # JSON at the histogram-value limit (parsers/json_results.py): the densest result rtgate-sampler writes
    # in 64 MiB (1024 threads, read whole), the limit plus one value (refused), and cyclictest JSON of four
    # threads of 1.24 million 1-unit buckets (read whole: missed-period bounds over every bucket)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import dense_results
    from rtgate.parsers.json_results import MAX_JSON_HISTOGRAM_VALUES as limit

    p = d / "sampler-densest.json"
    dense_results.write(p, 14_000_000 // scale, threads=1024 // scale)
    out["sampler JSON, 1024 x densest"] = p
    p = d / "sampler-limit-plus-1.json"
    dense_results.write(p, (limit + 1) // scale, threads=1024 // scale, sep=",")
    out["sampler JSON, limit + 1 value"] = p
    n = 1_240_000 // scale  # 63 MiB
    p = d / "rt-tests-4-threads.json"
    with p.open("w") as f:
        f.write(f'{{"cmdline:": "cyclictest -t 4 -p 80 -i 1000 -l {n} -q -h {n}", "thread": {{')
        for t in range(4):
            f.write(f'{", " if t else ""}"{t}": {{"histogram": {{')
            f.write(", ".join(f'"{i}": 1' for i in range(n)))
            f.write(f'}}, "cycles": {n}, "min": 0, "max": {n - 1}, "avg": {(n - 1) / 2:.2f}, "cpu": {t}}}')
        f.write("}}\n")
    out["rt-tests JSON, 4 x 1.24M buckets"] = p
    return out


def measure(path: Path) -> tuple[float, float, int, int, str]:
    """(wall s, CPU s, peak RSS MiB, exit code, last stderr line) of `rtgate show path`, by GNU time
    (a forked child's own ru_maxrss would include its parent's pages from before the exec)."""
    with tempfile.NamedTemporaryFile("r") as stats:
        t0 = time.monotonic()
        r = subprocess.run(
            ["/usr/bin/time", "-o", stats.name, "-f", "%M %U %S", sys.executable, "-m", "rtgate", "show", str(path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        wall = time.monotonic() - t0
        rss_kib, user, system = stats.read().split()[-3:]
    last = (r.stderr.strip().splitlines() or [""])[-1]
    return wall, float(user) + float(system), int(rss_kib) // 1024, r.returncode, last


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", type=Path, help="write the inputs here and keep them")
    ap.add_argument("--smoke", action="store_true", help="inputs 50x smaller: checks the script runs (seconds)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = args.keep or Path(tmp)
        d.mkdir(parents=True, exist_ok=True)
        print(f"{'input':30} {'MiB':>4} {'wall s':>6} {'CPU s':>6} {'RSS MiB':>7} exit  answer")
        worst = (0.0, 0.0, 0)
        for name, path in inputs(d, 50 if args.smoke else 1).items():
            wall, cpu, rss, code, last = measure(path)
            worst = (max(worst[0], wall), max(worst[1], cpu), max(worst[2], rss))
            size = path.stat().st_size / MB
            print(f"{name:30} {size:4.0f} {wall:6.2f} {cpu:6.2f} {rss:7d} {code:4d}  {last[:70]}")
        print(f"worst: {worst[0]:.2f} s wall, {worst[1]:.2f} s CPU, {worst[2]} MiB (goal: <= 5 s and <= 500 MB each)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
