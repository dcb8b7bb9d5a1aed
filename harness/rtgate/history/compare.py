"""Did a metric change between two releases by more than run-to-run noise explains?"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median
from typing import Any

from rtgate.history.stats import bootstrap_median_diff, mann_whitney_greater
from rtgate.history.store import HistoryDB, StoredThread

DEFAULTS = {"alpha": 0.05, "min_effect": 0.05, "min_runs": 3, "metrics": ["max", "p99.9"]}


@dataclass
class Comparison:
    metric: str
    thread: str
    decision: str            # regression, improvement, no change, not enough runs
    base: list[float]
    new: list[float]
    p_worse: float | None = None
    p_better: float | None = None
    effect: float | None = None       # relative change of the median
    interval: tuple[float, float] | None = None
    evidence: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("metric", "thread", "decision", "base", "new", "p_worse", "p_better",
                                             "effect", "interval", "evidence")}


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


def _values(threads: list[StoredThread], metric: str) -> dict[str, list[float]]:
    """Per thread, and for the worst thread of each run, one value per run."""
    per: dict[str, list[float]] = {}
    worst: dict[int, float] = {}
    for t in threads:
        if metric.startswith("above_"):
            v = tail_fraction(t, float(metric[len("above_"):]))
        else:
            v = t.figures.get(metric)
        if v is None:
            continue
        per.setdefault(t.thread, []).append(float(v))
        worst[t.run_id] = max(worst.get(t.run_id, float("-inf")), float(v))
    per["worst"] = list(worst.values())
    return per


@dataclass
class Settings:
    alpha: float = 0.05
    min_effect: float = 0.05
    min_runs: int = 3
    metrics: list[str] = field(default_factory=lambda: ["max", "p99.9"])


def compare_releases(db: HistoryDB, platform: str, measurement: str, base: str, new: str,
                     settings: Settings) -> list[Comparison]:
    base_t, new_t = db.threads(platform, measurement, base), db.threads(platform, measurement, new)
    pairs = []
    for metric in settings.metrics:
        b, n = _values(base_t, metric), _values(new_t, metric)
        for thread in sorted(set(b) | set(n), key=lambda s: (s == "worst", s)):
            pairs.append((metric, thread, b.get(thread, []), n.get(thread, [])))
    # Bonferroni: the chance of any false regression among all the tests stays at alpha.
    alpha = settings.alpha / max(1, len(pairs))
    out = []
    for metric, thread, b, n in pairs:
        c = Comparison(metric, thread, "not enough runs", b, n)
        if len(b) < settings.min_runs or len(n) < settings.min_runs:
            c.evidence = f"{len(b)} and {len(n)} runs; at least {settings.min_runs} of each are needed"
            out.append(c)
            continue
        c.p_worse = mann_whitney_greater(n, b)
        c.p_better = mann_whitney_greater(b, n)
        mb, mn = median(b), median(n)
        c.effect = (mn - mb) / mb if mb else (0.0 if mn == mb else float("inf"))
        c.interval = bootstrap_median_diff(n, b)
        if c.p_worse < alpha and c.effect >= settings.min_effect:
            c.decision = "regression"
        elif c.p_better < alpha and c.effect <= -settings.min_effect:
            c.decision = "improvement"
        else:
            c.decision = "no change"
        c.evidence = (f"median {mb:.4g} -> {mn:.4g} ({c.effect:+.1%}), {len(b)} vs {len(n)} runs, "
                      f"Mann-Whitney p={c.p_worse:.3g} (worse) / {c.p_better:.3g} (better), "
                      f"alpha {alpha:.3g} after {len(pairs)} tests, 95 % interval of the change "
                      f"[{c.interval[0]:+.4g}, {c.interval[1]:+.4g}]")
        out.append(c)
    return out


def trend(db: HistoryDB, platform: str, measurement: str, metric: str) -> list[dict[str, Any]]:
    """Per release in the order added: runs, median and range of the metric over the worst thread."""
    rows = []
    for release in db.releases(platform, measurement):
        values = _values(db.threads(platform, measurement, release), metric).get("worst", [])
        rows.append({"release": release, "runs": len(values),
                     "median": median(values) if values else None,
                     "min": min(values) if values else None, "max": max(values) if values else None})
    return rows
