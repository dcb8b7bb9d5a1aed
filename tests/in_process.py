# SPDX-License-Identifier: GPL-2.0-or-later
"""The rtgate command run in-process, for tests whose subject is not the process boundary.

rtgate.cli.main with stdout and stderr captured, argparse's exit taken as the exit code, and the current folder
set for the call: what the console script would print and return, with no interpreter started (tests/unit).
Exit codes through the console script, signals and a real process's output stay in tests/system."""

from __future__ import annotations

import io
import os
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def rtgate(*args: str, cwd: Path | None = None) -> Ran:
    from rtgate.cli import main

    out, err = io.StringIO(), io.StringIO()
    here = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as e:  # argparse: usage errors and --help
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
            sys.stdout.flush()
    finally:
        os.chdir(here)
    return Ran(code, out.getvalue(), err.getvalue())
