# SPDX-License-Identifier: GPL-2.0-or-later
"""The timerlat backend: a measurement made by the kernel's timerlat tracer through `rtla timerlat hist`.

Per CPU, rtla reports the IRQ latency (timer expiry to the timer IRQ handler), the thread
latency (expiry to the timerlat thread running) and, with user-space threads, the user latency;
each becomes a thread of the results (irq-cpu0, thread-cpu0, ...), so every gate kind applies.
When the measurement has max gates, rtla is told to stop tracing at the first sample that
fails one (-i/-T, plus -s for the stack and -t for the trace), and what it printed and
saved is kept with the results as the analysis.
"""

from __future__ import annotations

import math
import os
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rtgate.core.model import RunResult
from rtgate.core.spec import TimerlatSettings
from rtgate.core.timerlat_spec import MAX_ENTRIES, POLICIES, with_all_cpus
from rtgate.errors import RtgateError, SamplerError
from rtgate.measure.stop import die_with_parent
from rtgate.parsers import rtla as rtla_parser
from rtgate.safe_io import Folder

if TYPE_CHECKING:
    from rtgate.core.thresholds import Measurement

RTLA = "rtla"
TRACE_LINES = 60  # of the saved trace, quoted as the analysis
READ_MAX = 1 << 20  # of rtla's stderr, what its first error line is looked for in
KILL_WAIT_S = 30  # after SIGKILL, before rtgate gives up waiting for rtla
GRACE_S = 120  # beyond its duration, for rtla to set up the tracer (slow under emulation) and stop


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


def rtla_args(m: Measurement, duration_s: int | None, trace_path: str | None) -> list[str]:
    """Options of `rtla timerlat hist` for a measurement (no program name)."""
    s = m.timerlat
    args = [
        "timerlat",
        "hist",
        "-p",
        str(s.interval_us),
        "-d",
        f"{duration_s or s.duration_s}s",
        "-c",
        ",".join(map(str, measured_cpu_list(s))),
        "-b",
        str(s.bucket_us),
        "-E",
        str(entries(m)),
    ]
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


def run(
    m: Measurement, folder: Folder, duration_s: int | None = None, stop_requested: Callable[[], bool] = lambda: False
) -> RunResult:
    """Run rtla for a measurement, its outputs in `folder`. When stop_requested() turns true, rtla gets
    SIGINT: it stops and prints what it has, which is returned (the caller marks the run stopped)."""
    rtla = find_rtla()
    if rtla is None:
        raise SamplerError("rtla not found (apt-get install rtla)")
    outdir = folder.path
    out_name, trace_name, err_name = f"{m.name}.rtla.txt", f"{m.name}.trace.txt", f"{m.name}.stderr"
    out_path = outdir / out_name
    trace_path = (outdir / trace_name).resolve()
    for stale in (out_name, trace_name):
        folder.unlink(stale)
    argv = [rtla] + rtla_args(m, duration_s, str(trace_path))
    folder.replace(f"{m.name}.cmdline", shlex.join(argv) + "\n")
    with folder.create(out_name) as out, folder.create(err_name) as err:
        try:
            proc = subprocess.Popen(
                argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=outdir, preexec_fn=_child_setup()
            )
        except OSError as e:
            raise SamplerError(f"cannot start {rtla}: {e.strerror}") from e
        rc = _wait(proc, (duration_s or m.timerlat.duration_s) + GRACE_S, stop_requested)
    text = folder.read_text(out_name)
    if rtla_parser.MAGIC not in text:
        detail = folder.read_text(err_name, READ_MAX).strip().splitlines()
        first = next((ln for ln in detail + text.splitlines() if ln.strip()), f"exit status {rc}")
        raise SamplerError(f"measurement {m.name!r}: rtla measured nothing: {first.strip()}")
    s = m.timerlat
    run_result = rtla_parser.parse(out_path, bucket=s.bucket_us, entries=entries(m))
    run_result = with_all_cpus(run_result, m, measured_cpu_list(s))
    run_result.cmdline = shlex.join(argv)
    if run_result.stop_reason == "threshold":
        run_result.environment["analysis"] = analysis_text(
            run_result.environment.get("analysis", ""), folder, trace_name
        )
    return run_result


def _child_setup() -> Callable[[], None]:
    """rtla starts with SIGINT ignored: a SIGINT before it installs its own handler (setting up the
    tracer takes seconds under emulation) would otherwise kill it with nothing printed and the
    tracer left on; _wait repeats its SIGINT until rtla stops. If rtgate dies, rtla gets SIGINT."""
    on_parent_death = die_with_parent(signal.SIGINT)

    def setup() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        on_parent_death()

    return setup


def _wait(proc: subprocess.Popen[bytes], seconds: float, stop_requested: Callable[[], bool]) -> int:
    """rtla's exit status. On a stop request, or when rtla outlives its duration, it gets SIGINT (it
    stops and prints what it has), then SIGKILL: a CI gate never hangs on it."""
    deadline = time.monotonic() + seconds
    asked: float | None = None
    next_int = 0.0
    while True:
        try:
            rc = proc.wait(timeout=0.1)
            break
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if asked is None and (stop_requested() or now > deadline):
            asked = now
        if asked is not None:
            if now - asked > GRACE_S + KILL_WAIT_S:
                # SIGKILL did not end it: stuck in the kernel. Say where instead of waiting forever.
                try:
                    where = Path(f"/proc/{proc.pid}/wchan").read_text().strip() or "?"
                except OSError:
                    where = "?"
                raise SamplerError(
                    f"rtla (pid {proc.pid}) does not die even with SIGKILL: stuck in the kernel "
                    f"at {where}; the tracer may be left on"
                )
            if now - asked > GRACE_S:
                proc.kill()
            elif now >= next_int:  # again and again: rtla ignores it until its handler is installed
                proc.send_signal(signal.SIGINT)
                next_int = now + 2.0
    if asked is not None and not stop_requested():
        raise SamplerError(f"rtla did not stop {seconds:.0f} s after it started; stopped it")
    return rc


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
