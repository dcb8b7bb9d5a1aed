# SPDX-License-Identifier: GPL-2.0-or-later
"""One measurement end to end, the same for `rtgate run` and the pytest plugin:

plan the threads -> preflight (doctor's checks, printed; `require:`; strict) -> the engine measures:
requirements, loads, competing tasks, the machine and its record (runner.py) -> every gate judged
from that record and the figures, as measured (core/setup.py) -> a history row.

Reports are the caller's: `rtgate run` writes them for the whole threshold file, the plugin per test.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rtgate.core import validity
from rtgate.core.gates import Status, Verdict, error_verdicts
from rtgate.core.model import RunResult
from rtgate.core.setup import evaluate_measured
from rtgate.core.thread_plan import ThreadPlan, plan_here
from rtgate.core.thresholds import Measurement
from rtgate.errors import RtgateError, SamplerError
from rtgate.measure import busy
from rtgate.measure.conditions import Check
from rtgate.measure.preflight import preflight
from rtgate.measure.runner import StoppedBeforeMeasuring, run_measurement
from rtgate.measure.sampler_args import engine_args
from rtgate.measure.stop import STOP

# Adds a measured run and its verdicts to a history database (history/ comes after measure/: the
# caller passes it in).
HistoryRow = Callable[[RunResult, list[Verdict]], None]


@dataclass
class Outcome:
    """One measurement's end: its verdicts, and what was measured or why nothing was."""

    measurement: Measurement
    verdicts: list[Verdict]
    plan: ThreadPlan | None = None
    run: RunResult | None = None  # None: not measured
    stopped_by: str | None = None  # the stop signal that cut the run short or kept it from starting
    warnings: list[Check] = field(default_factory=list)  # preflight warnings, also in run.environment
    notes: list[str] = field(default_factory=list)  # the machine's load around the run, for after the report
    reason: str = ""  # why it was not measured ("not measured: ..."); empty when it was
    refused: list[Check] = field(default_factory=list)  # the checks that kept it from being measured (doctor's fails)
    system: dict[str, Any] | None = None  # the machine as the engine found it before measuring (None: not asked)


def not_measured(m: Measurement, reason: str) -> list[Verdict]:
    """INCONCLUSIVE for every gate of a measurement a stop signal kept from being measured."""
    return [dataclasses.replace(v, status=Status.INCONCLUSIVE) for v in error_verdicts(m, reason)]


def warning_line(name: str, c: Check) -> str:
    return f"rtgate: warning: {name}: {c.what}" + (f" (fix: {c.fix})" if c.fix else "")


def measure_and_judge(
    sampler: str,
    m: Measurement,
    outdir: Path,
    *,
    duration_s: int | None = None,
    strict: bool = False,
    history: HistoryRow | None = None,
    progress: bool | None = None,
) -> Outcome:
    """Measure `m` on this machine and judge every gate; never raises for what the machine is like.

    Unmet `require:` ends every gate ERROR unmeasured; so does any preflight warning when strict (the
    --strict option or the threshold file's strict:). A stop signal before the sampler starts ends
    them INCONCLUSIVE."""
    # A stop signal during it is a request (nested in `rtgate run`'s own, which then sees it too).
    with STOP.handling():
        return _measure_and_judge(sampler, m, outdir, duration_s, strict, history, progress)


def _measure_and_judge(
    sampler: str,
    m: Measurement,
    outdir: Path,
    duration_s: int | None,
    strict: bool,
    history: HistoryRow | None,
    progress: bool | None,
) -> Outcome:
    if STOP.requested:
        reason = f"not measured: rtgate was stopped by {STOP.signal}"
        return Outcome(m, not_measured(m, reason), stopped_by=STOP.signal, reason=reason)
    try:
        plan = plan_here(m, duration_s)
        words = engine_args(m, duration_s)  # the plan compiled once: what the engine is asked, then runs
        checked = preflight(sampler, m, plan, words)
    except StoppedBeforeMeasuring:
        raise
    except RtgateError as e:  # e.g. a pinned CPU this machine does not have: the gates say so, ERROR
        reason = f"not measured: {e}"
        return Outcome(m, error_verdicts(m, reason), reason=reason)
    warnings = checked.warnings
    for c in warnings:
        print(warning_line(m.name, c), file=sys.stderr, flush=True)
    refused = checked.refusals(strict or m.strict)  # what `rtgate doctor` prints as fail
    if refused:
        reason = "not measured: " + "; ".join(c.what for c in refused)
        return Outcome(
            m, error_verdicts(m, reason), plan, warnings=warnings, reason=reason, refused=refused, system=checked.system
        )
    try:
        request = {"duration_s": duration_s, "strict": bool(strict or m.strict)}
        run, stopped_by = run_measurement(
            sampler, m, outdir, progress, plan=plan, words=words, checked=checked, request=request
        )
    except StoppedBeforeMeasuring as e:
        reason = f"not measured: {e}"
        return Outcome(
            m,
            not_measured(m, reason),
            plan,
            stopped_by=e.signal,
            warnings=warnings,
            reason=reason,
            system=checked.system,
        )
    except SamplerError as e:
        # The sampler could not start or measured nothing (no privilege, a CPU it cannot use): every
        # requested report still gets the measurement's gates, ERROR with the reason.
        reason = f"not measured: {e}"
        return Outcome(m, error_verdicts(m, reason), plan, warnings=warnings, reason=reason, system=checked.system)
    verdicts = evaluate_measured(m, run, duration_s=duration_s)
    unmeasured = validity.not_measured(run)
    if unmeasured is not None:  # the engine measured nothing (a requirement, a load, a stop): its record says why
        reason = f"not measured: {unmeasured[1]}"
        return Outcome(
            m, verdicts, plan, stopped_by=stopped_by, warnings=warnings, reason=reason, system=checked.system
        )
    if history is not None:
        history(run, verdicts)
    notes = busy_notes(m.name, run.environment.get("machine_load"), verdicts)
    return Outcome(m, verdicts, plan, run, stopped_by, warnings, notes)


def busy_notes(name: str, record: dict[str, Any] | None, verdicts: list[Verdict]) -> list[str]:
    """The machine's load around a measurement, and a note when it can explain a FAIL or INCONCLUSIVE."""
    if not record:
        return []
    lines = [f"rtgate: {name}: {busy.describe(record)}"]
    bad = sorted({v.status.value for v in verdicts if v.status in (Status.FAIL, Status.INCONCLUSIVE)})
    if bad and record.get("busy"):
        lines.append(
            f"rtgate: note: {name}: {' and '.join(bad)} measured on a busy machine "
            f"({'; '.join(record['busy'])}): other work competed with the sampler; "
            "measure again on a quiet machine before trusting this verdict"
        )
    return lines
