# SPDX-License-Identifier: GPL-2.0-or-later
"""Every gate kind, declared once: its threshold-file keys, how it is judged, its sampler-side
(--gate) form, and the figure it reports with its unit.

Threshold validation (thresholds.py), evaluation (gates.py) and the sampler's arguments
(native_gates.py) iterate KINDS; tests/unit/test_gate_kinds.py fails when a kind lacks a part. The
sampler's side of a kind is sampler/gate.c (its kind table and eval_thread).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from rtgate.core.status import Status

TYPE_CHECKING = False  # typing's constant without importing typing: `rtgate validate` need not load it

# Only in annotations: `rtgate validate` reads no results, and a protocol class costs its creation at import.
if TYPE_CHECKING:
    from typing import Any, Protocol, TypeAlias

    from rtgate.core.model import Histogram, RunResult, ThreadResult
    from rtgate.core.spec import GateSpec

    Judged: TypeAlias = tuple[Status, str, dict[str, Any]]

    class Judge(Protocol):
        """What a kind's evaluation gets: one gate on one thread (gates._Eval)."""

        run: RunResult
        gate: GateSpec
        t: ThreadResult
        scale: int

        def verdict(self, status: Status, reason: str, **kw: Any) -> Judged: ...

        def decide(self, k_min: int, k_max: int, n: int, allowed: float, what: str) -> Judged: ...


# ---------------------------------------------------------------- figures as text


def fmt(v: float | None) -> str:
    if v is None:
        return "n/a"
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.2f}"


def pct(r: float) -> str:
    return f"{r * 100:.4g} %"


def pct_range(lo: float, hi: float) -> str:
    return pct(lo) if lo == hi else f"{lo * 100:.4g}..{pct(hi)}"


def us_range(lo: float, hi: float | None) -> str:
    """A latency known exactly, or only between two values (a wide bucket, the overflow)."""
    if hi is None:
        return f">= {fmt(lo)} us"
    return f"{fmt(hi)} us" if lo == hi else f"{fmt(lo)}..{fmt(hi)} us"


def percentile_text(hist: Histogram, q: float, known_max: float | None, scale: int) -> str | None:
    """A percentile as text in us: "50", or "15..4878" where only a range is known."""
    r = hist.percentile_range(q, known_max)
    if r is None:
        return None
    lo, hi = r[0] / scale, None if r[1] is None else r[1] / scale
    if hi is None:
        return f">={lo:g}"
    return f"{hi:g}" if lo == hi else f"{lo:g}..{hi:g}"


# ---------------------------------------------------------------- evaluation of each kind


def _judge_max(ev: Judge) -> Judged:
    t, limit = ev.t, float(ev.gate.limit_us or 0.0)
    if t.max is None:
        return ev.verdict(Status.ERROR, "results have no max")
    v = t.max / ev.scale
    kw = {"value": v, "value_text": f"{fmt(v)} us", "limit": limit, "samples": t.cycles}
    if v > limit:
        return ev.verdict(Status.FAIL, f"max {fmt(v)} us > {fmt(limit)} us", **kw)
    return ev.verdict(Status.PASS, f"max {fmt(v)} us <= {fmt(limit)} us", **kw)


def _judge_avg(ev: Judge) -> Judged:
    t, limit = ev.t, float(ev.gate.limit_us or 0.0)
    if t.avg is None:
        return ev.verdict(Status.ERROR, "results have no average")
    v = t.avg / ev.scale
    # How far the true average may lie above the printed one: text formats truncate it to whole
    # units, rt-tests JSON rounds it to two decimals; rtgate's JSON and -v samples are exact.
    slack = {"histogram-text": 1.0, "summary-text": 1.0, "rt-tests-json": 0.005, "rtla-timerlat-hist": 1.0}.get(
        ev.run.format, 0.0
    )
    upper = (t.avg + slack) / ev.scale
    kw = {"value": v, "value_text": f"{fmt(v)} us", "limit": limit, "samples": t.cycles}
    if upper > limit:
        why = "" if v > limit else " (as printed: the true average may be higher)"
        return ev.verdict(Status.FAIL, f"avg {fmt(v)} us > {fmt(limit)} us{why}", **kw)
    return ev.verdict(Status.PASS, f"avg {fmt(v)} us <= {fmt(limit)} us", **kw)


def _judge_percentile(ev: Judge) -> Judged:
    """ "pQ <= L" is "at most (100 - Q) % of samples above L": judged by the bounds of that rate."""
    t, g = ev.t, ev.gate
    q, limit = float(g.percentile or 0.0), float(g.limit_us or 0.0)
    name = f"p{q:g}"
    missed = t.missed or 0
    n = t.cycles + missed
    if t.histogram is None:
        if t.max is None or t.max / ev.scale > limit:
            return ev.verdict(
                Status.ERROR,
                f"results have no histogram, so {name} is unknown (run cyclictest with -h, or use rtgate-sampler JSON)",
                limit=limit,
                samples=n,
            )
        v = t.max / ev.scale
        figure, value_text, value = f"{name} <= max {fmt(v)} us", f"<= {fmt(v)} us", v
        k_min = k_max = missed
    else:
        k_min, k_max = t.histogram.count_range(limit * ev.scale, t.max)
        k_min, k_max = k_min + missed, k_max + missed
        # Missed periods sit on top of the distribution: the rank is a higher one of the histogram.
        q_hist = q if not missed else 100.0 * min(1.0, (q / 100.0) * n / t.cycles)
        rank = math.ceil(q * n / 100.0 - 1e-9)
        r = t.histogram.percentile_range(q_hist, t.max)
        if missed and rank > t.cycles:
            figure, value_text, value = f"{name} is a missed period", "missed", None
        elif r is None:
            return ev.verdict(Status.ERROR, f"{name} is unknown", limit=limit, samples=n)
        else:
            lo, hi = r[0] / ev.scale, None if r[1] is None else r[1] / ev.scale
            value_text = us_range(lo, hi)
            value = hi
            figure = f"{name} {value_text}"
    allowed = (100.0 - q) / 100.0
    what = f"samples above {fmt(limit)} us" + (f" or missed ({missed} missed)" if missed else "")
    status, text, kw = ev.decide(k_min, k_max, n, allowed, what)
    kw.update(value=value, value_text=value_text, limit=limit, bound=None, lower=None)
    return status, f"{figure}: {text}", kw


def _judge_miss_rate(ev: Judge) -> Judged:
    t, g = ev.t, ev.gate
    above = float(g.above_us or 0.0)
    known_max = t.max
    if t.histogram is None:
        if known_max is None or known_max / ev.scale > above:
            return ev.verdict(
                Status.ERROR,
                f"results have no histogram, so samples above "
                f"{fmt(above)} us cannot be counted (run cyclictest with -h, "
                "or use rtgate-sampler JSON)",
            )
        k_min = k_max = 0
    else:
        k_min, k_max = t.histogram.count_range(above * ev.scale, known_max)
    missed = t.missed or 0
    return ev.decide(
        k_min + missed,
        k_max + missed,
        t.cycles + missed,
        float(g.rate or 0.0),
        f"samples above {fmt(above)} us" + (f" or missed ({missed} missed)" if missed else ""),
    )


def _judge_missed(ev: Judge) -> Judged:
    t, g = ev.t, ev.gate
    if t.missed is None:
        return ev.verdict(
            Status.ERROR,
            f"{ev.run.format} results do not count missed periods (cyclictest skips them silently): use rtgate-sampler",
        )
    n = t.cycles + t.missed
    if g.max_count is not None:
        kw = {"value": float(t.missed), "value_text": str(t.missed), "limit": float(g.max_count), "samples": n}
        if t.missed > g.max_count:
            return ev.verdict(Status.FAIL, f"{t.missed} missed periods > {g.max_count}", **kw)
        return ev.verdict(Status.PASS, f"{t.missed} missed periods <= {g.max_count}", **kw)
    return ev.decide(t.missed, t.missed, n, float(g.max_rate or 0.0), "periods missed")


def _one_percentile_rank(gate: GateSpec) -> int:
    """A percentile needs 1/(1-p) samples to have one above it: p99.9 needs 1000."""
    return math.ceil(100.0 / (100.0 - (gate.percentile or 0.0)) - 1e-9) if gate.percentile is not None else 1


# ---------------------------------------------------------------- the registry


@dataclass(frozen=True)
class GateKind:
    """One gate kind: its keys, its judgement, its --gate form and its figure in reports."""

    name: str
    needs: frozenset[str]  # threshold-file keys it requires
    takes: frozenset[str]  # every kind-specific key it accepts
    one_of: tuple[str, ...]  # keys of which exactly one is required (none: ())
    judge: Callable[[Judge], Judged]  # its evaluation
    native: tuple[tuple[str, str, type], ...]  # --gate keys: (key, GateSpec attribute, type), in order
    figure: str  # what the verdict's value is, for reports
    unit: str  # the value's unit in reports: us, %, periods
    min_samples: Callable[[GateSpec], int]  # default sample count it needs
    share_key: str | None  # the GateSpec attribute that, when set, makes the value a share of samples (%)
    latency_key: str | None  # the GateSpec attribute with the latency plots draw as its line
    counts_missed: bool  # missed periods enter its judgement


def figure_unit(gate: GateSpec) -> str:
    """The unit of a verdict's value: '%' (held as a fraction), 'us' or 'periods'."""
    kind = KINDS[gate.kind]
    if kind.share_key is not None and getattr(gate, kind.share_key) is not None:
        return "%"
    return kind.unit


def _one(_: GateSpec) -> int:
    return 1


KINDS: dict[str, GateKind] = {
    k.name: k
    for k in (
        GateKind(
            name="max",
            needs=frozenset({"limit_us"}),
            takes=frozenset({"limit_us"}),
            one_of=(),
            judge=_judge_max,
            native=(("limit", "limit_us", float),),
            figure="max latency",
            unit="us",
            min_samples=_one,
            share_key=None,
            latency_key="limit_us",
            counts_missed=False,
        ),
        GateKind(
            name="miss_rate",
            needs=frozenset({"above_us", "rate"}),
            takes=frozenset({"above_us", "rate", "confidence"}),
            one_of=(),
            judge=_judge_miss_rate,
            native=(("above", "above_us", float), ("rate", "rate", float)),
            figure="share of samples above the limit or missed",
            unit="%",
            min_samples=_one,
            share_key="rate",
            latency_key="above_us",
            counts_missed=True,
        ),
        GateKind(
            name="percentile",
            needs=frozenset({"percentile", "limit_us"}),
            takes=frozenset({"percentile", "limit_us", "confidence"}),
            one_of=(),
            judge=_judge_percentile,
            native=(("percentile", "percentile", float), ("limit", "limit_us", float)),
            figure="latency percentile",
            unit="us",
            min_samples=_one_percentile_rank,
            share_key=None,
            latency_key="limit_us",
            counts_missed=True,
        ),
        GateKind(
            name="avg",
            needs=frozenset({"limit_us"}),
            takes=frozenset({"limit_us"}),
            one_of=(),
            judge=_judge_avg,
            native=(("limit", "limit_us", float),),
            figure="average latency",
            unit="us",
            min_samples=_one,
            share_key=None,
            latency_key=None,
            counts_missed=False,
        ),
        GateKind(
            name="missed",
            needs=frozenset(),
            takes=frozenset({"max_count", "max_rate", "confidence"}),
            one_of=("max_count", "max_rate"),
            judge=_judge_missed,
            native=(("max_count", "max_count", int), ("max_rate", "max_rate", float)),
            figure="missed periods (count, or share of periods)",
            unit="periods",
            min_samples=_one,
            share_key="max_rate",
            latency_key=None,
            counts_missed=True,
        ),
    )
}
