# SPDX-License-Identifier: GPL-2.0-or-later
"""What several subcommands share: report options and writing the reports."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from typing import Any

from rtgate.commands import add_thresholds
from rtgate.core.gates import Verdict, exit_code
from rtgate.core.model import RunResult
from rtgate.core.thresholds import ThresholdFile
from rtgate.errors import RtgateError
from rtgate.options import REPORTS
from rtgate.options import parse_seconds as parse_seconds  # re-exported: the type of every duration option
from rtgate.reports.described import describe_runs, environment_document, header_lines
from rtgate.reports.text import summary_table

EXIT_LOST = 2  # an output (report, history) was lost: the run is incomplete whatever its verdicts


def add_report_options(p: argparse.ArgumentParser) -> None:
    for option in REPORTS:
        option.add_to(p)


def check_report_outputs(args: argparse.Namespace) -> None:
    """--junit and --json must be writable before a verdict is printed: a FAIL is never hidden behind exit 2."""
    for output in (getattr(args, "junit", None), getattr(args, "json", None)):
        if output:
            from rtgate.safe_io import check_output_file  # only for a report to write

            check_output_file(output)


def report(
    tf: ThresholdFile,
    verdicts: list[Verdict],
    args: argparse.Namespace,
    durations: Mapping[str, float | None] | None = None,
    extra: dict[str, object] | None = None,
    runs: list[tuple[str, RunResult]] | None = None,
    refused: dict[str, list[dict[str, str]]] | None = None,
    system: dict[str, Any] | None = None,
    lost: list[str] | None = None,
) -> int:
    """`runs`: the measurements' results, whose recorded conditions every report shows. `refused` (rtgate run):
    the measurements it did not make, with their preflight warnings; `system`, the machine as the engine found it
    before measuring, describes them.
    `lost`: outputs already lost (a history that could not be written), said with the reports that fail."""
    allow = bool(args.allow_inconclusive or tf.allow_inconclusive)
    measured = {name for name, _ in runs or []}
    unmeasured = {v.measurement: (refused or {}).get(v.measurement) for v in verdicts if v.measurement not in measured}
    check_report_outputs(args)
    described = describe_runs(runs or [], unmeasured, system if refused is not None and unmeasured else None)
    summary = summary_table(tf.platform, verdicts, allow, header_lines(described))
    sys.stdout.write(summary)
    lost = list(lost or [])
    if args.junit:
        from rtgate.reports.junit import build_junit, write_junit  # ElementTree only when asked for

        lost += _write_one(
            args.junit,
            lambda: write_junit(args.junit, build_junit(tf.platform, verdicts, summary, allow, durations, described)),
        )
    if args.json:
        from rtgate.reports.verdicts_json import verdicts_document, write_json  # and safe_io's tempfile

        doc = verdicts_document(tf.platform, tf.files, verdicts, allow, extra, environment_document(described))
        lost += _write_one(args.json, lambda: write_json(args.json, doc))
    return lost_code(exit_code(verdicts, allow), lost)


def _write_one(path: str, write: Callable[[], None]) -> list[str]:
    """Write one report; a failure (a full disk) is said and returned, and the other reports still written."""
    try:
        write()
    except RtgateError as e:
        return [str(e)]
    except OSError as e:
        return [str(RtgateError(f"cannot write report: {e.strerror}", path=e.filename or path))]
    return []


def lost_code(code: int, lost: list[str]) -> int:
    """Each lost output said on stderr, and exit status 2 when one was lost: the summary above still
    shows every verdict, but a CI job whose report or history is missing must not look complete."""
    for what in lost:
        print(f"rtgate: error: {' '.join(what.split())} (lost; the verdicts are above)", file=sys.stderr, flush=True)
    return EXIT_LOST if lost else code


def add_compiled_args_command(actions: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register `args` under `rtgate lava` or `rtgate fuego`: both print the same compiled arguments."""
    a = actions.add_parser("args", help="print a measurement's sampler arguments with its --gate options")
    add_thresholds(a)
    a.add_argument("--measurement", metavar="NAME", help="default: the only measurement")
    a.add_argument("--duration", type=parse_seconds, metavar="TIME")
    a.add_argument(
        "--all",
        action="store_true",
        help="print every board parameter (load, requirements, named knobs) as NAME='value' lines",
    )
    a.set_defaults(handler=handle_compiled_args)


def handle_compiled_args(args: argparse.Namespace) -> int:
    """`rtgate lava args` and `rtgate fuego args`: a measurement's sampler arguments with its gates."""
    from rtgate.core.thresholds import find_thresholds, load_thresholds
    from rtgate.lava.board import args_text

    tf = load_thresholds(find_thresholds(args.thresholds))
    name = args.measurement or (next(iter(tf.measurements)) if len(tf.measurements) == 1 else None)
    if name is None or name not in tf.measurements:
        raise RtgateError(f"name a measurement with --measurement ({', '.join(tf.measurements)})")
    sys.stdout.write(args_text(tf.measurements[name], args.duration, args.all))
    return 0
