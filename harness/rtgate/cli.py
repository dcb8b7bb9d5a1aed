# SPDX-License-Identifier: GPL-2.0-or-later
"""The rtgate command: one module per subcommand under rtgate.commands."""

from __future__ import annotations

# Only what main() needs before its guard: a Ctrl-C while the commands are imported (the first
# ~0.15 s) is then caught there like any other, never a traceback.
import argparse
import os
import signal
import sys
import traceback
from types import ModuleType

from rtgate import __version__
from rtgate.errors import RtgateError

EXIT_USAGE = 2  # usage or input error: no verdict
EXIT_INTERNAL = 2  # a bug in rtgate: no verdict either, never 0 (pass) or 1 (a gate failed)
EXIT_INTERRUPTED = 130  # Ctrl-C outside a measurement (a measurement reports what it measured)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"rtgate: error: {message}\n")


def commands() -> tuple[ModuleType, ...]:
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

    return (run, check, show, validate, doctor, history, plot, report, estimate, export, lava, lab, fuego)


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
    for command in commands():
        command.register(sub)
    return parser


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def main(argv: list[str] | None = None) -> int:
    try:
        try:
            args = build_parser().parse_args(argv)
            return int(args.handler(args))
        finally:
            _ending()
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
        at = f" at {os.path.basename(where.filename)}:{where.lineno}" if where else ""
        print(
            f"rtgate: internal error (please report it, with RTGATE_DEBUG=1 for the traceback): "
            f"{type(e).__name__}{at}: {_one_line(str(e))[:300]}",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _ending() -> None:
    """After a run that was asked to stop, rtgate is on its way out with its report written: a second
    stop signal (a CI runner's repeated SIGTERM) must not turn the verdict's exit status into 143."""
    stop = sys.modules.get("rtgate.measure.stop")
    if stop is None or not stop.STOP.requested:
        return
    for s in stop.STOP_SIGNALS:
        if signal.getsignal(s) in (signal.SIG_DFL, signal.default_int_handler):
            signal.signal(s, signal.SIG_IGN)


if __name__ == "__main__":
    sys.exit(main())
