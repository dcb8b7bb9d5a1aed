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
    min: / avg: / max:                               ('-' when a count is 0, or, rtla 6.1, min
                                                      18446744073709551615 and max 0; avg truncated)
    ALL: ...                                         (newer rtla: totals over CPUs, ignored)
    rtla timerlat hit stop tracing                   (a -i/-T/-a threshold stopped the run)
    N (x%) events missed, results might not be accurate   (newer rtla: lost trace events)

rtla leaves out a CPU that had no sample at all; the caller that knows which CPUs were asked
for (the timerlat backend) adds them back as threads without samples.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
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
# rtla 6.1 prints a context's min as it starts (~0ULL) when that context of a CPU had no sample
# but the other had (its avg is then '-', its max 0).
UNSET_MIN = str(2**64 - 1)


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
        if w == "-" or (what == "min:" and w == UNSET_MIN):
            out.append(None)
        else:
            out.append(whole(w, path, line, f"'{what}'"))
    return out


@dataclass
class _Text:
    """What the lines of one rtla output said, read in order: the header, the histogram, its notes."""

    path: Path
    columns: list[tuple[str, int]] = field(default_factory=list)  # (context, CPU) per column
    rows: list[tuple[int, list[int | None], int]] = field(default_factory=list)  # (bucket, counts, line)
    summary: dict[str, tuple[list[int | None], int]] = field(default_factory=dict)  # key -> (values, line)
    unit: str | None = None
    duration: int | None = None
    stopped: bool = False
    lost: list[str] = field(default_factory=list)
    tail: list[str] = field(default_factory=list)
    tail_size: int = 0
    in_all: bool = False
    header_line: int | None = None  # the 'Index' line: before it, the file's header

    def error(self, message: str, line: int | None = None) -> ResultsError:
        return ResultsError(message, path=str(self.path), line=line)

    def read(self, number: int, line: str) -> None:
        if self.header_line is None:
            self._header(number, line)
        elif line.strip():
            self._body(number, line, line.split())

    def _header(self, number: int, line: str) -> None:
        m = _UNIT.match(line)
        if m:
            self.unit = m.group(1)
            return
        m = _DURATION.match(line)
        if m:
            d, h, mi, s = (whole(x, self.path, number, "duration") for x in m.groups())
            self.duration = ((d * 24 + h) * 60 + mi) * 60 + s
            return
        if line.startswith("#") or not line.strip():
            return
        words = line.split()
        if words[0] == "Index":
            self._index(number, words)
            return
        if _COLUMN.match(words[0]):
            raise self.error("no Index column: rtgate needs the bucket values (run rtla without --no-index)", number)
        raise self.error(
            f"not rtla timerlat hist output: {line[:80]!r} before the 'Index' header "
            "(rtla timerlat top, or an error message?)",
            number,
        )

    def _index(self, number: int, words: list[str]) -> None:
        if len(words) > 1 + 3 * MAX_COLUMNS:
            raise self.error(f"more than {3 * MAX_COLUMNS} columns", number)
        for w in words[1:]:
            c = _COLUMN.match(w)
            if not c:
                raise self.error(f"unknown column {w!r} (rtla timerlat hist has IRQ-, Thr- and Usr-NNN)", number)
            self.columns.append((COLUMNS[c.group(1)], whole(c.group(2), self.path, number, "CPU")))
        self.header_line = number
        if len(set(self.columns)) != len(self.columns):
            raise self.error("a column appears twice", number)

    def _body(self, number: int, line: str, words: list[str]) -> None:
        key = words[0].rstrip(":") if words[0].endswith(":") else None
        if self.in_all:
            if key in _SUMMARY:
                return  # the ALL: block's totals; the per-CPU rows above are what we gate
            self.in_all = False
        if key == "ALL":
            self.in_all = True
            return
        if line.startswith(MAGIC) or words[0] == "Index":
            raise self.error("a second histogram in one file", number)
        if key == "over":
            if self.summary:
                raise self.error("a second 'over:' row", number)
            self.summary["over"] = (_numbers(words[1:], len(self.columns), "over:", self.path, number), number)
        elif key in _SUMMARY and "over" in self.summary and key not in self.summary:
            self.summary[key] = (_numbers(words[1:], len(self.columns), key + ":", self.path, number), number)
        elif words[0].isdigit() and "over" not in self.summary:
            self._row(number, words)
        elif "max" not in self.summary:
            raise self.error(f"unexpected line {line[:80]!r} in the histogram", number)
        else:
            self._note(number, line)

    def _row(self, number: int, words: list[str]) -> None:
        index = whole(words[0], self.path, number, "bucket")
        values = _numbers(words[1:], len(self.columns), f"row {index}", self.path, number)
        if any(v is None for v in values):
            raise self.error(f"row {index} has '-' for a count", number)
        if self.rows and index <= self.rows[-1][0]:
            raise self.error(f"row {index} after row {self.rows[-1][0]}: rows must ascend", number)
        if len(self.rows) >= MAX_ROWS:
            raise self.error(f"more than {MAX_ROWS} histogram rows", number)
        self.rows.append((index, values, number))

    def _note(self, number: int, line: str) -> None:
        """After the summary: rtla's notes. Lost events invalidate the counts; the rest is analysis."""
        m = _MISSED.match(line.strip())
        if m or line.strip().startswith("unknown number of events missed"):
            self.lost.append(line.strip())
            return
        if line.strip() == "rtla timerlat hit stop tracing":
            self.stopped = True
        elif not self.stopped and line.strip():
            # rtla prints nothing else after its summary unless a threshold stopped it (then its analysis)
            raise self.error(f"unexpected text after the summary: {line[:80]!r} (two outputs in one file?)", number)
        self.tail_size += len(line) + 1
        if self.tail_size > MAX_ANALYSIS:
            raise self.error(f"rtla's analysis after the summary is longer than {MAX_ANALYSIS // 1024} KiB", number)
        self.tail.append(line)

    def finish(self, unit: str | None) -> str:
        """The checks that need the whole file; the unit the results are in."""
        if self.header_line is None:
            raise self.error(
                "no 'Index' header line: not rtla timerlat hist output (or --no-header, "
                "which rtgate cannot read: the columns are unnamed)"
            )
        if not self.columns and not self.stopped:
            # When a stop threshold is hit before rtla counted any sample it prints no column at all.
            raise self.error("no CPU had a sample: rtla printed no columns", self.header_line)
        for key in ("over",) + _SUMMARY:
            if key not in self.summary:
                raise self.error(f"truncated: no '{key}:' row (run rtla without --no-summary)")
        if unit and self.unit and unit != self.unit:
            raise self.error(
                f"--unit {unit} contradicts the results, which state their unit: {self.unit} (# Time unit)"
            )
        return self.unit or unit or "us"

    def thread(self, j: int, index: int, unit: str, width: int | None, range_end: int) -> ThreadResult:
        """Column j as a thread, once its counts agree with its summary."""
        context, cpu = self.columns[j]
        name = f"{context}-cpu{cpu}"
        counts: list[tuple[int, int]] = [(idx, n) for idx, vals, _ in self.rows if (n := vals[j])]
        over = self.summary["over"][0][j] or 0
        count, low, avg, high = (self.summary[k][0][j] for k in _SUMMARY)
        count = count or 0
        in_rows = sum(c for _, c in counts)
        if in_rows + over != count:
            raise self.error(
                f"{name}: the rows and 'over:' hold {in_rows + over} samples but 'count:' says {count}",
                self.summary["count"][1],
            )
        if count and high is None:
            raise self.error(f"{name}: {count} samples but no max", self.summary["max"][1])
        if count and low is None:
            raise self.error(f"{name}: {count} samples but no min", self.summary["min"][1])
        if count and counts and high is not None and high < counts[-1][0]:
            raise self.error(
                f"{name}: max {high} lies below its highest bucket {counts[-1][0]}", self.summary["max"][1]
            )
        buckets: list[tuple[int, int | None, int]] = []
        for idx, n_in in counts:
            span = width if width else (high + 1 - idx if high is not None else None)  # only row 0: up to the max
            buckets.append((idx, None if span is None else idx + span, n_in))
        return ThreadResult(
            index=index,
            cycles=count,
            min=low if count else None,
            max=high if count else None,
            avg=avg if count else None,
            cpu=cpu,
            missed=None,
            label=context,
            histogram=Histogram(unit=unit, buckets=buckets, overflow=over, range_end=range_end),
        )

    def environment(self, threads: list[ThreadResult], width: int | None) -> dict[str, object]:
        env: dict[str, object] = {"rtla_bucket": width, "rtla_columns": [f"{c}-cpu{n}" for c, n in self.columns]}
        problems = _lost_events(threads)
        if self.lost:
            problems.append("rtla lost trace events: " + "; ".join(self.lost))
        if problems:
            env["invalid"] = problems
        if self.stopped:
            env["analysis"] = "\n".join(self.tail).strip("\n")
        elif any(x.strip() for x in self.tail):
            env["rtla_notes"] = "\n".join(self.tail).strip("\n")
        return env


def _lost_events(threads: list[ThreadResult]) -> list[str]:
    by_cpu: dict[int, dict[str, int]] = {}
    for t in threads:
        by_cpu.setdefault(t.cpu or 0, {})[t.label or ""] = t.cycles
    problems: list[str] = []
    for cpu, events in sorted(by_cpu.items()):
        # One IRQ and one thread event per period; one may be cut off at each end of the run.
        if "irq" in events and "thread" in events and abs(events["irq"] - events["thread"]) > 1:
            problems.append(
                f"cpu {cpu}: {events['irq']} IRQ but {events['thread']} thread events: trace events were lost"
            )
    return problems


def parse(path: Path, unit: str | None = None, bucket: int | None = None, entries: int | None = None) -> RunResult:
    """`unit` applies only when the header is missing; `bucket` and `entries` (rtla's -b and -E,
    known when rtgate ran rtla) make the bucket widths and the overflow's start exact; without
    them the width is inferred conservatively (see _width)."""
    text = _Text(path)
    for number, line in numbered_lines(path):
        text.read(number, line)
    the_unit = text.finish(unit)
    width = _width([r[0] for r in text.rows], bucket)
    # Without -E the overflow starts past the last printed row (at least one bucket on)
    rows = text.rows
    range_end = entries * (bucket or 1) if entries else (rows[-1][0] + (width or 1) if rows else (width or 1))
    columns = text.columns
    order = sorted(range(len(columns)), key=lambda j: (CONTEXTS.index(columns[j][0]), columns[j][1]))
    threads = [text.thread(j, i, the_unit, width, range_end) for i, j in enumerate(order)]
    run = RunResult(
        source=str(path),
        format="rtla-timerlat-hist",
        unit=the_unit,
        threads=threads,
        complete=True,
        stop_reason="threshold" if text.stopped else None,
        elapsed_s=float(text.duration) if text.duration is not None else None,
        environment=text.environment(threads, width),
    )
    if threads:  # a stop before any sample leaves no column (the caller adds the CPUs asked)
        summary = text.summary
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
