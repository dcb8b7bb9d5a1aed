# SPDX-License-Identifier: GPL-2.0-or-later
"""Did latency change between two releases, by how much, and how sure are we?

Every comparison answers in three parts: a verdict (REGRESSION, IMPROVEMENT, NO DETECTABLE
CHANGE, NOT ENOUGH DATA), the size of the change with its 95 % interval in the metric's unit, and
the resolving power of the data (the change that would have been found with 80 % power at these
numbers of runs, or how many runs would decide it). "No change" is never said: equivalence is not
tested, only the failure to detect one.

One test family per comparison, declared up front (docs: README "Release tracking"):
- the primary metrics are those the measurement's gates are about (max gate: max; percentile gate:
  that percentile; miss_rate gate: the share of samples above its latency; avg gate: avg), or
  max and p99.9 without a threshold file; each on the worst thread of every run and, when runs
  have several threads, on each thread label (gates apply per thread: a thread that regresses
  from 20 to 60 us under another that stays worst at 200 us must not hide);
- runs are the unit: a permutation test over runs (rank scores, Gehan's for censored figures), or,
  for interleaved pairs, a sign-flip test of the pairs' signed ranks; exact where it can be;
- each direction one-sided at alpha, with min-P (Westfall-Young) adjusted p-values over every
  metric and thread line: the chance of any false regression stays at alpha without Bonferroni,
  and since the adjustment follows the lines' correlation, five pairs (smallest p 1/32 = 0.031)
  can show a regression at alpha 0.05 when every line moves; a thread line with too few runs is
  NOT ENOUGH DATA, says how many runs would decide it, and is not in the adjustment;
- only what is reported is corrected for: the optional ``tail`` family (tail.py) is a second
  family and halves alpha.

Runs whose gates said ERROR are not valid measurements: left out and counted."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from statistics import median, stdev
from typing import Any

from rtgate.history.drift import Tolerance, differences, machine_differences, unknown_environment
from rtgate.history.figures import Interval, histograms_needed, intervals, per_release_values
from rtgate.history.numbers import figure_text, metric_unit, plain
from rtgate.history.power import detectable_log
from rtgate.history.stats import (
    gehan_scores,
    hodges_lehmann,
    midranks,
    paired_family,
    paired_max_test,
    shift_interval,
    signed_ranks,
    two_sample_family,
    two_sample_max_test,
)
from rtgate.history.store import HistoryDB, StoredRun, StoredThread
from rtgate.history.tail import QUANTILES, exceedances, overflow_range, thresholds

DEFAULT_METRICS = ["max", "p99.9"]

REGRESSION, IMPROVEMENT, UNDETECTED, NOT_ENOUGH = (
    "regression",
    "improvement",
    "no detectable change",
    "not enough data",
)
NOT_COMPARABLE = "not comparable"


@dataclass
class Comparison:
    metric: str
    thread: str
    decision: str
    base: list[float]
    new: list[float]
    unit: str = "us"
    p_worse: float | None = None
    p_better: float | None = None
    change: float | None = None  # new - base in the metric's unit (Hodges-Lehmann shift)
    interval: tuple[float, float] | None = None  # 95 % interval of the change, same unit
    effect: float | None = None  # the change relative to the base median
    detectable: float | None = None  # relative change found with 80 % power at these n (power.py)
    out_of_reach: bool = False  # no change is found with 80 % power at these n, at the family's level
    runs_needed: int | None = None  # per release, or pairs, to decide the change seen
    paired: bool = False
    evidence: str = ""
    censored: tuple[int, int] = (0, 0)  # runs whose figure is only a bound (base, new)
    alpha: float = 0.05
    better_effect: float | None = None  # tail: the change where it is most an improvement
    runs_needed_floor: bool = False  # runs_needed is only the smallest design that can decide

    def as_dict(self) -> dict[str, Any]:
        return {
            k: getattr(self, k)
            for k in (
                "metric",
                "thread",
                "decision",
                "unit",
                "base",
                "new",
                "paired",
                "p_worse",
                "p_better",
                "alpha",
                "change",
                "interval",
                "effect",
                "detectable",
                "out_of_reach",
                "runs_needed",
                "runs_needed_floor",
                "evidence",
                "censored",
            )
        } | {"summary": summary(self)}


@dataclass
class Settings:
    alpha: float = 0.05
    min_effect: float = 0.05
    min_runs: int = 3
    metrics: list[str] = field(default_factory=lambda: list(DEFAULT_METRICS))
    quantiles: tuple[float, ...] = QUANTILES


@dataclass
class Outcome:
    comparisons: list[Comparison]
    drift: list[str]
    notes: list[str]
    paired: bool = False
    machines: list[str] = field(default_factory=list)  # fingerprints that name different machines
    excluded: dict[str, int] = field(default_factory=dict)  # release: runs left out (ERROR)
    n_runs: dict[str, int] = field(default_factory=dict)  # release: valid runs compared
    refusal: str = ""  # why there is no verdict: the machines or the environments differ

    @property
    def refused(self) -> bool:
        return bool(self.refusal)

    @property
    def verdict(self) -> str:
        """The comparison's one verdict: not comparable, else the gravest word of its lines
        (a regression anywhere, then lines that need more runs, then an improvement)."""
        if self.refused:
            return NOT_COMPARABLE
        words = {c.decision for c in self.comparisons}
        return next((w for w in (REGRESSION, NOT_ENOUGH, IMPROVEMENT) if w in words), UNDETECTED)

    def verdict_reason(self) -> str:
        """What the verdict rests on, in a few words."""
        if self.refused:
            return self.refusal
        lines = [f"{c.metric}[{c.thread}]" for c in self.comparisons if c.decision == self.verdict]
        if self.verdict == UNDETECTED:
            return f"on every one of the {len(self.comparisons)} lines"
        named = ", ".join(lines[:6]) + (" ..." if len(lines) > 6 else "")
        return f"{len(lines)} of {len(self.comparisons)} lines: {named}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "verdict_reason": self.verdict_reason(),
            "comparisons": [c.as_dict() for c in self.comparisons],
            "drift": self.drift,
            "machines": self.machines,
            "notes": self.notes,
            "paired": self.paired,
            "excluded_runs": self.excluded,
            "runs": self.n_runs,
        }


def _change_text(c: Comparison) -> str:
    """The size of the change: in the metric's unit, relative to the base median, its interval."""
    if c.change is None:
        return ""
    rel = "" if c.effect is None or not math.isfinite(c.effect) else f" ({c.effect:+.1%})"
    size = f"change {figure_text(c.change, c.unit, signed=True)}{rel}"
    if c.interval is not None:
        lo, hi = (figure_text(x, c.unit, signed=True) for x in c.interval)
        size += f", 95 % interval [{lo}, {hi}]"
    return size


def _runs_text(c: Comparison) -> str:
    return f"{len(c.new)} pairs" if c.paired else f"{len(c.base)} vs {len(c.new)} runs"


def summary(c: Comparison) -> str:
    """The comparison in one line: verdict, size with its interval, resolving power."""
    if c.decision == NOT_COMPARABLE:
        return c.evidence
    size = _change_text(c)
    n = _runs_text(c)
    if c.decision == NOT_ENOUGH:
        least = "at least " if c.runs_needed_floor else ""
        unit = "pairs" if c.paired else "per release"
        power = f"runs to decide: {least}{c.runs_needed} {unit}" if c.runs_needed else ""
    elif c.detectable is not None:
        power = f"a change of +/-{c.detectable:.0%} would have been found with 80 % power at {n}"
    elif c.out_of_reach:
        more = "pairs" if c.paired else "runs"
        power = f"80 % power is out of reach at {n}: the family's lines do not move alike (give more {more})"
    else:
        power = ""
    return "; ".join(x for x in (size, "" if n in power else n, power, c.evidence) if x)


def primary_metrics(gates: list[Any]) -> list[str]:
    """The figure each gate is about, in the gates' order, once each."""
    out: list[str] = []
    for g in gates:
        metric = None
        if g.kind == "max":
            metric = "max"
        elif g.kind == "percentile":
            metric = "p99.9" if float(g.percentile) >= 99.9 else "p99"
        elif g.kind == "miss_rate" and g.above_us is not None:
            metric = f"above_{g.above_us:g}"
        elif g.kind == "avg":
            metric = "avg"
        if metric and metric not in out:
            out.append(metric)
    return out


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


def _effect(base: float, new: float) -> float:
    return (new - base) / base if base else (0.0 if new == base else math.inf)


def _logs(values: list[float]) -> list[float] | None:
    """Logarithms for the noise model; zeros (a rate with no sample above) floored at half the
    smallest positive value. None when nothing is positive."""
    positive = [v for v in values if v > 0]
    if not positive:
        return None
    floor = min(positive) / 2
    return [math.log(max(v, floor)) for v in values]


def smallest_p(n_base: int, n_new: int, paired: bool) -> float:
    """The smallest p-value an exact test on these runs can give."""
    if paired:
        return 0.5**n_new
    if not n_base or not n_new:
        return 1.0
    if n_base + n_new <= 200:  # exact: 3 against 3 is exactly 1/20, never a rounding below alpha
        return 1 / math.comb(n_base + n_new, n_new)
    # by logarithms: the binomial of thousands of runs is huge
    return math.exp(math.lgamma(n_base + 1) + math.lgamma(n_new + 1) - math.lgamma(n_base + n_new + 1))


def _log_spread(c: Comparison) -> float | None:
    """The runs' noise on the log scale: the spread of the pairs' log ratios, or the pooled
    spread of each release's log figures."""
    logs = _logs(c.base + c.new)
    if not logs or len(c.base) < 2 or len(c.new) < 2:
        return None
    b, n = logs[: len(c.base)], logs[len(c.base) :]
    if c.paired:
        return stdev([y - x for x, y in zip(b, n)])
    pooled = ((len(b) - 1) * stdev(b) ** 2 + (len(n) - 1) * stdev(n) ** 2) / (len(b) + len(n) - 2)
    return math.sqrt(pooled)


def _resolving(c: Comparison, level: float | None, lines: int, alpha: float, settings: Settings) -> None:
    """What these runs could detect (power.py): at the family's per-line level `level` when the
    line was tested; and, for a line without a verdict, how many runs would decide the change
    seen, at alpha shared by the family's lines (Bonferroni: the level a family of other runs
    cannot fall below)."""
    spread = _log_spread(c)
    if spread is None:
        return
    if level is not None:
        found = detectable_log(spread, len(c.base), len(c.new), c.paired, level, settings.min_effect)
        c.detectable, c.out_of_reach = (math.expm1(found), False) if math.isfinite(found) else (None, True)
    if c.decision != NOT_ENOUGH or c.effect is None or not math.isfinite(c.effect) or c.effect <= -1 or not c.effect:
        return
    seen = abs(math.log1p(c.effect))
    shared = alpha / max(1, lines)

    def decides(k: int) -> bool:
        return detectable_log(spread, k, k, c.paired, shared, settings.min_effect) <= seen

    lo, hi = max(2, settings.min_runs), 10000
    if not decides(hi):
        return
    while lo < hi:  # more runs only make a change easier to find
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if decides(mid) else (mid + 1, hi)
    c.runs_needed = lo


def _decide(c: Comparison, alpha: float, settings: Settings) -> None:
    """The verdict: significant one way, with the estimated change of the same sign and at least
    min_effect: the direction word and the signed change cannot disagree."""
    eff = c.effect if c.effect is not None else 0.0
    change = c.change if c.change is not None else eff
    if c.p_worse is not None and c.p_worse < alpha and change > 0 and eff >= settings.min_effect:
        c.decision = REGRESSION
    elif c.p_better is not None and c.p_better < alpha and change < 0 and eff <= -settings.min_effect:
        c.decision = IMPROVEMENT
    else:
        c.decision = UNDETECTED
        if (c.p_worse or 1) < alpha or (c.p_better or 1) < alpha:
            c.evidence += (
                f"; a change below min_effect {settings.min_effect:.0%} (or against its estimate) is not a verdict"
            )


def _pair_log_ratios(pairs: list[tuple[Interval, Interval]]) -> list[float]:
    """Each pair's log ratio new / base: latency scales with the host's state, so a pair measured
    on a busy host must not outweigh the others (signed ranks of plain differences did: 10 pairs
    found the size their log spread promised 69 % of the time, not 80 %). A pair counts only when
    its intervals do not overlap (censoring); a zero (a share with no sample above) is floored at
    half the smallest positive figure, as in _logs."""
    positive = [v.lo for pair in pairs for v in pair if v.lo > 0]
    floor = min(positive) / 2 if positive else 1.0
    return [
        0.0 if not (n.lo > b.hi or n.hi < b.lo) else math.log(max(n.lo, floor)) - math.log(max(b.lo, floor))
        for b, n in pairs
    ]


def _thread_key(name: str) -> tuple[Any, ...]:
    """Thread labels in natural order: t2 before t10."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


def _fewest_runs(paired: bool, alpha: float, min_runs: int) -> int:
    """The smallest design (runs of each release, or pairs) whose exact test can reach alpha."""
    k = max(2, min_runs)
    while smallest_p(k, k, paired) >= alpha and k < 10000:
        k += 1
    return k


Cell = tuple[str, str, dict[int, Interval], dict[int, Interval]]  # metric, thread, base and new figures by run


@dataclass
class _Units:
    """The runs (or pairs, base[i] with new[i]) that have every metric of the family."""

    base: list[int]
    new: list[int]
    paired: bool

    def present(self, b: dict[int, Interval], n: dict[int, Interval]) -> tuple[list[int], list[int]]:
        """The units of one cell: those with its figure (both runs of a pair)."""
        if self.paired:
            both = [(x, y) for x, y in zip(self.base, self.new) if x in b and y in n]
            return [x for x, _ in both], [y for _, y in both]
        return [i for i in self.base if i in b], [i for i in self.new if i in n]


def _family(
    metrics: list[str],
    base_t: list[StoredThread],
    new_t: list[StoredThread],
    base_ids: list[int],
    new_ids: list[int],
    pairs: list[tuple[int, int]] | None,
    settings: Settings,
    alpha: float,
    notes: list[str],
) -> list[Comparison]:
    """The primary metrics' comparisons, one test family: per metric, the worst thread of each run
    and each thread label on its own (gates apply per thread: a critical thread that regresses
    under a worse one must not hide). Every cell is in one min-P adjustment over the same runs; a
    run without a thread scores 0 (no evidence) in that thread's cell, which keeps the permutation
    exact. A cell with too few runs on either side is NOT ENOUGH DATA and not in the adjustment."""
    figures = {m: (intervals(base_t, m), intervals(new_t, m)) for m in metrics}
    worst = {m: (figures[m][0]["worst"], figures[m][1]["worst"]) for m in metrics}
    labels = sorted({t.thread for t in base_t + new_t}, key=_thread_key)
    units = _family_units(worst, base_ids, new_ids, pairs)
    lacking = (
        len(base_ids) - len(units.base) + len(new_ids) - len(units.new)
        if pairs is None
        else len(pairs) - len(units.base)
    )
    if lacking:
        notes.append(
            f"{lacking} {'pair(s)' if pairs is not None else 'run(s)'} lack one of {', '.join(metrics)} "
            "(no histogram or no figure): left out"
        )
    # Cells in report order: per metric the worst thread, then each thread (when there are several).
    cells: list[Cell] = []
    for m in metrics:
        cells.append((m, "worst", *worst[m]))
        if len(labels) > 1:
            cells += [(m, t, figures[m][0].get(t, {}), figures[m][1].get(t, {})) for t in labels]
    p_values, level = _family_p_values(cells, units, settings.min_runs, alpha)
    return [
        _cell_comparison(cell, units, p_values.get(k), settings, alpha, level, len(cells))
        for k, cell in enumerate(cells)
    ]


def _family_units(
    worst: dict[str, tuple[dict[int, Interval], dict[int, Interval]]],
    base_ids: list[int],
    new_ids: list[int],
    pairs: list[tuple[int, int]] | None,
) -> _Units:
    def complete(i: int, side: int) -> bool:
        return all(i in w[side] for w in worst.values())

    if pairs is not None:
        units = [(x, y) for x, y in pairs if complete(x, 0) and complete(y, 1)]
        return _Units([x for x, _ in units], [y for _, y in units], True)
    return _Units([i for i in base_ids if complete(i, 0)], [i for i in new_ids if complete(i, 1)], False)


def _family_p_values(
    cells: list[Cell], units: _Units, min_runs: int, alpha: float
) -> tuple[dict[int, tuple[float, float]], float]:
    """Per testable cell (enough units, and an exact p-value that can reach alpha), the min-P
    adjusted p-values (worse, better) of the one family; and the family's per-line level (the
    largest marginal p-value it declares at alpha)."""
    tested = []
    for k, (_, _, b, n) in enumerate(cells):
        cb, cn = units.present(b, n)
        if min(len(cb), len(cn)) >= min_runs and smallest_p(len(cb), len(cn), units.paired) < alpha:
            tested.append(k)
    if not tested:
        return {}, 0.0
    rows = []
    for k in tested:
        _, _, b, n = cells[k]
        cb, cn = units.present(b, n)
        if units.paired:
            ranks = dict(zip(cb, signed_ranks(_pair_log_ratios([(b[x], n[y]) for x, y in zip(cb, cn)]))))
            rows.append([ranks.get(x, 0.0) for x in units.base])
        else:
            scores = dict(zip(cb + cn, gehan_scores([b[i] for i in cb] + [n[i] for i in cn])))
            rows.append([scores.get(i, 0.0) for i in units.base + units.new])
    if units.paired:
        worse, better, level = paired_family(rows, alpha)
    else:
        worse, better, level = two_sample_family(rows, len(units.base), alpha)
    return dict(zip(tested, zip(worse, better))), level


def _shift(c: Comparison) -> None:
    """The change (Hodges-Lehmann), its interval and the effect relative to the base median."""
    if c.paired:
        diffs = [y - x for x, y in zip(c.base, c.new)]
        c.change, c.interval = hodges_lehmann(diffs), shift_interval(diffs)
    else:
        c.change, c.interval = hodges_lehmann(c.new, c.base), shift_interval(c.new, c.base)
    if min(len(c.base), len(c.new)) < 2:
        c.interval = None  # one run cannot show its own spread
    base_med = median(c.base)
    c.effect = c.change / base_med if base_med else (0.0 if c.change == 0 else math.inf)


def _cell_comparison(
    cell: Cell,
    units: _Units,
    p_values: tuple[float, float] | None,
    settings: Settings,
    alpha: float,
    level: float,
    lines: int,
) -> Comparison:
    m, thread, b, n = cell
    cb, cn = units.present(b, n)
    c = Comparison(m, thread, NOT_ENOUGH, [b[i].lo for i in cb], [n[i].lo for i in cn], metric_unit(m))
    c.paired, c.alpha = units.paired, alpha
    c.censored = (sum(b[i].censored for i in cb), sum(n[i].censored for i in cn))
    if c.base and c.new:
        _shift(c)
    floor = smallest_p(len(cb), len(cn), c.paired)
    if min(len(cb), len(cn)) < settings.min_runs:
        have = f"{len(cb)} pair(s)" if c.paired else f"{len(cb)} base and {len(cn)} new run(s)"
        c.evidence = (
            f"at least {settings.min_runs} {'pairs' if c.paired else 'runs of each release'} are needed"
            if thread == "worst"
            else f"thread {thread} is in only {have}"
        )
    elif p_values is None:
        c.evidence = f"no p-value from these runs can be below {plain(floor)} (alpha {plain(alpha)})"
    else:
        c.p_worse, c.p_better = p_values
        c.evidence = f"p={plain(c.p_worse)} worse / {plain(c.p_better)} better, alpha {plain(alpha)} one-sided"
        _decide(c, alpha, settings)
    if any(c.censored):
        c.evidence += (
            f"; censored (in the -h overflow, kept as 'at least' the histogram range): "
            f"{c.censored[0]} base and {c.censored[1]} new runs"
        )
    _resolving(c, level if p_values is not None else None, lines, alpha, settings)
    if c.decision == NOT_ENOUGH and c.runs_needed is None:
        # Too few runs to estimate the spread: the smallest design that can decide anything.
        c.runs_needed, c.runs_needed_floor = _fewest_runs(c.paired, alpha, settings.min_runs), True
    return c


def _pair_log_ratio(counts: dict[int, tuple[float, float]], x: int, y: int) -> float:
    """The log rate ratio of a pair, new run y against base run x (+0.5: a run with no sample
    above still counts); 0, no evidence, when either run lacks the cell's thread."""
    if x not in counts or y not in counts:
        return 0.0
    return math.log((counts[y][0] + 0.5) / (counts[y][1] + 1)) - math.log((counts[x][0] + 0.5) / (counts[x][1] + 1))


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
            f" run(s) overflowed their histogram: thresholds capped at {plain(cap, 6)} us, where counts stay exact"
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
    c = Comparison("tail", "all", NOT_ENOUGH, [], [], "share")
    if pairs is not None:
        pairs = [(x, y) for x, y in pairs if x in with_hist and y in with_hist]
        if len(pairs) < settings.min_runs or not cells:
            c.evidence = f"{len(pairs)} complete pairs with histograms; at least {settings.min_runs} are needed"
            return c
        logr = {cell: [_pair_log_ratio(counts[cell], x, y) for x, y in pairs] for cell in cells}
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
    c.paired = pairs is not None
    shares = (figure_text(median(c.base), "share"), figure_text(median(c.new), "share"))
    c.evidence = (
        f"share of samples >= {plain(worst[1], 6)} us ({worst[0]} threads): median {shares[0]} -> "
        f"{shares[1]} ({c.effect:+.1%}), {runs_said}, thresholds "
        f"{', '.join(plain(x, 6) for x in limits)} us"
    )
    return c


def _decide_tail(c: Comparison, alpha: float, settings: Settings) -> None:
    """The tail family: its own max test over thresholds and threads; the effect is the one of the
    cell that decided each way, so the word and the sign agree."""
    c.alpha = alpha
    floor = smallest_p(len(c.base), len(c.new), c.paired)
    if c.p_worse is None:
        return
    if floor >= alpha:
        c.decision = NOT_ENOUGH
        c.evidence += f"; no p-value from these runs can be below {plain(floor)} (alpha {plain(alpha)})"
        return
    worse = c.effect if c.effect is not None else 0.0
    better = c.better_effect if c.better_effect is not None else worse
    better_p = "-" if c.p_better is None else plain(c.p_better)
    c.evidence += f"; p={plain(c.p_worse)} worse / {better_p} better, alpha {plain(alpha)} one-sided"
    if c.p_worse < alpha and worse >= settings.min_effect:
        c.decision = REGRESSION
    elif c.p_better is not None and c.p_better < alpha and better <= -settings.min_effect:
        c.decision, c.effect = IMPROVEMENT, better
    else:
        c.decision = UNDETECTED


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
    notes: list[str] = []
    excluded: dict[str, int] = {}
    runs: dict[str, list[StoredRun]] = {}
    threads: dict[str, list[StoredThread]] = {}
    for release in (base, new):
        bad = db.error_runs(platform, measurement, release)
        runs[release] = [r for r in db.runs(platform, measurement, release) if r.id not in bad]
        stored = db.threads(platform, measurement, release, histograms_needed(settings.metrics))
        threads[release] = [t for t in stored if t.run_id not in bad]
        excluded[release] = len(bad)
        if bad:
            notes.append(
                f"{len(bad)} run(s) of {release} left out: a gate said ERROR (not a valid measurement; "
                f"run ids {', '.join(map(str, sorted(bad)[:10]))}{' ...' if len(bad) > 10 else ''})"
            )
    base_runs, new_runs = runs[base], runs[new]
    base_t, new_t = threads[base], threads[new]
    pairs = _pairs(base_runs, new_runs, notes) if paired else None
    base_fp, new_fp = [r.fingerprint for r in base_runs], [r.fingerprint for r in new_runs]
    drift = differences(base_fp, new_fp, tolerance or Tolerance(), numeric=not paired)
    machines = machine_differences(base_fp, new_fp)
    for release, fps in ((base, base_fp), (new, new_fp)):
        unknown = unknown_environment(fps)
        if unknown:
            notes.append(
                f"environment unknown for {unknown} run(s) of {release} (results without a recorded "
                "environment): host drift cannot be checked for them"
            )
    for release, rs in ((base, base_runs), (new, new_runs)):
        kernels = {str(r.fingerprint["kernel_release"]) for r in rs if "kernel_release" in r.fingerprint}
        if len(kernels) > 1:
            drift.append(f"runs of {release} were measured on {len(kernels)} kernels: {', '.join(sorted(kernels))}")

    figures = [m for m in settings.metrics if m != "tail"]
    families = bool(figures) + ("tail" in settings.metrics)
    # Two families (figures, tail): Bonferroni between them; within each, max-T.
    alpha = settings.alpha / max(1, families)
    base_ids, new_ids = [r.id for r in base_runs], [r.id for r in new_runs]
    out: list[Comparison] = []
    if figures:
        out += _family(figures, base_t, new_t, base_ids, new_ids, pairs, settings, alpha, notes)
    if "tail" in settings.metrics:
        c = _compare_tail(base_t, new_t, pairs, base_ids, new_ids, settings, notes)
        _decide_tail(c, alpha, settings)
        out.append(c)
    outcome = Outcome(out, drift, notes, paired, machines, excluded, {base: len(base_runs), new: len(new_runs)})
    if machines:  # latency of two machines says nothing about two kernels
        _refuse(outcome, "the releases were measured on different machines: " + "; ".join(machines))
    return outcome


def _refuse(outcome: Outcome, why: str) -> None:
    """No verdict: every line says NOT COMPARABLE, keeping only the size of what it saw."""
    outcome.refusal = why
    for c in outcome.comparisons:
        c.decision = NOT_COMPARABLE
        c.evidence = "; ".join(x for x in (why, _change_text(c), _runs_text(c)) if x)


DRIFT_ADVICE = (
    "measure both releases on the same host state (interleaved with --pair-id, compared --paired), "
    "or give --accept-drift"
)


def refuse_drift(outcome: Outcome) -> None:
    """Host drift looks exactly like a kernel change: no verdict from it, on any line (a NO
    DETECTABLE CHANGE under drift would be as unfounded as a REGRESSION)."""
    if outcome.drift and not outcome.refused:
        keys = sorted({k if k.isidentifier() else "kernel" for k in (x.split(":", 1)[0] for x in outcome.drift)})
        _refuse(outcome, f"the environments differ (drift: {', '.join(keys)})")


def compare_releases(
    db: HistoryDB, platform: str, measurement: str, base: str, new: str, settings: Settings
) -> list[Comparison]:
    return compare(db, platform, measurement, base, new, settings).comparisons


def text_lines(outcome: Outcome, drift_accepted: bool) -> list[str]:
    """The comparison as the CLI prints it; the HTML report shows the same lines."""
    out = [f"{'DRIFT (accepted)' if drift_accepted else 'DRIFT':16} {line}" for line in outcome.drift]
    out += [f"{'MACHINES DIFFER':16} {line}" for line in outcome.machines]
    out += [f"{'NOTE':16} {note}" for note in outcome.notes]
    out += [f"{c.decision.upper():21} {c.metric:>10} {c.thread:<10} {summary(c)}" for c in outcome.comparisons]
    advice = f": {DRIFT_ADVICE}" if outcome.refused and outcome.drift and not outcome.machines else ""
    accepted = " (drift accepted)" if drift_accepted and outcome.drift else ""
    out.append(f"{'VERDICT':16} {outcome.verdict.upper()}{accepted}: {outcome.verdict_reason()}{advice}")
    return out


def settings_for(history: dict[str, Any], gates: list[Any], metrics: list[str] | None = None) -> Settings:
    """The declared family: metrics given (option, or the threshold file's history: metrics), else
    the figures the measurement's gates are about, else max and p99.9."""
    s = Settings(**history)
    if metrics:
        s.metrics = list(metrics)
    elif "metrics" not in history:
        s.metrics = primary_metrics(gates) or list(DEFAULT_METRICS)
    return s


def latest_verdict(outcome: Outcome, metric: str, base: str, new: str) -> str | None:
    """One line for a plot's title: the verdict on `metric` of `new` against `base`."""
    if outcome.drift:
        refuse_drift(outcome)
    c = next((c for c in outcome.comparisons if c.metric == metric), None)
    if c is None:
        return None
    if outcome.refused:  # the comparison's verdict, not a line's
        return f"{new} vs {base}: NOT COMPARABLE: {outcome.refusal}"
    text = f"{new} vs {base}: {c.decision.upper()}"
    threads = [x.thread for x in outcome.comparisons if x.metric == metric and x is not c and x.decision == REGRESSION]
    if threads and c.decision != REGRESSION:  # the plot shows the worst thread: say what it hides
        text += f" (REGRESSION on {', '.join(threads)})"
    if c.change is not None:
        text += f" {figure_text(c.change, c.unit, signed=True)}"
        if c.interval is not None:
            lo, hi = (figure_text(x, c.unit, signed=True) for x in c.interval)
            text += f" [{lo}, {hi}]"
    if c.decision == UNDETECTED and c.detectable is not None:
        text += f", could detect +/-{c.detectable:.0%}"
    elif c.decision == NOT_ENOUGH and c.runs_needed:
        text += f", ~{c.runs_needed} runs/release would decide"
    return text


@dataclass
class ReportSection:
    """What the HTML report shows of the history: the trend, and the comparison as the CLI says it."""

    metric: str
    per_release: dict[str, list[float]]
    limit_gates: list[Any]
    verdict: str | None = None
    lines: list[str] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)


def report_section(
    target: str,
    platform: str,
    measurement: str,
    gates: list[Any],
    history: dict[str, Any],
    base: str | None,
    new: str | None,
) -> ReportSection:
    """The history part of `rtgate report`: the same settings, test and words as `history compare`."""
    settings = settings_for(history, gates)
    metric = settings.metrics[0] if settings.metrics[0] != "tail" else "max"
    with HistoryDB(target) as db:
        section = ReportSection(metric, per_release_values(db, platform, measurement, metric), gates)
        releases = db.releases(platform, measurement)
        if not (base and new) and len(releases) >= 2:
            base, new = releases[-2], releases[-1]
        if base and new:
            outcome = compare(db, platform, measurement, base, new, settings)
            refuse_drift(outcome)
            section.lines = text_lines(outcome, False)
            section.comparisons = outcome.comparisons
            section.verdict = latest_verdict(outcome, metric, base, new)
    return section
