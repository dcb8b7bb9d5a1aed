# SPDX-License-Identifier: GPL-2.0-or-later
"""Gate evaluation, conservative by construction: missing or unknowable data never reads as a pass.

This is the one place where gate math lives (each kind's own judgement is declared in
gate_kinds.py); every reporter and adapter reads its verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rtgate.core import validity
from rtgate.core.gate_kinds import KINDS, figure_unit, pct, pct_range, percentile_text
from rtgate.core.model import RunResult, ThreadResult
from rtgate.core.stats import clean_samples_to_pass, decide_rate, samples_to_fail
from rtgate.core.status import SEVERITY
from rtgate.core.status import Status as Status  # re-exported: reporters import it from here
from rtgate.core.thread_plan import (
    ThreadPlan,
    named_cpu,
    naming_cpus,
    plan_for_results,
    plan_here,
    planned_cpus,
    thread_name,
)
from rtgate.core.thresholds import GateSpec, Measurement


@dataclass
class Verdict:
    """One gate's answer on one thread (or the worst of them), with its figure, limit and properties."""

    measurement: str
    gate: str
    kind: str
    thread: str  # "cpu0", "A-cpu1", "t3" or "worst"
    status: Status
    reason: str
    value: float | None = None  # measured figure in us (a fraction for rates)
    value_text: str = ""
    limit: float | None = None
    unit: str = ""  # of value and limit: "us", "%" (held as fractions), "periods"; "" unknown
    bound: float | None = None  # upper confidence bound of a rate
    lower: float | None = None  # lower confidence bound of a rate
    samples: int = 0
    critical: bool = False
    properties: dict[str, Any] = field(default_factory=dict)

    def limit_text(self, units: bool = True) -> str:
        """The limit as people read it: '0.1 %' for rates, '80 us' for latencies ('80' without units)."""
        if self.limit is None:
            return ""
        if self.unit == "%":  # rates are fractions inside and percentages to people
            return f"{self.limit * 100:g} %"
        if self.unit == "periods":
            return f"{self.limit:g} periods" if units else f"{self.limit:g}"
        return f"{self.limit:g} us" if units else f"{self.limit:g}"

    @property
    def test_id(self) -> str:
        return f"{self.measurement}::{self.gate}[{self.thread}]"

    def as_dict(self) -> dict[str, Any]:
        return {
            "measurement": self.measurement,
            "gate": self.gate,
            "kind": self.kind,
            "thread": self.thread,
            "status": self.status.value,
            "reason": self.reason,
            "value": self.value,
            "value_text": self.value_text,
            "limit": self.limit,
            "limit_text": self.limit_text(),
            "unit": self.unit,
            "bound": self.bound,
            "lower": self.lower,
            "samples": self.samples,
            "critical": self.critical,
            "properties": self.properties,
        }


def thread_names(run: RunResult, m: Measurement | None) -> dict[int, str]:
    """Per thread index, thread_name with the CPUs the threshold file's plan places the threads on."""
    planned = naming_cpus(planned_cpus(m, len(run.threads)), run)
    return {t.index: thread_name(t, c) for t, c in zip(run.threads, planned)}


def thread_ids(run: RunResult, labels: list[str | None], planned: list[int | None] | None = None) -> dict[int, str]:
    """Readable, unique ids: cpu0, t2, or group-cpu0 when a measurement has several groups.

    planned: per position, the CPU the plan places the thread on (planned_cpus), for results that
    state none; one run then has the same ids whatever format it is read from."""
    several = len({lb for lb in labels if lb}) > 1
    planned = naming_cpus(planned, run) if planned else planned
    ids: dict[int, str] = {}
    for pos, t in enumerate(run.threads):
        base = thread_name(t, planned[pos] if planned and pos < len(planned) else None)
        label = labels[pos] if pos < len(labels) else None
        ids[t.index] = f"{label}-{base}" if several and label else base
    if len(set(ids.values())) < len(ids):
        ids = {
            t.index: (f"{labels[p]}-t{t.index}" if several and labels[p] else f"t{t.index}")
            for p, t in enumerate(run.threads)
        }
    return ids


def _properties(run: RunResult, t: ThreadResult) -> dict[str, Any]:
    scale = run.units_per_us()
    props: dict[str, Any] = {
        "thread": t.index,
        "cpu": t.cpu,
        "priority": t.priority,
        "policy": t.policy,
        "interval_us": t.interval_us,
        "cycles": t.cycles,
        "min_us": None if t.min is None else t.min / scale,
        "avg_us": None if t.avg is None else round(t.avg / scale, 3),
        "max_us": None if t.max is None else t.max / scale,
        "missed_periods": t.missed,
        "source": run.source,
        "format": run.format,
    }
    if t.histogram is not None:
        props["overflows"] = t.histogram.overflow
        for q in (99.0, 99.9, 99.99):
            r = t.histogram.percentile_range(q, t.max)
            # A number where it is known; a range as text where a wide bucket or the overflow hides it.
            props[f"p{q:g}_us"] = (
                None if r is None else r[0] / scale if r[0] == r[1] else percentile_text(t.histogram, q, t.max, scale)
            )
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
        kind = KINDS[g.kind]
        need = g.min_samples or kind.min_samples(g)
        if n < need:
            return self.verdict(Status.INCONCLUSIVE, f"only {n} samples, the {g.kind} gate needs {need}", samples=n)
        return kind.judge(self)

    def decide(self, k_min: int, k_max: int, n: int, allowed: float, what: str) -> tuple[Status, str, dict[str, Any]]:
        """A rate against its limit: PASS when the upper bound is at or under it, FAIL when the lower
        bound is above it, INCONCLUSIVE in between with how many samples would decide it."""
        conf = self.gate.confidence
        d = decide_rate(k_min, k_max, n, allowed, conf)
        observed = k_max / n
        kw = {
            "value": observed,
            "value_text": pct_range(k_min / n, observed),
            "limit": allowed,
            "bound": d.upper,
            "lower": d.lower,
            "samples": n,
        }
        count = str(k_max) if k_min == k_max else f"between {k_min} and {k_max}"
        hidden = "" if k_min == k_max else "; the histogram does not show which"
        text = (
            f"{count} of {n} {what} ({pct_range(k_min / n, observed)}{hidden}; {conf * 100:g} % bounds "
            f"{pct(d.lower)} to {pct(d.upper)})"
        )
        if d.verdict == "PASS":
            return self.verdict(Status.PASS, f"{text}: upper bound <= {pct(allowed)}", **kw)
        if d.verdict == "FAIL":
            return self.verdict(Status.FAIL, f"{text}: lower bound > {pct(allowed)}", **kw)
        more = []
        clean = clean_samples_to_pass(k_max, n, allowed, conf)
        if clean is not None:
            more.append(f"{clean} more clean samples would pass it")
        if k_min == k_max:
            fail = samples_to_fail(k_max, n, allowed, conf)
            if fail is not None:
                more.append(f"about {fail} more at the observed rate would fail it")
        tail = "; " + ", ".join(more) if more else ""
        return self.verdict(Status.INCONCLUSIVE, f"{text}: the bounds straddle {pct(allowed)}{tail}", **kw)


def _select(
    run: RunResult, gate: GateSpec, labels: list[str | None], planned: list[int | None]
) -> tuple[list[ThreadResult], str | None]:
    """The threads a gate judges; by CPU, the CPU each thread is named after (stated, else planned)."""
    at = planned + [None] * len(run.threads)
    cpu_of = {t.index: named_cpu(t.cpu, at[pos]) for pos, t in enumerate(run.threads)}
    chosen = list(run.threads)
    if gate.threads:
        chosen = [t for pos, t in enumerate(run.threads) if pos < len(labels) and labels[pos] in gate.threads]
        if not chosen:
            return [], f"no thread of group {', '.join(gate.threads)} in the results ({len(run.threads)} threads)"
    if gate.cpus:
        ran = {cpu_of[t.index] for t in chosen}
        missing = [c for c in gate.cpus if c not in ran]
        if missing:
            return (
                [],
                f"no thread ran on cpu {', '.join(map(str, missing))} (threads ran on "
                f"{', '.join(str(c) for c in sorted(x for x in ran if x is not None)) or 'no pinned CPU'})",
            )
        chosen = [t for t in chosen if cpu_of[t.index] in gate.cpus]
    return chosen, None


def evaluate(measurement: Measurement, run: RunResult) -> list[Verdict]:
    """Every gate of a measurement against one run."""
    run, labels = _labelled(measurement, run)
    planned = planned_cpus(measurement, len(run.threads))
    ids = thread_ids(run, labels, planned)
    for t, label in zip(run.threads, labels):
        t.label = label
    problem = _run_problem(measurement, run)
    invalid = validity.problems(run) if problem is None else []
    analysis = run.environment.get("analysis")
    verdicts: list[Verdict] = []
    props: dict[int, dict[str, Any]] = {}  # per thread, shared by its gates
    for gate in measurement.gates:
        chosen, missing = _select(run, gate, labels, planned)
        if problem or missing:
            status, reason = problem or (Status.ERROR, missing or "")
            verdicts.append(
                Verdict(
                    measurement.name,
                    gate.name,
                    gate.kind,
                    "worst" if gate.scope == "worst" else "all",
                    status,
                    reason,
                    unit=figure_unit(gate),
                    critical=gate.critical,
                    properties={"analysis": analysis} if analysis else {},
                )
            )
            continue
        per_thread = [_thread_verdict(measurement, run, gate, t, ids[t.index], props) for t in chosen]
        if invalid:
            per_thread = [mark_invalid(v, invalid) for v in per_thread]
        if gate.scope == "worst":
            worst = max(per_thread, key=lambda v: (SEVERITY[v.status], v.value if v.value is not None else -1.0))
            worst.properties["worst_of"] = [v.thread for v in per_thread]
            worst.thread = "worst"
            verdicts.append(worst)
        else:
            verdicts.extend(per_thread)
    for v in verdicts if not invalid else []:  # an invalid run's reason already names what made it so
        cause = validity.likely_cause(run, v.properties.get("cpu")) if v.status in (Status.FAIL, Status.ERROR) else None
        if cause:
            v.reason += f"; {cause}"
    return verdicts


def _labelled(measurement: Measurement, run: RunResult) -> tuple[RunResult, list[str | None]]:
    """The run (rtla's with every measured CPU) and each thread's label: its group, or rtla's context."""
    if measurement.backend != "timerlat":
        return run, plan_for_results(measurement, len(run.threads)).labels(len(run.threads))
    if run.format == "rtla-timerlat-hist" and isinstance(measurement.timerlat.cpus, list):
        from rtgate.core.timerlat_spec import with_all_cpus  # rtla prints no column for a CPU without samples

        run = with_all_cpus(run, measurement, measurement.timerlat.cpus)
    return run, [t.label for t in run.threads]  # the parser names rtla's columns irq, thread, user


# An invalid run's reason is cut to this, never its value: the engine's verdict reason holds 447
# bytes (sampler/gate.h), and a board and rtgate run say the same. The whole list is in the record.
INVALID_REASON_CHARS = 447


def mark_invalid(v: Verdict, invalid: list[str]) -> Verdict:
    """A measured verdict of an invalid run: ERROR, its figures kept and its value said in the reason,
    exactly as the engine prints it on a board ("invalid: REASONS (measured VALUE UNIT)")."""
    if v.value is not None:
        tail = f" (measured {v.value * (100.0 if v.unit == '%' else 1.0):.6g} {v.unit or 'us'})"
    else:
        tail = f" (no value: {v.reason[:200]})"
    why = "; ".join(invalid)
    room = INVALID_REASON_CHARS - len("invalid: ") - len(tail)
    if len(why) > room:
        why = why[: room - 3] + "..."
    v.status, v.reason = Status.ERROR, f"invalid: {why}{tail}"
    return v


def _run_problem(measurement: Measurement, run: RunResult) -> tuple[Status, str] | None:
    """Why no gate of the run can be judged (each is then ERROR with this reason, or INCONCLUSIVE for a
    run a stop signal kept from starting), or None. An invalid run is judged, then marked (mark_invalid)."""
    if (measurement.backend == "timerlat") != (run.format == "rtla-timerlat-hist"):
        return Status.ERROR, f"the measurement uses the {measurement.backend} backend but the results are {run.format}"
    unmeasured = validity.not_measured(run)
    if unmeasured is not None:
        return Status(unmeasured[0]), f"not measured: {unmeasured[1]}"
    if not run.complete:  # figures of a moment, not of the run: what made it so said with them
        why = "; ".join(validity.problems(run))
        return Status.ERROR, "the results are a checkpoint of a run that did not finish" + (f": {why}" if why else "")
    if run.stop_reason == "error":
        return Status.ERROR, "the sampler stopped on an error"
    if not run.threads:
        return (
            Status.ERROR,
            "the results hold no thread"
            + (" (rtla stopped before it counted a sample)" if run.stop_reason == "threshold" else ""),
        )
    expected = plan_for_results(measurement, len(run.threads)).fixed_count
    if expected is not None and expected != len(run.threads):
        return Status.ERROR, f"the measurement has {expected} threads but the results have {len(run.threads)}"
    return None


def _thread_verdict(
    measurement: Measurement, run: RunResult, gate: GateSpec, t: ThreadResult, thread_id: str, props: dict[int, Any]
) -> Verdict:
    """One gate on one thread; `props`: each thread's figures, shared by its gates (filled here)."""
    who = t.describe() if measurement.backend != "timerlat" else f"cpu {t.cpu} ({t.label} latency)"
    status, reason, kw = _Eval(run, gate, t, who).run_eval()
    if run.stop_reason in ("signal", "threshold") and status == Status.PASS:
        stopper = "rtla's stop-tracing threshold" if run.stop_reason == "threshold" else (run.signal or "a signal")
        status = Status.INCONCLUSIVE
        reason += f"; but the run was stopped early by {stopper}"
    if t.index not in props:
        props[t.index] = _properties(run, t)
    verdict = Verdict(
        measurement.name,
        gate.name,
        gate.kind,
        thread_id,
        status,
        reason,
        unit=figure_unit(gate),
        critical=gate.critical,
        properties=dict(props[t.index]),
        **kw,
    )
    analysis = run.environment.get("analysis")
    if analysis and status != Status.PASS:
        verdict.properties["analysis"] = analysis  # what rtla saw when it stopped
    return verdict


def error_verdicts(measurement: Measurement, reason: str) -> list[Verdict]:
    """One ERROR per gate, for a measurement that could not be made (e.g. an unmet require:)."""
    return [
        Verdict(
            measurement.name,
            g.name,
            g.kind,
            "worst" if g.scope == "worst" else "all",
            Status.ERROR,
            reason,
            unit=figure_unit(g),
            critical=g.critical,
        )
        for g in measurement.gates
    ]


def exit_code(verdicts: list[Verdict], allow_inconclusive: bool) -> int:
    """0 all pass, 1 a gate failed or errored, 3 inconclusive (unless allowed)."""
    statuses = {v.status for v in verdicts}
    if Status.FAIL in statuses or Status.ERROR in statuses:
        return 1
    if Status.INCONCLUSIVE in statuses and not allow_inconclusive:
        return 3
    return 0


def _predicted_run(plan: ThreadPlan) -> RunResult:
    """The threads the sampler will run for a measurement on this machine, before running it."""
    threads = [
        ThreadResult(index=t.index, cycles=0, min=None, max=None, avg=None, cpu=t.cpu, priority=t.priority)
        for t in plan.threads
    ]
    return RunResult(source="(predicted)", format="predicted", unit="us", threads=threads)


def predicted_thread_ids(m: Measurement, run: RunResult | None) -> dict[str, list[str]]:
    """Per gate, the thread ids its verdicts will carry: from results when given, else predicted."""
    run = run or _predicted_run(plan_here(m))
    labels = plan_for_results(m, len(run.threads)).labels(len(run.threads))
    planned = planned_cpus(m, len(run.threads))
    ids = thread_ids(run, labels, planned)
    out: dict[str, list[str]] = {}
    for gate in m.gates:
        if gate.scope == "worst":  # one verdict for the worst thread, as the plugin collects it
            out[gate.name] = ["worst"]
            continue
        chosen, missing = _select(run, gate, labels, planned)
        out[gate.name] = ["all"] if missing or not chosen else [ids[t.index] for t in chosen]
    return out
