# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate's entry point: the installed `rtgate` command and `python -m rtgate` call main(). Ctrl-C is
taken over by this module's first statements, before anything else of rtgate is imported: a Ctrl-C in
the first instants ends rtgate with one line and exit 130, never a KeyboardInterrupt traceback.
cli.main() then guards the rest. What runs before this module (CPython's start-up, the installer's
entry-point script with its `import re`) is not rtgate's to guard."""

import _signal  # type: ignore[import-not-found]  # the C module: `signal` would import enum and functools first
import os


def _interrupted_while_starting(signum: int, frame: object) -> None:
    os.write(2, b"rtgate: interrupted\n")
    os._exit(130)  # cli.EXIT_INTERRUPTED, not imported yet


_AT_START = _signal.getsignal(_signal.SIGINT)
if _AT_START is _signal.default_int_handler:  # an ignored SIGINT (a background job) stays ignored
    _signal.signal(_signal.SIGINT, _interrupted_while_starting)

import gc  # noqa: E402  (after the handler, on purpose)
import sys  # noqa: E402

from rtgate.cli import main as cli_main  # noqa: E402


def _started(collect: bool) -> None:
    """The command is imported and its options parsed: what start-up made (modules, classes, the parser)
    lives as long as rtgate. It is moved out of the collector's sight, and collecting resumes."""
    gc.freeze()
    if collect:
        gc.enable()


def main() -> int:
    # No search for reference cycles while the command's modules are imported: it found none worth
    # freeing and cost ~5 ms of CPU in every start (measured, `rtgate run`'s ~100,000 objects).
    collect = gc.isenabled()
    gc.disable()
    try:
        _signal.signal(_signal.SIGINT, _AT_START)  # from here cli.main()'s own guard catches a Ctrl-C
        return cli_main(started=lambda: _started(collect), whole_process=True)
    except KeyboardInterrupt:  # in the instants before that guard, or in its own except clauses
        os.write(2, b"rtgate: interrupted\n")
        return 130
    finally:
        try:
            if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
                _signal.signal(_signal.SIGINT, _signal.SIG_IGN)  # done: a Ctrl-C now cannot interrupt the exit
        except KeyboardInterrupt:  # it came as the command was done: the command's result stands
            _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
        # Every output is written and closed: the interpreter's exit need not search the ~300 modules'
        # objects for reference cycles (~20 ms of CPU, measured, after every command and every run).
        gc.freeze()


if __name__ == "__main__":
    sys.exit(main())
