# SPDX-License-Identifier: GPL-2.0-or-later
"""The timerlat backend: a measurement made by the kernel's timerlat tracer through `rtla timerlat hist`,
which the measurement engine runs (rtgate-sampler --timerlat: sampler/timerlat.c) inside everything
else it does for a measurement: the requirements, the loads, the competing tasks, the stop signals.
Here: what the engine is told (engine_spec), and its results read back (read).

Per CPU, rtla reports the IRQ latency (timer expiry to the timer IRQ handler), the thread
latency (expiry to the timerlat thread running) and, with user-space threads, the user latency;
each becomes a thread of the results (irq-cpu0, thread-cpu0, ...), so every gate kind applies.
When the measurement has max gates, rtla is told to stop tracing at the first sample that
fails one (-i/-T, plus -s for the stack and -t for the trace), and what it printed and
saved is kept with the results as the analysis.
"""

from __future__ import annotations

import json
import math
import os
import shlex
from typing import TYPE_CHECKING

from rtgate.core import validity
from rtgate.core.model import RunResult
from rtgate.core.spec import TimerlatSettings
from rtgate.core.timerlat_spec import MAX_ENTRIES, POLICIES, with_all_cpus
from rtgate.errors import RtgateError
from rtgate.parsers import load_results
from rtgate.parsers import rtla as rtla_parser
from rtgate.safe_io import Folder

if TYPE_CHECKING:
    from rtgate.core.thresholds import Measurement

TRACE_LINES = 60  # of the saved trace, quoted as the analysis


def stop_limits(m: Measurement) -> dict[str, int]:
    """rtla's stop-tracing thresholds from the max gates that cover every measured CPU.

    rtla stops when a latency in whole microseconds is >= its threshold, so floor(limit) + 1:
    a stop then always means a max gate FAILs, never a sample the gate would pass."""
    limits: dict[str, int] = {}
    for g in m.gates:
        if g.kind != "max" or g.cpus or g.limit_us is None:
            continue
        groups = g.threads or m.timerlat.contexts()
        for ctx in groups:
            option = "irq" if ctx == "irq" else "thread"  # rtla's -T covers thread and user latency
            value = math.floor(g.limit_us) + 1
            limits[option] = min(limits.get(option, value), value)
    return limits


def histogram_range_us(m: Measurement) -> int:
    """Cover twice the largest limit of any gate (at least 1 ms): samples beyond the range land in
    rtla's overflow, known only to be above it."""
    s = m.timerlat
    if s.histogram_us:
        return int(s.histogram_us)
    figures = [g.limit_us or 0.0 for g in m.gates] + [g.above_us or 0.0 for g in m.gates]
    want = max([1000.0] + [2.0 * f for f in figures])
    return int(min(want, MAX_ENTRIES * s.bucket_us))


def entries(m: Measurement) -> int:
    """rtla's -E: buckets of bucket_us covering the histogram range (rtla wants at least 10)."""
    return max(10, math.ceil(histogram_range_us(m) / float(m.timerlat.bucket_us)))


def measured_cpu_list(s: TimerlatSettings) -> list[int]:
    return sorted(os.sched_getaffinity(0)) if s.cpus == "all" else list(s.cpus)  # type: ignore[arg-type]


def engine_spec(m: Measurement) -> str:
    """The engine's --timerlat value: rtla's histogram layout, scheduling, user-space threads and
    stop-tracing thresholds (the engine turns it, -i, -D, the threads' CPUs and --latency into
    rtla's command line)."""
    s = m.timerlat
    fields = [f"bucket={s.bucket_us}", f"entries={entries(m)}"]
    if s.priority is not None:
        fields.append(f"sched={POLICIES[s.policy]}:{s.priority}")
    if s.user_threads:
        fields.append("user")
    limits = stop_limits(m) if s.analysis else {}
    fields += [f"{option}={limits[option]}" for option in ("irq", "thread") if option in limits]
    return ",".join(fields)


def read(m: Measurement, folder: Folder, json_name: str) -> RunResult:
    """The measurement's results: rtla's histogram, with the engine's record (what it checked, the
    load, the competing tasks, a stop signal) as their environment. A measurement the engine did not
    make is the engine's results file: no threads, and its record says why."""
    doc = json.loads(folder.read_bytes(json_name).decode("utf-8", errors="replace"))
    record = doc.get(validity.RECORD) if isinstance(doc, dict) else None
    if not isinstance(record, dict) or record.get("measured") is not True:
        return load_results(folder.path / json_name)
    s = m.timerlat
    out_name, trace_name = f"{m.name}.rtla.txt", f"{m.name}.trace.txt"
    run = rtla_parser.parse(folder.path / out_name, bucket=s.bucket_us, entries=entries(m))
    run = with_all_cpus(run, m, measured_cpu_list(s))
    backend = record.get("backend")
    command = backend.get("command") if isinstance(backend, dict) else None
    if isinstance(command, list):
        run.cmdline = shlex.join(str(w) for w in command)
    run.environment[validity.RECORD] = record
    engine = doc.get("rtgate") if isinstance(doc.get("rtgate"), dict) else {}
    if engine.get("stop_reason") == "signal" and isinstance(engine.get("signal"), str):
        run.stop_reason, run.signal = "signal", engine["signal"]
    elif run.stop_reason == "threshold":
        run.environment["analysis"] = analysis_text(run.environment.get("analysis", ""), folder, trace_name)
    return run


def analysis_text(printed: str, folder: Folder, trace_name: str) -> str:
    """What rtla printed when it stopped, and the end of the trace it saved (the timerlat events,
    IRQ and thread noise and the stack of the stopping sample)."""
    parts = [printed.strip()] if printed.strip() else []
    try:
        lines = [ln for ln in folder.read_text(trace_name).splitlines() if ln.strip() and not ln.startswith("#")]
    except (OSError, RtgateError):
        parts.append(f"rtla saved no readable {trace_name}")
        return "\n".join(parts)
    if lines:
        parts.append(f"last {min(len(lines), TRACE_LINES)} lines of {trace_name}:")
        parts.extend(lines[-TRACE_LINES:])
    else:
        # rtla can stop with its trace empty (seen under TCG: a stop within its first second, with
        # no sample counted either): say so, rather than quote nothing.
        parts.append(f"{trace_name} holds no events: tracing stopped before rtla recorded any")
    return "\n".join(parts)
