# SPDX-License-Identifier: GPL-2.0-or-later
"""A threshold file as the rest of rtgate reads it: the data classes thresholds.py fills (and
timerlat_spec.py, for the `timerlat:` section). Data only: no loading, no checking."""

from __future__ import annotations

from dataclasses import dataclass, field

from rtgate.core.load_spec import LoadSpec

TYPE_CHECKING = False  # typing's constant without importing typing: `rtgate validate` need not load it
if TYPE_CHECKING:
    from typing import Any

Where = tuple[str, int]  # file, line


@dataclass
class ThreadGroup:
    """A group of sampler threads: how many, on which CPUs, at which policy and priority."""

    name: str
    count: int | None  # None: one per CPU of `cpus`
    cpus: list[int] | str | None  # list, "all" (every CPU of the board), or None (not pinned)
    priority: int
    policy: str


@dataclass
class SamplerSettings:
    """rtgate-sampler's settings of one measurement (its `sampler:` section)."""

    interval_us: int = 1000
    distance_us: int = 0
    duration_s: int | None = None
    loops: int | None = None
    mlockall: bool = True
    latency_us: int | None = 0  # /dev/cpu_dma_latency; None leaves it alone
    histogram_us: int | None = None  # also write the rt-tests -h view
    clock: str = "monotonic"
    posix_timers: bool = False
    relative: bool = False
    nsecs: bool = False
    breaktrace_us: int | None = None
    block_seconds: float = 1.0
    checkpoint_seconds: int = 60
    threads: list[ThreadGroup] = field(default_factory=list)


@dataclass
class GateSpec:
    """One gate of a measurement as the threshold file states it (a key not given: None)."""

    name: str
    kind: str
    where: Where
    limit_us: float | None = None
    above_us: float | None = None
    rate: float | None = None
    percentile: float | None = None
    max_count: int | None = None
    max_rate: float | None = None
    confidence: float = 0.95
    threads: list[str] | None = None
    cpus: list[int] | None = None
    scope: str = "per_thread"
    min_samples: int | None = None
    critical: bool = False
    description: str = ""


@dataclass
class Measurement:
    """One measurement: its backend's settings, gates, loads and requirements."""

    name: str
    description: str
    sampler: SamplerSettings
    gates: list[GateSpec]
    where: Where
    loads: list[LoadSpec] = field(default_factory=list)  # run together; none: []
    require: dict[str, Any] = field(default_factory=dict)
    backend: str = "sampler"  # or "timerlat" (rtla; settings in `timerlat`)
    timerlat: TimerlatSettings = field(default_factory=lambda: TimerlatSettings())  # read when backend is timerlat
    strict: bool = False  # a preflight warning makes every gate ERROR, unmeasured

    @property
    def load(self) -> LoadSpec:
        """The one load (kind none when there is none), for what runs one load only (the board script)."""
        if len(self.loads) > 1:
            raise ValueError(f"measurement {self.name} runs {len(self.loads)} loads: read .loads")
        return self.loads[0] if self.loads else LoadSpec()


@dataclass
class ThresholdFile:
    """A threshold file with the files it extends merged in."""

    path: str
    platform: str
    description: str
    measurements: dict[str, Measurement]
    files: list[str]
    allow_inconclusive: bool = False
    history: dict[str, Any] = field(default_factory=dict)


@dataclass
class TimerlatSettings:
    """rtla timerlat's settings of one measurement (its `timerlat:` section)."""

    interval_us: int = 1000
    duration_s: int = 60
    priority: int | None = None  # None: rtla's default (SCHED_FIFO 95 for its kernel threads)
    policy: str = "fifo"
    cpus: list[int] | str = "all"
    latency_us: int | None = 0  # --dma-latency; None leaves /dev/cpu_dma_latency alone
    user_threads: bool = False  # -u: rtla's user-space threads (rtla from Linux 6.6)
    bucket_us: int = 1
    histogram_us: int | None = None  # range of the histogram; default from the gates
    analysis: bool = True

    def contexts(self) -> list[str]:
        return ["irq", "thread"] + (["user"] if self.user_threads else [])
