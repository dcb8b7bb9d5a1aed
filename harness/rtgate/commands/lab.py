# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate lab: gate a kernel on a lab of boards through a LAVA server, in one command."""

from __future__ import annotations

import argparse
import sys

from rtgate.commands import add_command
from rtgate.commands.common import add_report_options, parse_seconds, report
from rtgate.core.thresholds import ThresholdFile
from rtgate.lava.client import LavaServer
from rtgate.lava.lab import board_runs, load_lab, record_history, run_lab
from rtgate.lava.results import run_durations
from rtgate.safe_io import check_output_file


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "lab")
    p.add_argument("lab", metavar="LAB", help="the lab file (YAML: boards with device type, thresholds, images)")
    p.add_argument(
        "--identity",
        metavar="NAME",
        help="the LAVA server and token of this lavacli identity (lavacli.yaml); "
        "default: RTGATE_LAVA_URL and RTGATE_LAVA_TOKEN",
    )
    p.add_argument(
        "--kernel-release",
        metavar="RELEASE",
        help="the kernel under test, for the history (default: the lab file's, else each board's boot log)",
    )
    p.add_argument("--history", metavar="DB", help="add one history run per board and measurement to this database")
    p.add_argument(
        "--timeout",
        type=parse_seconds,
        metavar="TIME",
        help="a deadline for the whole command, however slowly LAVA answers: jobs still running then are "
        "cancelled within 5 s more; gates they did not record are ERROR",
    )
    p.add_argument("--poll", type=parse_seconds, default=5, metavar="TIME", help="how often to ask LAVA (default 5s)")
    p.add_argument("--dry-run", action="store_true", help="check the lab file and render every job; submit nothing")
    add_report_options(p)
    p.set_defaults(handler=handle_lab)


def handle_lab(args: argparse.Namespace) -> int:
    lab = load_lab(args.lab)
    if args.dry_run:
        from rtgate.lava.job import render_job

        for board in lab.boards:
            render_job(board.thresholds, board.options)
            print(
                f"rtgate lab: {board.name}: {board.options.device_type}, {board.thresholds.path}, "
                f"measurements {', '.join(board.measurements)}: job renders"
            )
        return 0
    check_outputs(args)
    server = LavaServer.from_identity(args.identity) if args.identity else LavaServer.from_environment()

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    progress(f"rtgate lab: {lab.name}: {len(lab.boards)} boards on {server.url}")
    lost: list[str] = []  # a server given up, a history not written: the run is incomplete (exit 2)
    runs = run_lab(lab, server, progress, poll_s=float(args.poll), timeout_s=args.timeout, lost=lost)
    verdicts = [v for r in runs for v in r.verdicts]
    if args.history:
        try:
            added = record_history(args.history, runs, lab, server, args.kernel_release)
        except Exception as e:  # the database is another module's: say so, and still write the reports
            lost.append(f"history {args.history}: the runs were not added: {e}")
        else:
            progress(f"rtgate lab: {added} history runs added to {args.history}")
    files = [lab.path, *dict.fromkeys(b.thresholds.path for b in lab.boards)]
    shown = ThresholdFile(
        path=lab.path,
        platform=lab.name,
        description=f"LAVA lab {lab.name}",
        measurements={},
        files=files,
        allow_inconclusive=False,
    )
    measured = board_runs(runs)
    return report(shown, verdicts, args, run_durations(verdicts, measured), runs=measured, lost=lost)


def check_outputs(args: argparse.Namespace) -> None:
    """The reports and the history are checked before any job is submitted: a wrong path fails now, not
    after the boards have run."""
    from rtgate.commands.run import check_history
    from rtgate.history.backend import is_postgres_url

    for output in (args.junit, args.json, args.history):
        if output and not is_postgres_url(output):
            check_output_file(output)
    if args.history:
        check_history(args.history)
