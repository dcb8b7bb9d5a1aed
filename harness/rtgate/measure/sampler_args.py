# SPDX-License-Identifier: GPL-2.0-or-later
"""A measurement of a threshold file -> the rtgate-sampler command line that runs it."""

from __future__ import annotations

import os
from dataclasses import replace

from rtgate.core.load_spec import LoadSpec
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


# The requirements the engine (rtgate-sampler --require) checks; measure/conditions.py's doctor
# checks around them stay advice.
ENGINE_REQUIREMENTS = (
    "preempt_rt",
    "isolated_cpus",
    "governor",
    "bare_metal",
    "rt_throttling_off",
    "architecture",
    "compatible",
    "dmi_product",
    "cpu_count",
    "no_competing_rt",
)


def engine_args(m: Measurement, duration_s: int | None = None, rt_priority: int | None = None) -> list[str]:
    """The whole measurement as the engine runs it, on this machine (rtgate run) and on a board
    (RTGATE_PLAN): the sampler's options, its gates, the requirements and the loads; for the timerlat
    backend, rtla's (timerlat_args). No output path: the caller names the folder (--output-dir).
    `rt_priority` (`--rt-priority`, one real-time thread group) replaces the file's priority."""
    from rtgate.errors import RtgateError

    if m.backend == "timerlat":
        if rt_priority is not None:
            raise RtgateError(f"measurement {m.name}: --rt-priority is for the sampler; set timerlat: priority")
        args = timerlat_args(m, duration_s)
    else:
        args = sampler_args(m, None, duration_s=duration_s, native_gates=True)
        if rt_priority is not None:
            if "-p" not in args or len(m.sampler.threads) != 1:
                raise RtgateError(
                    f"measurement {m.name}: --rt-priority needs one real-time thread group (set priorities in the file)"
                )
            args[args.index("-p") + 1] = str(rt_priority)
        args.append(f"--checkpoint={m.sampler.checkpoint_seconds}")
    args += [f"--measurement={m.name}", *require_args(m)]
    for spec in m.loads:
        if spec.kind != "none":
            args += load_args(m, spec)
    return args


def timerlat_args(m: Measurement, duration_s: int | None = None) -> list[str]:
    """The timerlat backend: where rtla measures (the threads' CPUs and priorities, which the
    requirements, the loads' placement and the competing-task scans read), its period and length,
    the PM QoS latency, and --timerlat's fields (measure/timerlat.py engine_spec)."""
    from rtgate.measure.timerlat import engine_spec

    s = m.timerlat
    plan = plan_here(m, duration_s)
    if plan.measured_cpus is None:
        where = ["-S", f"-p{min((t.priority for t in plan.threads), default=0)}"]
    else:
        where = [
            f"--thread-cpus={','.join(str(t.cpu) for t in plan.threads)}",
            f"--thread-priorities={','.join(str(t.priority) for t in plan.threads)}",
        ]
    latency = "--default-system" if s.latency_us is None else f"--latency={s.latency_us}"
    return [
        *where,
        "-i",
        str(s.interval_us),
        "-D",
        f"{duration_s or s.duration_s}s",
        latency,
        "-q",
        f"--timerlat={engine_spec(m)}",
    ]


def require_args(m: Measurement) -> list[str]:
    """The measurement's `require:` as the engine's --require options."""
    from rtgate.errors import RtgateError

    args = []
    for key, value in m.require.items():
        if key not in ENGINE_REQUIREMENTS:
            raise RtgateError(
                f"measurement {m.name}: require {key} is not one the measurement engine checks "
                f"({', '.join(ENGINE_REQUIREMENTS)})"
            )
        if value is True:
            args.append(f"--require={key}")
        elif value is not False and value is not None:
            args.append(f"--require={key}={value}")
    return args


def load_args(m: Measurement, spec: LoadSpec) -> list[str]:
    """One load as --load (and, for a custom load, its command's words as --load-arg); the engine
    places it (measured, others, all or a list) and holds it to its level, the kind's default unless
    the file sets one; a kcompile load without tree: builds the engine's own bundled C project."""
    cpus = spec.cpus if isinstance(spec.cpus, str) else ",".join(map(str, spec.cpus))  # the engine reads on
    fields = [f"kind={spec.kind}", f"cpus={cpus}", f"warmup={spec.warmup_seconds:g}"]
    if spec.workers:
        fields.append(f"workers={spec.workers}")
    if spec.kind in ("memory", "io"):
        fields.append(f"size={spec.size}")
    level = spec.min_ops_per_second if spec.kind in ("io", "network", "timer") else spec.min_cpu_percent
    if level is not None:
        fields.append(f"min={level:g}")
    if spec.tree:
        fields.append(f"tree={spec.tree}")
    return [f"--load={','.join(fields)}"] + [f"--load-arg={w}" for w in spec.command]


def plan_text(words: list[str]) -> str:
    """The words as one RTGATE_PLAN value: separated by spaces, a space or '%' inside a word written
    %20 or %25 (the engine splits and decodes it); refused where a word cannot travel in a LAVA
    parameter (quotes, backslashes, control characters)."""
    from rtgate.errors import RtgateError

    for w in words:
        if any(c in "'\"\\`$" or not c.isprintable() for c in w):
            raise RtgateError(f"engine option {w!r} cannot travel in a board parameter (no quotes or backslashes)")
    return " ".join(w.replace("%", "%25").replace(" ", "%20") for w in words)
