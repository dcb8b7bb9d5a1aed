# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate history add|compare|trend: latency across kernel releases, judged against run-to-run noise."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rtgate.commands import add_command
from rtgate.core.gate_kinds import KINDS
from rtgate.core.model import RunResult
from rtgate.core.recorded import recorded_environment
from rtgate.core.setup import evaluate_measured
from rtgate.core.thresholds import ThresholdFile, load_thresholds
from rtgate.errors import RtgateError
from rtgate.history.compare import Settings, compare, trend
from rtgate.history.drift import Tolerance
from rtgate.history.store import HistoryDB
from rtgate.parsers import load_results
from rtgate.safe_io import write_bytes, write_text

DEFAULT_DB = "rtgate-history.db"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "history")
    h = p.add_subparsers(dest="history_command", metavar="ACTION")
    h.required = True

    a = h.add_parser("add", help="add results to the history")
    a.add_argument("results", nargs="+", metavar="[MEASUREMENT=]RESULTS")
    _common(a)
    a.add_argument("--kernel-release", metavar="R", help="default: from the results")
    a.add_argument("--kernel-config", metavar="C", help="e.g. PREEMPT_RT (default: from the results)")
    a.add_argument("--tag", action="append", default=[], metavar="TAG")
    a.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE")
    a.add_argument(
        "--pair-id",
        metavar="ID",
        help="interleaved A/B design: the pair this run belongs to (one baseline and one candidate run share it)",
    )
    a.set_defaults(handler=handle_add)

    c = h.add_parser("compare", help="compare two releases (exit 1 on a regression, 3 on too few runs)")
    _common(c)
    c.add_argument("--measurement", required=False, metavar="M")
    c.add_argument("--base", required=True, metavar="RELEASE")
    c.add_argument("--new", required=True, metavar="RELEASE")
    c.add_argument(
        "--metric",
        action="append",
        metavar="M",
        help="tail (default), max, p99, p99.9, avg, min, above_<us> (repeatable)",
    )
    c.add_argument(
        "--alpha",
        type=float,
        metavar="A",
        help="false-alarm rate of the whole comparison (default: the threshold file's history: alpha, else 0.05)",
    )
    c.add_argument(
        "--paired", action="store_true", help="compare within pairs of runs sharing a --pair-id (interleaved A/B runs)"
    )
    c.add_argument(
        "--accept-drift",
        action="store_true",
        help="compare even when the environments of the two releases differ beyond tolerance",
    )
    c.add_argument(
        "--load-tolerance",
        type=float,
        default=Tolerance.load_per_cpu,
        metavar="L",
        help="largest difference of the median 1-minute load per CPU (default %(default)s)",
    )
    c.add_argument(
        "--steal-tolerance",
        type=float,
        default=Tolerance.steal_pct,
        metavar="PCT",
        help="largest difference of the median CPU steal in percent (default %(default)s)",
    )
    c.add_argument("--json", metavar="FILE")
    c.set_defaults(handler=handle_compare)

    t = h.add_parser("trend", help="a metric over releases")
    _common(t)
    t.add_argument("--measurement", metavar="M")
    t.add_argument("--metric", default="max")
    t.add_argument("--plot", metavar="PNG", help="also plot the per-release distribution, with the gate limit")
    t.set_defaults(handler=handle_trend)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        default=DEFAULT_DB,
        metavar="FILE|URL",
        help=f"SQLite file (default {DEFAULT_DB}) or postgresql://user@host:port/dbname",
    )
    p.add_argument("--platform", metavar="P", help="default: the threshold file's platform")
    p.add_argument("--thresholds", metavar="FILE", help="gates to store verdicts for, and history settings")


def _platform(args: argparse.Namespace, tf: ThresholdFile | None) -> str:
    platform = args.platform or (tf.platform if tf else None)
    if not platform:
        raise RtgateError("give --platform (or --thresholds)")
    return str(platform)


def kernel_facts(run: RunResult) -> tuple[str | None, str | None]:
    env = recorded_environment(run)
    system = env.get("system") or {}
    sysinfo = env.get("sysinfo") or {}
    release = system.get("kernel_release") or sysinfo.get("release")
    config = system.get("preemption") or ("PREEMPT_RT" if sysinfo.get("realtime") == 1 else None)
    return release, config


def add_run(
    db: HistoryDB,
    run: RunResult,
    platform: str,
    measurement: str,
    tf: ThresholdFile | None,
    release: str | None = None,
    config: str | None = None,
    tags: list[str] | None = None,
    meta: dict[str, Any] | None = None,
    duration_s: int | None = None,
    pair_id: str | None = None,
) -> int:
    found_release, found_config = kernel_facts(run)
    release = release or found_release
    if not release:
        raise RtgateError(f"{run.source}: the results do not say the kernel release: give --kernel-release")
    verdicts = (
        evaluate_measured(tf.measurements[measurement], run, duration_s=duration_s)
        if tf and measurement in tf.measurements
        else []
    )
    return db.add_run(
        run, platform, measurement, release, config or found_config, tags or [], meta or {}, verdicts, pair_id=pair_id
    )


def handle_add(args: argparse.Namespace) -> int:
    tf = load_thresholds(args.thresholds) if args.thresholds else None
    platform = _platform(args, tf)
    meta = {}
    for item in args.meta:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise RtgateError(f"--meta {item!r}: write KEY=VALUE")
        meta[key] = value
    with HistoryDB(args.db) as db:
        for item in args.results:
            name, sep, path = item.partition("=")
            if not sep or Path(item).exists():
                name, path = (next(iter(tf.measurements)) if tf and len(tf.measurements) == 1 else "default"), item
            run = load_results(path)
            run_id = add_run(
                db,
                run,
                platform,
                name,
                tf,
                args.kernel_release,
                args.kernel_config,
                args.tag,
                meta,
                pair_id=args.pair_id,
            )
            print(f"added run {run_id}: {platform} {name} {args.kernel_release or kernel_facts(run)[0]} ({path})")
    return 0


def _settings(tf: ThresholdFile | None, metrics: list[str] | None, measurement: str) -> Settings:
    s = Settings(**(tf.history if tf else {}))
    if metrics:
        s.metrics = metrics
    elif tf and measurement in tf.measurements:
        # Tail mass above the gate limits, beside the figures.
        limits = {g.above_us for g in tf.measurements[measurement].gates if "above_us" in KINDS[g.kind].takes}
        s.metrics = s.metrics + [f"above_{lim:g}" for lim in sorted(x for x in limits if x is not None)]
    return s


def _measurement(db: HistoryDB, args: argparse.Namespace, platform: str) -> str:
    if args.measurement:
        return str(args.measurement)
    names = db.measurements(platform)
    if len(names) != 1:
        raise RtgateError(f"give --measurement ({', '.join(names) or 'no runs for ' + platform})")
    return names[0]


EXIT_DRIFT = 4


def handle_compare(args: argparse.Namespace) -> int:
    tf = load_thresholds(args.thresholds) if args.thresholds else None
    platform = _platform(args, tf)
    for name in ("load_tolerance", "steal_tolerance"):
        value = getattr(args, name)
        if not value >= 0:  # also refuses NaN
            raise RtgateError(f"--{name.replace('_', '-')} {value}: must be a number >= 0")
    settings_alpha = args.alpha
    if settings_alpha is not None and not 0 < settings_alpha <= 0.5:
        raise RtgateError(f"--alpha {settings_alpha}: must be above 0 and at most 0.5")
    with HistoryDB(args.db) as db:
        m = _measurement(db, args, platform)
        settings = _settings(tf, args.metric, m)
        if settings_alpha is not None:
            settings.alpha = settings_alpha
        outcome = compare(
            db,
            platform,
            m,
            args.base,
            args.new,
            settings,
            args.paired,
            Tolerance(args.load_tolerance, args.steal_tolerance),
        )
    refused = bool(outcome.drift) and not args.accept_drift
    if refused:  # host drift looks exactly like a kernel change: no verdict from it
        for c in outcome.comparisons:
            if c.decision in ("regression", "improvement"):
                c.decision = "not comparable"
    print(f"rtgate history: {platform} {m}: {args.new} against {args.base}{' (paired runs)' if outcome.paired else ''}")
    for line in outcome.drift:
        print(f"{'DRIFT (accepted)' if args.accept_drift else 'DRIFT':16} {line}")
    for note in outcome.notes:
        print(f"{'NOTE':16} {note}")
    for c in outcome.comparisons:
        print(f"{c.decision.upper():16} {c.metric:>12} {c.thread:>8}  {c.evidence}")
    if refused:
        print(
            "rtgate history: the environments differ: no verdict (measure both releases on the same host "
            "state, interleaved with --pair-id and compared --paired, or give --accept-drift)"
        )
    if args.json:
        write_text(
            args.json,
            json.dumps(
                {
                    "comparisons": [c.as_dict() for c in outcome.comparisons],
                    "drift": outcome.drift,
                    "notes": outcome.notes,
                    "paired": outcome.paired,
                    "refused": refused,
                },
                indent=2,
            )
            + "\n",
        )
    decisions = {c.decision for c in outcome.comparisons}
    if refused:
        return EXIT_DRIFT
    return 1 if "regression" in decisions else 3 if "not enough runs" in decisions else 0


def handle_trend(args: argparse.Namespace) -> int:
    tf = load_thresholds(args.thresholds) if args.thresholds else None
    platform = _platform(args, tf)
    with HistoryDB(args.db) as db:
        m = _measurement(db, args, platform)
        rows = trend(db, platform, m, args.metric)
        if args.plot:
            from rtgate.history.compare import _values
            from rtgate.reports.plots import png, trend_figure

            per_release = {
                r: _values(db.threads(platform, m, r), args.metric).get("worst", []) for r in db.releases(platform, m)
            }
            gates = tf.measurements[m].gates if tf and m in tf.measurements else []
            limits = [g.limit_us for g in gates if g.kind == "max" and g.limit_us is not None]
            write_bytes(args.plot, png(trend_figure(per_release, args.metric, min(limits) if limits else None)))
    print(f"rtgate history: {platform} {m}: {args.metric} of the worst thread per run")
    print(f"{'RELEASE':24} {'RUNS':>4} {'MEDIAN':>10} {'MIN':>10} {'MAX':>10}")

    def fmt(v: float | None) -> str:
        return "-" if v is None else f"{v:.4g}"

    for r in rows:
        print(f"{r['release']:24} {r['runs']:>4} {fmt(r['median']):>10} {fmt(r['min']):>10} {fmt(r['max']):>10}")
    return 0
