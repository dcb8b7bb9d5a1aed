# SPDX-License-Identifier: GPL-2.0-or-later
"""Every threshold-file key, declared once: its type, unit, range, default and meaning.

The loader (thresholds.py, timerlat_spec.py) takes its allowed keys and its ranges from these tables, and
scripts/manpage.py writes doc/thresholds.rst and doc/rtgate-thresholds.5 from them, so the reference cannot
drift from what is checked (tests/unit/test_keys.py holds them equal).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import KW_ONLY, dataclass

from rtgate.core.gate_kinds import KINDS as GATE_KINDS
from rtgate.core.load_spec import KINDS as LOAD_KINDS

# How each type is written in the reference.
TYPES = {
    "int": "whole number",
    "float": "number",
    "bool": "true or false",
    "str": "string",
    "name": "name (letters, digits, - _ .)",
    "choice": "one of",
    "duration": "duration (30, 30s, 10m, 2h, 1d)",
    "rate": "rate with its unit ('0.1%' or '100ppm'; a bare number is refused)",
    "cpus": "CPU list (3, [0, 2], '0-3')",
    "path": "file path",
    "words": "list of strings",
    "size": "size (64M, 1G)",
    "list": "list",
    "mapping": "mapping",
    "load": "load, or list of loads",
}


@dataclass(frozen=True)
class Key:
    """One key of a threshold file: its name, type, meaning, unit, range and default."""

    name: str
    type: str  # a key of TYPES
    doc: str
    unit: str = ""
    lo: float | None = None
    hi: float | None = None
    _: KW_ONLY
    lo_open: bool = False  # lo itself is refused
    default: str = ""  # as the reference shows it; "" = no default (required, or unset)
    required: bool = False
    choices: tuple[str, ...] = ()
    nullable: bool = False  # null is a value (not "remove the inherited key")

    def range_text(self) -> str:
        if self.choices:
            return ", ".join(self.choices)
        if self.lo is None or self.hi is None:
            return ""
        lo = f"above {self.lo:g}" if self.lo_open else f"{self.lo:g}"
        return f"{lo} .. {self.hi:g}"


def table(*keys: Key) -> dict[str, Key]:
    return {k.name: k for k in keys}


TOP = table(
    Key("platform", "name", "the platform this file is for; reports and history group by it", required=True),
    Key("description", "str", "free text: where the numbers come from"),
    Key(
        "extends",
        "path",
        "a parent file (relative to this one) this file is merged over; null removes an inherited key",
    ),
    Key("measurements", "mapping", "measurement name -> measurement (below)", required=True),
    Key("allow_inconclusive", "bool", "an INCONCLUSIVE gate does not fail the run", default="false"),
    Key("require", "mapping", "what every measurement needs of the system (see require)"),
    Key("history", "mapping", "regression-detection settings for rtgate history compare (see history)"),
    Key("strict", "bool", "a preflight warning makes every gate ERROR, unmeasured", default="false"),
)

MEASUREMENT = table(
    Key("description", "str", "free text"),
    Key("backend", "choice", "what measures", choices=("sampler", "timerlat"), default="sampler"),
    Key("sampler", "mapping", "rtgate-sampler settings (backend: sampler)"),
    Key("timerlat", "mapping", "rtla timerlat settings (backend: timerlat)"),
    Key("gates", "list", "the gates judged on this measurement's results", required=True),
    Key("load", "load", "background load: one (a kind or a mapping, below), or a list of them run together"),
    Key("require", "mapping", "what this measurement needs of the system; merged over the file's"),
    Key("strict", "bool", "as the top-level strict, for this measurement", default="file's strict"),
)

POLICIES = ("fifo", "rr", "other", "batch", "idle")

SAMPLER = table(
    Key("interval_us", "int", "period of the first thread", "us", 1, 3_600_000_000, default="1000"),
    Key("distance_us", "int", "added to the period of each further thread", "us", 0, 3_600_000_000, default="0"),
    Key("duration", "duration", "how long to measure (this or loops is required)", "s", 1, 315_360_000),
    Key("loops", "int", "periods each thread runs (this or duration is required)", "periods", 1, 2**62),
    Key("policy", "choice", "scheduling policy of every thread", choices=POLICIES, default="fifo"),
    Key("priority", "int", "default priority of the thread groups", "", 0, 99, default="80 (fifo, rr), else 0"),
    Key("mlockall", "bool", "lock memory", default="true"),
    Key(
        "latency_us",
        "int",
        "held in /dev/cpu_dma_latency; null leaves it alone",
        "us",
        0,
        2**31 - 1,
        default="0",
        nullable=True,
    ),
    Key("histogram_us", "int", "also write the rt-tests -h view with this many buckets", "us", 1, 1_000_000),
    Key("clock", "choice", "the clock measured", choices=("monotonic", "realtime"), default="monotonic"),
    Key("posix_timers", "bool", "POSIX interval timers instead of clock_nanosleep", default="false"),
    Key("relative", "bool", "relative sleeps", default="false"),
    Key("nsecs", "bool", "measure in ns", default="false"),
    Key("breaktrace_us", "int", "stop when a latency exceeds this", "us", 1, 2**32 - 1),
    Key("block_seconds", "float", "block-maxima block length", "s", 0.001, 86400.0, default="1"),
    Key("checkpoint_seconds", "int", "rewrite the results every so often (0: off)", "s", 0, 86400, default="60"),
    Key("threads", "list", "thread groups run together (below)", default="[{name: all, cpus: all}]"),
)

THREAD_GROUP = table(
    Key("name", "name", "what gates' threads: refer to", required=True),
    Key("count", "int", "threads in the group (not with cpus: all)", "threads", 1, 1024, default="1 without cpus"),
    Key("cpus", "cpus", "CPUs the threads are pinned to, round-robin; all: one thread per CPU"),
    Key("priority", "int", "priority of its threads", "", 0, 99, default="the sampler's priority"),
    Key("policy", "choice", "must equal the sampler's policy", choices=POLICIES, default="the sampler's policy"),
)

GATE = table(
    Key("name", "name", "the gate's name, unique in its measurement; extends merges gates by it", required=True),
    Key("kind", "choice", "how it judges (see Gate kinds)", choices=tuple(GATE_KINDS), required=True),
    Key("limit_us", "float", "the latency limit", "us", 0.0, 1e9),
    Key("above_us", "float", "samples above this count as misses", "us", 0.0, 1e9),
    Key("rate", "rate", "the largest share of samples allowed above above_us", "% or ppm", 0.0, 1.0),
    Key("percentile", "float", "the percentile judged (99, 99.9; below 100)", "%", 0.0, 100.0, lo_open=True),
    Key("max_count", "int", "the most missed periods allowed", "periods", 0, 2**62),
    Key("max_rate", "rate", "the largest share of missed periods allowed", "% or ppm", 0.0, 1.0),
    Key("confidence", "float", "confidence of a rate's bound", "", 0.5, 0.999999, default="0.95"),
    Key("threads", "list", "thread group names it judges", default="every thread"),
    Key("cpus", "cpus", "CPUs whose threads it judges", default="every thread"),
    Key(
        "scope",
        "choice",
        "a verdict per thread, or one for the worst",
        choices=("per_thread", "worst"),
        default="per_thread",
    ),
    Key("min_samples", "int", "fewer samples make it INCONCLUSIVE", "samples", 1, 2**62, default="1; p99.9: 1000"),
    Key("critical", "bool", "guards what must never happen: listed first when it fails", default="false"),
    Key("description", "str", "free text"),
)

LOAD = table(
    Key("kind", "choice", "the load", choices=LOAD_KINDS, required=True),
    Key("workers", "int", "load processes", "", 1, 4096, default="one per CPU of the placement"),
    Key("cpus", "cpus", "where it runs: measured, others, all or a CPU list", default="others"),
    Key("size", "size", "memory per worker (memory, io)", "bytes", default="64M"),
    Key("command", "words", "custom: the program and its arguments (no shell)"),
    Key("warmup_seconds", "float", "runs this long before the sampler starts", "s", 0.0, 3600.0, default="2"),
    Key(
        "min_cpu_percent",
        "float",
        "CPU the load must hold, else the gates are ERROR",
        "%",
        0.0,
        1e6,
        default="25 per worker; custom: 1",
    ),
    Key(
        "min_ops_per_second",
        "float",
        "io, network, timer: stress-ng's operation rate it must hold",
        "ops/s",
        0.0,
        1e12,
        default="1",
    ),
    Key("tree", "path", "kcompile: a kernel source tree", default="a bundled C project"),
)

REQUIRE = table(
    Key("preempt_rt", "bool", "the kernel is PREEMPT_RT"),
    Key("isolated_cpus", "bool", "the measured CPUs are isolated (isolcpus, nohz_full)"),
    Key("governor", "str", "the measured CPUs' cpufreq governor"),
    Key("bare_metal", "bool", "not a virtual machine"),
    Key("rt_throttling_off", "bool", "sched_rt_runtime_us is -1"),
    Key("architecture", "str", "uname -m"),
    Key("compatible", "str", "a devicetree compatible string of the board"),
    Key("dmi_product", "str", "DMI product name of the board"),
    Key("cpu_count", "int", "online CPUs", "CPUs", 1, 4096),
    Key("no_competing_rt", "bool", "no other real-time task on the measured CPUs"),
)

HISTORY = table(
    Key("alpha", "float", "significance level of a regression", "", 0.0, 0.5, lo_open=True, default="0.05"),
    Key("min_effect", "rate", "smallest relative change reported", "% or ppm", 0.0, 10.0, default="5%"),
    Key("min_runs", "int", "baseline runs needed", "runs", 2, 10000, default="3"),
    Key("metrics", "list", "tail, max, min, avg, p99, p99.9 or above_<us>", default="the gates' figures"),
)

TIMERLAT = table(
    Key("duration", "duration", "how long to measure", "s", 1, 315_360_000, required=True),
    Key(
        "interval_us",
        "int",
        "timer period (the tracer refuses under 100 us, rtla over 1 s)",
        "us",
        100,
        1_000_000,
        default="1000",
    ),
    Key("priority", "int", "priority (fifo, rr: 1..99; other: nice -20..19)", "", 1, 99, default="rtla's (95)"),
    Key("policy", "choice", "policy of rtla's threads", choices=("fifo", "rr", "other"), default="fifo"),
    Key("cpus", "cpus", "measured CPUs", default="all"),
    Key("latency_us", "int", "--dma-latency; null leaves it alone", "us", 0, 10000, default="0", nullable=True),
    Key("user_threads", "bool", "also measure rtla's user-space threads (-u)", default="false"),
    Key("bucket_us", "int", "histogram bucket width", "us", 1, 100_000, default="1"),
    Key("histogram_us", "int", "histogram range", "us", 10, 100_000_000, default="from the gates"),
    Key("analysis", "bool", "rtla's auto-analysis on a stop", default="true"),
)

# Each section, by the path the reference shows it under.
SECTIONS: dict[str, dict[str, Key]] = {
    "(top level)": TOP,
    "measurements.<name>": MEASUREMENT,
    "measurements.<name>.sampler": SAMPLER,
    "measurements.<name>.sampler.threads[]": THREAD_GROUP,
    "measurements.<name>.gates[]": GATE,
    "measurements.<name>.load": LOAD,
    "require (top level or measurement)": REQUIRE,
    "history": HISTORY,
    "measurements.<name>.timerlat": TIMERLAT,
}

# Keys for which null is a value; everywhere else, null in a file that extends another removes the inherited key.
NULLABLE = frozenset(k.name for t in SECTIONS.values() for k in t.values() if k.nullable)


def gate_kinds_taking(key: str) -> list[str]:
    """The gate kinds that take a kind-specific key (all kinds for the common ones)."""
    specific = set().union(*(k.takes for k in GATE_KINDS.values()))
    if key not in specific:
        return list(GATE_KINDS)
    return [name for name, k in GATE_KINDS.items() if key in k.takes]


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    """'; did you mean 'max'?' for a near miss, else ''."""
    if not isinstance(word, str):
        return ""
    import difflib  # only for a mistake: a valid file (rtgate validate, check) does not pay its import

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""
