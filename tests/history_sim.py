# SPDX-License-Identifier: GPL-2.0-or-later
"""Synthetic runs for the history statistics: a latency body plus host interference whose size
varies from run to run with a heavy tail, as on a shared host (per-run p99.9 spans ~20x over 20
runs). Shared by tests/test_history_power.py and benchmarks/history_power.py; seeded."""

from __future__ import annotations

import numpy as np

from rtgate.core.model import Histogram, RunResult, ThreadResult


def host_state(rng: np.random.Generator, spread: float = 0.7) -> float:
    """A run's host interference level: log-Student-t (3 df), i.e. heavy-tailed run to run."""
    return float(np.exp(spread * np.clip(rng.standard_t(3), -5, 5)))


def latencies(rng: np.random.Generator, n: int, host: float, scale: float = 1.0, tail_only: bool = False) -> np.ndarray:
    """n wake-up latencies in us. `scale` is the kernel's effect: every latency times `scale`
    (or, with tail_only, only the interference part)."""
    body = 6.0 + rng.gamma(2.0, 1.5, n) * np.exp(0.04 * rng.standard_normal())  # body drifts a few %
    hit = rng.random(n) < 0.004 * host  # interrupted wake-ups
    extra = np.where(hit, 12.0 * host * (rng.pareto(1.8, n) + 1.0), 0.0)
    return body * (1.0 if tail_only else scale) + extra * scale


def run_result(
    values_per_thread: list[np.ndarray], histogram_limit: int | None = None, environment: dict | None = None
) -> RunResult:
    """Integer-us histograms like rt-tests -h (with an overflow above `histogram_limit`) or like
    rtgate-sampler (full range, when None)."""
    threads = []
    for i, v in enumerate(values_per_thread):
        iv = np.floor(v).astype(int)
        over = 0
        if histogram_limit is not None:
            over = int((iv >= histogram_limit).sum())
            kept = iv[iv < histogram_limit]
        else:
            kept = iv
        vals, counts = np.unique(kept, return_counts=True)
        hist = Histogram(
            "us",
            [(int(a), int(a) + 1, int(c)) for a, c in zip(vals, counts)],
            overflow=over,
            range_end=histogram_limit if over else None,
        )
        threads.append(
            ThreadResult(
                index=i,
                cycles=len(iv),
                cpu=i,
                priority=80,
                min=float(iv.min()),
                max=float(iv.max()),
                avg=float(iv.mean()),
                missed=0,
                histogram=hist,
            )
        )
    return RunResult(
        source="synthetic", format="rtgate-json", unit="us", threads=threads, environment=environment or {}
    )


def synthetic_run(
    rng: np.random.Generator,
    scale: float = 1.0,
    samples: int = 5000,
    threads: int = 2,
    tail_only: bool = False,
    histogram_limit: int | None = None,
    host: float | None = None,
) -> RunResult:
    h = host_state(rng) if host is None else host
    return run_result([latencies(rng, samples, h, scale, tail_only) for _ in range(threads)], histogram_limit)
