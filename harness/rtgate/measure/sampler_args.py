# SPDX-License-Identifier: GPL-2.0-or-later
"""A measurement of a threshold file -> the rtgate-sampler command line that runs it."""

from __future__ import annotations

import os
from dataclasses import replace

from rtgate.core.thread_plan import plan_anywhere, plan_here
from rtgate.core.thresholds import Measurement, SamplerSettings


def with_duration(settings: SamplerSettings, duration_s: int | None) -> SamplerSettings:
    """The --duration override: a fixed run length instead of the file's duration or loops."""
    if duration_s is None:
        return settings
    return replace(settings, duration_s=duration_s, loops=None)


def sampler_args(
    m: Measurement, json_path: str | None, duration_s: int | None = None, native_gates: bool = False
) -> list[str]:
    """Options only (no program name). Plain cyclictest spelling where one group allows it.

    native_gates: add the measurement's gates as --gate options (boards without Python)."""
    if m.backend != "sampler":
        from rtgate.errors import RtgateError

        raise RtgateError(f"measurement {m.name} uses the {m.backend} backend, which rtgate-sampler cannot run")
    s = with_duration(m.sampler, duration_s)
    args = _thread_args(m, s)
    args += ["-i", str(s.interval_us), "-d", str(s.distance_us)]
    if s.duration_s is not None:
        args += ["-D", f"{s.duration_s}s"]
    if s.loops is not None:
        args += ["-l", str(s.loops), "--loops-per-thread"]  # every thread its periods, not cyclictest's first-one-ends
    if s.mlockall:
        args.append("-m")
    args.append("--default-system" if s.latency_us is None else f"--latency={s.latency_us}")
    if s.histogram_us:
        args += ["-h", str(s.histogram_us)]
        if json_path:
            args.append(f"--histfile={os.path.splitext(json_path)[0]}.hist")
    args += _timer_args(s)
    args.append(f"--block={s.block_seconds:g}")
    args.append("-q")
    if json_path:
        args += [f"--json={json_path}", f"--checkpoint={s.checkpoint_seconds}"]
    if native_gates:
        from rtgate.measure.native_gates import native_args

        args += native_args(m)
    return args


def _thread_args(m: Measurement, s: SamplerSettings) -> list[str]:
    """The threads: where each runs, at which priority and policy."""
    groups = s.threads
    args: list[str] = []
    if len(groups) == 1:
        g = groups[0]
        if g.cpus == "all":
            args.append("-S")
        elif g.cpus:
            args += ["-t", str(g.count or len(g.cpus)), "-a", ",".join(map(str, g.cpus))]
        else:  # not pinned: plain -t would pin round-robin, as cyclictest 2.x does
            args.append(f"--thread-cpus={','.join(['*'] * (g.count or 1))}")
        if g.policy in ("fifo", "rr"):
            args += ["-p", str(g.priority)]
    else:  # "all" is refused with several groups: the plan needs no machine
        threads = plan_anywhere(m).threads
        cpus = ",".join("*" if t.cpu is None else str(t.cpu) for t in threads)
        args += [f"--thread-cpus={cpus}", f"--thread-priorities={','.join(str(t.priority) for t in threads)}"]
    if groups[0].policy != "fifo":
        args.append(f"--policy={groups[0].policy}")
    return args


def _timer_args(s: SamplerSettings) -> list[str]:
    """How each thread sleeps and what it measures against: clock, timers, relative, ns, breaktrace."""
    args: list[str] = []
    if s.clock == "realtime":
        args += ["-c", "1"]
    if s.posix_timers:
        args.append("-x")
    if s.relative:
        args.append("-r")
    if s.nsecs:
        args.append("-N")
    if s.breaktrace_us:
        args += ["-b", str(s.breaktrace_us * (1000 if s.nsecs else 1))]
    return args


def expected_seconds(m: Measurement, duration_s: int | None = None) -> float | None:
    """How long the measurement runs on this machine; None when it runs until stopped."""
    return plan_here(m, duration_s).expected_seconds
