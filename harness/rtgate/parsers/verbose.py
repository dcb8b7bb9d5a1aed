# SPDX-License-Identifier: GPL-2.0-or-later
"""cyclictest -v samples (thread:cycle:value), read as a stream in constant memory.

cyclictest prints `Thread N Interval: X` after adding -d to the interval (rt-tests' cyclictest.c: `interval
+= distance` comes before the printf, and not at all with -h): X is thread N+1's interval, so
thread N's is X - d. Two threads show d (X1 - X0); one thread's header leaves it open (the default
-d is 500): its interval is then unknown, unless the `T:` line that -q prints at the end says it.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import pairwise
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


@dataclass
class _Read:
    """What the lines of one -v output said: each thread's samples, the headers, the -q T: lines."""

    threads: dict[int, _Thread] = field(default_factory=dict)
    intervals: dict[int, int] = field(default_factory=dict)  # the X of each 'Thread N Interval: X'
    header_lines: dict[int, int] = field(default_factory=dict)
    summaries: dict[int, tuple[ThreadResult, int]] = field(default_factory=dict)  # -q: the T: line each ends with


def _read(path: Path) -> _Read:
    r = _Read()
    threads, intervals, header_lines, summaries = r.threads, r.intervals, r.header_lines, r.summaries
    for number, line in numbered_lines(path):
        f = _FAST.fullmatch(line)
        if f and not summaries:  # the common line, read with the fewest steps: ASCII digits of at most 18
            idx, cycle, value = int(f.group(1)), int(f.group(2)), int(f.group(3))
            t = threads.get(idx)
            if t is not None and cycle == t.next_cycle:
                t.next_cycle = cycle + 1
                t.values[value] += 1
                continue
        m = _SAMPLE.match(line)
        if not m:
            stripped = line.strip()
            if stripped.startswith("T:") and threads:
                _summary(path, number, stripped, summaries)
                continue
            if _HEADER.match(stripped):
                hm = re.match(r"Thread (\d+) Interval: (\d+)", stripped)
                if hm:
                    announced = whole(hm.group(1), path, number, "thread")
                    intervals[announced] = whole(hm.group(2), path, number, "interval")
                    header_lines.setdefault(announced, number)
                continue
            raise ResultsError(f"not a verbose sample: {line[:80]!r}", path=str(path), line=number)
        if summaries:
            raise ResultsError("a sample after the T: summary lines", path=str(path), line=number)
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
    return r


def parse(path: Path, unit: str = "us") -> RunResult:
    check_unit(unit, path)
    r = _read(path)
    threads, intervals, header_lines, summaries = r.threads, r.intervals, r.header_lines, r.summaries
    if not threads:
        raise ResultsError("no samples", path=str(path))
    for idx in sorted(set(intervals) - set(threads)):
        raise ResultsError(
            f"thread {idx} is announced but has no samples (output cut, or lines lost)",
            path=str(path),
            line=header_lines[idx],
        )
    own = _own_intervals(path, intervals, header_lines)
    result = []
    for idx in sorted(threads):
        t = threads[idx]
        cycles = t.next_cycle
        total = sum(v * c for v, c in t.values.items())
        told = summaries.get(idx)
        interval = told[0].interval_us if told else own.get(idx)
        result.append(
            ThreadResult(
                index=idx,
                cycles=cycles,
                min=min(t.values),
                max=max(t.values),
                avg=total / cycles,
                interval_us=interval,
                priority=told[0].priority if told else None,
                histogram=Histogram(unit=unit, buckets=merge_counts(t.values.items())),
                missed_derivation="-v samples do not say how long the run was: missed periods cannot be known",
            )
        )
    run = RunResult(source=str(path), format="verbose-text", unit=unit, threads=result)
    check_run(run, line_locator({}))
    if summaries:
        run.threads = result = _check_summaries(path, result, summaries, own)
        check_run(run, line_locator({}))
    if intervals or summaries:
        run.measured_setup = MeasuredSetup(
            source="-v headers" if not summaries else "-v samples and T: lines",
            interval_us=result[0].interval_us,
            priority=result[0].priority,
            threads=len(result),
            announced_intervals=dict(intervals),
        )
    return run


def _summary(path: Path, number: int, line: str, summaries: dict[int, tuple[ThreadResult, int]]) -> None:
    """One T: line of -v -q's end: the thread's interval and priority, and its figures to hold the samples to."""
    from rtgate.parsers.summary import read_t_line  # only -v -q output has them

    t = read_t_line(path, number, line)
    if t.index in summaries:
        raise ResultsError(f"a second T: line for thread {t.index}", path=str(path), line=number)
    summaries[t.index] = (t, number)


def _own_intervals(path: Path, announced: dict[int, int], lines: dict[int, int]) -> dict[int, int]:
    """Each thread's interval from the headers (X - d, d = X1 - X0), when two threads show d."""
    if len(announced) < 2:
        return {}
    order = sorted(announced)
    d = announced[order[1]] - announced[order[0]]
    for a, b in pairwise(order):
        if announced[b] - announced[a] != d * (b - a) or d < 0:
            raise ResultsError(
                f"thread {b}'s interval {announced[b]} does not follow thread {a}'s {announced[a]} "
                f"by one distance ({d} us a thread): not one cyclictest run's headers",
                path=str(path),
                line=lines[b],
            )
    return {i: x - d for i, x in announced.items()}


def _check_summaries(
    path: Path, threads: list[ThreadResult], summaries: dict[int, tuple[ThreadResult, int]], own: dict[int, int]
) -> list[ThreadResult]:
    """The T: line printed at the end says what the samples above it say, or the file was edited or cut.
    cyclictest stops printing samples when the run ends, so a thread's T: line may count a few cycles more
    than were printed (ct-vq-t2-l100.stdout: C: 75 after 67 samples): that thread is then judged by its T:
    line alone (cycles, min, max, avg; no histogram), which covers the unprinted samples too."""
    by_index = {t.index: t for t in threads}
    out = list(threads)
    for idx, (s, number) in sorted(summaries.items()):
        t = by_index.get(idx)
        if t is None:
            raise ResultsError(f"a T: line for thread {idx}, which has no samples", path=str(path), line=number)
        assert t.min is not None and t.max is not None and s.min is not None and s.max is not None
        if s.cycles == t.cycles:
            problems = [f"{n} {said} but the samples give {got}" for n, said, got in (("Min:", s.min, t.min),
                        ("Max:", s.max, t.max)) if said != got]  # fmt: skip
            if s.avg is not None and t.avg is not None and not s.avg <= t.avg < s.avg + 1:
                problems.append(f"Avg: {s.avg:g} but the samples average {t.avg:.2f}")
        elif s.cycles > t.cycles:
            problems = [f"{n} {said} but a printed sample is {got}" for n, said, got, bad in (("Min:", s.min, t.min,
                        s.min > t.min), ("Max:", s.max, t.max, s.max < t.max)) if bad]  # fmt: skip
            out[out.index(t)] = dataclasses.replace(
                t,
                cycles=s.cycles,
                min=s.min,
                max=s.max,
                avg=s.avg,
                histogram=None,
                missed_derivation=f"{t.missed_derivation}; the samples stop {s.cycles - t.cycles} cycles before "
                f"its T: line's C: {s.cycles} (cyclictest stops printing them as the run ends): judged by its T: line",
            )
        else:
            problems = [f"C: {s.cycles} but {t.cycles} samples are printed"]
        if idx in own and s.interval_us != own[idx]:
            problems.append(f"I: {s.interval_us} but the -v headers give {own[idx]}")
        if problems:
            raise ResultsError(f"thread {idx}: " + "; ".join(problems), path=str(path), line=number)
    missing = sorted(set(by_index) - set(summaries))
    if summaries and missing:
        raise ResultsError(f"thread {missing[0]} has samples but no T: line (output cut?)", path=str(path))
    return out
