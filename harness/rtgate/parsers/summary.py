# SPDX-License-Identifier: GPL-2.0-or-later
"""cyclictest's T: status lines: -q end summary or the live screen (ANSI cursor codes and all)."""

from __future__ import annotations

import re
from pathlib import Path

from rtgate.core.model import MeasuredSetup, RunResult, ThreadResult
from rtgate.core.periods import derive_missed
from rtgate.core.validate import check_run
from rtgate.errors import ResultsError
from rtgate.parsers.common import ANSI, MAX_COLUMNS, check_unit, line_locator, numbered_lines, whole

_T = re.compile(
    r"^T:\s*(\d+)\s+\(\s*(\d+)\)\s+P:\s*(\d+)\s+I:\s*(\d+)\s+C:\s*(\d+)\s+"
    r"Min:\s*(\d+)\s+Act:\s*(\d+)\s+Avg:\s*(\d+)\s+Max:\s*(\d+)(?:\s+SMI:\s*\d+)?\s*$"
)


_POLICY = re.compile(r"^policy: ([a-z/]+):")


def looks_like(head: str) -> bool:
    return any(ANSI.sub("", line).startswith("T:") for line in head.splitlines())


def read_t_line(path: Path, number: int, line: str) -> ThreadResult:
    """One T: line as a thread's figures (-v -q ends with them too: parsers/verbose.py)."""
    m = _T.match(line)
    if not m:
        raise ResultsError(f"malformed T: line {line[:80]!r}", path=str(path), line=number)
    idx, _tid, prio, interval, cycles, tmin, _act, avg, tmax = (whole(g, path, number, "T: field") for g in m.groups())
    if idx >= MAX_COLUMNS:
        raise ResultsError(f"thread {idx}: more threads than cyclictest runs", path=str(path), line=number)
    return ThreadResult(
        index=idx,
        cycles=cycles,
        min=tmin if cycles else None,
        max=tmax if cycles else None,
        avg=avg if cycles else None,
        priority=prio,
        interval_us=interval,
    )


def parse(path: Path, unit: str = "us") -> RunResult:
    """The last line printed for each thread wins: live output repeats them."""
    check_unit(unit, path)
    latest: dict[int, ThreadResult] = {}
    policy = None
    where: dict[int, int] = {}
    for number, raw in numbered_lines(path):
        line = ANSI.sub("", raw).strip()
        pm = _POLICY.match(line)
        if pm:
            policy = pm.group(1).split("/")[-1]  # "fifo/other": cyclictest fell back to SCHED_OTHER
        if not line.startswith("T:"):
            continue
        t = read_t_line(path, number, line)
        t.policy = policy
        idx = t.index
        if idx in latest:
            _check_progress(path, number, latest[idx], t)
        latest[idx] = t
        where[idx] = number
    if not latest:
        raise ResultsError("no T: lines", path=str(path))
    order = sorted(latest)
    threads = [latest[i] for i in order]
    run = RunResult(source=str(path), format="summary-text", unit=unit, threads=threads)
    check_run(run, line_locator({}, {pos: where[i] for pos, i in enumerate(order)}))
    run.measured_setup = MeasuredSetup(
        source="T: lines",
        interval_us=threads[0].interval_us,
        policy=policy,
        priority=threads[0].priority,
        threads=len(threads),
    )
    derive_missed(run, run.measured_setup, "T: lines")
    return run


def _check_progress(path: Path, number: int, before: ThreadResult, now: ThreadResult) -> None:
    """Live lines of one thread only move forward: more cycles, a max that never drops, a min that never rises."""
    if now.cycles < before.cycles:
        raise ResultsError(
            f"thread {now.index}: C: went back from {before.cycles} to {now.cycles} "
            "(lines out of order, or two runs in one file)",
            path=str(path),
            line=number,
        )
    if before.cycles and now.max is not None and before.max is not None and now.max < before.max:
        raise ResultsError(
            f"thread {now.index}: Max: dropped from {before.max} to {now.max}", path=str(path), line=number
        )
    if before.cycles and now.min is not None and before.min is not None and now.min > before.min:
        raise ResultsError(f"thread {now.index}: Min: rose from {before.min} to {now.min}", path=str(path), line=number)
