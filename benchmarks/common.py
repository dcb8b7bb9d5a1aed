# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers the benchmark scripts share: run a child, read its CPU time and peak RSS."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence


def _vm_hwm_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_measured(
    argv: Sequence[str], ok: Sequence[int] = (0,), env: dict[str, str] | None = None
) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system) and peak RSS in KiB of one child run, which must
    exit with one of `ok`.

    Peak RSS is the child's own VmHWM, polled: getrusage's ru_maxrss would carry over the
    high-water mark of the forking Python from before exec.
    """
    wall, cpu, peak, status, err = watch_child(argv, env)
    if status not in ok:
        sys.exit(f"{argv[0]} failed: {err}")
    return wall, cpu, peak


def watch_child(argv: Sequence[str], env: dict[str, str] | None = None) -> tuple[float, float, int, int, str]:
    """Wall seconds, CPU seconds, peak RSS (KiB, VmHWM polled), exit status and stderr of one child run."""
    start = time.monotonic()
    proc = subprocess.Popen(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    peak = 0
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        peak = max(peak, _vm_hwm_kib(proc.pid))
        time.sleep(0.02)
    wall = time.monotonic() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    return wall, usage.ru_utime + usage.ru_stime, peak, os.waitstatus_to_exitcode(status), err


def run_timed(
    argv: Sequence[str], ok: Sequence[int] = (0,), env: dict[str, str] | None = None
) -> tuple[float, float, int]:
    """run_measured for short children (a CLI command): peak RSS from GNU time.

    Polling VmHWM misses a child that lives 0.1 s, and the rusage of a child this Python forks
    counts this Python's own pages; GNU time is a small process, so its child's maxrss is the
    child's own. CPU comes from wait4() on GNU time (its waited-for child included), in
    microseconds where GNU time prints hundredths.
    """
    gnu_time = need("/usr/bin/time", "apt-get install time")
    with tempfile.NamedTemporaryFile("r") as out:
        start = time.monotonic()
        proc = subprocess.Popen(
            [gnu_time, "-q", "-o", out.name, "-f", "%x %M", *argv],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert proc.stderr is not None
        err = proc.stderr.read().decode()
        _, _, usage = os.wait4(proc.pid, 0)
        proc.returncode = 0  # reaped here: keep Popen from waiting again
        wall = time.monotonic() - start
        figures = out.read().split()
    if len(figures) != 2 or int(figures[0]) not in ok:
        sys.exit(f"{argv[0]} failed ({' '.join(figures)}): {err}")
    return wall, usage.ru_utime + usage.ru_stime, int(figures[1])


def need(tool: str, hint: str) -> str:
    path = shutil.which(tool)
    if not path:
        sys.exit(f"{tool} not found: {hint}")
    return path


def median(values: Sequence[float]) -> float:
    return statistics.median(values)
