# SPDX-License-Identifier: GPL-2.0-or-later
"""cyclictest histogram text (-h/-H, stdout or --histfile), rt-tests 1.x to 2.x."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

from rtgate.core.model import Histogram, RunResult, ThreadResult
from rtgate.core.validate import check_run
from rtgate.errors import ResultsError
from rtgate.parsers.common import ANSI, MAX_COLUMNS, MAX_ROWS, check_unit, line_locator, numbered_lines, whole

_ROW = re.compile(r"^(\d+) (\d+(?:\t\d+)*)\s*$")
_FOOTER = re.compile(r"^# (Total|Min Latencies|Avg Latencies|Max Latencies|Histogram Overflows):((?:\s+\d+)*)\s*$")
_THREAD = re.compile(r"^# Thread (\d+):((?:\s+\d+)*)(?:\s+# (\d+) others)?\s*$")


@dataclass
class _Text:
    """What the lines after '# Histogram' said: the rows, the footer, the overflow cycle lists."""

    path: Path
    rows: list[tuple[int, list[int], int]] = field(default_factory=list)  # (bucket, counts, line)
    footer: dict[str, tuple[list[int], int]] = field(default_factory=dict)  # key -> (values, line)
    cycle_lists: dict[int, list[int]] = field(default_factory=dict)
    cycle_lines: dict[int, int] = field(default_factory=dict)
    in_cycle_list: bool = False

    def error(self, message: str, line: int | None = None) -> ResultsError:
        return ResultsError(message, path=str(self.path), line=line)

    def read(self, number: int, raw: str, line: str) -> None:
        m = _ROW.match(line)
        if m and not self.footer:
            self._row(number, m)
            return
        m = _FOOTER.match(line)
        if m:
            if m.group(1) in self.footer:
                raise self.error(
                    f"a second '# {m.group(1)}:' line (first on line {self.footer[m.group(1)][1]})", number
                )
            self.footer[m.group(1)] = ([whole(x, self.path, number, m.group(1)) for x in m.group(2).split()], number)
            return
        if line.startswith("# Histogram Overflow at cycle number:"):
            self.in_cycle_list = True
            return
        m = _THREAD.match(line)
        if m and self.in_cycle_list:
            thread_no = whole(m.group(1), self.path, number, "thread")
            if thread_no in self.cycle_lists:
                raise self.error(f"a second overflow cycle list for thread {thread_no}", number)
            self.cycle_lists[thread_no] = [whole(x, self.path, number, "cycle") for x in m.group(2).split()]
            self.cycle_lines[thread_no] = number
            return
        if line.startswith("#") and self.footer:
            return  # later cyclictest notes: SMIs, thread ids, break value
        raise self.error(f"unexpected line in histogram: {raw[:80]!r}", number)

    def _row(self, number: int, m: re.Match[str]) -> None:
        index = whole(m.group(1), self.path, number, "bucket")
        if self.rows and index <= self.rows[-1][0]:
            raise self.error(
                f"row {index} comes after row {self.rows[-1][0]}: rows must be strictly increasing", number
            )
        cols = m.group(2).split("\t")
        if len(cols) > MAX_COLUMNS or len(self.rows) >= MAX_ROWS:
            raise self.error(
                f"more than {MAX_COLUMNS} columns or {MAX_ROWS} rows: not a histogram cyclictest writes", number
            )
        self.rows.append((index, [whole(x, self.path, number, "count") for x in cols], number))

    def threads_count(self) -> int:
        """The number of threads, once every footer line is there with as many columns."""
        for key in ("Min Latencies", "Avg Latencies", "Max Latencies", "Histogram Overflows"):
            if key not in self.footer:
                raise self.error(f"truncated: no '# {key}:' line")
        n = len(self.footer["Min Latencies"][0])
        if n == 0:
            raise self.error("no threads in '# Min Latencies:'", self.footer["Min Latencies"][1])
        for key in ("Avg Latencies", "Max Latencies", "Histogram Overflows"):
            values, line_no = self.footer[key]
            if len(values) not in (n, n + 1):
                raise self.error(f"'# {key}:' has {len(values)} columns for {n} threads", line_no)
        return n

    def counts(self, n: int) -> list[list[tuple[int, int]]]:
        """Per thread, its non-empty buckets."""
        counts: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        for index, cols, line_no in self.rows:
            if len(cols) not in (n, n + 1):
                raise self.error(f"row has {len(cols)} columns for {n} threads", line_no)
            for j in range(n):
                if cols[j]:
                    counts[j].append((index, cols[j]))
        return counts

    def threads(self, n: int, unit: str) -> list[ThreadResult]:
        counts = self.counts(n)
        range_end = self.rows[-1][0] + 1 if self.rows else 0
        mins, avgs, maxs, overflows = (
            self.footer[k][0] for k in ("Min Latencies", "Avg Latencies", "Max Latencies", "Histogram Overflows")
        )
        totals = self.footer.get("Total")
        threads = []
        for j in range(n):
            in_range = sum(c for _, c in counts[j])
            if totals and len(totals[0]) > j and totals[0][j] != in_range:
                raise self.error(f"thread {j}: '# Total:' says {totals[0][j]} but the rows hold {in_range}", totals[1])
            cycles = in_range + overflows[j]
            hist = Histogram(
                unit=unit, buckets=[(b, b + 1, c) for b, c in counts[j]], overflow=overflows[j], range_end=range_end
            )
            threads.append(
                ThreadResult(
                    index=j,
                    cycles=cycles,
                    min=mins[j] if cycles else None,
                    max=maxs[j] if cycles else None,
                    avg=avgs[j] if cycles else None,
                    histogram=hist,
                    missed_derivation=(
                        "histogram text says neither the interval nor how long the run was: "
                        "missed periods cannot be known"
                    ),
                )
            )
        return threads

    def lines(self, n: int) -> dict[tuple[int, str], int]:
        """For check_run: the line each thread's field was read from."""
        lines = {
            (j, key): self.footer[label][1]
            for j in range(n)
            for key, label in (
                ("min", "Min Latencies"),
                ("avg", "Avg Latencies"),
                ("max", "Max Latencies"),
                ("cycles", "Histogram Overflows"),
                ("histogram", "Histogram Overflows"),
            )
        }
        if "Total" in self.footer:
            lines.update({(j, "cycles"): self.footer["Total"][1] for j in range(n)})
        return lines


def parse(path: Path, unit: str = "us") -> RunResult:
    check_unit(unit, path)
    text = _Text(path)
    started = False
    for number, raw in numbered_lines(path):
        line = ANSI.sub("", raw)
        if not started:
            started = line.strip() == "# Histogram"
        elif line.strip():
            text.read(number, raw, line)
    if not started:
        raise ResultsError("no '# Histogram' line", path=str(path))
    n = text.threads_count()
    _check_columns(path, n, text.rows, text.footer)
    threads = text.threads(n, unit)
    _check_cycle_lists(path, threads, text.cycle_lists, text.cycle_lines)
    run = RunResult(
        source=str(path),
        format="histogram-text",
        unit=unit,
        threads=threads,
        environment={"overflow_cycles": text.cycle_lists},
    )
    return check_run(run, line_locator(text.lines(n)))


def _check_columns(
    path: Path, n: int, rows: list[tuple[int, list[int], int]], footer: dict[str, tuple[list[int], int]]
) -> None:
    """-H adds a column that sums the threads' (the overall max for Max Latencies): it must agree."""
    for index, cols, line_no in rows:
        if len(cols) == n + 1 and cols[n] != sum(cols[:n]):
            raise ResultsError(
                f"row {index}: the sum column says {cols[n]} but the threads hold {sum(cols[:n])}",
                path=str(path),
                line=line_no,
            )
    for key, combine in (("Max Latencies", max), ("Histogram Overflows", sum)):
        values, line_no = footer[key]
        if len(values) == n + 1 and values[n] != combine(values[:n]):
            raise ResultsError(
                f"'# {key}:' the last column says {values[n]}, the threads say {combine(values[:n])}",
                path=str(path),
                line=line_no,
            )
    for key in ("Min Latencies", "Avg Latencies"):
        values, line_no = footer[key]
        if len(values) != n:
            raise ResultsError(f"'# {key}:' has {len(values)} columns for {n} threads", path=str(path), line=line_no)


def _check_cycle_lists(
    path: Path, threads: list[ThreadResult], lists: dict[int, list[int]], lines: dict[int, int]
) -> None:
    """The overflow cycle list names cycles that overflowed: no more than overflowed, each once, in order."""
    for j, cycles in lists.items():
        if j >= len(threads):
            raise ResultsError(
                f"an overflow cycle list for thread {j}, which has no column", path=str(path), line=lines[j]
            )
        t = threads[j]
        overflow = t.histogram.overflow if t.histogram else 0
        if len(cycles) > overflow:
            raise ResultsError(
                f"thread {j}: {len(cycles)} overflow cycles listed but '# Histogram Overflows:' says {overflow}",
                path=str(path),
                line=lines[j],
            )
        if any(b <= a for a, b in itertools.pairwise(cycles)) or (cycles and cycles[-1] >= t.cycles):
            raise ResultsError(
                f"thread {j}: overflow cycle numbers must increase and stay below {t.cycles}",
                path=str(path),
                line=lines[j],
            )
