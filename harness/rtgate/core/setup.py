# SPDX-License-Identifier: GPL-2.0-or-later
"""How results were measured, set against how a threshold file asks to measure.

Results that say how they were measured (rtgate JSON, an rt-tests command line, T: lines' P: and I:,
-v headers) carry a MeasuredSetup. Before their gates count, `evaluate_measured` compares it with the
measurement: differences make the gates ERROR (unless named in `accept`), a shorter run than asked and
a run that stopped early make PASS INCONCLUSIVE, and missed periods known only as a range are judged
at both ends (PASS only when the upper end passes, FAIL only when the lower end fails).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from rtgate.core.gate_kinds import KINDS
from rtgate.core.gates import Status, Verdict, evaluate
from rtgate.core.model import MeasuredSetup, RunResult, ThreadResult
from rtgate.core.periods import SKIPS_SILENTLY, derive_missed
from rtgate.core.recorded import recorded_environment
from rtgate.core.status import SEVERITY
from rtgate.core.thread_plan import plan_for_results
from rtgate.core.thresholds import Measurement
from rtgate.core.validity import recorded_request

ASPECTS = ("interval", "priority", "policy", "cpus", "duration")


# ---------------------------------------------------------------- asked vs measured


def _asked_threads(m: Measurement, nthreads: int) -> list[dict[str, Any]]:
    """Per thread position, what the threshold file asks (cpu None = not pinned, "any" = one per CPU)."""
    return [
        {
            "interval": t.interval_us,
            "priority": t.priority,
            "policy": t.policy,
            "cpu": "any" if t.one_per_cpu else t.cpu,
            "group": t.label,
        }
        for t in plan_for_results(m, nthreads).threads
    ]


JOIN_SHOWN = 16  # values of a per-thread list said in a reason: every verdict of every thread carries it


def _join(values: list[Any]) -> str:
    shown = [("-" if v is None else str(v)) for v in values]
    if len(set(shown)) == 1:
        return shown[0]
    more = f",... ({len(shown)} threads)" if len(shown) > JOIN_SHOWN else ""
    return ",".join(shown[:JOIN_SHOWN]) + more


def _seconds(s: float) -> str:
    for unit, size in (("h", 3600), ("min", 60)):
        if s >= size and s % size == 0:
            return f"{s / size:g} {unit}"
    return f"{s:.4g} s"


@dataclass
class SetupCheck:
    """How the results were measured differently from what the thresholds ask, aspect by aspect."""

    differences: dict[str, tuple[str, str]]  # aspect -> (measured, asked)
    shorter: str | None = None  # why the run is shorter than asked

    def text(self, aspects: list[str]) -> str:
        measured = " ".join(self.differences[a][0] for a in aspects)
        asked = " ".join(self.differences[a][1] for a in aspects)
        return f"measured {measured}; thresholds ask {asked}"


Pairs = list[tuple[ThreadResult, dict[str, Any]]]  # each thread of the results with what is asked of it
Difference = tuple[str, str, str] | None  # (aspect, as measured, as asked), or None: no difference


def reconcile(m: Measurement, run: RunResult, duration_s: int | None = None) -> SetupCheck:
    """Compare what the results say about their set-up with what the measurement asks."""
    setup: MeasuredSetup | None = run.measured_setup
    check = SetupCheck(differences={})
    if setup is None:
        return check
    pairs = list(zip(run.threads, _asked_threads(m, len(run.threads))))
    for compare in (_interval, _policy, _priority, _cpus):
        found = compare(m, setup, pairs)
        if found is not None:
            aspect, measured, asked = found
            check.differences[aspect] = (measured, asked)
    _duration(m, run, setup, duration_s, check)
    return check


def _interval(m: Measurement, setup: MeasuredSetup, pairs: Pairs) -> Difference:
    """Interval (with distance). A lone -v header says only that the interval is at most its X (X = i + d)."""
    got_i = [t.interval_us for t, _ in pairs]
    want_i = [a["interval"] for _, a in pairs]
    for t, a in pairs:  # read at the thresholds' interval (as_asked) or not, a thread ran at most at its X
        x = setup.announced_intervals.get(t.index)
        if x is not None and a["interval"] > x:
            return "interval", f"-i {x} - d (-v header 'Interval: {x}')", f"-i {a['interval']}"
    if not got_i or not all(v is not None for v in got_i):
        return None
    return None if got_i == want_i else ("interval", f"-i {_join(got_i)}", f"-i {_join(want_i)}")


def _policy(m: Measurement, setup: MeasuredSetup, pairs: Pairs) -> Difference:
    got_p = [t.policy or setup.policy for t, _ in pairs]
    want_p = [a["policy"] for _, a in pairs]
    if got_p and all(p is not None for p in got_p) and got_p != want_p:
        return "policy", f"policy {_join(got_p)}", f"policy {_join(want_p)}"
    return None


def _priority(m: Measurement, setup: MeasuredSetup, pairs: Pairs) -> Difference:
    """Priority: only meaningful for the real-time policies."""
    rt = [i for i, (_, a) in enumerate(pairs) if a["policy"] in ("fifo", "rr")]
    got_pr = [pairs[i][0].priority for i in rt]
    want_pr = [pairs[i][1]["priority"] for i in rt]
    if got_pr and all(p is not None for p in got_pr) and got_pr != want_pr:
        spread = " (--priospread)" if setup.priospread else ""
        return "priority", f"at prio {_join(got_pr)}{spread}", f"at prio {_join(want_pr)}"
    return None


def _cpus(m: Measurement, setup: MeasuredSetup, pairs: Pairs) -> Difference:
    """CPUs: a pinned thread must run where asked; "all" asks one pinned thread per CPU."""
    cpus = [t.cpu for t, _ in pairs]
    if all(c is None for c in cpus):
        return None
    got_c = [c if c is not None and c >= 0 else None for c in cpus]
    bad = False
    for c, (_, a) in zip(got_c, pairs):
        if a["cpu"] == "any":
            bad |= c is None
        elif a["cpu"] is not None:
            bad |= c != a["cpu"]
    if any(a["cpu"] == "any" for _, a in pairs):
        pinned = [c for c in got_c if c is not None]
        bad |= len(set(pinned)) != len(pinned)
    if not bad:
        return None
    want_c = ["every CPU" if a["cpu"] == "any" else ("any" if a["cpu"] is None else a["cpu"]) for _, a in pairs]
    return (
        "cpus",
        f"on cpu {_join(['unpinned' if c is None else c for c in got_c])}",
        f"on cpu {_join(want_c)}" if "every CPU" not in want_c else "on every CPU, one thread each",
    )


def _duration(m: Measurement, run: RunResult, setup: MeasuredSetup, duration_s: int | None, check: SetupCheck) -> None:
    """Duration: a longer run is fine, a shorter one cannot stand for the asked one."""
    s = m.sampler
    asked_len: list[tuple[float, str]] = []
    if duration_s is not None:
        asked_len.append((float(duration_s), _seconds(duration_s)))
    else:
        if s.duration_s is not None:
            asked_len.append((float(s.duration_s), _seconds(s.duration_s)))
        if s.loops is not None:
            length = s.loops * s.interval_us / 1e6
            asked_len.append((length, f"-l {s.loops} ({_seconds(length)})"))
    measured_len: list[tuple[float, str]] = []
    if setup.duration_s is not None:
        measured_len.append((setup.duration_s, _seconds(setup.duration_s)))
    if setup.loops is not None and setup.interval_us:
        length = setup.loops * setup.interval_us / 1e6
        measured_len.append((length, f"-l {setup.loops} ({_seconds(length)})"))
    want_s, asked_text = min(asked_len)
    if measured_len:
        got_s, measured_text = min(measured_len)
        if got_s < want_s * (1 - 1e-9):
            check.differences["duration"] = (f"for {measured_text}", f"for {asked_text}")
    elif setup.elapsed_s is None:
        # Text formats: cycles and the missed-period bound say how long the run was at most.
        longest = _longest(run)
        if longest is not None and run.threads and longest < want_s:
            check.shorter = f"the results hold at most {longest:.3g} s of periods; thresholds ask for {asked_text}"


def _longest(run: RunResult) -> float | None:
    """The longest a thread can have run, in seconds, from its cycles and missed-period bound (None: unknown)."""
    longest = 0.0
    for t in run.threads:
        hi = t.missed_upper if t.missed_upper is not None else t.missed
        if t.interval_us is None or hi is None:
            return None
        longest = max(longest, (t.cycles + hi + 1) * t.interval_us / 1e6)
    return longest


# ---------------------------------------------------------------- results that do not say how they ran

_TEXT_NAMES = {
    "histogram-text": "histogram text",
    "summary-text": "T: lines",
    "verbose-text": "-v samples",
    "rt-tests-json": "rt-tests JSON",
}


def as_asked(m: Measurement, run: RunResult, duration_s: int | None = None) -> RunResult:
    """A copy of results from a tool that skips periods silently, read at the interval and length the
    thresholds ask where the results do not say them (histogram text says neither; T: lines and -v
    samples say no length). Their latencies then bound the periods skipped (a wake-up L late at an
    interval I skipped at least ceil(L/I) - 1), and fewer periods than asked is a run that stopped
    early: a miss or a short run is never judged as "0 missed"."""
    setup: MeasuredSetup | None = run.measured_setup
    if run.format not in SKIPS_SILENTLY or not run.threads:
        return run
    if setup is not None and (setup.relative or setup.duration_s is not None or setup.loops is not None):
        return run  # the results say how long they ran: already derived from that
    s = m.sampler
    plan = plan_for_results(m, len(run.threads)).threads
    threads = [
        dataclasses.replace(
            t, interval_us=t.interval_us or (plan[i].interval_us if i < len(plan) else None), missed_upper=None
        )
        for i, t in enumerate(run.threads)
    ]
    assumed = [f"-i {t.interval_us}" for t, old in zip(threads, run.threads) if old.interval_us is None][:1]
    length_s = float(duration_s) if duration_s is not None else s.duration_s
    loops = None if duration_s is not None else s.loops
    if length_s is not None:
        assumed.append(f"-D {length_s:g}")
    elif loops is not None:
        assumed.append(f"-l {loops}")
    if not assumed:
        return run
    base = setup or MeasuredSetup(source=_TEXT_NAMES[run.format], threads=len(threads))
    derived = dataclasses.replace(
        base,
        source=f"{base.source}, read at the thresholds' {' '.join(assumed)}",
        duration_s=length_s,
        loops=loops,
        stopped_early=None,
        length_assumed=True,
        notes=list(base.notes),
    )
    copy = dataclasses.replace(run, threads=threads, measured_setup=derived)
    derive_missed(copy, derived, _TEXT_NAMES[run.format])
    note = f" (not in the {_TEXT_NAMES[run.format]}: read at the thresholds' {' '.join(assumed)})"
    for t in threads:
        t.missed_derivation = (t.missed_derivation or "") + note
    return copy


# ---------------------------------------------------------------- evaluation


def _with_missed_upper(run: RunResult) -> RunResult:
    threads = [
        dataclasses.replace(t, missed=t.missed_upper if t.missed_upper is not None else t.missed) for t in run.threads
    ]
    return dataclasses.replace(run, threads=threads)


def _combine(lo: Verdict, hi: Verdict, t: ThreadResult | None) -> Verdict:
    """One gate judged with the fewest and the most missed periods the results allow."""
    if lo.status == hi.status:
        return lo if lo.status == Status.FAIL else hi
    if Status.ERROR in (lo.status, hi.status):
        return lo if lo.status == Status.ERROR else hi
    if lo.status == Status.FAIL:
        return lo
    if hi.status == Status.PASS:
        return hi
    span = f"{t.missed}..{t.missed_upper}" if t is not None else "a range of"
    return dataclasses.replace(
        hi,
        status=Status.INCONCLUSIVE,
        reason=f"{span} missed periods: at {t.missed if t else 'the fewest'}: "
        f"{lo.status.value} ({lo.reason}); at {t.missed_upper if t else 'the most'}: "
        f"{hi.status.value} ({hi.reason})",
    )


def _thread_of(run: RunResult, v: Verdict) -> ThreadResult | None:
    idx = v.properties.get("thread")
    return run.thread(idx) if isinstance(idx, int) else None


def evaluate_measured(
    m: Measurement, run: RunResult, accept: set[str] | frozenset[str] = frozenset(), duration_s: int | None = None
) -> list[Verdict]:
    """Every gate of a measurement against one run, judged as it was measured (see the module doc).

    What the run was told on purpose and recorded with its results (`rtgate run --duration`, the
    plugin's --rtgate-accept-setup) counts as if given here: every reader then gives run's verdict."""
    request = recorded_request(recorded_environment(run))
    if duration_s is None and isinstance(request.get("duration_s"), (int, float)) and request["duration_s"] > 0:
        duration_s = int(request["duration_s"])
    recorded_accept = request.get("accept_setup")
    if isinstance(recorded_accept, list):
        accept = set(accept) | {a for a in recorded_accept if a in ASPECTS}
    shortened = _shortened(m, duration_s)
    unknown = _unknown_setup(run, accept)
    run = as_asked(m, run, duration_s)
    verdicts = evaluate(m, run)
    if any(t.missed_upper is not None and t.missed is not None and t.missed_upper > t.missed for t in run.threads):
        upper = evaluate(m, _with_missed_upper(run))
        verdicts = [_combine(lo, hi, _thread_of(run, lo)) for lo, hi in zip(verdicts, upper)]
    judging = _AsMeasured(run, reconcile(m, run, duration_s), accept, shortened, unknown)
    return [judging.verdict(v) for v in verdicts]


# What reading results at the thresholds' set-up assumes: accepting both says the set-up was as asked.
ASSUMED = ("interval", "duration")


def _unknown_setup(run: RunResult, accept: set[str] | frozenset[str]) -> str | None:
    """Why results whose tool always records its set-up cannot be judged without it, or None.

    Every rt-tests JSON records its command line ("cmdline:"): one without it was edited or cut, and
    read at the thresholds' interval and length its missed periods are the thresholds', not the run's."""
    if run.format != "rt-tests-json" or run.measured_setup is not None or set(ASSUMED) <= set(accept):
        return None
    return (
        'rt-tests JSON without its "cmdline:" key (cyclictest always writes it): how the run was made is '
        'unknown; say it with --cmdline "cyclictest ...", or accept the thresholds\' set-up with '
        f"--accept-setup {','.join(ASSUMED)}"
    )


class _AsMeasured:
    """A gate's verdict with what the results say of how they were measured."""

    def __init__(
        self,
        run: RunResult,
        check: SetupCheck,
        accept: set[str] | frozenset[str],
        shortened: str | None,
        unknown: str | None = None,
    ) -> None:
        self.unknown = unknown
        self.run = run
        self.setup: MeasuredSetup | None = run.measured_setup
        self.check = check
        self.bad = [a for a in ASPECTS if a in check.differences and a not in accept]
        self.accepted = [a for a in ASPECTS if a in check.differences and a in accept]
        self.shortened = shortened

    def verdict(self, v: Verdict) -> Verdict:
        t = _thread_of(self.run, v)
        props = dict(v.properties)
        reason = v.reason
        if t is not None:
            if t.missed_derivation:
                props["missed_derivation"] = t.missed_derivation
                if _counts_missed(v):
                    reason += f" [missed periods: {t.missed_derivation}]"
            if t.expected_periods is not None:
                props["expected_periods"] = t.expected_periods
            if t.missed_upper is not None:
                props["missed_periods_upper"] = t.missed_upper
        if self.setup is not None:
            props["setup_source"] = self.setup.source
        if self.accepted:
            props["setup_accepted"] = self.check.text(self.accepted)
        if self.shortened:
            props["duration_requested"] = self.shortened
            reason += f"; {self.shortened}"
        status, reason = self.status(v, t, reason)
        return dataclasses.replace(v, status=status, reason=reason, properties=props)

    def status(self, v: Verdict, t: ThreadResult | None, reason: str) -> tuple[Status, str]:
        """A set-up difference not accepted makes the gate ERROR; a PASS that the results cannot
        vouch for (periods missed unknown, stopped early, shorter than asked) INCONCLUSIVE."""
        bad, check, setup = self.bad, self.check, self.setup
        if self.unknown and SEVERITY[v.status] < SEVERITY[Status.ERROR]:
            return Status.ERROR, f"{self.unknown}; the gate alone said: {reason}"
        if [a for a in bad if a != "duration"] and SEVERITY[v.status] < SEVERITY[Status.ERROR]:
            return Status.ERROR, (
                f"measured differently from what the thresholds ask: {check.text(bad)} "
                f"(--accept-setup {','.join(bad)} to accept); the gate alone said: {reason}"
            )
        if v.status != Status.PASS:
            return v.status, reason
        if t is not None and t.missed is None and self.run.format in SKIPS_SILENTLY and _counts_missed(v):
            return (
                Status.INCONCLUSIVE,
                f"{reason}; but the periods it missed are unknown ({t.missed_derivation or 'not counted'})",
            )
        if setup is not None and setup.stopped_early and setup.length_assumed:
            # the length is the thresholds', not the run's: a run made shorter on purpose looks the same
            return Status.INCONCLUSIVE, (
                f"{reason}; but the run was shorter than asked: {setup.stopped_early} "
                '(the results do not say how long it was asked to run: --cmdline "cyclictest ..." says it)'
            )
        if setup is not None and setup.stopped_early:
            return Status.INCONCLUSIVE, f"{reason}; but the run stopped early: {setup.stopped_early}"
        if "duration" in bad:
            return Status.INCONCLUSIVE, f"{reason}; but the run was shorter than asked: {check.text(['duration'])}"
        if check.shorter:
            return Status.INCONCLUSIVE, f"{reason}; but the run was shorter than asked: {check.shorter}"
        return v.status, reason


def _counts_missed(v: Verdict) -> bool:
    return v.kind in KINDS and KINDS[v.kind].counts_missed


def _shortened(m: Measurement, duration_s: int | None) -> str | None:
    """The run was asked on purpose (--duration) to be shorter than the threshold file asks: said in every report."""
    s = m.sampler
    asked = [float(s.duration_s)] if s.duration_s is not None else []
    if s.loops is not None:
        asked.append(s.loops * s.interval_us / 1e6)
    if duration_s is None or not asked or duration_s >= min(asked) * (1 - 1e-9):
        return None
    return (
        f"duration shortened on purpose: --duration {_seconds(duration_s)} was asked; "
        f"the thresholds ask for {_seconds(min(asked))}"
    )


def accepted_lines(verdicts: list[Verdict]) -> list[str]:
    """One line per measurement whose set-up differences were accepted, for the text report."""
    seen: dict[tuple[str, str], str] = {}
    for v in verdicts:
        for key, lead in (("setup_accepted", "accepted set-up differences"), ("duration_requested", "note")):
            text = v.properties.get(key)
            if text and (key, v.measurement) not in seen:
                seen[(key, v.measurement)] = f"{lead}: {v.measurement}: {text}"
    return list(seen.values())


def parse_accept(text: str | None) -> set[str]:
    """--accept-setup interval,priority -> {"interval", "priority"}; unknown names are an error."""
    from rtgate.errors import RtgateError

    if not text:
        return set()
    names = {n.strip() for n in text.split(",") if n.strip()}
    if "all" in names:
        return set(ASPECTS)
    unknown = sorted(names - set(ASPECTS))
    if unknown:
        raise RtgateError(
            f"--accept-setup: unknown difference {', '.join(unknown)} (one or more of {', '.join(ASPECTS)}, or all)"
        )
    return names
