# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate run [THRESHOLDS]: measure with rtgate-sampler, then evaluate every gate."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from rtgate.commands import add_command
from rtgate.commands.common import add_report_options, report
from rtgate.core.gates import Verdict
from rtgate.core.model import RunResult
from rtgate.core.thresholds import ThresholdFile, default_thresholds_path, load_thresholds
from rtgate.errors import RtgateError, SamplerError
from rtgate.history.record import add_run_options, run_adder
from rtgate.measure import engine_check
from rtgate.measure.orchestrate import HistoryRow, measure_and_judge
from rtgate.measure.runner import find_sampler, output_names
from rtgate.measure.stop import STOP
from rtgate.options import DURATION, OUTPUT_DIR, SAMPLER, STRICT
from rtgate.safe_io import check_output_dir, check_output_file


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "run")
    p.add_argument(
        "thresholds", nargs="?", metavar="THRESHOLDS", help="threshold file (default: the built-in default platform)"
    )
    p.add_argument("--measurement", action="append", metavar="NAME", help="run only this measurement (repeatable)")
    for option in (DURATION, SAMPLER, OUTPUT_DIR):  # shared with the pytest plugin (rtgate.options)
        option.add_to(p)
    add_run_options(p)
    STRICT.add_to(p)
    add_report_options(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    # SIGINT, SIGTERM and SIGHUP all stop the run the same way: what was measured is judged and reported.
    with STOP.handling(ignore_after=args.whole_process):
        return _handle(args)


def _handle(args: argparse.Namespace) -> int:
    path = args.thresholds
    if path is None:
        path = str(default_thresholds_path())
        print(
            f"rtgate: no threshold file given: using the built-in default platform ({path}).\n"
            "rtgate: its limits are what a healthy general-purpose Linux meets, derived from "
            "measurements; a board file holds a real budget.",
            flush=True,
        )
    tf = load_thresholds(path)
    names = args.measurement or list(tf.measurements)
    for name in names:
        if name not in tf.measurements:
            raise RtgateError(f"no measurement {name!r} in {path} (measurements: {', '.join(tf.measurements)})")
    sampler = find_sampler(args.sampler)
    outdir = Path(args.output_dir)
    check_outputs(args, outdir, [n for name in names for n in output_names(tf.measurements[name])])
    verdicts: list[Verdict] = []
    durations: dict[str, float] = {}
    notes: list[str] = []
    measured: list[tuple[str, RunResult]] = []  # their recorded conditions go into every report
    refused: dict[str, list[dict[str, str]]] = {}  # not measured: their preflight warnings
    system: dict[str, Any] | None = None  # the machine as the engine found it, for those not measured
    lost: list[str] = []  # history rows that could not be added: said with the reports
    for name in names:
        m = tf.measurements[name]
        if not STOP.requested:
            print(f"rtgate: measuring {name} ...", flush=True)
        outcome = measure_and_judge(
            sampler, m, outdir, duration_s=args.duration, strict=args.strict, history=_history_row(args, tf, name, lost)
        )
        verdicts.extend(outcome.verdicts)
        notes.extend(outcome.notes)
        if outcome.run is not None:
            durations[name] = outcome.run.elapsed_s or 0.0
            measured.append((name, outcome.run))
        else:
            refused[name] = [c.as_dict() for c in outcome.warnings]
            system = system or outcome.system
    if STOP.requested:
        print(f"rtgate: stopped by {STOP.signal}: evaluating what was measured", file=sys.stderr, flush=True)
    if refused and system is None:  # none got as far as the engine's preflight (stopped first)
        try:
            system = engine_check.machine(sampler)
        except SamplerError:
            system = {}
    code = report(
        tf,
        verdicts,
        args,
        durations,
        {"results_dir": str(outdir)},
        runs=measured,
        refused=refused,
        system=system,
        lost=lost,
    )
    for line in notes:
        print(line, flush=True)
    return code


def check_outputs(args: argparse.Namespace, outdir: Path, names: list[str]) -> None:
    """Unwritable outputs fail now, not after an hour of measuring: the output folder (no link planted
    in it), each report (not one of the measurement's own files), the history (a database, or a
    place where one can be made)."""
    check_output_dir(outdir, names)
    ours = {os.path.realpath(outdir / n.rstrip("/")) for n in names}
    history = args.history
    if history:
        from rtgate.history.backend import is_postgres_url  # sqlite3 only when a history is asked for

        history = None if is_postgres_url(history) else history
    for option, output in (("--junit", args.junit), ("--json", args.json), ("--history", history)):
        if not output:
            continue
        if os.path.realpath(output) in ours:
            raise RtgateError(f"{option} names a file the measurement writes in {outdir}: choose another name")
        check_output_file(output)
    if args.history:
        check_history(args.history)


def check_history(target: str) -> None:
    """The history is opened now (a PostgreSQL server reached, a file proved a history database), so
    that a wrong target is known before measuring. An absent file is made when the first run is added."""
    from rtgate.history.backend import is_postgres_url
    from rtgate.history.store import HistoryDB

    if is_postgres_url(target) or os.path.exists(target):
        HistoryDB(target).close()


def _history_row(args: argparse.Namespace, tf: ThresholdFile, name: str, lost: list[str]) -> HistoryRow | None:
    """--history: each measured run becomes a row of the database, tagged and labelled as asked. A row
    that cannot be added (the server went away, the disk filled) is noted in `lost`: the other
    measurements, the results and the reports still follow."""
    adder = run_adder(args, tf, name)
    if adder is None:
        return None

    def add(run: RunResult, verdicts: list[Verdict]) -> None:
        try:
            adder(run, verdicts)
        except Exception as e:  # the database is history/'s: whatever it raises, the reports still follow
            lost.append(f"history: the run of {name} was not added: {e}")

    return add
