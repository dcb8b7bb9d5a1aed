# SPDX-License-Identifier: GPL-2.0-or-later
"""The timerlat backend's part of a threshold file (the `timerlat:` section) and the shape of its
results: one thread per rtla context (irq, thread, user) and measured CPU. Running rtla is
rtgate.measure.timerlat; reading its output, rtgate.parsers.rtla."""

from __future__ import annotations

from rtgate.core import keys
from rtgate.core.spec import Measurement, SamplerSettings, ThreadGroup, TimerlatSettings

TYPE_CHECKING = False  # typing's constant without importing typing: `rtgate validate` need not load it
# Annotations only: the rtla parser reads CONTEXTS here, not the threshold loader (YAML), and
# `rtgate validate` reads no results (with_all_cpus imports the model when it runs).
if TYPE_CHECKING:
    from typing import Any

    from rtgate.core.checker import Checker
    from rtgate.core.model import RunResult

CONTEXTS = ("irq", "thread", "user")  # rtla's IRQ-, Thr- and Usr- columns; results list them in this order
POLICIES = {"fifo": "f", "rr": "r", "other": "o"}
KEYS = set(keys.TIMERLAT)
MAX_ENTRIES = 100_000  # rtla allows more; this keeps its memory modest (4 B per bucket, CPU and context)
# timerlat -p: the kernel's timerlat tracer refuses a period under 100 us (trace_osnoise.c: timerlat_min_period),
# rtla one over 1 s ("Period longer than 1 s"): keys.TIMERLAT["interval_us"] declares that range


def parse_settings(c: Checker, raw: Any, key: tuple[Any, ...]) -> TimerlatSettings:
    """The `timerlat:` section of a measurement, validated with file and line."""
    m = c.mapping(raw if raw is not None else {}, key, KEYS, {"duration"})
    s = TimerlatSettings(duration_s=c.field(keys.TIMERLAT, m, key, "duration"))
    c.fields(keys.TIMERLAT, m, key, ("interval_us",), s)
    if "policy" in m:
        if not isinstance(m["policy"], str) or m["policy"] not in POLICIES:  # a list or mapping: not a policy
            raise c.fail(
                key + ("policy",),
                f"unknown policy {m['policy']!r}{keys.did_you_mean(m['policy'], POLICIES)}"
                f" (one of {', '.join(POLICIES)})",
            )
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
    c.fields(keys.TIMERLAT, m, key, ("latency_us", "user_threads", "analysis", "bucket_us", "histogram_us"), s)
    if s.histogram_us is not None and s.histogram_us // s.bucket_us > MAX_ENTRIES:
        raise c.fail(key + ("histogram_us",), f"more than {MAX_ENTRIES} buckets of {s.bucket_us} us: raise bucket_us")
    return s


def as_sampler(s: TimerlatSettings) -> SamplerSettings:
    """The thread groups rtla's columns form (one per context, each on the measured CPUs): what
    the rest of rtgate (CPU placement of loads, require:, predicted test ids) reads."""
    prio = s.priority if s.priority is not None else 95
    return SamplerSettings(
        interval_us=s.interval_us,
        duration_s=s.duration_s,
        latency_us=s.latency_us,
        threads=[
            ThreadGroup(name=ctx, count=None, cpus=s.cpus, priority=prio, policy=s.policy) for ctx in s.contexts()
        ],
    )


def with_all_cpus(run: RunResult, m: Measurement, cpus: list[int]) -> RunResult:
    """rtla prints no column for a CPU without samples: add each measured CPU's missing contexts
    back as threads with 0 cycles (their gates are then ERROR, never silently absent)."""
    have = {(t.label, t.cpu) for t in run.threads}
    if all((ctx, cpu) in have for ctx in m.timerlat.contexts() for cpu in cpus):
        return run
    from dataclasses import replace

    from rtgate.core.model import Histogram, ThreadResult  # here: threshold files alone need no results model

    threads = list(run.threads)
    for ctx in m.timerlat.contexts():
        for cpu in cpus:
            if (ctx, cpu) not in have:
                threads.append(
                    ThreadResult(
                        index=0,
                        cycles=0,
                        min=None,
                        max=None,
                        avg=None,
                        cpu=cpu,
                        label=ctx,
                        histogram=Histogram(unit=run.unit, buckets=[]),
                    )
                )
    order = {c: i for i, c in enumerate(CONTEXTS)}
    threads.sort(key=lambda t: (order.get(t.label or "", 9), t.cpu or 0))
    return replace(run, threads=[replace(t, index=i) for i, t in enumerate(threads)])
