# SPDX-License-Identifier: GPL-2.0-or-later
"""The rtgate console script. Its first statements take Ctrl-C over, before anything heavy is imported:
a Ctrl-C in the first instants (importing the commands takes ~0.15 s) ends rtgate with one line and
exit 130, never a KeyboardInterrupt traceback. cli.main() then guards the rest."""

import os
import signal
import sys


def _interrupted_while_starting(signum: int, frame: object) -> None:
    os.write(2, b"rtgate: interrupted\n")
    os._exit(130)  # cli.EXIT_INTERRUPTED, not imported yet


_AT_START = signal.getsignal(signal.SIGINT)
if _AT_START is signal.default_int_handler:  # an ignored SIGINT (a background job) stays ignored
    signal.signal(signal.SIGINT, _interrupted_while_starting)

from rtgate.cli import main as cli_main  # noqa: E402  (after the handler, on purpose)


def main() -> int:
    signal.signal(signal.SIGINT, _AT_START)  # from here cli.main()'s own guard catches a Ctrl-C
    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
