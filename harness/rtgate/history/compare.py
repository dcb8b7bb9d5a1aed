# SPDX-License-Identifier: GPL-2.0-or-later
"""Did latency change between two releases by more than run-to-run noise explains?

Every test treats a run as the unit and is calibrated by permuting runs (or, for interleaved
pairs, by flipping which run of a pair is the new one), so its false-alarm rate holds whatever
the host's run-to-run spread. Metrics:

- ``tail`` (default): per-run counts of samples above thresholds from the pooled baseline
  (tail.py), every sample used, exact under rt-tests overflow; one max-over-cells test over
  thresholds x (all threads, each thread).
- ``max``, ``p99``, ``p99.9``, ``avg``, ``min``, ``above_<us>``: one figure per run and thread
  (and the worst thread of each run), Gehan's rank test; a percentile inside an overflow stays
  in as "at least range_end" and the evidence says how many were."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import median
from typing import Any

from rtgate.history.drift import Tolerance, differences
from rtgate.history.stats import (
    Interval,
    bootstrap_median_diff,
    gehan_scores,
    midranks,
    paired_max_test,
    signed_ranks,
    two_sample_max_test,
)
from rtgate.history.store import HistoryDB, StoredRun, StoredThread
from rtgate.history.tail import QUANTILES, exceedances, overflow_range, thresholds

DEFAULTS = {"alpha": 0.05, "min_effect": 0.05, "min_runs": 3, "metrics": ["tail"]}


@dataclass
class Comparison:
    metric: str
    thread: str
    decision: str  # regression, improvement, no change, not enough runs, not comparable
    base: list[float]
    new: list[float]
    p_worse: float | None = None
    p_better: float | None = None
    effect: float | None = None  # relative change of the median
    interval: tuple[float, float] | None = None
    evidence: str = ""
    censored: tuple[int, int] = (0, 0)  # runs whose figure is only a bound (base, new)
    better_effect: float | None = None  # tail: the change where it is most an improvement

    def as_dict(self) -> dict[str, Any]:
        return {
            k: getattr(self, k)
            for k in (
                "metric",
                "thread",
                "decision",
                "base",
                "new",
                "p_worse",
                "p_better",
                "effect",
                "interval",
                "evidence",
                "censored",
            )
        }


@dataclass
class Settings:
    alpha: float = 0.05
    min_effect: float = 0.05
    min_runs: int = 3
    metrics: list[str] = field(default_factory=lambda: ["tail"])
    quantiles: tuple[float, ...] = QUANTILES


@dataclass
class Outcome:
    comparisons: list[Comparison]
    drift: list[str]
    notes: list[str]
    paired: bool = False


def tail_fraction(t: StoredThread, limit_us: float, unit_scale: float = 1.0) -> float | None:
    """Share of the run's samples (missed periods count) above a limit, counted conservatively."""
    if t.histogram is None:
        return None
    limit = limit_us * unit_scale
    above = 0
    for lo, hi, c in t.histogram:
        if lo == "overflow" or hi is None or hi - 1 > limit:
            above += c
    n = t.cycles + (t.missed or 0)
    return (above + (t.missed or 0)) / n if n else None


def _percentile(t: StoredThread, q: float) -> Interval | None:
    """The stored percentile, or, when it lies in the overflow, the bound [range_end, max]."""
    key = "p99" if q == 99.0 else "p99.9"
    if t.figures.get(key) is not None:
        return Interval(float(t.figures[key]), float(t.figures[key]))  # type: ignore[arg-type]
    if not t.histogram:
        return None
    total = sum(c for _, _, c in t.histogram)
    in_buckets = sum(c for lo, _, c in t.histogram if lo != "overflow")
    end = overflow_range(t.histogram)
    if end is None or total == 0 or in_buckets >= max(1, math.ceil(q * total / 100.0 - 1e-9)):
        return None
    top = t.figures.get("max")
    return Interval(end, max(end, float(top)) if top is not None else math.inf)


def _figure(t: StoredThread, metric: str) -> Interval | None:
    if metric.startswith("above_"):
        v = tail_fraction(t, float(metric[len("above_") :]))
    elif metric in ("p99", "p99.9"):
        return _percentile(t, float(metric[1:]))
    else:
        v = t.figures.get(metric)
    return None if v is None else Interval(float(v), float(v))


def _intervals(threads: list[StoredThread], metric: str) -> dict[str, dict[int, Interval]]:
    """Per thread, and for the worst thread of each run, the figure of each run (by run id)."""
    per: dict[str, dict[int, Interval]] = {}
    worst: dict[int, Interval] = {}
    for t in threads:
        v = _figure(t, metric)
        if v is None:
            continue
        per.setdefault(t.thread, {})[t.run_id] = v
        w = worst.get(t.run_id)
        worst[t.run_id] = v if w is None else Interval(max(w.lo, v.lo), max(w.hi, v.hi))
    per["worst"] = worst
    return per


def _values(threads: list[StoredThread], metric: str) -> dict[str, list[float]]:
    """Per thread and worst, one value per run (a censored figure as its lower bound): for trends."""
    return {k: [v.lo for v in d.values()] for k, d in _intervals(threads, metric).items()}


def _effect(base: float, new: float) -> float:
    return (new - base) / base if base else (0.0 if new == base else math.inf)


def _decide(c: Comparison, alpha: float, settings: Settings, better_effect: float | None = None) -> None:
    worse_effect = c.effect if c.effect is not None else 0.0
    better = worse_effect if better_effect is None else better_effect
    if c.p_worse is not None and c.p_worse < alpha and worse_effect >= settings.min_effect:
        c.decision = "regression"
    elif c.p_better is not None and c.p_better < alpha and better <= -settings.min_effect:
        c.decision = "improvement"
        c.effect = better
    else:
        c.decision = "no change"


def _pairs(base_runs: list[StoredRun], new_runs: list[StoredRun], notes: list[str]) -> list[tuple[int, int]]:
    """(base run id, new run id) for each pair id that has a run of each release."""
    b = {r.pair_id: r.id for r in reversed(base_runs) if r.pair_id}
    n = {r.pair_id: r.id for r in reversed(new_runs) if r.pair_id}
    pairs = [(b[p], n[p]) for p in sorted(set(b) & set(n))]
    used = {i for pair in pairs for i in pair}
    left = [r.id for r in base_runs + new_runs if r.id not in used]
    if left:
        notes.append(
            f"{len(left)} run(s) without a partner of the other release left out of the paired "
            f"comparison (run ids {', '.join(map(str, left[:10]))}{' ...' if len(left) > 10 else ''})"
        )
    return pairs


def _compare_figure(
    metric: str,
    thread: str,
    b: dict[int, Interval],
    n: dict[int, Interval],
    pairs: list[tuple[int, int]] | None,
    settings: Settings,
) -> Comparison:
    bl, nl = [v.lo for v in b.values()], [v.lo for v in n.values()]
    c = Comparison(
        metric,
        thread,
        "not enough runs",
        bl,
        nl,
        censored=(sum(v.censored for v in b.values()), sum(v.censored for v in n.values())),
    )
    if pairs is not None:
        pairs = [(x, y) for x, y in pairs if x in b and y in n]
        if len(pairs) < settings.min_runs:
            c.evidence = f"{len(pairs)} complete pairs; at least {settings.min_runs} are needed"
            return c
        # A pair's difference counts only when its intervals do not overlap (censoring).
        diffs = [0.0 if not (n[y].lo > b[x].hi or n[y].hi < b[x].lo) else n[y].lo - b[x].lo for x, y in pairs]
        c.p_worse, c.p_better, _, _ = paired_max_test([signed_ranks(diffs)])
        c.base, c.new = [b[x].lo for x, _ in pairs], [n[y].lo for _, y in pairs]
        c.effect = _effect(median(c.base), median(c.new))
        c.evidence = f"median {median(c.base):.4g} -> {median(c.new):.4g} ({c.effect:+.1%}) over {len(pairs)} pairs"
    else:
        if len(b) < settings.min_runs or len(n) < settings.min_runs:
            c.evidence = f"{len(b)} and {len(n)} runs; at least {settings.min_runs} of each are needed"
            return c
        scores = gehan_scores(list(b.values()) + list(n.values()))
        c.p_worse, c.p_better, _, _ = two_sample_max_test([scores], len(b))
        c.effect = _effect(median(bl), median(nl))
        c.interval = bootstrap_median_diff(nl, bl)
        c.evidence = (
            f"median {median(bl):.4g} -> {median(nl):.4g} ({c.effect:+.1%}), {len(b)} vs {len(n)} runs, "
            f"95 % interval of the change [{c.interval[0]:+.4g}, {c.interval[1]:+.4g}]"
        )
    if any(c.censored):
        c.evidence += (
            f"; censored (in the -h overflow, kept as 'at least' the histogram range): "
            f"{c.censored[0]} base and {c.censored[1]} new runs"
        )
    return c


def _compare_tail(
    base_t: list[StoredThread],
    new_t: list[StoredThread],
    pairs: list[tuple[int, int]] | None,
    base_ids: list[int],
    new_ids: list[int],
    settings: Settings,
    notes: list[str],
) -> Comparison:
    with_hist = {t.run_id for t in base_t + new_t if t.histogram is not None}
    lacking = [i for i in base_ids + new_ids if i not in with_hist]
    if lacking:
        notes.append(
            f"tail: {len(lacking)} run(s) without a histogram cannot be counted (run ids "
            f"{', '.join(map(str, lacking[:10]))}): store rtgate-sampler JSON or rt-tests -h output"
        )
    base_ids = [i for i in base_ids if i in with_hist]
    new_ids = [i for i in new_ids if i in with_hist]
    ends = [e for t in base_t + new_t if t.histogram for e in [overflow_range(t.histogram)] if e is not None]
    cap = min(ends) if ends else None
    limits = thresholds([t.histogram for t in base_t if t.histogram], settings.quantiles, cap)
    if cap is not None:
        notes.append(
            f"tail: {len({t.run_id for t in base_t + new_t if t.histogram and overflow_range(t.histogram)})}"
            f" run(s) overflowed their histogram: thresholds capped at {cap:g} us, where counts stay exact"
        )
    names = sorted({t.thread for t in base_t + new_t})
    groups = [("all", set(names))] + ([(n, {n}) for n in names] if len(names) > 1 else [])
    # counts[(group, threshold)][run] = (above, samples)
    counts: dict[tuple[str, float], dict[int, tuple[float, float]]] = {}
    for t in base_t + new_t:
        if t.histogram is None:
            continue
        for g, members in groups:
            if t.thread not in members:
                continue
            for lim in limits:
                k, n = exceedances(t.histogram, t.missed, lim)
                old = counts.setdefault((g, lim), {}).get(t.run_id, (0.0, 0.0))
                counts[(g, lim)][t.run_id] = (old[0] + k, old[1] + n)
    cells = sorted(counts)
    rate = {cell: {r: k / n if n else 0.0 for r, (k, n) in counts[cell].items()} for cell in cells}
    c = Comparison("tail", "all", "not enough runs", [], [])
    if pairs is not None:
        pairs = [(x, y) for x, y in pairs if x in with_hist and y in with_hist]
        if len(pairs) < settings.min_runs or not cells:
            c.evidence = f"{len(pairs)} complete pairs with histograms; at least {settings.min_runs} are needed"
            return c
        # Log rate ratio within each pair (+0.5: a run with no sample above still counts).
        logr = {
            cell: [
                math.log((counts[cell][y][0] + 0.5) / (counts[cell][y][1] + 1))
                - math.log((counts[cell][x][0] + 0.5) / (counts[cell][x][1] + 1))
                for x, y in pairs
            ]
            for cell in cells
        }
        c.p_worse, c.p_better, wi, bi = paired_max_test([signed_ranks(logr[cell]) for cell in cells])
        eff = {i: math.exp(median(logr[cells[i]])) - 1 for i in (wi, bi)}
        runs_said = f"{len(pairs)} pairs"
    else:
        if len(base_ids) < settings.min_runs or len(new_ids) < settings.min_runs or not cells:
            c.evidence = (
                f"{len(base_ids)} and {len(new_ids)} runs with histograms; at least "
                f"{settings.min_runs} of each are needed"
            )
            return c
        order = base_ids + new_ids
        c.p_worse, c.p_better, wi, bi = two_sample_max_test(
            [list(midranks([rate[cell].get(r, 0.0) for r in order])) for cell in cells], len(base_ids)
        )
        eff = {
            i: _effect(
                median(rate[cells[i]].get(r, 0.0) for r in base_ids),
                median(rate[cells[i]].get(r, 0.0) for r in new_ids),
            )
            for i in (wi, bi)
        }
        runs_said = f"{len(base_ids)} vs {len(new_ids)} runs"
    worst = cells[wi]
    c.thread = worst[0]
    c.base = [rate[worst].get(r, 0.0) for r in (base_ids if pairs is None else [x for x, _ in pairs])]
    c.new = [rate[worst].get(r, 0.0) for r in (new_ids if pairs is None else [y for _, y in pairs])]
    c.effect = eff[wi]
    c.better_effect = eff[bi]
    c.evidence = (
        f"share of samples >= {worst[1]:g} us ({worst[0]} threads): median {median(c.base):.3g} -> "
        f"{median(c.new):.3g} ({c.effect:+.1%}), {runs_said}, thresholds "
        f"{', '.join(f'{x:g}' for x in limits)} us"
    )
    return c


def compare(
    db: HistoryDB,
    platform: str,
    measurement: str,
    base: str,
    new: str,
    settings: Settings,
    paired: bool = False,
    tolerance: Tolerance | None = None,
) -> Outcome:
    base_runs, new_runs = db.runs(platform, measurement, base), db.runs(platform, measurement, new)
    base_t, new_t = db.threads(platform, measurement, base), db.threads(platform, measurement, new)
    notes: list[str] = []
    pairs = _pairs(base_runs, new_runs, notes) if paired else None
    drift = differences(
        [r.fingerprint for r in base_runs],
        [r.fingerprint for r in new_runs],
        tolerance or Tolerance(),
        numeric=not paired,
    )
    for release, runs in ((base, base_runs), (new, new_runs)):
        kernels = {str(r.fingerprint["kernel_release"]) for r in runs if "kernel_release" in r.fingerprint}
        if len(kernels) > 1:
            drift.append(f"runs of {release} were measured on {len(kernels)} kernels: {', '.join(sorted(kernels))}")

    jobs: list[Any] = []
    for metric in settings.metrics:
        if metric == "tail":
            jobs.append(("tail",))
            continue
        b, n = _intervals(base_t, metric), _intervals(new_t, metric)
        for thread in sorted(set(b) | set(n), key=lambda s: (s == "worst", s)):
            jobs.append((metric, thread, b.get(thread, {}), n.get(thread, {})))
            missing = len(base_runs) + len(new_runs) - len(b.get(thread, {})) - len(n.get(thread, {}))
            if thread == "worst" and missing:
                notes.append(f"{metric}: {missing} run(s) do not report it (no histogram or no figure)")
    # Bonferroni over the tests: the chance of any false regression among them stays at alpha.
    alpha = settings.alpha / max(1, len(jobs))
    out = []
    for job in jobs:
        if job[0] == "tail":
            c = _compare_tail(
                base_t, new_t, pairs, [r.id for r in base_runs], [r.id for r in new_runs], settings, notes
            )
        else:
            c = _compare_figure(job[0], job[1], job[2], job[3], pairs, settings)
        if c.p_worse is not None:
            _decide(c, alpha, settings, c.better_effect)
            # An exact test on few runs cannot reach a small alpha at all: say so, not "no change".
            smallest = 0.5 ** len(c.new) if paired else 1 / math.comb(len(c.base) + len(c.new), len(c.new))
            if smallest >= alpha:
                c.decision = "not enough runs"
                c.evidence += f" (with these runs no p-value can be below {smallest:.3g}: add runs)"
            c.evidence += (
                f", p={c.p_worse:.3g} (worse) / {c.p_better:.3g} (better), alpha {alpha:.3g} after {len(jobs)} tests"
            )
        out.append(c)
    return Outcome(out, drift, notes, paired)


def compare_releases(
    db: HistoryDB, platform: str, measurement: str, base: str, new: str, settings: Settings
) -> list[Comparison]:
    return compare(db, platform, measurement, base, new, settings).comparisons


def trend(db: HistoryDB, platform: str, measurement: str, metric: str) -> list[dict[str, Any]]:
    """Per release in the order added: runs, median and range of the metric over the worst thread."""
    rows = []
    for release in db.releases(platform, measurement):
        values = _values(db.threads(platform, measurement, release), metric).get("worst", [])
        rows.append(
            {
                "release": release,
                "runs": len(values),
                "median": median(values) if values else None,
                "min": min(values) if values else None,
                "max": max(values) if values else None,
            }
        )
    return rows
