"""The rtgate command: one module per subcommand under rtgate.commands."""

from __future__ import annotations

import argparse
import sys

from rtgate import __version__
from rtgate.commands import check, doctor, estimate, export, fuego, history, lab, lava, plot, report, run, show, validate
from rtgate.errors import RtgateError

COMMANDS = (run, check, show, validate, doctor, history, plot, report, estimate, export, lava, lab, fuego)

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"rtgate: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rtgate", description="Real-time latency gates for kernel CI. Exit status: "
                     "0 all gates pass, 1 a gate failed, 2 usage or input error, 3 inconclusive.")
    parser.add_argument("--version", action="version", version=f"rtgate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except RtgateError as e:
        print(f"rtgate: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
