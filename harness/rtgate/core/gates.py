"""Gate evaluation, conservative by construction: missing or unknowable data never reads as a pass.

This is the one place where gate math lives; every reporter and adapter reads its verdicts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from rtgate.core.model import RunResult, ThreadResult
from rtgate.core import validity
from rtgate.core.stats import clopper_pearson_upper
from rtgate.core.thresholds import GateSpec, Measurement


class Status(str, Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    INCONCLUSIVE = "INCONCLUSIVE"
    ERROR = "ERROR"


_SEVERITY = {Status.PASS: 0, Status.INCONCLUSIVE: 1, Status.FAIL: 2, Status.ERROR: 3}


@dataclass
class Verdict:
    measurement: str
    gate: str
    kind: str
    thread: str                 # "cpu0", "A-cpu1", "t3" or "worst"
    status: Status
    reason: str
    value: float | None = None  # measured figure in us (a fraction for rates)
    value_text: str = ""
    limit: float | None = None
    bound: float | None = None  # upper confidence bound of a rate
    samples: int = 0
    critical: bool = False
    properties: dict[str, Any] = field(default_factory=dict)

    @property
    def test_id(self) -> str:
        return f"{self.measurement}::{self.gate}[{self.thread}]"

    def as_dict(self) -> dict[str, Any]:
        return {"measurement": self.measurement, "gate": self.gate, "kind": self.kind,
                "thread": self.thread, "status": self.status.value, "reason": self.reason,
                "value": self.value, "value_text": self.value_text, "limit": self.limit,
                "bound": self.bound, "samples": self.samples, "critical": self.critical,
                "properties": self.properties}


def _fmt(v: float | None) -> str:
    if v is None:
        return "n/a"
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.2f}"


def _pct(r: float) -> str:
    return f"{r * 100:.4g} %"


def thread_ids(run: RunResult, labels: list[str | None]) -> dict[int, str]:
    """Readable, unique ids: cpu0, t2, or group-cpu0 when a measurement has several groups."""
    several = len({lb for lb in labels if lb}) > 1
    ids: dict[int, str] = {}
    for pos, t in enumerate(run.threads):
        base = f"cpu{t.cpu}" if t.cpu is not None and t.cpu >= 0 else f"t{t.index}"
        label = labels[pos] if pos < len(labels) else None
        ids[t.index] = f"{label}-{base}" if several and label else base
    if len(set(ids.values())) < len(ids):
        ids = {t.index: (f"{labels[p]}-t{t.index}" if several and labels[p] else f"t{t.index}")
               for p, t in enumerate(run.threads)}
    return ids


def _properties(run: RunResult, t: ThreadResult) -> dict[str, Any]:
    scale = run.units_per_us()
    props: dict[str, Any] = {
        "thread": t.index, "cpu": t.cpu, "priority": t.priority, "policy": t.policy,
        "interval_us": t.interval_us, "cycles": t.cycles,
        "min_us": None if t.min is None else t.min / scale,
        "avg_us": None if t.avg is None else round(t.avg / scale, 3),
        "max_us": None if t.max is None else t.max / scale,
        "missed_periods": t.missed, "source": run.source, "format": run.format,
    }
    if t.histogram is not None:
        props["overflows"] = t.histogram.overflow
        for q in (99.0, 99.9, 99.99):
            v, over = t.histogram.percentile(q, t.max)
            props[f"p{q:g}_us"] = None if v is None else (f">={v / scale:g}" if over else v / scale)
    return props


class _Eval:
    """One gate on one thread."""

    def __init__(self, run: RunResult, gate: GateSpec, t: ThreadResult, who: str) -> None:
        self.run, self.gate, self.t, self.who = run, gate, t, who
        self.scale = run.units_per_us()

    def verdict(self, status: Status, reason: str, **kw: Any) -> tuple[Status, str, dict[str, Any]]:
        return status, f"{reason} on {self.who}", kw

    def run_eval(self) -> tuple[Status, str, dict[str, Any]]:
        t, g = self.t, self.gate
        if t.cycles == 0:
            return self.verdict(Status.ERROR, "no samples (0 cycles)")
        n = t.cycles + (t.missed or 0)
        need = g.min_samples or self.default_min_samples()
        if n < need:
            return self.verdict(Status.INCONCLUSIVE, f"only {n} samples, the {g.kind} gate needs {need}",
                                samples=n)
        return getattr(self, "eval_" + g.kind)()

    def default_min_samples(self) -> int:
        if self.gate.kind == "percentile" and self.gate.percentile is not None:
            return math.ceil(100.0 / (100.0 - self.gate.percentile) - 1e-9)
        return 1

    def eval_max(self) -> tuple[Status, str, dict[str, Any]]:
        t, limit = self.t, float(self.gate.limit_us or 0.0)
        if t.max is None:
            return self.verdict(Status.ERROR, "results have no max")
        v = t.max / self.scale
        kw = {"value": v, "value_text": f"{_fmt(v)} us", "limit": limit, "samples": t.cycles}
        if v > limit:
            return self.verdict(Status.FAIL, f"max {_fmt(v)} us > {_fmt(limit)} us", **kw)
        return self.verdict(Status.PASS, f"max {_fmt(v)} us <= {_fmt(limit)} us", **kw)

    def eval_avg(self) -> tuple[Status, str, dict[str, Any]]:
        t, limit = self.t, float(self.gate.limit_us or 0.0)
        if t.avg is None:
            return self.verdict(Status.ERROR, "results have no average")
        v = t.avg / self.scale
        # How far the true average may lie above the printed one: text formats truncate it to whole
        # units, rt-tests JSON rounds it to two decimals; rtgate's JSON and -v samples are exact.
        slack = {"histogram-text": 1.0, "summary-text": 1.0, "rt-tests-json": 0.005}.get(self.run.format, 0.0)
        upper = (t.avg + slack) / self.scale
        kw = {"value": v, "value_text": f"{_fmt(v)} us", "limit": limit, "samples": t.cycles}
        if upper > limit:
            why = "" if v > limit else " (as printed: the true average may be higher)"
            return self.verdict(Status.FAIL, f"avg {_fmt(v)} us > {_fmt(limit)} us{why}", **kw)
        return self.verdict(Status.PASS, f"avg {_fmt(v)} us <= {_fmt(limit)} us", **kw)

    def eval_percentile(self) -> tuple[Status, str, dict[str, Any]]:
        t, g = self.t, self.gate
        q, limit = float(g.percentile or 0.0), float(g.limit_us or 0.0)
        name = f"p{q:g}"
        kw: dict[str, Any] = {"limit": limit, "samples": t.cycles + (t.missed or 0)}
        if t.missed:
            # A missed period is a sample above any limit: it sits at the top of the distribution.
            tail = t.missed / (t.cycles + t.missed)
            if tail > 1.0 - q / 100.0:
                return self.verdict(Status.FAIL, f"{name} is a missed period ({t.missed} missed of "
                                    f"{t.cycles + t.missed}) > {_fmt(limit)} us", value_text="missed", **kw)
        if t.histogram is None:
            if t.max is not None and t.max / self.scale <= limit:
                v = t.max / self.scale
                return self.verdict(Status.PASS, f"{name} <= max {_fmt(v)} us <= {_fmt(limit)} us",
                                    value=v, value_text=f"<= {_fmt(v)} us", **kw)
            return self.verdict(Status.ERROR, f"results have no histogram, so {name} is unknown "
                                "(run cyclictest with -h, or use rtgate-sampler JSON)", **kw)
        # With missed periods on top, the percentile of the whole is at a higher rank of the histogram.
        q_hist = q if not t.missed else 100.0 * min(1.0, (q / 100.0) * (t.cycles + t.missed) / t.cycles)
        value, in_overflow = t.histogram.percentile(q_hist, t.max)
        if value is None:
            return self.verdict(Status.ERROR, f"{name} is unknown", **kw)
        v = value / self.scale
        if in_overflow and (t.max is None or t.max / self.scale > limit):
            return self.verdict(Status.FAIL, f"{name} lies in the histogram overflow (>= {_fmt(v)} us) "
                                f"> {_fmt(limit)} us", value=v, value_text=f">= {_fmt(v)} us", **kw)
        kw.update(value=v, value_text=f"{_fmt(v)} us")
        if v > limit:
            return self.verdict(Status.FAIL, f"{name} {_fmt(v)} us > {_fmt(limit)} us", **kw)
        return self.verdict(Status.PASS, f"{name} {_fmt(v)} us <= {_fmt(limit)} us", **kw)

    def _rate(self, k: int, n: int, allowed: float, what: str) -> tuple[Status, str, dict[str, Any]]:
        conf = self.gate.confidence
        bound = clopper_pearson_upper(k, n, conf)
        observed = k / n
        kw = {"value": observed, "value_text": _pct(observed), "limit": allowed, "bound": bound, "samples": n}
        text = f"{k} of {n} {what} ({_pct(observed)}, {conf * 100:g} % upper bound {_pct(bound)})"
        if observed > allowed:
            return self.verdict(Status.FAIL, f"{text} > {_pct(allowed)}", **kw)
        if bound <= allowed:
            return self.verdict(Status.PASS, f"{text} <= {_pct(allowed)}", **kw)
        clean = math.ceil(math.log(1.0 - conf) / math.log1p(-allowed)) if allowed > 0 else None
        more = f"; about {clean} clean samples are needed" if clean else ""
        return self.verdict(Status.INCONCLUSIVE, f"{text}: the bound is above {_pct(allowed)}{more}", **kw)

    def eval_miss_rate(self) -> tuple[Status, str, dict[str, Any]]:
        t, g = self.t, self.gate
        above = float(g.above_us or 0.0)
        known_max = t.max
        if t.histogram is None:
            if known_max is None or known_max / self.scale > above:
                return self.verdict(Status.ERROR, f"results have no histogram, so samples above "
                                    f"{_fmt(above)} us cannot be counted (run cyclictest with -h, "
                                    "or use rtgate-sampler JSON)")
            k = 0
        else:
            k = t.histogram.count_above(above * self.scale, known_max)
        missed = t.missed or 0
        return self._rate(k + missed, t.cycles + missed, float(g.rate or 0.0),
                          f"samples above {_fmt(above)} us" + (f" or missed ({missed} missed)" if missed else ""))

    def eval_missed(self) -> tuple[Status, str, dict[str, Any]]:
        t, g = self.t, self.gate
        if t.missed is None:
            return self.verdict(Status.ERROR, f"{self.run.format} results do not count missed periods "
                                "(cyclictest skips them silently): use rtgate-sampler")
        n = t.cycles + t.missed
        if g.max_count is not None:
            kw = {"value": float(t.missed), "value_text": str(t.missed), "limit": float(g.max_count), "samples": n}
            if t.missed > g.max_count:
                return self.verdict(Status.FAIL, f"{t.missed} missed periods > {g.max_count}", **kw)
            return self.verdict(Status.PASS, f"{t.missed} missed periods <= {g.max_count}", **kw)
        return self._rate(t.missed, n, float(g.max_rate or 0.0), "periods missed")


def _select(run: RunResult, gate: GateSpec, labels: list[str | None]) -> tuple[list[ThreadResult], str | None]:
    chosen = list(run.threads)
    if gate.threads:
        chosen = [t for pos, t in enumerate(run.threads) if pos < len(labels) and labels[pos] in gate.threads]
        if not chosen:
            return [], f"no thread of group {', '.join(gate.threads)} in the results ({len(run.threads)} threads)"
    if gate.cpus:
        ran = {t.cpu for t in chosen}
        missing = [c for c in gate.cpus if c not in ran]
        if missing:
            return [], f"no thread ran on cpu {', '.join(map(str, missing))} (threads ran on " \
                       f"{', '.join(str(c) for c in sorted(x for x in ran if x is not None)) or 'no pinned CPU'})"
        chosen = [t for t in chosen if t.cpu in gate.cpus]
    return chosen, None


def _expected_threads(measurement: Measurement) -> int | None:
    if any(g.cpus == "all" for g in measurement.sampler.threads):
        return None
    return sum(g.count if g.count is not None else len(g.cpus or [1]) for g in measurement.sampler.threads)


def evaluate(measurement: Measurement, run: RunResult) -> list[Verdict]:
    """Every gate of a measurement against one run."""
    labels = measurement.thread_labels(len(run.threads))
    ids = thread_ids(run, labels)
    for t, label in zip(run.threads, labels):
        t.label = label
    problem = None
    invalid = validity.problems(run)
    if invalid:
        problem = (Status.ERROR, "the measurement is invalid: " + "; ".join(invalid))
    elif not run.complete:
        problem = (Status.ERROR, "the results are a checkpoint of a run that did not finish")
    elif run.stop_reason == "error":
        problem = (Status.ERROR, "the sampler stopped on an error")
    expected = _expected_threads(measurement)
    if problem is None and expected is not None and expected != len(run.threads):
        problem = (Status.ERROR, f"the measurement has {expected} threads but the results have {len(run.threads)}")
    early = run.stop_reason == "signal"
    verdicts: list[Verdict] = []
    props: dict[int, dict[str, Any]] = {}  # per thread, shared by its gates
    for gate in measurement.gates:
        chosen, missing = _select(run, gate, labels)
        if problem or missing:
            status, reason = problem or (Status.ERROR, missing or "")
            verdicts.append(Verdict(measurement.name, gate.name, gate.kind,
                                    "worst" if gate.scope == "worst" else "all", status, reason,
                                    critical=gate.critical))
            continue
        per_thread = []
        for t in chosen:
            status, reason, kw = _Eval(run, gate, t, t.describe()).run_eval()
            if early and status == Status.PASS:
                status = Status.INCONCLUSIVE
                reason += f"; but the run was stopped early by {run.signal or 'a signal'}"
            if t.index not in props:
                props[t.index] = _properties(run, t)
            per_thread.append(Verdict(measurement.name, gate.name, gate.kind, ids[t.index], status, reason,
                                      critical=gate.critical, properties=dict(props[t.index]), **kw))
        if gate.scope == "worst":
            worst = max(per_thread, key=lambda v: (_SEVERITY[v.status], v.value if v.value is not None else -1.0))
            worst.properties["worst_of"] = [v.thread for v in per_thread]
            worst.thread = "worst"
            verdicts.append(worst)
        else:
            verdicts.extend(per_thread)
    for v in verdicts:
        cause = validity.likely_cause(run, v.properties.get("cpu")) if v.status in (Status.FAIL, Status.ERROR) \
            else None
        if cause:
            v.reason += f"; {cause}"
    return verdicts


def error_verdicts(measurement: Measurement, reason: str) -> list[Verdict]:
    """One ERROR per gate, for a measurement that could not be made (e.g. an unmet require:)."""
    return [Verdict(measurement.name, g.name, g.kind, "worst" if g.scope == "worst" else "all", Status.ERROR, reason,
                    critical=g.critical) for g in measurement.gates]


def exit_code(verdicts: list[Verdict], allow_inconclusive: bool) -> int:
    """0 all pass, 1 a gate failed or errored, 3 inconclusive (unless allowed)."""
    statuses = {v.status for v in verdicts}
    if Status.FAIL in statuses or Status.ERROR in statuses:
        return 1
    if Status.INCONCLUSIVE in statuses and not allow_inconclusive:
        return 3
    return 0
