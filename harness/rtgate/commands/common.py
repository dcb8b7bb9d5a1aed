# SPDX-License-Identifier: GPL-2.0-or-later
"""What several subcommands share: report options and writing the reports."""

from __future__ import annotations

import argparse
import sys

from rtgate.core.gates import Verdict, exit_code
from rtgate.core.model import RunResult
from rtgate.core.thresholds import ThresholdFile, parse_duration
from rtgate.errors import RtgateError
from rtgate.reports.described import describe_runs, environment_document, header_lines
from rtgate.reports.text import summary_table


def add_report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--junit", metavar="FILE", help="write JUnit XML (one testcase per gate and thread)")
    p.add_argument("--json", metavar="FILE", help="write the verdicts as JSON")
    p.add_argument(
        "--allow-inconclusive",
        action="store_true",
        help="do not fail on INCONCLUSIVE gates (too few samples, stopped early)",
    )


def parse_seconds(text: str) -> int:
    try:
        return parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def report(
    tf: ThresholdFile,
    verdicts: list[Verdict],
    args: argparse.Namespace,
    durations: dict[str, float] | None = None,
    extra: dict[str, object] | None = None,
    runs: list[tuple[str, RunResult]] | None = None,
    refused: dict[str, list[dict[str, str]]] | None = None,
) -> int:
    """`runs`: the measurements' results, whose recorded conditions every report shows. `refused` (rtgate run):
    the measurements it did not make, with their preflight warnings; this machine as it is now describes them."""
    allow = bool(args.allow_inconclusive or tf.allow_inconclusive)
    system = None
    measured = {name for name, _ in runs or []}
    unmeasured = {v.measurement: (refused or {}).get(v.measurement) for v in verdicts if v.measurement not in measured}
    if refused is not None and unmeasured:
        from rtgate.measure.environment import capture

        system = capture()
    described = describe_runs(runs or [], unmeasured, system)
    summary = summary_table(tf.platform, verdicts, allow, header_lines(described))
    sys.stdout.write(summary)
    try:
        if args.junit:
            from rtgate.reports.junit import build_junit, write_junit  # junitparser only when asked for

            write_junit(args.junit, build_junit(tf.platform, verdicts, summary, allow, durations, described))
        if args.json:
            from rtgate.reports.verdicts_json import verdicts_document, write_json  # and safe_io's tempfile

            write_json(
                args.json,
                verdicts_document(tf.platform, tf.files, verdicts, allow, extra, environment_document(described)),
            )
    except OSError as e:
        raise RtgateError(f"cannot write report: {e.strerror}", path=e.filename) from e
    return exit_code(verdicts, allow)


def add_compiled_args_command(actions: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register `args` under `rtgate lava` or `rtgate fuego`: both print the same compiled arguments."""
    a = actions.add_parser("args", help="print a measurement's sampler arguments with its --gate options")
    a.add_argument("thresholds", metavar="THRESHOLDS", help="a path, or the name of a shipped threshold file")
    a.add_argument("--measurement", metavar="NAME", help="default: the only measurement")
    a.add_argument("--duration", type=parse_seconds, metavar="TIME")
    a.set_defaults(handler=handle_compiled_args)


def handle_compiled_args(args: argparse.Namespace) -> int:
    """`rtgate lava args` and `rtgate fuego args`: a measurement's sampler arguments with its gates."""
    from rtgate.core.thresholds import find_thresholds, load_thresholds
    from rtgate.lava.job import compiled_args

    tf = load_thresholds(find_thresholds(args.thresholds))
    name = args.measurement or (next(iter(tf.measurements)) if len(tf.measurements) == 1 else None)
    if name is None or name not in tf.measurements:
        raise RtgateError(f"name a measurement with --measurement ({', '.join(tf.measurements)})")
    print(compiled_args(tf.measurements[name], args.duration))
    return 0
