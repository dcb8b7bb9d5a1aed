#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`rtgate history add / compare / trend` on large stores: CPU and wall time by store size.

    python benchmarks/history_scale.py [--sizes 1000,10000,10000x10] [--postgres 10000x10] [--runs 5]
                                       [--baseline DIR]
    python benchmarks/history_scale.py --smoke        (stores of 100 and 2 x 300 runs, seconds)

Each store holds RUNS runs of each of BOARDS platforms (one measurement), added interleaved
(synthetic rtgate-sampler runs from tests/history_sim.py: 2 threads, 5000 samples, full-range
histograms; one run in four with an rt-tests -h 100 histogram whose overflow makes its p99.9 a
bound), PER_RELEASE runs per release,
one run in fifty with an ERROR verdict. Then, alternating, --runs times each: `history add` of a
fixture result, `history compare` of the last two releases (default metrics, then --metric tail),
`history trend` of max and of p99.9, all on the first board. Medians of CPU (user + system) and
wall, per store; --postgres also builds a store on a private PostgreSQL 15 cluster (started here,
stopped by its PID). The goal (issue 32): <= 0.15 / 0.2 / 0.2 s at 1e4 runs per board, flat in
the store's size (10 boards of 1e4 runs: 1e5 runs). --baseline DIR: another rtgate there (a
copy of a revision's harness/ directory, PYTHONPATH=DIR) runs each command alternately with this
one, on the same stores: CPU ratios."""

from __future__ import annotations

import argparse
import compileall
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from common import median, run_timed  # noqa: E402

from history_sim import synthetic_run  # noqa: E402
from rtgate.core.gates import Verdict  # noqa: E402
from rtgate.core.status import Status  # noqa: E402
from rtgate.history.store import HistoryDB  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "rt-tests" / "ct-24-S-h300.json"
DISTINCT = 24  # runs generated, then stored again and again (generation would dominate)
Figures = dict[tuple[str, str], tuple[float, float]]  # (command, version): (CPU s, wall s)


def populate(target: str, size: int, platforms: int, per_release: int, rng: np.random.Generator) -> list[str]:
    """Store `size` runs of each of `platforms` boards, interleaved as a lab adds them; the release
    names in the order added (the same on every board)."""
    runs = [synthetic_run(rng, histogram_limit=100 if i % 4 == 0 else None) for i in range(DISTINCT)]
    error = [Verdict("smp", "max", "max", "worst", Status.ERROR, "synthetic ERROR")]
    releases = [f"6.{i // per_release:05d}" for i in range(size)]
    with HistoryDB(target) as db:
        if db.dialect == "sqlite":
            db.db.execute("PRAGMA synchronous=OFF")  # building the store is not what is measured
        for i, release in enumerate(releases):
            for board in ["board"] + [f"other{k}" for k in range(1, platforms)]:
                db.add_run(runs[i % DISTINCT], board, "smp", release, verdicts=error if i % 50 == 7 else ())
    return list(dict.fromkeys(releases))


def commands(target: str, releases: list[str]) -> dict[str, list[str]]:
    """The commands timed, as Python arguments; "numpy floor" is what compare cannot do without
    (the interpreter, numpy and sqlite3 imported), for scale."""
    common = ["--db", target, "--platform", "board"]
    base, new = releases[-2], releases[-1]
    rtgate = ["-m", "rtgate", "history"]
    return {
        "add": [*rtgate, "add", *common, "--kernel-release", new, "--force-label", f"smp={FIXTURE}"],
        "compare": [*rtgate, "compare", *common, "--base", base, "--new", new],
        "compare tail": [*rtgate, "compare", *common, "--base", base, "--new", new, "--metric", "tail"],
        "trend max": [*rtgate, "trend", *common, "--metric", "max"],
        "trend p99.9": [*rtgate, "trend", *common, "--metric", "p99.9"],
        "numpy floor": ["-c", "import numpy, sqlite3"],
    }


def measure(target: str, releases: list[str], repeats: int, versions: dict[str, dict[str, str] | None]) -> Figures:
    """Median (CPU s, wall s) of each command for each version, commands and versions alternating."""
    cpu: dict[tuple[str, str], list[float]] = {}
    wall: dict[tuple[str, str], list[float]] = {}
    for _ in range(repeats):
        for name, argv in commands(target, releases).items():
            for version, env in versions.items():
                w, c, _ = run_timed([sys.executable, *argv], ok=(0, 1, 3, 4), env=env)
                cpu.setdefault((name, version), []).append(c)
                wall.setdefault((name, version), []).append(w)
    return {key: (median(cpu[key]), median(wall[key])) for key in cpu}


def _size(text: str) -> tuple[int, int]:
    """'10000x10': 10,000 runs on each of 10 boards; '1000': one board."""
    runs, _, boards = text.partition("x")
    return int(runs), int(boards or 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--sizes",
        default="1000,10000,10000x10",
        help="SQLite stores: RUNS per board, xBOARDS for a store of several boards (default %(default)s)",
    )
    ap.add_argument("--postgres", metavar="RUNSxBOARDS", help="also a PostgreSQL store, e.g. 10000x10")
    ap.add_argument("--per-release", type=int, default=10, metavar="K", help="runs per release (default 10)")
    ap.add_argument("--runs", type=int, default=5, help="repetitions of each command (default 5)")
    ap.add_argument("--baseline", metavar="DIR", help="another rtgate (PYTHONPATH=DIR), alternating, for ratios")
    ap.add_argument("--smoke", action="store_true", help="stores of 100 and 300 runs, 1 repetition")
    args = ap.parse_args()
    sizes = [_size("100"), _size("300x2")] if args.smoke else [_size(s) for s in args.sizes.split(",")]
    repeats = 1 if args.smoke else args.runs
    rng = np.random.default_rng(32)
    versions: dict[str, dict[str, str] | None] = {"this": None}
    if args.baseline:
        versions["baseline"] = dict(os.environ, PYTHONPATH=os.path.abspath(args.baseline))
        compileall.compile_dir(args.baseline, quiet=1)  # its first run would pay for the bytecode
    results: list[tuple[str, Figures]] = []

    def build_and_measure(backend: str, target: str, size: tuple[int, int]) -> None:
        start = time.monotonic()
        releases = populate(target, *size, args.per_release, rng)
        name = f"{backend} {size[0]}x{size[1]}"
        print(f"{name}: {size[0] * size[1]} runs stored in {time.monotonic() - start:.0f} s", flush=True)
        results.append((name, measure(target, releases, repeats, versions)))

    with tempfile.TemporaryDirectory(prefix="rtgate-hscale-") as tmp:
        for size in sizes:
            build_and_measure("sqlite", str(Path(tmp) / f"h{size[0]}x{size[1]}.db"), size)
        if args.postgres and not args.smoke:
            from pg_cluster import fresh_database, private_postgres

            with private_postgres() as url:
                build_and_measure("postgresql", fresh_database(url, "scale"), _size(args.postgres))
    print(f"\n{repeats} run(s) of each command, alternating; medians, CPU s (user + system) / wall s")
    names = list(dict.fromkeys(name for name, _ in results[0][1]))
    print(f"{'store':>18} {'version':>8}" + "".join(f"{n:>16}" for n in names))
    for store, figures in results:
        for version in versions:
            cells = "".join(f"{figures[n, version][0]:>8.3f}/{figures[n, version][1]:<7.3f}" for n in names)
            print(f"{store:>18} {version:>8}{cells}")
        if args.baseline:
            ratios = "".join(f"{figures[n, 'this'][0] / figures[n, 'baseline'][0]:>16.2f}" for n in names)
            print(f"{'':>18} {'CPU x':>8}{ratios}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
