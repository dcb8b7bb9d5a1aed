# SPDX-License-Identifier: GPL-2.0-or-later
"""Subcommands: each module has register(subparsers) and a handler set on its parser.

The table below is all the CLI needs to list the commands: a command's module (and what it
imports: numpy, matplotlib, jinja2, psycopg...) loads only when that command runs.
"""

from __future__ import annotations

import argparse

# name -> one-line help; the module is rtgate.commands.<name>. Order: as `rtgate --help` lists them.
COMMANDS: dict[str, str] = {
    "run": "run the measurements of a threshold file and evaluate its gates",
    "check": "evaluate results files against a threshold file",
    "show": "print the figures of results files",
    "validate": "check threshold files",
    "doctor": "check this system before measuring",
    "history": "store results across kernel releases and find regressions",
    "plot": "plot results: histogram and latency over time (PNG)",
    "report": "write a self-contained HTML report (verdicts, plots, trend)",
    "estimate": "extreme-value estimate of the latency per hour (not a gate)",
    "export": "export verdicts and figures for other systems",
    "lava": "LAVA: compile gates for boards, render jobs, read results back",
    "lab": "submit one LAVA job per board of a lab file, follow them, gate the results",
    "fuego": "Fuego: compile gates for Benchmark.rtgate, generate its criteria",
}


def add_command(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:  # type: ignore[type-arg]
    """The parser of command `name`, with the help text declared in COMMANDS."""
    parser: argparse.ArgumentParser = sub.add_parser(name, help=COMMANDS[name])
    return parser


THRESHOLDS_HELP = "threshold file: a path, or the name of a shipped one (e.g. default)"


def add_thresholds(p: argparse.ArgumentParser, help: str = THRESHOLDS_HELP, many: bool = False) -> None:
    """The THRESHOLDS argument (every command takes a path or a shipped name)."""
    p.add_argument("thresholds", nargs="+" if many else None, metavar="THRESHOLDS", help=help)


def add_results(p: argparse.ArgumentParser) -> None:
    """The [MEASUREMENT=]RESULTS arguments of the commands that judge existing results."""
    p.add_argument(
        "results",
        nargs="+",
        metavar="[MEASUREMENT=]RESULTS",
        help="results file (any format rtgate reads), prefixed NAME= with its measurement when that is not clear",
    )
