"""The timerlat backend: a measurement made by the kernel's timerlat tracer through `rtla timerlat hist`.

Per CPU, rtla reports the IRQ latency (timer expiry to the timer IRQ handler), the thread
latency (expiry to the timerlat thread running) and, with user-space threads, the user latency;
each becomes a thread of the results (irq-cpu0, thread-cpu0, ...), so every gate kind applies.
When the measurement has max gates, rtla is told to stop tracing at the first sample that
fails one (-i/-T, plus -s for the stack and --trace for the trace), and what it printed and
saved is kept with the results as the analysis.
"""

from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import SamplerError
from .model import Histogram, RunResult, ThreadResult
from .parsers import rtla as rtla_parser

if TYPE_CHECKING:
    from .thresholds import Measurement, SamplerSettings, _Checker

RTLA = "rtla"
POLICIES = {"fifo": "f", "rr": "r", "other": "o"}
KEYS = {"interval_us", "duration", "priority", "policy", "cpus", "latency_us", "user_threads",
        "bucket_us", "histogram_us", "analysis"}
MAX_ENTRIES = 100_000  # rtla allows more; this keeps its memory modest (4 B per bucket, CPU and context)
TRACE_LINES = 60         # of the saved trace, quoted as the analysis


@dataclass
class TimerlatSettings:
    interval_us: int = 1000
    duration_s: int = 60
    priority: int | None = None     # None: rtla's default (SCHED_FIFO 95 for its kernel threads)
    policy: str = "fifo"
    cpus: list[int] | str = "all"
    latency_us: int | None = 0      # --dma-latency; None leaves /dev/cpu_dma_latency alone
    user_threads: bool = False      # -u: rtla's user-space threads (rtla from Linux 6.6)
    bucket_us: int = 1
    histogram_us: int | None = None  # range of the histogram; default from the gates
    analysis: bool = True

    def contexts(self) -> list[str]:
        return ["irq", "thread"] + (["user"] if self.user_threads else [])


def parse_settings(c: _Checker, raw: Any, key: tuple[Any, ...]) -> TimerlatSettings:
    """The `timerlat:` section of a measurement, validated with file and line."""
    m = c.mapping(raw if raw is not None else {}, key, KEYS, {"duration"})
    s = TimerlatSettings(duration_s=c.duration(m["duration"], key + ("duration",)))
    if "interval_us" in m:
        s.interval_us = c.integer(m["interval_us"], key + ("interval_us",), 1, 1_000_000)
    if "policy" in m:
        if m["policy"] not in POLICIES:
            raise c.fail(key + ("policy",), f"unknown policy {m['policy']!r} (one of {', '.join(POLICIES)})")
        s.policy = m["policy"]
    if "priority" in m:
        lo, hi = (1, 99) if s.policy in ("fifo", "rr") else (-20, 19)
        s.priority = c.integer(m["priority"], key + ("priority",), lo, hi)
    elif s.policy == "other":
        s.priority = 0
    if "cpus" in m:
        s.cpus = c.cpus(m["cpus"], key + ("cpus",))
        if isinstance(s.cpus, list):
            s.cpus = sorted(set(s.cpus))
    if "latency_us" in m:
        s.latency_us = None if m["latency_us"] is None else c.integer(m["latency_us"], key + ("latency_us",), 0, 10000)
    for flag in ("user_threads", "analysis"):
        if flag in m:
            setattr(s, flag, c.boolean(m[flag], key + (flag,)))
    if "bucket_us" in m:
        s.bucket_us = c.integer(m["bucket_us"], key + ("bucket_us",), 1, 100_000)
    if "histogram_us" in m:
        s.histogram_us = c.integer(m["histogram_us"], key + ("histogram_us",), 10, 100_000_000)
        if s.histogram_us // s.bucket_us > MAX_ENTRIES:
            raise c.fail(key + ("histogram_us",), f"more than {MAX_ENTRIES} buckets of {s.bucket_us} us: "
                         "raise bucket_us")
    return s


def as_sampler(s: TimerlatSettings) -> SamplerSettings:
    """The thread groups rtla's columns form (one per context, each on the measured CPUs): what
    the rest of rtgate (CPU placement of loads, require:, predicted test ids) reads."""
    from .thresholds import SamplerSettings, ThreadGroup
    prio = s.priority if s.priority is not None else 95
    return SamplerSettings(interval_us=s.interval_us, duration_s=s.duration_s, latency_us=s.latency_us,
                           threads=[ThreadGroup(name=ctx, count=None, cpus=s.cpus, priority=prio, policy=s.policy)
                                    for ctx in s.contexts()])


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
        return s.histogram_us
    figures = [g.limit_us or 0.0 for g in m.gates] + [g.above_us or 0.0 for g in m.gates]
    want = max([1000.0] + [2.0 * f for f in figures])
    return int(min(want, MAX_ENTRIES * s.bucket_us))


def entries(m: Measurement) -> int:
    """rtla's -E: buckets of bucket_us covering the histogram range (rtla wants at least 10)."""
    return max(10, math.ceil(histogram_range_us(m) / m.timerlat.bucket_us))


def measured_cpu_list(s: TimerlatSettings) -> list[int]:
    return sorted(os.sched_getaffinity(0)) if s.cpus == "all" else list(s.cpus)  # type: ignore[arg-type]


def rtla_args(m: Measurement, duration_s: int | None, trace_path: str | None) -> list[str]:
    """Options of `rtla timerlat hist` for a measurement (no program name)."""
    s = m.timerlat
    args = ["timerlat", "hist", "-p", str(s.interval_us), "-d", f"{duration_s or s.duration_s}s",
            "-c", ",".join(map(str, measured_cpu_list(s))), "-b", str(s.bucket_us), "-E", str(entries(m))]
    if s.priority is not None:
        args += ["-P", f"{POLICIES[s.policy]}:{s.priority}"]
    if s.latency_us is not None:
        args += ["--dma-latency", str(s.latency_us)]
    if s.user_threads:
        args.append("-u")
    limits = stop_limits(m) if s.analysis else {}
    if "irq" in limits:
        args += ["-i", str(limits["irq"])]
    if "thread" in limits:
        args += ["-T", str(limits["thread"]), "-s", str(limits["thread"])]
    if limits and trace_path:
        # rtla 6.1 drops the first character of -t's argument (meant to be '='); later rtla drops
        # a leading '=': this spelling names the file for both.
        args.append(f"-t={trace_path}")
    return args


def find_rtla() -> str | None:
    return shutil.which(RTLA)


def _tracefs() -> Path | None:
    for d in (Path("/sys/kernel/tracing"), Path("/sys/kernel/debug/tracing")):
        if (d / "available_tracers").is_file():
            return d
    return None


def unavailable(m: Measurement) -> list[str]:
    """Why this system cannot run the measurement (empty when it can): the measurement is then
    not made and its gates are ERROR with these reasons."""
    reasons = []
    if find_rtla() is None:
        reasons.append("rtla not found (apt-get install rtla)")
    if os.geteuid() != 0:
        reasons.append("rtla needs root")
    tracefs = _tracefs()
    if tracefs is None:
        reasons.append("tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)")
    else:
        try:
            tracers = (tracefs / "available_tracers").read_text().split()
        except OSError as e:
            tracers = []
            reasons.append(f"cannot read {tracefs}/available_tracers: {e.strerror}")
        if tracers and "timerlat" not in tracers:
            reasons.append(f"kernel {os.uname().release} has no timerlat tracer (CONFIG_TIMERLAT_TRACER)")
    rtla = find_rtla()
    if rtla and m.timerlat.user_threads and "--user-threads" not in _help(rtla):
        reasons.append("this rtla has no user-space threads (-u/--user-threads: rtla from Linux 6.6 on)")
    return reasons


def _help(rtla: str) -> str:
    try:
        r = subprocess.run([rtla, "timerlat", "hist", "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return r.stdout + r.stderr


def run(m: Measurement, outdir: Path, duration_s: int | None = None) -> tuple[RunResult, bool]:
    """Run rtla for a measurement; returns the results and whether the user interrupted it."""
    rtla = find_rtla()
    if rtla is None:
        raise SamplerError("rtla not found (apt-get install rtla)")
    outdir.mkdir(parents=True, exist_ok=True)
    out_path = outdir / f"{m.name}.rtla.txt"
    trace_path = (outdir / f"{m.name}.trace.txt").resolve()
    for stale in (out_path, trace_path):
        stale.unlink(missing_ok=True)
    argv = [rtla] + rtla_args(m, duration_s, str(trace_path))
    (outdir / f"{m.name}.cmdline").write_text(" ".join(argv) + "\n", encoding="utf-8")
    interrupted = False
    with out_path.open("w", encoding="utf-8") as out, (outdir / f"{m.name}.stderr").open("w") as err:
        try:
            proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=outdir)
        except OSError as e:
            raise SamplerError(f"cannot start {rtla}: {e.strerror}") from e
        try:
            rc = proc.wait()
        except KeyboardInterrupt:
            interrupted = True
            proc.send_signal(signal.SIGINT)  # rtla stops and prints what it has
            rc = proc.wait()
    text = out_path.read_text(encoding="utf-8", errors="replace")
    if rtla_parser.MAGIC not in text:
        detail = (outdir / f"{m.name}.stderr").read_text(errors="replace").strip().splitlines()
        first = next((ln for ln in detail + text.splitlines() if ln.strip()), f"exit status {rc}")
        raise SamplerError(f"measurement {m.name!r}: rtla measured nothing: {first.strip()}")
    s = m.timerlat
    run_result = rtla_parser.parse(out_path, bucket=s.bucket_us, entries=entries(m))
    run_result = with_all_cpus(run_result, m, measured_cpu_list(s))
    run_result.cmdline = " ".join(argv)
    if interrupted:
        run_result.stop_reason, run_result.signal = "signal", "SIGINT"
    if run_result.stop_reason == "threshold":
        run_result.environment["analysis"] = analysis_text(run_result.environment.get("analysis", ""), trace_path)
    return run_result, interrupted


def with_all_cpus(run: RunResult, m: Measurement, cpus: list[int]) -> RunResult:
    """rtla prints no column for a CPU without samples: add each measured CPU's missing contexts
    back as threads with 0 cycles (their gates are then ERROR, never silently absent)."""
    have = {(t.label, t.cpu) for t in run.threads}
    if all((ctx, cpu) in have for ctx in m.timerlat.contexts() for cpu in cpus):
        return run
    threads = list(run.threads)
    for ctx in m.timerlat.contexts():
        for cpu in cpus:
            if (ctx, cpu) not in have:
                threads.append(ThreadResult(index=0, cycles=0, min=None, max=None, avg=None, cpu=cpu, label=ctx,
                                            histogram=Histogram(unit=run.unit, buckets=[])))
    order = {c: i for i, c in enumerate(rtla_parser.CONTEXTS.values())}
    threads.sort(key=lambda t: (order.get(t.label or "", 9), t.cpu or 0))
    return replace(run, threads=[replace(t, index=i) for i, t in enumerate(threads)])


def analysis_text(printed: str, trace_path: Path) -> str:
    """What rtla printed when it stopped, and the end of the trace it saved (the timerlat events,
    IRQ and thread noise and the stack of the stopping sample)."""
    parts = [printed.strip()] if printed.strip() else []
    try:
        lines = [ln for ln in trace_path.read_text(errors="replace").splitlines() if not ln.startswith("#")]
    except OSError:
        lines = []
    if lines:
        parts.append(f"last {min(len(lines), TRACE_LINES)} lines of {trace_path.name}:")
        parts.extend(lines[-TRACE_LINES:])
    return "\n".join(parts)
