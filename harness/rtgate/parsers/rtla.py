# SPDX-License-Identifier: GPL-2.0-or-later
"""`rtla timerlat hist` output: per CPU, IRQ, thread (and user-space) latency histograms.

Each column becomes one ThreadResult labelled irq, thread or user, in the order every irq column,
then every thread column, then every user column (each sorted by CPU), so gates can name the
contexts as thread groups. rtla's layout (Linux 6.1 to today):

    # RTLA timerlat histogram
    # Time unit is microseconds (us)            (nanoseconds (ns) with -n)
    # Duration:   0 00:00:05
    Index   IRQ-000   Thr-000   IRQ-001   Thr-001    (Usr-NNN with -u)
    3             0         0         1         0    (bucket start, counts; zero rows omitted)
    over:       332       494       254       363    (samples at or beyond entries * bucket size)
    count:     4813      4813      4830      4830
    min: / avg: / max:                               ('-' when a count is 0; avg truncated)
    ALL: ...                                         (newer rtla: totals over CPUs, ignored)
    rtla timerlat hit stop tracing                   (a -i/-T/-a threshold stopped the run)
    N (x%) events missed, results might not be accurate   (newer rtla: lost trace events)

rtla leaves out a CPU that had no sample at all; the caller that knows which CPUs were asked
for (the timerlat backend) adds them back as threads without samples.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from rtgate.core.model import Histogram, RunResult, ThreadResult
from rtgate.core.timerlat_spec import CONTEXTS
from rtgate.core.validate import check_run
from rtgate.errors import ResultsError
from rtgate.parsers.common import MAX_COLUMNS, MAX_ROWS, numbered_lines, whole

MAGIC = "# RTLA timerlat histogram"
COLUMNS = {"IRQ": "irq", "Thr": "thread", "Usr": "user"}  # rtla column prefix -> context
_COLUMN = re.compile(r"^(IRQ|Thr|Usr)-(\d+)$")
_UNIT = re.compile(r"^# Time unit is (?:microseconds|nanoseconds) \((us|ns)\)\s*$")
_DURATION = re.compile(r"^# Duration:\s+(\d+)\s+(\d+):(\d+):(\d+)\s*$")
_SUMMARY = ("count", "min", "avg", "max")
_MISSED = re.compile(r"^(\d+) \(([\d.]+)%\) events missed", re.ASCII)
MAX_ANALYSIS = 4 * 1024 * 1024  # rtla's auto-analysis of a stop: a few KiB per CPU


def looks_like(head: str) -> bool:
    if MAGIC in head:
        return True
    return any(
        line.startswith("Index") and _COLUMN.match(line.split()[1] if len(line.split()) > 1 else "")
        for line in head.splitlines()
    )


def _numbers(words: list[str], n: int, what: str, path: Path, line: int) -> list[int | None]:
    if len(words) != n:
        raise ResultsError(f"'{what}' has {len(words)} columns for {n}", path=str(path), line=line)
    out: list[int | None] = []
    for w in words:
        if w == "-":
            out.append(None)
        else:
            out.append(whole(w, path, line, f"'{what}'"))
    return out


def parse(path: Path, unit: str | None = None, bucket: int | None = None, entries: int | None = None) -> RunResult:
    """`unit` applies only when the header is missing; `bucket` and `entries` (rtla's -b and -E,
    known when rtgate ran rtla) make the bucket widths and the overflow's start exact; without
    them the width is inferred conservatively (see _width)."""
    columns: list[tuple[str, int]] = []
    rows: list[tuple[int, list[int | None], int]] = []
    summary: dict[str, tuple[list[int | None], int]] = {}
    found_unit: str | None = None
    duration: int | None = None
    stopped = False
    lost: list[str] = []
    tail: list[str] = []
    tail_size = 0
    in_all = False
    header_line: int | None = None  # the 'Index' line: before it, the file's header
    for number, line in numbered_lines(path):
        words = line.split()
        if header_line is None:
            m = _UNIT.match(line)
            if m:
                found_unit = m.group(1)
                continue
            m = _DURATION.match(line)
            if m:
                d, h, mi, s = (whole(x, path, number, "duration") for x in m.groups())
                duration = ((d * 24 + h) * 60 + mi) * 60 + s
                continue
            if line.startswith("#") or not line.strip():
                continue
            if words and words[0] == "Index":
                if len(words) > 1 + 3 * MAX_COLUMNS:
                    raise ResultsError(f"more than {3 * MAX_COLUMNS} columns", path=str(path), line=number)
                for w in words[1:]:
                    c = _COLUMN.match(w)
                    if not c:
                        raise ResultsError(
                            f"unknown column {w!r} (rtla timerlat hist has IRQ-, Thr- and Usr-NNN)",
                            path=str(path),
                            line=number,
                        )
                    columns.append((COLUMNS[c.group(1)], whole(c.group(2), path, number, "CPU")))
                header_line = number
                if len(set(columns)) != len(columns):
                    raise ResultsError("a column appears twice", path=str(path), line=number)
                continue
            if words and _COLUMN.match(words[0]):
                raise ResultsError(
                    "no Index column: rtgate needs the bucket values (run rtla without --no-index)",
                    path=str(path),
                    line=number,
                )
            raise ResultsError(
                f"not rtla timerlat hist output: {line[:80]!r} before the 'Index' header "
                "(rtla timerlat top, or an error message?)",
                path=str(path),
                line=number,
            )
        if not line.strip():
            continue
        key = words[0].rstrip(":") if words[0].endswith(":") else None
        if in_all:
            if key in _SUMMARY:
                continue  # the ALL: block's totals; the per-CPU rows above are what we gate
            in_all = False
        if key == "ALL":
            in_all = True
            continue
        if line.startswith(MAGIC) or words[0] == "Index":
            raise ResultsError("a second histogram in one file", path=str(path), line=number)
        if key == "over":
            if summary:
                raise ResultsError("a second 'over:' row", path=str(path), line=number)
            summary["over"] = (_numbers(words[1:], len(columns), "over:", path, number), number)
            continue
        if key in _SUMMARY and "over" in summary and key not in summary:
            summary[key] = (_numbers(words[1:], len(columns), key + ":", path, number), number)
            continue
        if words[0].isdigit() and "over" not in summary:
            index = whole(words[0], path, number, "bucket")
            values = _numbers(words[1:], len(columns), f"row {index}", path, number)
            if any(v is None for v in values):
                raise ResultsError(f"row {index} has '-' for a count", path=str(path), line=number)
            if rows and index <= rows[-1][0]:
                raise ResultsError(
                    f"row {index} after row {rows[-1][0]}: rows must ascend", path=str(path), line=number
                )
            if len(rows) >= MAX_ROWS:
                raise ResultsError(f"more than {MAX_ROWS} histogram rows", path=str(path), line=number)
            rows.append((index, values, number))
            continue
        if "max" not in summary:
            raise ResultsError(f"unexpected line {line[:80]!r} in the histogram", path=str(path), line=number)
        # After the summary: rtla's notes. Lost events invalidate the counts; the rest is analysis.
        m = _MISSED.match(line.strip())
        if m or line.strip().startswith("unknown number of events missed"):
            lost.append(line.strip())
            continue
        if line.strip() == "rtla timerlat hit stop tracing":
            stopped = True
        elif not stopped and line.strip():
            # rtla prints nothing else after its summary unless a threshold stopped it (then its analysis)
            raise ResultsError(
                f"unexpected text after the summary: {line[:80]!r} (two outputs in one file?)",
                path=str(path),
                line=number,
            )
        tail_size += len(line) + 1
        if tail_size > MAX_ANALYSIS:
            raise ResultsError(
                f"rtla's analysis after the summary is longer than {MAX_ANALYSIS // 1024} KiB",
                path=str(path),
                line=number,
            )
        tail.append(line)
    if header_line is None:
        raise ResultsError(
            "no 'Index' header line: not rtla timerlat hist output (or --no-header, "
            "which rtgate cannot read: the columns are unnamed)",
            path=str(path),
        )
    if not columns and not stopped:
        # When a stop threshold is hit before rtla counted any sample it prints no column at all.
        raise ResultsError("no CPU had a sample: rtla printed no columns", path=str(path), line=header_line)
    for key in ("over",) + _SUMMARY:
        if key not in summary:
            raise ResultsError(f"truncated: no '{key}:' row (run rtla without --no-summary)", path=str(path))
    the_unit = found_unit or unit or "us"
    if unit and found_unit and unit != found_unit:
        raise ResultsError(
            f"--unit {unit} contradicts the results, which state their unit: {found_unit} (# Time unit)", path=str(path)
        )
    width = _width([r[0] for r in rows], bucket)
    threads: list[ThreadResult] = []
    problems: list[str] = []
    order = sorted(range(len(columns)), key=lambda j: (CONTEXTS.index(columns[j][0]), columns[j][1]))
    for j in order:
        context, cpu = columns[j]
        name = f"{context}-cpu{cpu}"
        counts: list[tuple[int, int]] = [(idx, n) for idx, vals, _ in rows if (n := vals[j])]
        over = summary["over"][0][j] or 0
        count, low, avg, high = (summary[k][0][j] for k in _SUMMARY)
        count = count or 0
        in_rows = sum(c for _, c in counts)
        if in_rows + over != count:
            raise ResultsError(
                f"{name}: the rows and 'over:' hold {in_rows + over} samples but 'count:' says {count}",
                path=str(path),
                line=summary["count"][1],
            )
        if count and high is None:
            raise ResultsError(f"{name}: {count} samples but no max", path=str(path), line=summary["max"][1])
        if count and counts and high is not None and high < counts[-1][0]:
            raise ResultsError(
                f"{name}: max {high} lies below its highest bucket {counts[-1][0]}",
                path=str(path),
                line=summary["max"][1],
            )
        buckets: list[tuple[int, int | None, int]] = []
        for idx, n_in in counts:
            span = width if width else (high + 1 - idx if high is not None else None)  # only row 0: up to the max
            buckets.append((idx, None if span is None else idx + span, n_in))
        # Without -E the overflow starts past the last printed row (at least one bucket on)
        range_end = entries * (bucket or 1) if entries else (rows[-1][0] + (width or 1) if rows else (width or 1))
        threads.append(
            ThreadResult(
                index=len(threads),
                cycles=count,
                min=low if count else None,
                max=high if count else None,
                avg=avg if count else None,
                cpu=cpu,
                missed=None,
                label=context,
                histogram=Histogram(unit=the_unit, buckets=buckets, overflow=over, range_end=range_end),
            )
        )
    by_cpu: dict[int, dict[str, int]] = {}
    for t in threads:
        by_cpu.setdefault(t.cpu or 0, {})[t.label or ""] = t.cycles
    for cpu, events in sorted(by_cpu.items()):
        # One IRQ and one thread event per period; one may be cut off at each end of the run.
        if "irq" in events and "thread" in events and abs(events["irq"] - events["thread"]) > 1:
            problems.append(
                f"cpu {cpu}: {events['irq']} IRQ but {events['thread']} thread events: trace events were lost"
            )
    if lost:
        problems.append("rtla lost trace events: " + "; ".join(lost))
    env: dict[str, object] = {"rtla_bucket": width, "rtla_columns": [f"{c}-cpu{n}" for c, n in columns]}
    if problems:
        env["invalid"] = problems
    if stopped:
        env["analysis"] = "\n".join(tail).strip("\n")
    elif any(x.strip() for x in tail):
        env["rtla_notes"] = "\n".join(tail).strip("\n")
    run = RunResult(
        source=str(path),
        format="rtla-timerlat-hist",
        unit=the_unit,
        threads=threads,
        complete=True,
        stop_reason="threshold" if stopped else None,
        elapsed_s=float(duration) if duration is not None else None,
        environment=env,
    )
    if threads:  # a stop before any sample leaves no column (the caller adds the CPUs asked)
        lines = {**{k: summary[k][1] for k in _SUMMARY}, "cycles": summary["count"][1], "histogram": summary["over"][1]}

        def locate(pos: int, name: str) -> tuple[int | None, str | None]:
            t = threads[pos]
            return lines.get(name), f"{t.label}-cpu{t.cpu}: {name}" if name else f"{t.label}-cpu{t.cpu}"

        check_run(run, locate)
    return run


def _width(indices: list[int], bucket: int | None) -> int | None:
    """Bucket width: rtla's -b when known. Otherwise the greatest common divisor of the printed
    bucket starts: every start is a multiple of the true width, so their gcd is at least that
    width and a bucket taken that wide holds every value the true one holds (conservative).
    None when only bucket 0 was printed: then the bucket reaches up to the max."""
    if bucket:
        return bucket
    g = 0
    for i in indices:
        g = math.gcd(g, i)
    return g or None
