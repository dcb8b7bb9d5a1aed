# SPDX-License-Identifier: GPL-2.0-or-later
"""The rtgate command: one module per subcommand under rtgate.commands."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path

from rtgate import __version__
from rtgate.commands import (
    check,
    doctor,
    estimate,
    export,
    fuego,
    history,
    lab,
    lava,
    plot,
    report,
    run,
    show,
    validate,
)
from rtgate.errors import RtgateError

COMMANDS = (run, check, show, validate, doctor, history, plot, report, estimate, export, lava, lab, fuego)

EXIT_USAGE = 2  # usage or input error: no verdict
EXIT_INTERNAL = 2  # a bug in rtgate: no verdict either, never 0 (pass) or 1 (a gate failed)
EXIT_INTERRUPTED = 130  # Ctrl-C outside a measurement (a measurement reports what it measured)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"rtgate: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rtgate",
        description="Real-time latency gates for kernel CI. Exit status: "
        "0 all gates pass, 1 a gate failed, 2 usage or input error (or an internal error, "
        "reported as one), 3 inconclusive.",
    )
    parser.add_argument("--version", action="version", version=f"rtgate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for command in COMMANDS:
        command.register(sub)
    return parser


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except RtgateError as e:
        print(f"rtgate: error: {_one_line(str(e))}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("rtgate: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:
        if os.environ.get("RTGATE_DEBUG"):
            traceback.print_exc()
        where = traceback.extract_tb(e.__traceback__)[-1] if e.__traceback__ else None
        at = f" at {Path(where.filename).name}:{where.lineno}" if where else ""
        print(
            f"rtgate: internal error (please report it, with RTGATE_DEBUG=1 for the traceback): "
            f"{type(e).__name__}{at}: {_one_line(str(e))[:300]}",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
