# SPDX-License-Identifier: GPL-2.0-or-later
"""A threshold file's `load:`: which background load runs during a measurement, where, and the
level it must hold. Only the declaration; the measurement engine runs it (sampler/load.c)."""

from __future__ import annotations

from dataclasses import dataclass, field

KINDS = ("none", "cpu", "hackbench", "memory", "io", "network", "timer", "kcompile", "custom")


@dataclass
class LoadSpec:
    """One background load: kind, workers, placement, size or command, warm-up and the level it must hold."""

    kind: str = "none"
    workers: int | None = None  # default: one per CPU of the placement
    cpus: str | list[int] = "others"  # measured | others | all | [list]
    size: str = "64M"  # memory and io
    command: list[str] = field(default_factory=list)  # custom
    warmup_seconds: float = 2.0
    min_cpu_percent: float | None = None  # cpu, hackbench, memory, kcompile, custom
    min_ops_per_second: float | None = None  # io, network, timer (stress-ng bogo-ops/s, real time)
    tree: str | None = None  # kcompile: a kernel source tree (default: a bundled C project)
