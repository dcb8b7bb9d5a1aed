# SPDX-License-Identifier: GPL-2.0-or-later
"""Real runs for the history tests and benchmarks: rtgate-sampler on one CPU, optionally under an
injected latency of known size (a SCHED_FIFO 99 thread pinned to the sampler's CPU, busy for D us
every P ms), so a 'regression' is known by construction."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from machine_lock import machine_to_itself

# Each busy window starts at a random point of its period: a window at a fixed phase against the
# sampler's wake-up grid (5 ms against 1 ms) delays the same wake-up offsets all run long, so one
# run's max fell anywhere from 1 to 2 ms at 2 ms busy, and a 200 us window hit no wake-up at all
# in four runs of six. A random phase gives every wake-up the same chance: busy / period.
SPIN = """
import os, random, sys, time
cpu, busy, period = int(sys.argv[1]), float(sys.argv[2]) / 1e6, float(sys.argv[3]) / 1e3
os.sched_setaffinity(0, {cpu})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(99))
print("ready", flush=True)
parent = os.getppid()
slot = time.monotonic()
while os.getppid() == parent:  # never outlive the test that started it
    due = slot + random.uniform(0.0, max(0.0, period - busy))
    slot += period
    pause = due - time.monotonic()
    if pause > 0:
        time.sleep(pause)
    start = time.monotonic()
    while time.monotonic() - start < busy:
        pass
"""


@contextmanager
def injected_latency(cpu: int, busy_us: float, period_ms: float) -> Iterator[None]:
    """Steal the CPU for busy_us every period_ms at SCHED_FIFO 99 while the block runs, with the machine to
    itself (machine_lock.py)."""
    with machine_to_itself("injected latency"):
        yield from _injected_latency(cpu, busy_us, period_ms)


def _injected_latency(cpu: int, busy_us: float, period_ms: float) -> Iterator[None]:
    p = subprocess.Popen(
        [sys.executable, "-c", SPIN, str(cpu), str(busy_us), str(period_ms)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        yield
    finally:
        p.kill()  # our own child, by its handle
        p.wait()


def sampler_run(
    sampler: str, out: Path, seconds: int = 3, cpu: int = 1, threads: int = 1, extra: tuple[str, ...] = ()
) -> Path:
    """One rtgate-sampler run pinned to `cpu` (all threads on it), results as JSON."""
    argv = [
        sampler,
        "-t",
        str(threads),
        "-a",
        str(cpu),
        "-p",
        "80",
        "-m",
        "-i",
        "1000",
        "-D",
        f"{int(seconds)}s",
        "-q",
        f"--json={out}",
        *extra,
    ]
    r = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=seconds * 20 + 60)
    if r.returncode != 0:
        raise RuntimeError(f"{argv}: exit {r.returncode}: {r.stderr}")
    return out


def measured_cpu(priority: int = 80) -> int:
    """The last CPU no other real-time task competes for at the sampler's priority: a shared CI
    runner's real-time jobs hold a CPU of their own, and a known injection measured beside one drowns
    in its stalls (rtgate itself names such a task as the likely cause)."""
    from rtgate.measure.engine_check import free_cpu
    from rtgate.measure.runner import find_sampler

    return free_cpu(find_sampler(), priority)
