# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate's entry: bin/rtgate (the installed command) and `python -m rtgate` call main(). Ctrl-C is
taken over before anything heavy is imported (by bin/rtgate's first statements, else by this module's):
a Ctrl-C in the first instants ends rtgate with one line and exit 130, never a KeyboardInterrupt
traceback. cli.main() then guards the rest."""

import gc
import os
import signal
import sys


def _interrupted_while_starting(signum: int, frame: object) -> None:
    os.write(2, b"rtgate: interrupted\n")
    os._exit(130)  # cli.EXIT_INTERRUPTED, not imported yet


_AT_START = signal.getsignal(signal.SIGINT)
if getattr(_AT_START, "rtgate_start_guard", False):  # bin/rtgate's guard, from its first statement
    _AT_START = signal.default_int_handler
elif _AT_START is signal.default_int_handler:  # an ignored SIGINT (a background job) stays ignored
    signal.signal(signal.SIGINT, _interrupted_while_starting)

from rtgate.cli import main as cli_main  # noqa: E402  (after the handler, on purpose)


def main() -> int:
    try:
        signal.signal(signal.SIGINT, _AT_START)  # from here cli.main()'s own guard catches a Ctrl-C
        return cli_main()
    except KeyboardInterrupt:  # in the instants before that guard, or in its own except clauses
        os.write(2, b"rtgate: interrupted\n")
        return 130
    finally:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # done: a Ctrl-C now cannot interrupt the exit
        # Every output is written and closed: the interpreter's exit need not search the ~300 modules'
        # objects for reference cycles (~20 ms of CPU, measured, after every command and every run).
        gc.freeze()


if __name__ == "__main__":
    sys.exit(main())
