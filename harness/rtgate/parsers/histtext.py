# SPDX-License-Identifier: GPL-2.0-or-later
"""cyclictest histogram text (-h/-H, stdout or --histfile), rt-tests 1.x to 2.x."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

from rtgate.core.model import Histogram, RunResult, ThreadResult
from rtgate.core.validate import check_run
from rtgate.errors import ResultsError
from rtgate.parsers.common import ANSI, MAX_COLUMNS, MAX_ROWS, check_unit, line_locator, numbered_lines, whole

_ROW = re.compile(r"^(\d+) (\d+(?:\t\d+)*)\s*$")
_FOOTER = re.compile(r"^# (Total|Min Latencies|Avg Latencies|Max Latencies|Histogram Overflows):((?:\s+\d+)*)\s*$")
_THREAD = re.compile(r"^# Thread (\d+):((?:\s+\d+)*)(?:\s+# (\d+) others)?\s*$")


def parse(path: Path, unit: str = "us") -> RunResult:
    check_unit(unit, path)
    rows: list[tuple[int, list[int], int]] = []
    footer: dict[str, tuple[list[int], int]] = {}
    cycle_lists: dict[int, list[int]] = {}
    cycle_lines: dict[int, int] = {}
    started = False
    in_cycle_list = False
    for number, raw in numbered_lines(path):
        line = ANSI.sub("", raw)
        if not started:
            started = line.strip() == "# Histogram"
            continue
        if not line.strip():
            continue
        m = _ROW.match(line)
        if m and not footer:
            index = whole(m.group(1), path, number, "bucket")
            if rows and index <= rows[-1][0]:
                raise ResultsError(
                    f"row {index} comes after row {rows[-1][0]}: rows must be strictly increasing",
                    path=str(path),
                    line=number,
                )
            cols = m.group(2).split("\t")
            if len(cols) > MAX_COLUMNS or len(rows) >= MAX_ROWS:
                raise ResultsError(
                    f"more than {MAX_COLUMNS} columns or {MAX_ROWS} rows: not a histogram cyclictest writes",
                    path=str(path),
                    line=number,
                )
            rows.append((index, [whole(x, path, number, "count") for x in cols], number))
            continue
        m = _FOOTER.match(line)
        if m:
            if m.group(1) in footer:
                raise ResultsError(
                    f"a second '# {m.group(1)}:' line (first on line {footer[m.group(1)][1]})",
                    path=str(path),
                    line=number,
                )
            footer[m.group(1)] = ([whole(x, path, number, m.group(1)) for x in m.group(2).split()], number)
            continue
        if line.startswith("# Histogram Overflow at cycle number:"):
            in_cycle_list = True
            continue
        m = _THREAD.match(line)
        if m and in_cycle_list:
            thread_no = whole(m.group(1), path, number, "thread")
            if thread_no in cycle_lists:
                raise ResultsError(f"a second overflow cycle list for thread {thread_no}", path=str(path), line=number)
            cycle_lists[thread_no] = [whole(x, path, number, "cycle") for x in m.group(2).split()]
            cycle_lines[thread_no] = number
            continue
        if line.startswith("#") and footer:
            continue  # later cyclictest notes: SMIs, thread ids, break value
        raise ResultsError(f"unexpected line in histogram: {raw[:80]!r}", path=str(path), line=number)
    if not started:
        raise ResultsError("no '# Histogram' line", path=str(path))
    for key in ("Min Latencies", "Avg Latencies", "Max Latencies", "Histogram Overflows"):
        if key not in footer:
            raise ResultsError(f"truncated: no '# {key}:' line", path=str(path))
    mins = footer["Min Latencies"][0]
    n = len(mins)
    if n == 0:
        raise ResultsError("no threads in '# Min Latencies:'", path=str(path), line=footer["Min Latencies"][1])
    for key in ("Avg Latencies", "Max Latencies", "Histogram Overflows"):
        values, line_no = footer[key]
        if len(values) not in (n, n + 1):
            raise ResultsError(f"'# {key}:' has {len(values)} columns for {n} threads", path=str(path), line=line_no)
    _check_columns(path, n, rows, footer)
    counts: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for index, cols, line_no in rows:
        if len(cols) not in (n, n + 1):
            raise ResultsError(f"row has {len(cols)} columns for {n} threads", path=str(path), line=line_no)
        for j in range(n):
            if cols[j]:
                counts[j].append((index, cols[j]))
    range_end = rows[-1][0] + 1 if rows else 0
    avgs, maxs, overflows = (footer[k][0] for k in ("Avg Latencies", "Max Latencies", "Histogram Overflows"))
    totals = footer.get("Total")
    threads = []
    for j in range(n):
        in_range = sum(c for _, c in counts[j])
        if totals and len(totals[0]) > j and totals[0][j] != in_range:
            raise ResultsError(
                f"thread {j}: '# Total:' says {totals[0][j]} but the rows hold {in_range}",
                path=str(path),
                line=totals[1],
            )
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
            )
        )
    _check_cycle_lists(path, threads, cycle_lists, cycle_lines)
    lines = {
        (j, key): footer[label][1]
        for j in range(n)
        for key, label in (
            ("min", "Min Latencies"),
            ("avg", "Avg Latencies"),
            ("max", "Max Latencies"),
            ("cycles", "Histogram Overflows"),
            ("histogram", "Histogram Overflows"),
        )
    }
    if totals:
        lines.update({(j, "cycles"): totals[1] for j in range(n)})
    for t in threads:
        t.missed_derivation = (
            "histogram text says neither the interval nor how long the run was: missed periods cannot be known"
        )
    run = RunResult(
        source=str(path),
        format="histogram-text",
        unit=unit,
        threads=threads,
        environment={"overflow_cycles": cycle_lists},
    )
    return check_run(run, line_locator(lines))


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
