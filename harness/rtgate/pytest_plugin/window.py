# SPDX-License-Identifier: GPL-2.0-or-later
"""The measurements of users' own tests (the rt_latency fixture): what its keyword arguments mean, and a
measurement that runs while the test's own code runs (`with rt_latency.measuring(...) as window:`).

The window is a measurement of a set duration, with its load if one is asked: the test's code starts
once every sampler thread is measuring, and the gates are judged on the whole measurement. The code
must end inside it: the sampler's first and last wake-up of each thread, from its results, are checked
against the instants the code started and ended; a code path that outran the measurement makes every
gate ERROR, never a PASS on time nobody measured. Knows nothing about pytest."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rtgate.core.gate_kinds import KINDS
from rtgate.core.gates import Verdict, evaluate
from rtgate.core.keys import did_you_mean
from rtgate.core.model import RunResult, ThreadResult
from rtgate.core.setup import evaluate_measured
from rtgate.core.status import SEVERITY, Status
from rtgate.core.thresholds import GateSpec, Measurement, measurement_in_code, parse_rate
from rtgate.errors import RtgateError, ThresholdsError
from rtgate.measure.orchestrate import Outcome, measure_and_judge
from rtgate.measure.stop import STOP

# rt_latency's keyword arguments, each a threshold file's key (doc/thresholds.rst) unless said otherwise.
ACCEPTED = {
    "name": "the measurement's name (default: the test's)",
    "duration": "how long to measure, e.g. '10s' (default 5s); measuring(): the window the code must fit in",
    "interval_us": "sampler.interval_us",
    "priority": "sampler.priority",
    "policy": "sampler.policy",
    "mlockall": "sampler.mlockall",
    "threads": "how many sampler threads (a thread group's count)",
    "cpus": "the CPUs they are pinned to (a thread group's cpus)",
    "load": "load: as in a threshold file, e.g. 'cpu' or ['cpu', 'memory']",
    "gates": "gates: as in a threshold file (name defaults to kind); judged, and the test fails unless PASS",
}
_SAMPLER_KEYS = ("interval_us", "priority", "policy", "mlockall")
# What a threshold-file key in an error message is, in the caller's words.
_CALLER_KEYS = {
    "sampler.threads[0].count": "threads",
    "sampler.threads[0].cpus": "cpus",
    "sampler.duration": "duration",
}
_CALLER_KEYS.update({f"sampler.threads[0].{k}": k for k in _SAMPLER_KEYS})
_CALLER_KEYS.update({f"sampler.{k}": k for k in _SAMPLER_KEYS})
POLL_S = 0.02  # how often the sampler's start is looked for
START_MARGIN_S = 0.05  # after every thread's first period, before the code starts
END_MARGIN_S = 0.1  # Window.measuring turns False this long (plus two periods) before the measurement ends


class GateResult:
    """What result.gate(...) returns: `.passed`, `.status`, `.verdicts`; its repr is the reason."""

    def __init__(self, verdicts: list[Verdict]) -> None:
        self.verdicts = verdicts
        self.status = max((v.status for v in verdicts), key=SEVERITY.__getitem__)
        self.passed = self.status == Status.PASS

    @property
    def reason(self) -> str:
        bad = [v.reason for v in self.verdicts if v.status != Status.PASS]
        return "; ".join(bad or [v.reason for v in self.verdicts])

    def __repr__(self) -> str:
        return f"<GateResult {self.status.value}: {self.reason}>"


class LatencyResult:
    """A measurement's results with gate helpers, for users' own tests."""

    def __init__(self, run: RunResult, measurement: Measurement) -> None:
        self.run = run
        self.measurement = measurement
        self.on_gate: Callable[[Verdict], None] | None = None
        self.verdicts: list[Verdict] = []  # the gates= given to rt_latency, judged on these results

    @property
    def threads(self) -> list[ThreadResult]:
        return self.run.threads

    @property
    def max_us(self) -> float | None:
        values = [t.max for t in self.run.threads if t.max is not None]
        return max(values) / self.run.units_per_us() if values else None

    def gate(
        self,
        *,
        max_us: float | None = None,
        percentile: float | None = None,
        limit_us: float | None = None,
        above_us: float | None = None,
        rate: Any = None,
        avg_us: float | None = None,
        missed: int | None = None,
        confidence: float = 0.95,
        cpus: list[int] | None = None,
    ) -> GateResult:
        """One gate over every thread (or the threads on `cpus`), e.g. gate(max_us=80),
        gate(percentile=99.9, limit_us=50), gate(above_us=100, rate="0.1%"), gate(avg_us=20), gate(missed=0)."""
        if max_us is not None:
            spec = GateSpec(name=f"max-{max_us:g}us", kind="max", where=("<test>", 0), limit_us=float(max_us))
        elif percentile is not None and limit_us is not None:
            spec = GateSpec(
                name=f"p{percentile:g}-{limit_us:g}us",
                kind="percentile",
                where=("<test>", 0),
                percentile=float(percentile),
                limit_us=float(limit_us),
            )
        elif above_us is not None and rate is not None:
            spec = GateSpec(
                name=f"above-{above_us:g}us",
                kind="miss_rate",
                where=("<test>", 0),
                above_us=float(above_us),
                rate=parse_rate(rate),
            )
        elif avg_us is not None:
            spec = GateSpec(name=f"avg-{avg_us:g}us", kind="avg", where=("<test>", 0), limit_us=float(avg_us))
        elif missed is not None:
            spec = GateSpec(name=f"missed-{missed}", kind="missed", where=("<test>", 0), max_count=int(missed))
        else:
            raise ValueError("gate() takes max_us, percentile + limit_us, above_us + rate, avg_us or missed")
        spec.cpus = cpus
        if "confidence" in KINDS[spec.kind].takes:  # every kind judged by confidence bounds, not miss_rate alone
            spec.confidence = confidence
        m = Measurement(
            name=self.measurement.name,
            description="",
            sampler=self.measurement.sampler,
            gates=[spec],
            where=self.measurement.where,
        )
        verdicts = evaluate(m, self.run)
        if self.on_gate:
            for v in verdicts:
                self.on_gate(v)
        return GateResult(verdicts)


def unknown_arguments(settings: dict[str, Any]) -> None:
    """A one-line error naming an argument rt_latency does not take, and the ones it does."""
    for k in settings:
        if k not in ACCEPTED:
            raise RtgateError(
                f"rt_latency: unknown argument {k!r}{did_you_mean(k, set(ACCEPTED))} "
                f"(it takes {', '.join(ACCEPTED)}; see doc/pytest.rst)"
            )


def measurement_for_test(settings: dict[str, Any], test_name: str) -> Measurement:
    """rt_latency's keyword arguments as a measurement, checked as a threshold file's would be."""
    unknown_arguments(settings)
    name = str(settings.get("name") or test_name)
    group: dict[str, Any] = {"name": "rt"}
    if settings.get("threads") is not None:
        group["count"] = settings["threads"]
    if settings.get("cpus") is not None:
        group["cpus"] = settings["cpus"]
    sampler: dict[str, Any] = {"duration": settings.get("duration", "5s"), "threads": [group]}
    sampler.update({k: settings[k] for k in _SAMPLER_KEYS if k in settings})
    raw: dict[str, Any] = {"sampler": sampler}
    if settings.get("load") is not None:
        raw["load"] = settings["load"]
    gates = settings.get("gates")
    if gates is not None:
        if not isinstance(gates, list):
            raise RtgateError("rt_latency: gates: must be a list of gates, as in a threshold file")
        raw["gates"] = [{"name": g.get("kind"), **g} if isinstance(g, dict) and "name" not in g else g for g in gates]
    try:
        return measurement_in_code(name, raw, "rt_latency")
    except ThresholdsError as e:
        key = (e.key or "").removeprefix(f"measurements.{name}").lstrip(".")
        key = _CALLER_KEYS.get(key, key)
        raise RtgateError(f"rt_latency: {key + ': ' if key else ''}{e.message}") from None


@dataclass
class _Started:
    """The sampler's start as its first results file states it."""

    clock_ns: int  # the start instant on the sampler's clock
    clock: str  # "monotonic" or "realtime"
    longest_interval_ns: int


def _now_ns(clock: str) -> int:
    return time.monotonic_ns() if clock == "monotonic" else time.time_ns()


class Window:
    """A measurement around the test's own code (the plugin's rt_latency.measuring enters and leaves
    it); afterwards `verdicts` (the gates given, judged on the window), `result` (the results, with
    gate helpers for more) and `code_seconds` (how long the code ran)."""

    def __init__(self, sampler: str, m: Measurement, outdir: Path, duration_s: int | None, strict: bool) -> None:
        self.sampler, self.m, self.outdir = sampler, m, outdir
        self.duration_s = duration_s if duration_s is not None else m.sampler.duration_s
        self.strict = strict
        self.override_s = duration_s  # the session's --rtgate-duration, if given
        self.outcome: Outcome | None = None
        self.result: LatencyResult | None = None  # after the window: the results, with gate helpers
        self.failure: BaseException | None = None
        self.verdicts: list[Verdict] = []
        self.code_seconds: float | None = None
        self.stopped_by: str | None = None  # a Ctrl-C (or stop signal) ended the window
        self._thread = threading.Thread(target=self._measure, name=f"rtgate-window-{m.name}", daemon=True)
        self._end_ns: int | None = None
        self._started: _Started | None = None
        self._code: tuple[int, int] | None = None

    # ---------------------------------------------------------------- the measurement, in its thread

    def _measure(self) -> None:
        # The load and the sampler are started from this thread, which lives until they are reaped.
        try:
            self.outcome = measure_and_judge(
                self.sampler, self.m, self.outdir, duration_s=self.override_s, strict=self.strict, progress=False
            )
        except BaseException as e:  # re-raised in the test's thread
            self.failure = e

    # ---------------------------------------------------------------- the test's side

    def start(self) -> None:
        """Start the measurement and return once every sampler thread is measuring. Raises RtgateError
        when it could not be made (the reason is also every gate's ERROR)."""
        asked_ns = time.time_ns()
        self._thread.start()
        results = self.outdir / f"{self.m.name}.json"
        try:
            while self._started is None:
                if not self._thread.is_alive():
                    self._thread.join()
                    raise RtgateError(f"rt_latency {self.m.name}: {self._why_not()}")
                self._started = self._read_start(results, asked_ns)
                if self._started is None:
                    time.sleep(POLL_S)
            # The first period of every thread ends within one interval of the start: then the code starts.
            began = self._started.clock_ns + 2 * self._started.longest_interval_ns + int(START_MARGIN_S * 1e9)
            wait = (began - _now_ns(self._started.clock)) / 1e9
            if wait > 0:
                time.sleep(wait)
        except KeyboardInterrupt:
            self.stop("SIGINT")
            raise
        except BaseException:
            self.stop("an error before the test's code")
            raise
        assert self.duration_s is not None
        self._end_ns = self._started.clock_ns + int(self.duration_s * 1e9)
        self._code = (_now_ns(self._started.clock), 0)

    def _why_not(self) -> str:
        if self.failure is not None:
            return str(self.failure)
        return self.outcome.reason if self.outcome is not None and self.outcome.reason else "not measured"

    @staticmethod
    def _read_start(results: Path, asked_ns: int) -> _Started | None:
        """The sampler's start from the results file it writes as it starts (None: not yet; an older
        file of the same name, left by an earlier test, is not it)."""
        try:
            doc = json.loads(results.read_text(encoding="utf-8"))
            ours = doc["rtgate"]
            start_rt = int(ours["start_time_ns"])
            threads = ours["threads"]
            clock = str(ours.get("clock") or "monotonic")
            longest = max(int(t["interval_us"]) for t in threads) * 1000 if threads else 0
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if start_rt < asked_ns or clock not in ("monotonic", "realtime"):
            return None
        start = start_rt if clock == "realtime" else time.monotonic_ns() - (time.time_ns() - start_rt)
        return _Started(start, clock, longest)

    @property
    def measuring(self) -> bool:
        """Whether the measurement still has time for more of the code (`while window.measuring: ...`)."""
        return self.remaining_s > 0

    @property
    def remaining_s(self) -> float:
        """Seconds left for the code before the measurement ends (with a margin of two periods)."""
        if self._started is None or self._end_ns is None or not self._thread.is_alive():
            return 0.0
        margin = 2 * self._started.longest_interval_ns + int(END_MARGIN_S * 1e9)
        return max(0.0, (self._end_ns - margin - _now_ns(self._started.clock)) / 1e9)

    def stop(self, why: str) -> None:
        """End the measurement now (the code failed or was interrupted): the sampler is stopped as a stop
        signal stops it, and what it measured is not judged."""
        if self._thread.is_alive():
            if STOP.signal is None:
                STOP.signal = why
            self._thread.join()
            if STOP.signal == why:
                STOP.signal = None
        self.stopped_by = why

    def finish(self) -> list[Verdict]:
        """After the code: wait for the measurement's end, check the code ran inside it, judge the gates."""
        assert self._code is not None and self._started is not None
        self._code = (self._code[0], _now_ns(self._started.clock))
        self.code_seconds = (self._code[1] - self._code[0]) / 1e9
        self._thread.join()
        if self.failure is not None:
            raise self.failure
        assert self.outcome is not None
        run = self.outcome.run
        if run is None:  # why it was not measured is its only verdict
            raise RtgateError(f"rt_latency {self.m.name}: {self.outcome.reason}")
        outside = self._outside(Path(run.source))
        if outside:
            run.environment.setdefault("invalid", []).append(outside)
        run.environment["window"] = {"code_seconds": self.code_seconds}
        self.verdicts = evaluate_measured(self.m, run, duration_s=self.override_s)
        self.result = LatencyResult(run, self.m)
        self.result.verdicts = self.verdicts
        return self.verdicts

    def _outside(self, results: Path) -> str | None:
        """Why the code did not run wholly inside every thread's measured periods (None: it did)."""
        assert self._code is not None and self._started is not None
        try:
            threads = json.loads(results.read_text(encoding="utf-8"))["rtgate"]["threads"]
            spans = [(int(t["first_wake_ns"]), int(t["last_wake_ns"]), int(t["interval_us"]) * 1000) for t in threads]
        except (OSError, ValueError, KeyError, TypeError) as e:
            return f"the results do not say when each thread measured ({e}): the test's code cannot be placed in them"
        began, ended = self._code
        for i, (first, last, interval) in enumerate(spans):
            if first > began:
                return f"thread {i} first measured {(first - began) / 1e9:.3f} s after the test's code started"
            if last + interval < ended:
                return (
                    f"the test's code ran {(ended - last - interval) / 1e9:.3f} s past the measurement's end "
                    f"(it ran {self.code_seconds:.3f} s of a {self.duration_s} s window): give a longer duration"
                )
        return None
