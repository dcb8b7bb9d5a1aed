"""Helpers the benchmark scripts share: run a child, read its CPU time and peak RSS."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from typing import Sequence


def run_measured(argv: Sequence[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system) and peak RSS in KiB of one child run."""
    start = time.monotonic()
    proc = subprocess.Popen(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        err = proc.stderr.read().decode() if proc.stderr else ""
        sys.exit(f"{argv[0]} failed: {err}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def need(tool: str, hint: str) -> str:
    path = shutil.which(tool)
    if not path:
        sys.exit(f"{tool} not found: {hint}")
    return path


def median(values: Sequence[float]) -> float:
    return statistics.median(values)
