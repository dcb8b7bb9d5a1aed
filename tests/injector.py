# SPDX-License-Identifier: GPL-2.0-or-later
"""A latency of known size and rate: a SCHED_FIFO thread above the measured one, pinned to its CPU,
busy for BUSY_US every EVERY_MS. It records each busy window (CLOCK_MONOTONIC ns) so the truth about
the periods it took away is known independently of cyclictest and of rtgate.

As a script: injector.py CPU PRIORITY BUSY_US EVERY_MS SECONDS LOG_JSON (always run it under `timeout`).
From tests: `with inject(...) as windows:` starts it, and stops it by PID in a finally.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from machine_lock import machine_to_itself


def main(argv: list[str]) -> int:
    cpu, prio, busy_us, every_ms, seconds = int(argv[0]), int(argv[1]), int(argv[2]), int(argv[3]), float(argv[4])
    log = Path(argv[5])
    os.sched_setaffinity(0, {cpu})
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(prio))
    windows: list[tuple[int, int]] = []
    stop = False

    def _stop(*_: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    start = time.monotonic_ns()
    end = start + int(seconds * 1e9)
    nxt = start + every_ms * 1_000_000 // 2
    try:
        while not stop and nxt < end:
            delay = (nxt - time.monotonic_ns()) / 1e9
            if delay > 0:
                time.sleep(delay)
            a = time.monotonic_ns()
            until = a + busy_us * 1000
            while time.monotonic_ns() < until:
                pass
            windows.append((a, time.monotonic_ns()))
            nxt += every_ms * 1_000_000
    finally:
        log.write_text(
            json.dumps({"cpu": cpu, "priority": prio, "busy_us": busy_us, "every_ms": every_ms, "windows_ns": windows})
            + "\n"
        )
    return 0


@contextlib.contextmanager
def inject(
    cpu: int, priority: int, busy_us: int, every_ms: int, seconds: float, log: Path, exclusive: bool = True
) -> Iterator[Path]:
    """Run the injector for at most `seconds` (+5 s hard bound); the log is complete after the block. The block
    has the machine to itself (machine_lock.py) unless `exclusive` is False: where the caller already holds the
    machine's measurement lock in this process, e.g. inside a pytest plugin window."""
    with machine_to_itself("injector") if exclusive else contextlib.nullcontext():
        yield from _inject(cpu, priority, busy_us, every_ms, seconds, log)


def _inject(cpu: int, priority: int, busy_us: int, every_ms: int, seconds: float, log: Path) -> Iterator[Path]:
    proc = subprocess.Popen(
        [
            "timeout",
            "-s",
            "KILL",
            str(int(seconds) + 5),
            sys.executable,
            __file__,
            str(cpu),
            str(priority),
            str(busy_us),
            str(every_ms),
            str(seconds),
            str(log),
        ]
    )
    try:
        time.sleep(0.2)  # let it set its policy before the measurement starts
        yield log
        proc.wait(timeout=seconds + 10)
    finally:
        if proc.poll() is None:
            proc.kill()  # by PID: a stray SCHED_FIFO busy loop stalls everyone
            proc.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
