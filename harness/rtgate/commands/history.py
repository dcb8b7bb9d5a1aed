# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate history add|compare|bisect|trend: latency across kernel releases, judged against run-to-run noise."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rtgate.commands import add_command, add_results
from rtgate.errors import RtgateError
from rtgate.history.drift import Tolerance
from rtgate.history.record import add_label_options, add_run, recorded_measurement
from rtgate.safe_io import write_bytes, write_text

if TYPE_CHECKING:
    from rtgate.core.thresholds import ThresholdFile

DEFAULT_DB = "rtgate-history.db"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "history")
    h = p.add_subparsers(dest="history_command", metavar="ACTION")
    h.required = True

    a = h.add_parser("add", help="add results to the history")
    add_results(a)
    _common(a)
    add_label_options(a)
    a.add_argument("--kernel-config", metavar="C", help="e.g. PREEMPT_RT (default: from the results)")
    a.add_argument("--tag", action="append", default=[], metavar="TAG")
    a.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE")
    a.add_argument(
        "--pair-id",
        metavar="ID",
        help="interleaved A/B design: the pair this run belongs to (one baseline and one candidate run share it)",
    )
    a.set_defaults(handler=handle_add)

    c = h.add_parser(
        "compare",
        help="compare two releases (exit 1 on a regression, 3 on not enough data, 4 when not comparable)",
    )
    _common(c)
    c.add_argument("--measurement", required=False, metavar="M")
    c.add_argument("--base", required=True, metavar="RELEASE")
    c.add_argument("--new", required=True, metavar="RELEASE")
    c.add_argument(
        "--metric",
        action="append",
        metavar="M",
        help="max, p99, p99.9, avg, min, above_<us>, tail (repeatable; default: what the gates are about, "
        "else max and p99.9)",
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
        help="largest relative change of the median 1-minute load per CPU (default %(default)s: 10 %%)",
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

    _register_bisect(h)

    t = h.add_parser("trend", help="a metric over releases")
    _common(t)
    t.add_argument("--measurement", metavar="M")
    t.add_argument("--metric", default="max")
    t.add_argument(
        "--plot",
        metavar="FILE",
        help="also plot the per-release distribution, with the gate limit, in the format the suffix names "
        "(.png, .svg, .pdf)",
    )
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


def _thresholds(args: argparse.Namespace) -> ThresholdFile | None:
    """The --thresholds file; its loader (YAML, the gate kinds) only when one is given."""
    if not args.thresholds:
        return None
    from rtgate.core.thresholds import load_thresholds

    return load_thresholds(args.thresholds)


def _platform(args: argparse.Namespace, tf: ThresholdFile | None) -> str:
    platform = args.platform or (tf.platform if tf else None)
    if not platform:
        raise RtgateError("give --platform (or --thresholds)")
    return str(platform)


def handle_add(args: argparse.Namespace) -> int:
    tf = _thresholds(args)
    platform = _platform(args, tf)
    meta = {}
    for item in args.meta:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise RtgateError(f"--meta {item!r}: write KEY=VALUE")
        meta[key] = value
    from rtgate.history.store import HistoryDB
    from rtgate.parsers import load_results

    with HistoryDB(args.db) as db:
        for item in args.results:
            name, sep, path = item.partition("=")
            if not sep or Path(item).exists():
                name, path = "", item
            run = load_results(path)
            if not name:  # what the results record, else the threshold file's only measurement
                only = next(iter(tf.measurements)) if tf and len(tf.measurements) == 1 else None
                name = recorded_measurement(run) or only or "default"
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
                force_label=args.force_label,
            )
            print(f"added run {run_id}: {platform} {name} ({path})")
    return 0


def _measurement(db: Any, args: argparse.Namespace, platform: str) -> str:
    if args.measurement:
        return str(args.measurement)
    names = db.measurements(platform)
    if len(names) != 1:
        raise RtgateError(f"give --measurement ({', '.join(names) or 'no runs for ' + platform})")
    return str(names[0])


EXIT_DRIFT = 4


def handle_compare(args: argparse.Namespace) -> int:
    # Its arrays are small: BLAS threads (started as numpy loads) would only cost CPU on a busy host.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from rtgate.history.compare import (
        NOT_COMPARABLE,
        NOT_ENOUGH,
        REGRESSION,
        compare,
        refuse_drift,
        settings_for,
        text_lines,
    )
    from rtgate.history.store import HistoryDB

    tf = _thresholds(args)
    platform = _platform(args, tf)
    for name in ("load_tolerance", "steal_tolerance"):
        value = getattr(args, name)
        if not value >= 0:  # also refuses NaN
            raise RtgateError(f"--{name.replace('_', '-')} {value}: must be a number >= 0")
    if args.alpha is not None and not 0 < args.alpha <= 0.5:
        raise RtgateError(f"--alpha {args.alpha}: must be above 0 and at most 0.5")
    with HistoryDB(args.db) as db:
        m = _measurement(db, args, platform)
        gates = tf.measurements[m].gates if tf and m in tf.measurements else []
        settings = settings_for(tf.history if tf else {}, gates, args.metric)
        if args.alpha is not None:
            settings.alpha = args.alpha
        tolerance = Tolerance(args.load_tolerance, args.steal_tolerance)
        outcome = compare(db, platform, m, args.base, args.new, settings, args.paired, tolerance)
    if not args.accept_drift:
        refuse_drift(outcome)
    print(f"rtgate history: {platform} {m}: {args.new} against {args.base}{' (paired runs)' if outcome.paired else ''}")
    for line in text_lines(outcome, args.accept_drift):
        print(line)
    if args.json:
        doc = outcome.as_dict() | {"refused": outcome.refused}
        write_text(args.json, json.dumps(doc, indent=2) + "\n")
    return {NOT_COMPARABLE: EXIT_DRIFT, REGRESSION: 1, NOT_ENOUGH: 3}.get(outcome.verdict, 0)


def handle_trend(args: argparse.Namespace) -> int:
    from rtgate.history.figures import per_release_values, trend
    from rtgate.history.numbers import figure_text, metric_unit
    from rtgate.history.store import HistoryDB

    tf = _thresholds(args)
    platform = _platform(args, tf)
    if args.plot:
        from rtgate.reports.plots import image_format

        image_format(args.plot, "--plot")  # an unknown suffix is refused before any work
    with HistoryDB(args.db) as db:
        m = _measurement(db, args, platform)
        rows = trend(db, platform, m, args.metric)
        bisected = db.bisect_steps(platform, m)
        if args.plot:
            from rtgate.reports.plots import gate_limit, image, trend_figure

            per_release = per_release_values(db, platform, m, args.metric)
            gates = tf.measurements[m].gates if tf and m in tf.measurements else []
            title = _latest_verdict(db, platform, m, tf, args.metric)
            figure = trend_figure(per_release, args.metric, gate_limit(gates, args.metric), title)
            write_bytes(args.plot, image(figure, image_format(args.plot, "--plot")))
    print(f"rtgate history: {platform} {m}: {args.metric} of the worst thread per run")
    print(f"{'RELEASE':24} {'RUNS':>4} {'MEDIAN':>12} {'MIN':>12} {'MAX':>12}" + ("  BISECT" if bisected else ""))

    def fmt(v: float | None) -> str:
        return "-" if v is None else figure_text(v, metric_unit(args.metric))

    for r in rows:
        line = f"{r['release']:24} {r['runs']:>4} {fmt(r['median']):>12} {fmt(r['min']):>12} {fmt(r['max']):>12}"
        if r["release"] in bisected:  # a commit a bisection measured: its decision, after how many runs
            decision, runs, criterion = bisected[r["release"]]
            line += f"  {decision.upper()} after {runs} run(s), {criterion}"
        print(line)
    if args.plot:
        print(f"wrote {args.plot}")
    return 0


def _latest_verdict(db: Any, platform: str, m: str, tf: ThresholdFile | None, metric: str) -> str | None:
    """The verdict on the metric of the last two releases, as compare gives it (unpaired)."""
    from rtgate.history.compare import compare, latest_verdict, settings_for

    releases = db.releases(platform, m)
    if len(releases) < 2:
        return None
    gates = tf.measurements[m].gates if tf and m in tf.measurements else []
    settings = settings_for(tf.history if tf else {}, gates)
    if metric not in settings.metrics:
        settings.metrics = [metric]
    outcome = compare(db, platform, m, releases[-2], releases[-1], settings)
    return latest_verdict(outcome, metric, releases[-2], releases[-1])


EXIT_MORE = 3  # another run is needed: the bisect wrapper measures again
EXIT_SKIP = 125  # git bisect run: this commit cannot be tested (--max-runs reached undecided)


def _register_bisect(h: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    b = h.add_parser(
        "bisect",
        help="one step of git bisect run: GOOD (exit 0), BAD (1), MORE runs needed (3), undecided at --max-runs (125)",
    )
    _common(b)
    b.add_argument("--measurement", metavar="M")
    b.add_argument("--base", required=True, metavar="RELEASE", help="the known-good release's label (the baseline)")
    b.add_argument("--new", required=True, metavar="RELEASE", help="the label of the commit under test")
    b.add_argument("--metric", metavar="M", help="with --worse-by: max, p99, p99.9, avg, min, above_<us>")
    b.add_argument(
        "--worse-by", type=float, metavar="R", help="bad is the metric worse by at least this factor (1.2: 20 %% worse)"
    )
    b.add_argument(
        "--gate",
        action="append",
        default=[],
        metavar="NAME",
        help="without --worse-by: bad is this gate of --thresholds failing (repeatable; default: any gate)",
    )
    b.add_argument(
        "--fail-share",
        type=float,
        default=0.5,
        metavar="S",
        help="gates: a bad commit fails in at least this share of its runs (default %(default)s)",
    )
    b.add_argument(
        "--error",
        type=float,
        default=0.01,
        metavar="E",
        help="chance of a wrong decision per step, each way (default %(default)s; N steps: at most N x E)",
    )
    b.add_argument(
        "--max-runs",
        type=int,
        default=30,
        metavar="N",
        help="runs (or pairs) of the commit before it is skipped undecided, exit 125 (default %(default)s)",
    )
    b.add_argument(
        "--paired", action="store_true", help="judge the pairs of runs sharing a --pair-id (interleaved with the base)"
    )
    b.add_argument(
        "--accept-drift", action="store_true", help="decide even when the environments differ beyond tolerance"
    )
    b.add_argument("--json", metavar="FILE")
    b.set_defaults(handler=handle_bisect)


def _bisect_design(args: argparse.Namespace, tf: ThresholdFile | None, m: str) -> Any:
    """The declared bad, checked: a metric and a factor, or gates of the threshold file."""
    from rtgate.history.bisect import Design, check_design, metric_known

    design = Design(error=args.error, max_runs=args.max_runs, worse_by=args.worse_by, fail_share=args.fail_share)
    check_design(design)
    if (args.metric is None) != (args.worse_by is None):
        raise RtgateError("give --metric and --worse-by together (or neither: bad is a gate that now fails)")
    if args.metric is not None:
        if not metric_known(args.metric):
            raise RtgateError(f"--metric {args.metric}: not a per-run figure (max, p99, p99.9, avg, min, above_<us>)")
        if args.gate:
            raise RtgateError("--gate declares bad as a failing gate: drop it, or drop --metric and --worse-by")
        return design
    if tf is None or m not in tf.measurements:
        raise RtgateError(
            "bad is a gate that now fails: give --thresholds with the measurement's gates (or --worse-by)"
        )
    names = [g.name for g in tf.measurements[m].gates]
    for name in args.gate:
        if name not in names:
            raise RtgateError(f"--gate {name}: no such gate in measurement {m} ({', '.join(names)})")
    return design


def handle_bisect(args: argparse.Namespace) -> int:
    from rtgate.history.bisect import BAD, GOOD, MORE, run_step
    from rtgate.history.store import HistoryDB

    tf = _thresholds(args)
    platform = _platform(args, tf)
    with HistoryDB(args.db) as db:
        m = _measurement(db, args, platform)
        design = _bisect_design(args, tf, m)
        evidence = run_step(db, platform, m, args.base, args.new, design, args.metric, args.gate, args.paired)
        step = evidence.step
        refused = bool(evidence.machines) or (bool(evidence.drift) and not args.accept_drift)
        if step.decision != MORE and not refused:
            db.add_bisect_step(platform, m, args.new, args.base, step.criterion, step.decision, step.runs, step.error)
    paired = " (paired runs)" if args.paired else ""
    print(f"rtgate history bisect: {platform} {m}: {args.new} against {args.base}{paired}")
    for line in evidence.drift:
        print(f"{'DRIFT (accepted)' if args.accept_drift else 'DRIFT':9} {line}")
    for line in evidence.machines:
        print(f"{'MACHINES DIFFER':9} {line}")
    for note in evidence.notes + step.notes:
        print(f"{'NOTE':9} {note}")
    print(step.line())
    if args.json:
        doc = step.as_dict() | {"drift": evidence.drift, "machines": evidence.machines, "refused": refused}
        write_text(args.json, json.dumps(doc, indent=2) + "\n")
    if refused:
        print("rtgate history bisect: the runs were measured on different machines or host states: no decision")
        return EXIT_DRIFT
    return {GOOD: 0, BAD: 1, MORE: EXIT_MORE}.get(step.decision, EXIT_SKIP)
