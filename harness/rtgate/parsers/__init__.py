# SPDX-License-Identifier: GPL-2.0-or-later
"""Parsers: every supported output format becomes one RunResult."""

from __future__ import annotations

import os
from pathlib import Path

from rtgate.core.model import RunResult
from rtgate.errors import ResultsError
from rtgate.parsers.common import MAX_RESULTS_BYTES, open_results

# A format's parser is imported when a file of that format is read: `rtgate check` of a JSON result
# loads neither the text parsers nor their regular expressions.

__all__ = ["FORMATS", "MAX_RESULTS_BYTES", "check_plausible_unit", "detect_format", "load_results"]

FORMATS = ("auto", "json", "histogram", "summary", "verbose", "rtla")


def detect_format(path: Path, head: str) -> str:
    stripped = head.lstrip()
    if stripped.startswith("{"):
        return "json"
    from rtgate.parsers import foreign, rtla, summary, verbose

    foreign.check_text(path, head)
    if rtla.looks_like(head):
        return "rtla"
    if "# Histogram" in head:
        return "histogram"
    if verbose.looks_like(head):
        return "verbose"
    if summary.looks_like(head):
        return "summary"
    raise ResultsError(
        "not a format rtgate reads (rtgate or rt-tests JSON, cyclictest histogram, "
        "T: summary lines, -v samples or rtla timerlat hist)",
        path=str(path),
    )


def load_results(path: str | Path, fmt: str = "auto", unit: str | None = None) -> RunResult:
    """Read one results file. Text formats do not say their unit: `unit` says it (default us), and
    values implausible in it are refused; JSON states its unit, and a contradicting `unit` is refused."""
    p = Path(path)
    try:  # a FIFO, socket or device is refused here, whether the format is detected or given
        with open_results(p) as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(65536)
    except OSError as e:
        raise ResultsError(f"cannot read: {e.strerror}", path=str(p)) from e
    if size > MAX_RESULTS_BYTES:
        raise ResultsError(
            f"{size // 2**20} MiB is larger than any result rtgate reads ({MAX_RESULTS_BYTES // 2**20} MiB at most)",
            path=str(p),
        )
    if not head.strip():
        raise ResultsError("file is empty", path=str(p))
    if fmt == "auto":
        fmt = detect_format(p, head)
    if fmt == "json":
        from rtgate.parsers import json_results

        run = json_results.parse(p)
        if unit is not None and unit != run.unit:
            raise ResultsError(
                f"--unit {unit} contradicts the results, which state their unit: {run.unit} "
                f"({'resolution_in_ns / -N' if run.format == 'rt-tests-json' else 'rtgate.unit'})",
                path=str(p),
            )
        check_plausible_unit(run, None, explicit=False)  # a stated unit may have been edited
        return run
    if fmt == "rtla":  # states its unit in its header; a contradicting --unit is refused
        from rtgate.parsers import rtla

        run = rtla.parse(p, unit)
        check_plausible_unit(run, None, explicit=False)  # a header is text: it may have been edited
        return run
    from rtgate.parsers import histtext, summary, verbose

    parsers = {"histogram": histtext.parse, "summary": summary.parse, "verbose": verbose.parse}
    if fmt not in parsers:
        raise ResultsError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})", path=str(p))
    run = parsers[fmt](p, unit or "us")
    check_plausible_unit(run, None, explicit=unit is not None)
    return run


# No timer wake-up measured by cyclictest, rtgate-sampler or rtla comes in under this: the timer interrupt,
# the wake-up, the context switch and the clock read each take tens to hundreds of nanoseconds.
MIN_WAKEUP_NS = 300


def check_plausible_unit(run: RunResult, interval_us: int | None, explicit: bool = True) -> None:
    """Refuse text-format values that make no sense in the unit they are read in.

    Read as ns, every wake-up under 1 us, or any under 0.1 us (less than a timer interrupt and a context
    switch take), is not a real system; read as us, every wake-up more than a period late is not a
    measurement anyone ran (it would have skipped every other period)."""
    measured = [
        (t, float(t.min), float(t.max)) for t in run.threads if t.cycles and t.max is not None and t.min is not None
    ]
    if not measured:
        return
    lows, highs = [lo for _, lo, _ in measured], [hi for _, _, hi in measured]
    stated = run.format.endswith("json") or run.format.startswith("rtla")
    if explicit:
        how = f"--unit {run.unit}"
    elif stated:
        how = f"{run.unit} (as the file states)"
    else:
        how = f"{run.unit} (the default for {run.format})"
    # --unit cannot contradict rtla's header: there the header itself is in doubt
    fix = "its '# Time unit' line is not its values' ({})" if run.format.startswith("rtla") else "use --unit {}"
    if run.unit == "ns" and max(highs) < 1000:
        raise ResultsError(
            f"read as {how}, every latency is under 1 us (max {max(highs):g} ns): "
            f"these values look like microseconds ({fix.format('us')})",
            path=run.source,
        )
    if run.unit == "ns" and min(lows) < MIN_WAKEUP_NS:
        raise ResultsError(
            f"read as {how}, the fastest wake-up took {min(lows):g} ns, less than "
            "a timer interrupt and a context switch take: these values look like microseconds "
            f"({fix.format('us')})",
            path=run.source,
        )
    if run.unit == "us" and not stated:
        # A file that states us is never read 1000x smaller than it is (the ns checks above catch an
        # edit to ns, rtla's header too): a stalled run whose every wake-up missed its period is data
        # (tests/fixtures/rtla/stop.txt), not a unit error.
        periods = [(t, lo, t.interval_us or interval_us) for t, lo, _ in measured]
        if all(iv is not None and lo > iv for _, lo, iv in periods):
            t, _, iv = periods[0]
            asked = "" if t.interval_us else ", or come from a run at a longer period than the thresholds ask"
            raise ResultsError(
                f"read as {how}, every latency is above the period (thread {t.index}: min "
                f"{t.min:g} us > interval {iv} us): these values look like nanoseconds "
                f"({fix.format('ns')}){asked}",
                path=run.source,
            )
