# SPDX-License-Identifier: GPL-2.0-or-later
"""cyclictest -v samples (thread:cycle:value), read as a stream in constant memory."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from rtgate.core.model import Histogram, MeasuredSetup, RunResult, ThreadResult, merge_counts
from rtgate.core.validate import check_run
from rtgate.errors import ResultsError
from rtgate.parsers.common import MAX_COLUMNS, check_unit, line_locator, numbered_lines, whole

_SAMPLE = re.compile(r"^\s*(\d+):\s*(\d+):\s*(\d+)(?:\s+\d+)?\s*$")
_FAST = re.compile(r" *([0-9]{1,4}): *([0-9]{1,18}): *([0-9]{1,18})", re.ASCII)
_HEADER = re.compile(
    r"^(Max CPUs = \d+|Online CPUs = \d+|Thread \d+ Interval: \d+|"
    r"Thread \d+ using cpu \d+\.|Using \d+ cpus\.|#.*|)$"
)


def looks_like(head: str) -> bool:
    lines = [ln for ln in head.splitlines() if ln.strip()]
    return sum(1 for ln in lines[:50] if _SAMPLE.match(ln)) >= max(1, min(10, len(lines) // 2))


class _Thread:
    __slots__ = ("interval", "next_cycle", "values")

    def __init__(self) -> None:
        self.values: Counter[int] = Counter()
        self.next_cycle = 0
        self.interval: int | None = None


def parse(path: Path, unit: str = "us") -> RunResult:
    check_unit(unit, path)
    threads: dict[int, _Thread] = {}
    intervals: dict[int, int] = {}
    header_lines: dict[int, int] = {}
    for number, line in numbered_lines(path):
        f = _FAST.fullmatch(line)
        if f:  # the common line, read with the fewest steps: ASCII digits of at most 18, so no 64-bit check
            idx, cycle, value = int(f.group(1)), int(f.group(2)), int(f.group(3))
            t = threads.get(idx)
            if t is not None and cycle == t.next_cycle:
                t.next_cycle = cycle + 1
                t.values[value] += 1
                continue
        m = _SAMPLE.match(line)
        if not m:
            if _HEADER.match(line.strip()):
                hm = re.match(r"Thread (\d+) Interval: (\d+)", line.strip())
                if hm:
                    announced = whole(hm.group(1), path, number, "thread")
                    intervals[announced] = whole(hm.group(2), path, number, "interval")
                    header_lines.setdefault(announced, number)
                continue
            raise ResultsError(f"not a verbose sample: {line[:80]!r}", path=str(path), line=number)
        idx, cycle, value = (
            whole(m.group(i), path, number, what) for i, what in ((1, "thread"), (2, "cycle"), (3, "latency"))
        )
        if idx >= MAX_COLUMNS:
            raise ResultsError(f"thread {idx}: more threads than cyclictest runs", path=str(path), line=number)
        t = threads.setdefault(idx, _Thread())
        if cycle != t.next_cycle:
            # Lost lines (or -o reduction) hide samples: never evaluate a partial picture.
            raise ResultsError(
                f"thread {idx} jumps from cycle {t.next_cycle - 1} to {cycle}: "
                "samples are missing (lost output or -o reduction)",
                path=str(path),
                line=number,
            )
        t.next_cycle = cycle + 1
        t.values[value] += 1
    if not threads:
        raise ResultsError("no samples", path=str(path))
    for idx in sorted(set(intervals) - set(threads)):
        raise ResultsError(
            f"thread {idx} is announced but has no samples (output cut, or lines lost)",
            path=str(path),
            line=header_lines[idx],
        )
    result = []
    for idx in sorted(threads):
        t = threads[idx]
        cycles = t.next_cycle
        total = sum(v * c for v, c in t.values.items())
        result.append(
            ThreadResult(
                index=idx,
                cycles=cycles,
                min=min(t.values),
                max=max(t.values),
                avg=total / cycles,
                interval_us=intervals.get(idx),
                histogram=Histogram(unit=unit, buckets=merge_counts(t.values.items())),
                missed_derivation="-v samples say neither how long the run was nor (cyclictest prints the next "
                "thread's interval in its header) the exact interval: missed periods cannot be known",
            )
        )
    run = RunResult(source=str(path), format="verbose-text", unit=unit, threads=result)
    check_run(run, line_locator({}))
    if intervals:
        run.measured_setup = MeasuredSetup(
            source="-v headers", interval_us=result[0].interval_us, threads=len(result), verbose_intervals=True
        )
    return run
