# SPDX-License-Identifier: GPL-2.0-or-later
"""Plots, headless: the OSADL-style latency histogram, latency over time, and a release trend."""

from __future__ import annotations

import io
import math
from collections.abc import Iterable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import itertools

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.offsetbox import AnchoredText

from rtgate.core.gate_kinds import KINDS, pct
from rtgate.core.gates import Verdict, thread_names
from rtgate.core.model import RunResult
from rtgate.core.recorded import recorded_environment
from rtgate.core.setup import evaluate_measured
from rtgate.core.status import SEVERITY, Status
from rtgate.core.thresholds import Measurement
from rtgate.errors import RtgateError

# Each limit its own colour and dash, in gate order, so two limits are never one red; dark colours
# that matplotlib's thread-line cycle does not use.
STYLES = [
    ("black", "-"),
    ("darkred", "--"),
    ("darkviolet", "-."),
    ("darkgreen", ":"),
    ("saddlebrown", (0, (5, 1, 1, 1, 1, 1))),
    ("dimgray", (0, (8, 2))),
]


@dataclass
class Limit:
    """A gate's latency drawn on a plot: where, labelled with the gate and what it asks."""

    gate: str
    latency_us: float
    label: str
    color: str
    style: Any


def gate_statuses(verdicts: list[Verdict]) -> dict[str, Status]:
    """Each gate's verdict over its threads: the worst one, as the text report's summary counts it."""
    out: dict[str, Status] = {}
    for v in verdicts:
        if v.gate not in out or SEVERITY[v.status] > SEVERITY[out[v.gate]]:
            out[v.gate] = v.status
    return out


def verdict_line(verdicts: list[Verdict]) -> str:
    """The plot's verdict, overall and per gate: "verdict FAIL (max FAIL, p99.9 PASS)"."""
    statuses = gate_statuses(verdicts)
    if not statuses:
        return ""
    worst = max(statuses.values(), key=SEVERITY.__getitem__)
    return f"verdict {worst.value} (" + ", ".join(f"{gate} {status.value}" for gate, status in statuses.items()) + ")"


def _limits(m: Measurement | None, run: RunResult | None = None, verdicts: list[Verdict] | None = None) -> list[Limit]:
    if m is None:
        return []
    shares: dict[str, str] = {}
    if run is not None:
        shares = _measured_shares(m, run, verdicts)
    statuses = gate_statuses(verdicts or [])
    out: list[Limit] = []
    for g in m.gates:
        key = KINDS[g.kind].latency_key
        limit = getattr(g, key) if key else None
        if limit is None:
            continue
        if g.kind == "miss_rate":
            asked = f"<= {pct(g.rate or 0.0)} of samples above {limit:g} us"
            measured = f"; measured {shares[g.name]} above or missed (worst thread)" if g.name in shares else ""
            label = f"{g.name}: {asked}{measured}"
        elif g.kind == "percentile":
            label = f"{g.name}: p{g.percentile:g} <= {limit:g} us"
        else:
            label = f"{g.name}: {g.kind} <= {limit:g} us"
        if g.name in statuses:  # the gate's verdict leads its legend entry
            label = f"{statuses[g.name].value} {label}"
        color, style = STYLES[len(out) % len(STYLES)]
        out.append(Limit(g.name, float(limit), label, color, style))
    return out


def _measured_shares(m: Measurement, run: RunResult, verdicts: list[Verdict] | None = None) -> dict[str, str]:
    """Each miss-rate gate's measured share, the worst thread's, as its verdicts state it; where the
    verdicts carry no figure (an invalid measurement), the histogram's count, at most."""
    out: dict[str, tuple[float, str]] = {}
    for v in evaluate_measured(m, run) if verdicts is None else verdicts:
        if v.kind == "miss_rate" and v.value is not None and v.value >= out.get(v.gate, (-1.0, ""))[0]:
            out[v.gate] = (v.value, v.value_text)
    scale = run.units_per_us()
    for g in m.gates:
        if g.kind != "miss_rate" or g.name in out or g.above_us is None:
            continue
        worst = -1.0
        for t in run.threads:
            missed = t.missed or 0
            if t.histogram is not None and t.cycles + missed > 0:
                above = t.histogram.count_above(g.above_us * scale, t.max)
                worst = max(worst, (above + missed) / (t.cycles + missed))
        if worst >= 0:
            out[g.name] = (worst, f"at most {pct(worst)}")
    return {name: text for name, (_, text) in out.items()}


def title(kind: str, run: RunResult, m: Measurement | None, platform: str = "", verdict: str = "") -> str:
    """What a plot shows and of what: platform, measurement, kernel and when, not a file path; and
    the verdict of the measurement's gates on these results."""
    env = recorded_environment(run)
    system: dict[str, Any] = env["system"] if isinstance(env.get("system"), dict) else {}
    sysinfo: dict[str, Any] = env["sysinfo"] if isinstance(env.get("sysinfo"), dict) else {}
    kernel = system.get("kernel_release") or sysinfo.get("release")
    when = run.start_time or run.end_time
    try:
        when = parsedate_to_datetime(when).strftime("%Y-%m-%d %H:%M") if when else None
    except (TypeError, ValueError):
        pass
    what = " / ".join(x for x in (platform, m.name if m else "") if x) or Path(run.source).name
    facts = ", ".join(x for x in (f"kernel {kernel}" if kernel else "", when or "") if x)
    return f"{kind}: {what}" + (f"\n{facts}" if facts else "") + (f"\n{verdict}" if verdict else "")


def judged(run: RunResult, m: Measurement | None) -> list[Verdict]:
    """The measurement's verdicts on these results, judged as `rtgate check` judges them."""
    return evaluate_measured(m, run) if m is not None else []


def missed_text(run: RunResult, names: dict[int, str]) -> str:
    """The periods each thread missed: no latency was measured for them, so the histogram cannot show them."""
    parts = []
    for t in run.threads:
        if t.missed is None:
            parts.append(f"{names[t.index]} unknown")
        elif t.missed_upper is not None and t.missed_upper != t.missed:
            parts.append(f"{names[t.index]} {t.missed}..{t.missed_upper}")
        else:
            parts.append(f"{names[t.index]} {t.missed}")
    return "missed periods (not in the histogram): " + ", ".join(parts)


def _any_missed(run: RunResult) -> bool:
    return any(t.missed is None or t.missed > 0 or (t.missed_upper or 0) > 0 for t in run.threads)


def _legend_below(ax: Any) -> None:
    """Under the plot: a legend inside would cover data or a limit line. None when nothing is labelled
    (an empty histogram and no limit): matplotlib would warn and draw an empty box."""
    if not ax.get_legend_handles_labels()[1]:
        return
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)


def _spans_decades(xs: list[float]) -> bool:
    """Latencies from a few us to milliseconds: a linear axis would squash the bulk into one column."""
    positive = [x for x in xs if x > 0 and not math.isnan(x)]
    return bool(positive) and max(positive) / min(positive) >= 100


def _lone_buckets(xs: list[float], ys: list[float]) -> tuple[list[float], list[float]]:
    """Runs of buckets narrower than 5 % of their latency, between empty latencies: a marker shows
    them, since a 1-us step at 12 ms (or a few 0.8 %-wide buckets at 40 ms) is too narrow to see."""
    out_x: list[float] = []
    out_y: list[float] = []
    edges = [-1] + [i for i, x in enumerate(xs) if math.isnan(x)] + [len(xs)]
    for a, b in itertools.pairwise(edges):
        if b - a < 3:
            continue
        x0, x1 = xs[a + 1], xs[b - 1]
        if x1 > 0 and (x1 - x0) / x1 < 0.05:
            out_x.append((x0 + x1) / 2)
            out_y.append(max(ys[a + 1 : b]))
    return out_x, out_y


def _bucket_steps(buckets: Iterable[tuple[int, int | None, int]], scale: float) -> tuple[list[float], list[float]]:
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


def histogram_figure(run: RunResult, m: Measurement | None = None, platform: str = "") -> Figure:
    """Samples per latency, log scale, one line per thread with its max in the label, each limit
    drawn in its own style and labelled with its gate; log latency axis when the data span decades."""
    fig, ax = plt.subplots(figsize=(9, 4.8))
    scale = run.units_per_us()
    seen: list[float] = []
    names = thread_names(run, m)
    verdicts = judged(run, m)
    for t in run.threads:
        if t.histogram is None or not t.histogram.buckets:
            continue
        xs, ys = _bucket_steps(t.histogram.buckets, scale)
        seen += xs
        tid = names[t.index]
        (line,) = ax.plot(xs, ys, linewidth=1, label=f"{tid} (max {t.max / scale if t.max is not None else 0:g} us)")
        lx, ly = _lone_buckets(xs, ys)
        ax.plot(lx, ly, linestyle="none", marker="o", markersize=3, color=line.get_color(), gid="lone")
    limits = _limits(m, run, verdicts)
    if _spans_decades(seen + [lim.latency_us for lim in limits]):
        ax.set_xscale("log")
        ax.set_xlabel("latency (us, log scale)")
    else:
        ax.set_xlabel("latency (us)")
    # Each limit: a line in its own style, the gate's name on a row of its own (close limits never
    # overlap), and what the gate asks in the legend.
    for row, lim in enumerate(sorted(limits, key=lambda x: x.latency_us)):
        ax.axvline(lim.latency_us, color=lim.color, linestyle=lim.style, linewidth=1.3, label=lim.label, gid="limit")
        ax.text(
            lim.latency_us,
            0.97 - 0.08 * (row % 10),
            f" {lim.gate}",
            color=lim.color,
            va="top",
            ha="left",
            fontsize=8,
            transform=ax.get_xaxis_transform(),
            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.7, "pad": 1},
        )
    ax.set_yscale("log")
    ax.set_ylabel("samples")
    # Missed periods have no latency, so no bucket: said on the plot, in red when there are any.
    missed = AnchoredText(
        missed_text(run, names),
        loc="center right",
        prop={"fontsize": 8, "color": "darkred" if _any_missed(run) else "dimgray"},
        frameon=True,
    )
    missed.set_gid("missed")
    missed.patch.set_alpha(0.8)
    ax.add_artist(missed)
    ax.set_title(title("Latency histogram", run, m, platform, verdict_line(verdicts)), fontsize=10)
    _legend_below(ax)
    fig.tight_layout()
    return fig


def timeline_figure(run: RunResult, m: Measurement | None = None, platform: str = "") -> Figure:
    """The max latency of each block over the run, per thread, with the limits."""
    fig, ax = plt.subplots(figsize=(9, 3.8))
    scale = run.units_per_us()
    seen: list[float] = []
    names = thread_names(run, m)
    verdicts = judged(run, m)
    for t in run.threads:
        bm = t.block_maxima
        if bm is None or not bm.values:
            continue
        tid = names[t.index]
        values = list(bm.values)
        if bm.partial_max is not None:  # the block in progress when the run ended: its max may be the run's
            values.append(bm.partial_max)
        seen += [v / scale for v in values]
        ax.plot(
            [i * bm.block_seconds for i in range(len(values))],
            [v / scale for v in values],
            marker=".",
            linewidth=1,
            label=tid,
        )
    limits = _limits(m, run, verdicts)
    for lim in limits:
        ax.axhline(lim.latency_us, color=lim.color, linestyle=lim.style, linewidth=1.3, label=lim.label, gid="limit")
    if _spans_decades(seen + [lim.latency_us for lim in limits]):
        ax.set_yscale("log")
        ax.set_ylabel("block max (us, log scale)")
    else:
        ax.set_ylabel("block max (us)")
    ax.set_xlabel("time (s)")
    ax.set_title(title("Latency over time (block maxima)", run, m, platform, verdict_line(verdicts)), fontsize=10)
    if ax.lines:
        _legend_below(ax)
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
    if ax.get_legend_handles_labels()[1]:
        ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig


def png(fig: Figure) -> bytes:
    return image(fig, "png")


def image_format(path: str, option: str) -> str:
    """The image format a file name's suffix names (matplotlib's formats: png, svg, pdf...), or a
    one-line refusal: a plot written in another format than its name says misleads every viewer."""
    from matplotlib.backend_bases import FigureCanvasBase

    suffix = Path(path).suffix.lower().lstrip(".")
    # pgf needs a TeX installation; raw and rgba are pixel dumps without a header, not images
    known = set(FigureCanvasBase.get_supported_filetypes()) - {"pgf", "raw", "rgba"}
    if suffix not in known:
        raise RtgateError(
            f"{option} {path}: {'no suffix names' if not suffix else f'.{suffix} is not'} an image format "
            f"(name the file .{', .'.join(sorted(known))})"
        )
    return suffix


def image(fig: Figure, fmt: str) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=90, bbox_inches="tight")  # with the legend under the axes
    plt.close(fig)
    return buf.getvalue()


def describe(fig: Figure) -> dict[str, Any]:
    """What a figure shows, for tests and logs: line labels, scales, limit lines."""
    ax = fig.axes[0]
    return {
        "labels": [
            str(ln.get_label())
            for ln in ax.lines
            if not str(ln.get_label()).startswith("_") and ln.get_gid() != "limit"
        ],
        "limits": [str(ln.get_label()) for ln in ax.lines if ln.get_gid() == "limit"],
        "xscale": ax.get_xscale(),
        "yscale": ax.get_yscale(),
        "lines": len(ax.lines),
        "title": ax.get_title(),
        "missed": [
            str(a.txt.get_text()) for a in ax.artists if isinstance(a, AnchoredText) and a.get_gid() == "missed"
        ],
    }
