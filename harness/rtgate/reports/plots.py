# SPDX-License-Identifier: GPL-2.0-or-later
"""Plots, headless: the OSADL-style latency histogram, latency over time, and a release trend."""

from __future__ import annotations

import io
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from rtgate.core.gate_kinds import KINDS
from rtgate.core.gates import thread_names
from rtgate.core.model import RunResult
from rtgate.core.thresholds import Measurement


def _limits(m: Measurement | None) -> list[tuple[str, float]]:
    if m is None:
        return []
    out = []
    for g in m.gates:
        key = KINDS[g.kind].latency_key
        limit = getattr(g, key) if key else None
        if limit is not None:
            out.append((g.name, float(limit)))
    return out


def _bucket_steps(buckets: list[tuple[int, int | None, int]], scale: float) -> tuple[list[float], list[float]]:
    """Each non-empty bucket as a flat step over its own width; the line breaks (NaN) across empty
    latencies, so a lone outlier is a short step at its latency, never a line drawn out to it."""
    xs: list[float] = []
    ys: list[float] = []
    end = None
    for lo, hi, count in buckets:
        if count <= 0:
            continue
        top = hi if hi is not None else lo + 1
        if end is not None and lo != end:
            xs.append(float("nan"))
            ys.append(float("nan"))
        xs.extend([lo / scale, top / scale])
        ys.extend([count, count])
        end = top
    return xs, ys


def histogram_figure(run: RunResult, m: Measurement | None = None) -> Figure:
    """Samples per latency, log scale, one line per thread with its max in the label, limits drawn."""
    fig, ax = plt.subplots(figsize=(9, 4.5))
    scale = run.units_per_us()
    names = thread_names(run, m)
    for t in run.threads:
        if t.histogram is None or not t.histogram.buckets:
            continue
        xs, ys = _bucket_steps(t.histogram.buckets, scale)
        tid = names[t.index]
        ax.plot(xs, ys, linewidth=1, label=f"{tid} (max {t.max / scale if t.max is not None else 0:g} us)")
    # Limit labels sit on rows of their own, left to right by limit, so close limits never overlap.
    for row, (name, limit) in enumerate(sorted(_limits(m), key=lambda nl: nl[1])):
        ax.axvline(limit, color="red", linestyle="--", linewidth=1)
        ax.text(
            limit,
            0.97 - 0.08 * (row % 10),
            f" {name} {limit:g} us",
            color="red",
            va="top",
            ha="left",
            fontsize=8,
            transform=ax.get_xaxis_transform(),
            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.7, "pad": 1},
        )
    ax.set_yscale("log")
    ax.set_xlabel("latency (us)")
    ax.set_ylabel("samples")
    ax.set_title(f"Latency histogram: {run.source}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def timeline_figure(run: RunResult, m: Measurement | None = None) -> Figure:
    """The max latency of each block over the run, per thread."""
    fig, ax = plt.subplots(figsize=(9, 3.5))
    scale = run.units_per_us()
    names = thread_names(run, m)
    for t in run.threads:
        bm = t.block_maxima
        if bm is None or not bm.values:
            continue
        tid = names[t.index]
        values = list(bm.values)
        if bm.partial_max is not None:  # the block in progress when the run ended: its max may be the run's
            values.append(bm.partial_max)
        ax.plot(
            [i * bm.block_seconds for i in range(len(values))],
            [v / scale for v in values],
            marker=".",
            linewidth=1,
            label=tid,
        )
    for name, limit in _limits(m):
        ax.axhline(limit, color="red", linestyle="--", linewidth=1, label=f"{name} {limit:g} us")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("block max (us)")
    ax.set_title("Latency over time (block maxima)")
    if ax.lines:
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def gate_limit(gates: list[Any], metric: str) -> tuple[str, float] | None:
    """The limit of the gate about this metric, as (label, value in the metric's unit), or None:
    a max gate's limit means nothing on a p99.9 plot."""
    for g in gates:
        if (metric == "max" and g.kind == "max") or (metric == "avg" and g.kind == "avg"):
            return (f"{g.name}: {metric} <= {g.limit_us:g} us", float(g.limit_us))
        if metric in ("p99", "p99.9") and g.kind == "percentile" and f"p{float(g.percentile):g}" == metric:
            return (f"{g.name}: {metric} <= {g.limit_us:g} us", float(g.limit_us))
        if metric.startswith("above_") and g.kind == "miss_rate" and f"above_{g.above_us:g}" == metric:
            return (f"{g.name}: share above {g.above_us:g} us <= {g.rate:g}", float(g.rate))
    return None


def trend_figure(
    per_release: dict[str, list[float]],
    metric: str,
    limit: tuple[str, float] | None = None,
    verdict: str | None = None,
) -> Figure:
    """Per release, every run as a point over the release's median and range, n under each
    release, the matching gate's limit labelled, and the latest comparison's verdict as title."""
    import random
    from statistics import median

    fig, ax = plt.subplots(figsize=(9, 4))
    releases = list(per_release)
    rng = random.Random(0)  # the same jitter every time: plots compare across reports
    for i, r in enumerate(releases, start=1):
        values = per_release[r]
        if not values:
            continue
        lo, hi = min(values), max(values)
        mid = median(values)
        first = i == 1  # one legend entry per kind of mark
        ax.vlines(i, lo, hi, color="0.75", linewidth=6, zorder=1, label="range" if first else "_nolegend_")
        ax.hlines(
            mid, i - 0.3, i + 0.3, color="black", linewidth=2, zorder=2, label="median" if first else "_nolegend_"
        )
        xs = [i + rng.uniform(-0.15, 0.15) for _ in values]
        ax.scatter(xs, values, s=14, color="tab:blue", zorder=3, label="runs (worst thread)" if first else "_nolegend_")
    unit = "share of samples" if metric.startswith("above_") else "us"
    every = [v for vs in per_release.values() for v in vs] + ([limit[1]] if limit else [])
    positive = [v for v in every if v > 0]
    if positive and max(positive) / min(positive) >= 30:  # data spanning decades
        ax.set_yscale("log")
    if limit is not None:
        ax.axhline(limit[1], color="red", linestyle="--", linewidth=1, label=limit[0])
    ax.set_xticks(
        range(1, len(releases) + 1), [f"{r}\nn={len(per_release[r])}" for r in releases], rotation=0, fontsize=8
    )
    ax.set_xlim(0.5, len(releases) + 0.5)
    ax.set_ylabel(f"{metric} ({unit})")
    title = f"{metric} over releases (worst thread per run)"
    ax.set_title(title + (f"\n{verdict}" if verdict else ""), fontsize=10)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig


def png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return buf.getvalue()


def describe(fig: Figure) -> dict[str, Any]:
    """What a figure shows, for tests and logs: line labels, scales, limit lines."""
    ax = fig.axes[0]
    return {
        "labels": [str(ln.get_label()) for ln in ax.lines if not str(ln.get_label()).startswith("_")],
        "yscale": ax.get_yscale(),
        "lines": len(ax.lines),
        "title": ax.get_title(),
    }
