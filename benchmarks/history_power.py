#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""False alarms and detection of `rtgate history compare`, on synthetic and on real runs.

    python benchmarks/history_power.py power [--reps 200]    (--smoke: in seconds)
    python benchmarks/history_power.py synthetic [--reps 200] [--runs 3,4,5,6,8]
    sudo python benchmarks/history_power.py live --record live.db [--triples 20] [--seconds 3]
    python benchmarks/history_power.py live --analyse live.db [--reps 200] [--runs 4,5,6,8]

power: the table README quotes. Designs of 5, 10 and 20 runs per release (releases measured one
after the other) and 5, 10 and 20 interleaved pairs; per design, the share of comparisons saying
REGRESSION when every latency is x1.2 (detection), tested on max, on p99.9 and on the share of
samples above the gate's threshold (ABOVE_US), each alone as the primary metric; and when the
kernel is the same but the host drifts (interference level x1.0 -> x1.3 over the session): false
alarms. --smoke: two sessions of the 5-run designs, in seconds.

synthetic: releases of N runs each from tests/history_sim.py (heavy-tailed run-to-run host
interference, per-run p99.9 spanning ~20x over 20 runs). "same" compares two releases of the same
kernel; "x1.2" scales every latency of the new release by 1.2; "tail x1.2" scales only the
interference part (the tail) by 1.2.

live: records interleaved triples on this machine, each in random order: a baseline run, a
second baseline run and a candidate run under an injected latency (SCHED_FIFO 99 thread on the
sampler's CPU, busy D us every P ms), rtgate-sampler 1 thread at 1 ms for S seconds. Then draws
random sets of N runs (unpaired) or N triples (paired) and counts how often compare says
REGRESSION: baseline vs second baseline (false alarms), baseline vs candidate (detection)."""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from history_live import injected_latency, measured_cpu, sampler_run  # noqa: E402
from history_sim import host_state, latencies, run_result, synthetic_run  # noqa: E402
from rtgate.history.compare import Settings, compare  # noqa: E402
from rtgate.history.store import HistoryDB  # noqa: E402


def regression(db: HistoryDB, base: str, new: str, metrics: list[str], paired: bool = False) -> bool:
    out = compare(db, "p", "m", base, new, Settings(metrics=metrics), paired=paired)
    return any(c.decision == "regression" for c in out.comparisons)


ABOVE_US = 60.0  # the gate threshold of the synthetic board: about its p99.9 on a quiet run
DRIFT = 1.3  # host interference level at the end of the session, relative to its start


def _session(rng: np.random.Generator, n: int, paired: bool, scale: float, drift: float, samples: int) -> HistoryDB:
    """One session: n base and n new runs. Unpaired: all base runs, then all new runs; paired:
    base/new interleaved in random order within each pair. The host drifts linearly over it."""
    db = HistoryDB(":memory:")
    if paired:
        order = [(r, i) for i in range(n) for r in (("base", "new") if rng.random() < 0.5 else ("new", "base"))]
    else:
        order = [("base", i) for i in range(n)] + [("new", i) for i in range(n)]
    for step, (release, i) in enumerate(order):
        host = host_state(rng, 0.4) * (1 + (drift - 1) * step / max(1, len(order) - 1))
        run = run_result([latencies(rng, samples, host, scale if release == "new" else 1.0) for _ in range(2)])
        db.add_run(run, "p", "m", release, pair_id=f"p{i}" if paired else None)
    return db


def power(args: argparse.Namespace) -> None:
    designs = [(n, paired) for paired in (False, True) for n in args.runs]
    metrics = ["max", "p99.9", f"above_{ABOVE_US:g}"]
    print(
        f"power: {args.reps} sessions per cell, 2 threads x {args.samples} samples per run, alpha 0.05 one-sided; "
        "share of comparisons that said REGRESSION"
    )
    print(f"{'design':>16} " + " ".join(f"{'x1.2 ' + m:>14}" for m in metrics) + f" {'false (drift)':>14}")
    for n, paired in designs:
        rng = np.random.default_rng(100 * n + paired)
        det = dict.fromkeys(metrics, 0)
        false = 0
        for _ in range(args.reps):
            with _session(rng, n, paired, 1.2, 1.0, args.samples) as db:
                for m in metrics:
                    det[m] += regression(db, "base", "new", [m], paired)
            with _session(rng, n, paired, 1.0, DRIFT, args.samples) as db:
                false += regression(db, "base", "new", metrics, paired)
        name = f"{n} {'pairs' if paired else 'runs/release'}"
        print(
            f"{name:>16} " + " ".join(f"{det[m] / args.reps:>14.0%}" for m in metrics) + f" {false / args.reps:>14.0%}",
            flush=True,
        )


def synthetic(args: argparse.Namespace) -> None:
    cases = [("same", 1.0, False), ("x1.2", 1.2, False), ("tail x1.2", 1.2, True), ("tail x2", 2.0, True)]
    print(
        f"synthetic: {args.reps} comparisons per cell, 2 threads x {args.samples} samples per run; "
        "share of comparisons that said REGRESSION"
    )
    print(f"{'runs':>4} {'metric':>6} " + " ".join(f"{c[0]:>10}" for c in cases))
    for n in args.runs:
        for metric in args.metrics:
            rates = []
            for ci, (_, scale, tail_only) in enumerate(cases):
                rng = np.random.default_rng(1000 * n + ci)
                hits = 0
                for _ in range(args.reps):
                    with HistoryDB(":memory:") as db:
                        for _ in range(n):
                            db.add_run(synthetic_run(rng, samples=args.samples), "p", "m", "base")
                            db.add_run(synthetic_run(rng, scale, args.samples, tail_only=tail_only), "p", "m", "new")
                        hits += regression(db, "base", "new", [metric])
                rates.append(hits / args.reps)
            print(f"{n:>4} {metric:>6} " + " ".join(f"{r:>10.1%}" for r in rates), flush=True)


def record(args: argparse.Namespace) -> None:
    from rtgate.measure.runner import find_sampler

    sampler, cpu = find_sampler(), measured_cpu()
    rng = random.Random(args.seed)
    with HistoryDB(args.record) as db, tempfile.TemporaryDirectory() as tmp:
        for i in range(args.triples):
            roles = ["base", "base2", "candidate"]
            rng.shuffle(roles)  # no role always first: slow host drift is shared, not aliased
            for role in roles:
                out = Path(tmp) / f"{role}-{i}.json"
                if role == "candidate":
                    with injected_latency(cpu, args.busy_us, args.period_ms):
                        sampler_run(sampler, out, args.seconds, cpu)
                else:
                    sampler_run(sampler, out, args.seconds, cpu)
                from rtgate.parsers import load_results

                db.add_run(
                    load_results(str(out)),
                    "p",
                    "m",
                    role,
                    pair_id=f"t{i}",
                    metadata={"busy_us": args.busy_us, "period_ms": args.period_ms},
                )
            print(f"triple {i + 1}/{args.triples} recorded", flush=True)


def analyse(args: argparse.Namespace) -> None:
    """Resample whole runs of the recorded triples into releases of N runs (or N pairs)."""
    import sqlite3

    src = sqlite3.connect(args.analyse)
    triples = [r[0] for r in src.execute("SELECT DISTINCT pair_id FROM runs ORDER BY id")]
    print(f"live: {len(triples)} recorded triples in {args.analyse}; {args.reps} draws per cell")
    print(f"{'runs':>4} {'design':>8} {'metric':>6} {'false alarms':>13} {'detection':>10}")
    rng = random.Random(7)
    for n in args.runs:
        for paired in (False, True):
            for metric in args.metrics:
                fa = det = 0
                for _ in range(args.reps):
                    chosen = rng.sample(triples, n)
                    with HistoryDB(":memory:") as db:
                        _copy(src, db.db.conn, chosen)
                        fa += regression(db, "base", "base2", [metric], paired)
                        det += regression(db, "base", "candidate", [metric], paired)
                print(
                    f"{n:>4} {'paired' if paired else 'unpaired':>8} {metric:>6} {fa / args.reps:>13.1%} "
                    f"{det / args.reps:>10.1%}",
                    flush=True,
                )


def _copy(src: object, dst: object, pair_ids: list[str]) -> None:
    marks = ",".join("?" * len(pair_ids))
    for table, where in (
        ("runs", f"pair_id IN ({marks})"),
        ("threads", f"run_id IN (SELECT id FROM runs WHERE pair_id IN ({marks}))"),
    ):
        rows = src.execute(f"SELECT * FROM {table} WHERE {where}", pair_ids).fetchall()  # type: ignore[attr-defined]
        if rows:
            cols = ",".join("?" * len(rows[0]))
            dst.executemany(f"INSERT INTO {table} VALUES ({cols})", rows)  # type: ignore[attr-defined]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="seconds: that the script still runs (the suite runs this)")
    sub = p.add_subparsers(dest="mode")
    pw = sub.add_parser("power")
    pw.add_argument("--reps", type=int, default=200)
    pw.add_argument("--samples", type=int, default=20000)
    pw.add_argument("--runs", type=lambda x: [int(v) for v in x.split(",")], default=[5, 10, 20])
    s = sub.add_parser("synthetic")
    s.add_argument("--reps", type=int, default=200)
    s.add_argument("--samples", type=int, default=5000)
    s.add_argument("--runs", type=lambda x: [int(v) for v in x.split(",")], default=[3, 4, 5, 6, 8])
    s.add_argument("--metrics", type=lambda x: x.split(","), default=["max", "p99.9"])
    live = sub.add_parser("live")
    live.add_argument("--record", metavar="DB")
    live.add_argument("--analyse", metavar="DB")
    live.add_argument("--triples", type=int, default=20)
    live.add_argument("--seconds", type=int, default=3)
    live.add_argument("--busy-us", type=float, default=100.0)
    live.add_argument("--period-ms", type=float, default=10.0)
    live.add_argument("--seed", type=int, default=1)
    live.add_argument("--reps", type=int, default=200)
    live.add_argument("--runs", type=lambda x: [int(v) for v in x.split(",")], default=[4, 5, 6, 8])
    live.add_argument("--metrics", type=lambda x: x.split(","), default=["tail", "p99.9"])
    args = p.parse_args()
    if args.smoke:  # the power table, small: 2 sessions of the 5-run designs
        args = p.parse_args(["power", "--reps", "2", "--samples", "2000", "--runs", "5"])
    start = time.monotonic()
    if args.mode is None:
        p.error("give a mode: power, synthetic or live")
    if args.mode == "power":
        power(args)
    elif args.mode == "synthetic":
        synthetic(args)
    elif args.record:
        record(args)
    elif args.analyse:
        analyse(args)
    else:
        p.error("live: give --record DB or --analyse DB")
    print(f"({time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
