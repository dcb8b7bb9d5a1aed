# SPDX-License-Identifier: GPL-2.0-or-later
"""Whether a run can be judged at all, decided from the results file itself, so that `rtgate run`,
`check`, `report`, `history add` and the adapters all give the same verdict.

`rtgate run` adds a validity record (the "rtgate_run" object) to the results JSON the sampler
wrote: what made the run invalid (a dead or idle load, an overrun, a competing real-time task
when the threshold file says it matters), what stopped it, and the real-time tasks seen on the
measured CPUs. A record that is missing where rtgate run was measuring, or that contradicts the
data it sits in, makes the run invalid too. The overrun check needs no record: it reads the
sampler's own figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rtgate.core.model import RunResult
from rtgate.errors import RtgateError
from rtgate.safe_io import read_input

RECORD = "rtgate_run"
RECORD_FORMAT = 1  # written by rtgate run around the sampler (measure/runner.py)
ENGINE_FORMAT = 2  # written by rtgate-sampler as the measurement engine (--plan, --measurement: sampler/record.c)
# How much longer than its periods account for a run may take before time went unmeasured:
# starting and joining the threads takes tens of milliseconds on a busy machine.
OVERRUN_MIN_S = 0.5
OVERRUN_PERIODS = 10


# rtgate run's environment file is tens of kB; a file far larger beside the results is not one.
MAX_ENVIRONMENT_BYTES = 16 << 20


def environment_path(results: Path) -> Path:
    """<measurement>.environment.json beside <measurement>.json."""
    return results.with_name(
        results.name[:-5] + ".environment.json"
        if results.name.endswith(".json")
        else results.name + ".environment.json"
    )


def read_environment(path: Path) -> Any:
    """The environment file's document, or None where there is none to read: absent, not JSON, larger
    than MAX_ENVIRONMENT_BYTES, or a FIFO, socket or device (never opened for reading: it could block)."""
    try:
        return json.loads(read_input(path, MAX_ENVIRONMENT_BYTES).decode("utf-8"))
    except (RtgateError, ValueError):
        return None


def digest(run: RunResult) -> dict[str, Any]:
    """The figures a record is written for: a record found with other figures belongs to other data."""
    return {
        "elapsed_s": run.elapsed_s,
        "stop_reason": run.stop_reason,
        "cycles": [t.cycles for t in run.threads],
        "missed": [t.missed for t in run.threads],
    }


def overrun(run: RunResult) -> str | None:
    """Time within a thread's own schedule that its periods (sampled or missed) do not account for: a
    stall the thread could not count, e.g. a CPU held by another task until a stop request. Each
    thread's span runs from its first period to its end (sampler/main.c check_overrun): the main
    thread's own delays before a first period or after a last do not count. Files from samplers that
    do not write spans are judged on the run's elapsed time. Relative sleeps (-r) stretch every
    period by its latency, so their length has nothing to be accounted against."""
    if run.format != "rtgate-json" or not run.threads:
        return None
    if run.measured_setup is not None and run.measured_setup.relative:
        return None
    if all(t.span_s is not None for t in run.threads):
        return _thread_overrun(run)
    if run.elapsed_s is None:
        return None
    spans, longest = [], 0
    for t in run.threads:
        if not t.interval_us:
            return None
        spans.append((t.cycles + (t.missed or 0)) * t.interval_us / 1e6)
        longest = max(longest, t.interval_us)
    accounted = max(spans)
    unaccounted = run.elapsed_s - accounted
    if unaccounted <= _allowance(longest):
        return None
    return (
        f"overrun: the run took {run.elapsed_s:.3f} s but its sampled and missed periods account for "
        f"{accounted:.3f} s; {unaccounted:.3f} s went unmeasured (a stall before the threads first ran?)"
    )


def _allowance(interval_us: int) -> float:
    return max(OVERRUN_MIN_S, OVERRUN_PERIODS * interval_us / 1e6)


def _thread_overrun(run: RunResult) -> str | None:
    worst: tuple[float, int, float, float] | None = None
    for t in run.threads:
        if not t.interval_us or t.span_s is None:
            return None
        accounted = (t.cycles + (t.missed or 0)) * t.interval_us / 1e6
        unaccounted = t.span_s - accounted
        if unaccounted > _allowance(t.interval_us) and (worst is None or unaccounted > worst[0]):
            worst = (unaccounted, t.index, t.span_s, accounted)
    if worst is None:
        return None
    unaccounted, index, span, accounted = worst
    return (
        f"overrun: thread {index} ran {span:.3f} s but its sampled and missed periods account for "
        f"{accounted:.3f} s; {unaccounted:.3f} s went unmeasured (the thread was held where it could not "
        "count what it lost)"
    )


def _record_expected(run: RunResult) -> bool:
    """rtgate run marks a measurement it starts in the environment file beside the results."""
    if run.format != "rtgate-json":
        return False
    source = Path(run.source)
    env = read_environment(environment_path(source))
    return isinstance(env, dict) and env.get("results") == source.name


def not_measured(run: RunResult) -> tuple[str, str] | None:
    """(status, reason) for every gate of a run the engine did not measure (its record says measured:
    false: a requirement, a load that could not start, a stop signal before measuring), or None.
    INCONCLUSIVE only where the record also names the stop signal: anything else is ERROR."""
    rec = run.environment.get(RECORD)
    if not isinstance(rec, dict) or rec.get("format") != ENGINE_FORMAT or rec.get("measured") is True:
        return None
    reason = rec.get("not_measured")
    if rec.get("measured") is not False or not isinstance(reason, str) or not reason:
        return "ERROR", f"its validity record ({RECORD}) says neither that it measured nor why not"
    if any(t.cycles for t in run.threads):
        return "ERROR", f"its validity record says it measured nothing, but the results hold samples ({reason})"
    stopped = rec.get("not_measured_status") == "INCONCLUSIVE" and isinstance(rec.get("stopped_by"), str)
    return ("INCONCLUSIVE" if stopped else "ERROR"), reason


def rtla_measured(rec: Any) -> bool:
    """The engine's record of a measurement rtla made in place of its threads (--timerlat): the
    engine's digest counts no figures; they are rtla's histogram beside the results."""
    backend = rec.get("backend") if isinstance(rec, dict) else None
    return isinstance(backend, dict) and backend.get("name") == "timerlat" and rec.get("measured") is True


def _check_record(run: RunResult, rec: Any) -> list[str]:
    if not isinstance(rec, dict) or rec.get("format") not in (RECORD_FORMAT, ENGINE_FORMAT):
        return [f"its validity record ({RECORD}) is not one this rtgate reads"]
    invalid = rec.get("invalid")
    if not isinstance(invalid, list) or not all(isinstance(x, str) for x in invalid):
        return [f"its validity record ({RECORD}.invalid) is not a list of reasons"]
    out = list(invalid)
    if rec.get("format") == ENGINE_FORMAT and rec.get("measured") is not True:
        return out  # not_measured() gives the verdicts: no figures to hold the record to
    if rec.get("valid") is not (not invalid):
        out.append(
            f"its validity record contradicts itself (valid: {json.dumps(rec.get('valid'))} "
            f"with {len(invalid)} reasons)"
        )
    if rec.get("results") != digest(run) and not (run.format == "rtla-timerlat-hist" and rtla_measured(rec)):
        out.append("its validity record was written for other figures than the results it is in")
    # A --duration asked on purpose is what the sampler ran (-D): one that is not would excuse a short run.
    asked = rec.get("request", {}).get("duration_s") if isinstance(rec.get("request"), dict) else None
    ran = run.measured_setup.duration_s if run.measured_setup is not None else None
    if run.format == "rtgate-json" and isinstance(asked, (int, float)) and not isinstance(asked, bool) and ran != asked:
        out.append(f"its validity record asks --duration {asked:g} s but the sampler ran -D {ran or 'none'}")
    return out


def problems(run: RunResult) -> list[str]:
    """Every reason this run cannot be judged; empty when it can."""
    reasons = [str(x) for x in run.environment.get("invalid") or []]
    rec = run.environment.get(RECORD)
    if rec is None:
        if _record_expected(run):
            reasons.append(
                f"rtgate run was measuring but its validity record ({RECORD}) is missing: the run did not finish"
            )
    else:
        reasons.extend(_check_record(run, rec))
    over = overrun(run)
    if over:
        reasons.append(over)
    return list(dict.fromkeys(reasons))


def recorded_request(env: dict[str, Any]) -> dict[str, Any]:
    """What `rtgate run` or the plugin was told on purpose for this run (--duration, --accept-setup,
    --strict), as recorded with its results: every later reader judges the run as it was asked."""
    rec = env.get(RECORD)
    req = rec.get("request") if isinstance(rec, dict) else env.get("request")
    return req if isinstance(req, dict) else {}


def describe_task(t: dict[str, Any]) -> str:
    prio = "" if t.get("priority") is None else f" {t['priority']}"
    tid = "" if t.get("tid") == t.get("pid") else f", tid {t.get('tid')}"
    return (
        f"{'kernel thread ' if t.get('kernel') else ''}{t.get('comm')} (pid {t.get('pid')}{tid}, "
        f"{t.get('policy')}{prio}, cpu {','.join(map(str, t.get('on_cpus') or []))})"
    )


def competing_tasks(run: RunResult, when: tuple[str, ...] = ("before", "during", "after")) -> list[dict[str, Any]]:
    """Unexpected real-time tasks the record saw on the measured CPUs at the times in `when`."""
    rec = run.environment.get(RECORD)
    seen = rec.get("rt_tasks") if isinstance(rec, dict) else None
    if not isinstance(seen, dict):
        return []
    out: dict[tuple[Any, Any], dict[str, Any]] = {}
    for phase in when:
        for t in seen.get(phase) or []:
            if isinstance(t, dict) and not t.get("expected"):
                out.setdefault((t.get("pid"), t.get("tid")), t)
    return list(out.values())


def likely_cause(run: RunResult, cpu: int | None) -> str | None:
    """For a failing verdict on `cpu`: the competing real-time tasks seen while the sampler measured
    there. One seen only before or after did not overlap the measurement: it cannot be the cause."""
    tasks = [t for t in competing_tasks(run, ("during",)) if cpu is None or cpu in (t.get("on_cpus") or [])]
    if not tasks:
        return None
    return "likely cause: real-time task(s) that can preempt the sampler: " + ", ".join(map(describe_task, tasks))
