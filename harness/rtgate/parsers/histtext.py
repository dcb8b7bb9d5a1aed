"""cyclictest histogram text (-h/-H, stdout or --histfile), rt-tests 1.x to 2.x."""

from __future__ import annotations

import re
from pathlib import Path

from rtgate.errors import ResultsError
from rtgate.core.model import Histogram, RunResult, ThreadResult
from rtgate.parsers.common import ANSI, check_unit, numbered_lines

_ROW = re.compile(r"^(\d+) (\d+(?:\t\d+)*)\s*$")
_FOOTER = re.compile(r"^# (Total|Min Latencies|Avg Latencies|Max Latencies|Histogram Overflows):((?:\s+\d+)*)\s*$")
_THREAD = re.compile(r"^# Thread (\d+):((?:\s+\d+)*)(?:\s+# (\d+) others)?\s*$")


def parse(path: Path, unit: str = "us") -> RunResult:
    check_unit(unit, path)
    rows: list[tuple[int, list[int], int]] = []
    footer: dict[str, tuple[list[int], int]] = {}
    cycle_lists: dict[int, list[int]] = {}
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
            rows.append((int(m.group(1)), [int(x) for x in m.group(2).split("\t")], number))
            continue
        m = _FOOTER.match(line)
        if m:
            footer[m.group(1)] = ([int(x) for x in m.group(2).split()], number)
            continue
        if line.startswith("# Histogram Overflow at cycle number:"):
            in_cycle_list = True
            continue
        m = _THREAD.match(line)
        if m and in_cycle_list:
            cycle_lists[int(m.group(1))] = [int(x) for x in m.group(2).split()]
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
            raise ResultsError(f"'# {key}:' has {len(values)} columns for {n} threads",
                               path=str(path), line=line_no)
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
            raise ResultsError(f"thread {j}: '# Total:' says {totals[0][j]} but the rows hold {in_range}",
                               path=str(path), line=totals[1])
        cycles = in_range + overflows[j]
        hist = Histogram(unit=unit, buckets=[(b, b + 1, c) for b, c in counts[j]],
                         overflow=overflows[j], range_end=range_end)
        threads.append(ThreadResult(
            index=j, cycles=cycles,
            min=mins[j] if cycles else None, max=maxs[j] if cycles else None,
            avg=avgs[j] if cycles else None, histogram=hist))
    for t in threads:
        t.missed_derivation = ("histogram text says neither the interval nor how long the run was: "
                               "missed periods cannot be known")
    return RunResult(source=str(path), format="histogram-text", unit=unit, threads=threads,
                     environment={"overflow_cycles": cycle_lists})
