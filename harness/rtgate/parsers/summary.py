"""cyclictest's T: status lines: -q end summary or the live screen (ANSI cursor codes and all)."""

from __future__ import annotations

import re
from pathlib import Path

from rtgate.core.model import RunResult, ThreadResult
from rtgate.core.setup import MeasuredSetup
from rtgate.errors import ResultsError
from rtgate.parsers.common import ANSI, check_unit, numbered_lines
from rtgate.parsers.periods import derive_missed

_T = re.compile(r"^T:\s*(\d+)\s+\(\s*(\d+)\)\s+P:\s*(\d+)\s+I:\s*(\d+)\s+C:\s*(\d+)\s+"
                r"Min:\s*(\d+)\s+Act:\s*(\d+)\s+Avg:\s*(\d+)\s+Max:\s*(\d+)(?:\s+SMI:\s*\d+)?\s*$")


_POLICY = re.compile(r"^policy: ([a-z/]+):")


def looks_like(head: str) -> bool:
    return any(ANSI.sub("", line).startswith("T:") for line in head.splitlines())


def parse(path: Path, unit: str = "us") -> RunResult:
    """The last line printed for each thread wins: live output repeats them."""
    check_unit(unit, path)
    latest: dict[int, ThreadResult] = {}
    policy = None
    for number, raw in numbered_lines(path):
        line = ANSI.sub("", raw).strip()
        pm = _POLICY.match(line)
        if pm:
            policy = pm.group(1).split("/")[-1]  # "fifo/other": cyclictest fell back to SCHED_OTHER
        if not line.startswith("T:"):
            continue
        m = _T.match(line)
        if not m:
            raise ResultsError(f"malformed T: line {line[:80]!r}", path=str(path), line=number)
        idx, _tid, prio, interval, cycles, tmin, _act, avg, tmax = (int(g) for g in m.groups())
        latest[idx] = ThreadResult(
            index=idx, cycles=cycles,
            min=tmin if cycles else None, max=tmax if cycles else None, avg=avg if cycles else None,
            priority=prio, interval_us=interval, policy=policy)
    if not latest:
        raise ResultsError("no T: lines", path=str(path))
    threads = [latest[i] for i in sorted(latest)]
    run = RunResult(source=str(path), format="summary-text", unit=unit, threads=threads)
    run.measured_setup = MeasuredSetup(source="T: lines", interval_us=threads[0].interval_us, policy=policy,
                                       priority=threads[0].priority, threads=len(threads))
    derive_missed(run, run.measured_setup, "T: lines")
    return run
