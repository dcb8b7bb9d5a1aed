# SPDX-License-Identifier: GPL-2.0-or-later
"""A gate session: measurements run once and shared by their gates, results from elsewhere, and
gate helpers for users' own tests. Used by the pytest plugin; knows nothing about pytest."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rtgate.core.gates import Status, Verdict, predicted_thread_ids
from rtgate.core.model import RunResult
from rtgate.core.recorded import refuse_own_files
from rtgate.core.setup import evaluate_measured, parse_accept
from rtgate.core.thresholds import Measurement, ThresholdFile, find_thresholds, parse_duration
from rtgate.errors import RtgateError
from rtgate.measure import engine_check
from rtgate.measure.orchestrate import measure_and_judge
from rtgate.measure.runner import find_sampler
from rtgate.parsers import load_results

# re-exported: users' tests import them from here
from rtgate.pytest_plugin.window import GateResult as GateResult
from rtgate.pytest_plugin.window import LatencyResult as LatencyResult
from rtgate.pytest_plugin.window import Window, measurement_for_test
from rtgate.reports.described import Described, describe_run, describe_unmeasured, environment_document, header_lines
from rtgate.reports.duration import measured_seconds
from rtgate.reports.verdicts_json import verdicts_document, write_json


@dataclass
class Settings:
    thresholds: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    duration: str | int | None = None  # text (ini), or seconds (the option, read by rtgate.options)
    sampler: str | None = None
    allow_inconclusive: bool = False
    output_dir: Path = Path("rtgate-results")
    junit: str | None = None
    json: str | None = None
    accept_setup: str = ""  # set-up differences of --rtgate-results to accept (see rtgate.core.setup)
    strict: bool = False  # a preflight warning keeps a measurement from being made (its gates ERROR)


class GateSession:
    def __init__(self, settings: Settings, rootdir: Path) -> None:
        self.settings = settings
        self.rootdir = rootdir
        try:
            self.duration_s = parse_duration(settings.duration) if settings.duration else None
        except ValueError as e:
            raise RtgateError(f"duration {e}") from None
        self.accept = parse_accept(settings.accept_setup)
        self._results: list[tuple[str | None, Path]] = []
        for item in settings.results:
            name, sep, path = item.partition("=")
            if sep and not Path(item).exists():
                self._results.append((name, Path(path)))
            else:
                self._results.append((None, Path(item)))
        self._loaded: dict[Path, RunResult] = {}
        self._evaluated: dict[tuple[str, str], dict[tuple[str, str], Verdict] | RtgateError] = {}
        self.verdicts: list[tuple[str, Verdict]] = []
        self._platforms: dict[str, str] = {}
        self.described: dict[str, Described] = {}  # per measurement: where it was measured, for the reports
        # per (threshold file as shown, measurement): how long it measured, for JUnit times (None: unknown)
        self.durations: dict[tuple[str, str], float | None] = {}
        self.stopped_by: str | None = None  # a stop signal cut a measurement short: the session ends there

    def requested_files(self) -> set[Path]:
        return {find_thresholds(p).resolve() for p in self.settings.thresholds}  # paths or shipped names

    def results_for(self, tf: ThresholdFile, name: str) -> RunResult | None:
        """The results file the session maps to a measurement, or None to run the sampler."""
        if not self._results:
            return None
        named = [p for n, p in self._results if n == name]
        bare = [p for n, p in self._results if n is None]
        if bare and len(tf.measurements) > 1:
            raise RtgateError(
                f"{tf.path} has several measurements ({', '.join(tf.measurements)}): give results as MEASUREMENT=PATH"
            )
        paths = named or bare
        if not paths:
            raise RtgateError(f"no results given for measurement {name!r} of {tf.path}")
        if len(paths) > 1:
            raise RtgateError(f"several results for measurement {name!r}: {', '.join(map(str, paths))}")
        path = paths[0]
        if path not in self._loaded:
            refuse_own_files(path)
            self._loaded[path] = load_results(path)
        return self._loaded[path]

    def verdict(self, tf: ThresholdFile, m: Measurement, gate: str, thread: str) -> Verdict:
        key = (tf.path, m.name)
        if key not in self._evaluated:
            try:
                self._evaluated[key] = self._evaluate(tf, m)
            except RtgateError as e:
                self._evaluated[key] = e  # every gate of the measurement reports it; it runs once
        table = self._evaluated[key]
        if isinstance(table, RtgateError):
            raise table
        verdict = table.get((gate, thread))
        if verdict is None:
            raise RtgateError(f"no verdict for {gate}[{thread}] in {m.name}")
        return verdict

    def _evaluate(self, tf: ThresholdFile, m: Measurement) -> dict[tuple[str, str], Verdict]:
        run = self.results_for(tf, m.name)
        expected = predicted_thread_ids(m, run)
        if run is None:
            outdir = self.settings.output_dir / _safe(tf.platform)
            outcome = measure_and_judge(
                find_sampler(self.settings.sampler), m, outdir, duration_s=self.duration_s, strict=self.settings.strict
            )
            self.stopped_by = outcome.stopped_by
            verdicts = outcome.verdicts
            run = outcome.run
            if outcome.run is not None:
                self.described.setdefault(m.name, describe_run(outcome.run))
            else:  # refused: the machine as the engine found it, and its preflight warnings
                warnings = [c.as_dict() for c in outcome.warnings]
                self.described.setdefault(m.name, describe_unmeasured(outcome.system or self._machine(), warnings))
        else:
            # Results from elsewhere go through the same reconciliation as `rtgate check`.
            verdicts = evaluate_measured(m, run, self.accept)
            self.described.setdefault(m.name, describe_run(run))
        display = _display(Path(tf.path), self.rootdir)
        self._platforms[tf.platform] = display
        self.durations[(display, m.name)] = measured_seconds(run, m.sampler.interval_us) if run else None
        table = {(v.gate, v.thread): v for v in verdicts}
        reported = list(verdicts)
        for v in verdicts:  # a run not measured or not to be judged: its verdict on every collected test
            if v.thread == "all" and v.status in (Status.ERROR, Status.INCONCLUSIVE):
                del table[(v.gate, v.thread)]
                spread = {(v.gate, t): dataclasses.replace(v, thread=t) for t in expected.get(v.gate, [])}
                table.update(spread)
                if v.status == Status.INCONCLUSIVE:  # stopped before measuring: reported per collected test
                    reported.remove(v)
                    reported.extend(spread.values())
        self.verdicts.extend((display, v) for v in reported)
        got = set(table)
        want = {(g, t) for g, ts in expected.items() for t in ts}
        if got != want:
            # The threads that ran are not the ones collected: never let a gate go unreported.
            raise RtgateError(
                f"measurement {m.name}: the run's threads do not match the collected gates "
                f"(unexpected: {sorted(got - want)}, missing: {sorted(want - got)})"
            )
        return table

    def _machine(self) -> dict[str, Any]:
        """This machine as the engine finds it now: for a measurement stopped before the engine was asked."""
        try:
            return engine_check.machine(find_sampler(self.settings.sampler))
        except RtgateError:
            return {}

    def measure_for_test(self, settings: dict[str, Any], test_name: str) -> LatencyResult:
        """rt_latency(...): a measurement of its own, made now; its gates (if given) judged."""
        m = measurement_for_test(settings, _safe(test_name))
        outcome = measure_and_judge(
            find_sampler(self.settings.sampler),
            m,
            self.settings.output_dir / "tests",
            duration_s=self.duration_s,
            strict=self.settings.strict,
        )
        self.stopped_by = outcome.stopped_by
        if outcome.run is None:  # why it was not measured is its only verdict
            raise RtgateError(f"rt_latency {m.name}: {outcome.reason}")
        result = LatencyResult(outcome.run, m)
        result.verdicts = outcome.verdicts
        return result

    def window(self, settings: dict[str, Any], test_name: str) -> Window:
        """rt_latency.measuring(...): a measurement around the test's own code (see window.py)."""
        m = measurement_for_test(settings, _safe(test_name))
        sampler = find_sampler(self.settings.sampler)
        return Window(sampler, m, self.settings.output_dir / "tests", self.duration_s, self.settings.strict)

    def merge(
        self,
        verdicts: list[tuple[str, dict[str, Any]]],
        platforms: dict[str, str],
        described: dict[str, dict[str, Any]] | None = None,
        durations: list[tuple[str, str, float | None]] | None = None,
    ) -> None:
        """Verdicts a pytest-xdist worker sent back: the controller reports them. A measurement whose
        gates went to two workers was evaluated by each: its verdicts count once."""
        for name, d in (described or {}).items():
            self.described.setdefault(name, Described(**d))
        for path, name, seconds in durations or []:
            self.durations.setdefault((path, name), seconds)
        seen = {(path, v.test_id) for path, v in self.verdicts}
        for path, d in verdicts:
            v = verdict_from_dict(d)
            if (path, v.test_id) not in seen:
                seen.add((path, v.test_id))
                self.verdicts.append((path, v))
        self._platforms.update(platforms)

    def unique_verdicts(self) -> list[Verdict]:
        """The session's verdicts, a measurement name two threshold files share qualified by its file's
        platform (or path, when they share that too): JUnit suites, classes and test names stay unique."""
        return [v for _, _, v in self._unique()]

    def unique_durations(self) -> dict[str, float | None]:
        """How long each measurement of unique_verdicts measured, by its name there (None: unknown)."""
        return {v.measurement: self.durations.get((path, name)) for path, name, v in self._unique()}

    def _unique(self) -> list[tuple[str, str, Verdict]]:
        """(threshold file as shown, measurement, verdict as unique_verdicts names it)."""
        files: dict[str, set[str]] = {}
        for path, v in self.verdicts:
            files.setdefault(v.measurement, set()).add(path)
        platform_of = {display: platform for platform, display in self._platforms.items()}
        shared = {name for name, paths in files.items() if len(paths) > 1}
        out = []
        for path, v in self.verdicts:
            name = v.measurement
            if v.measurement in shared:
                names = [platform_of.get(p) for p in files[v.measurement]]
                unique = None not in names and len(set(names)) == len(names)
                qualifier = platform_of[path] if unique else path
                v = dataclasses.replace(v, measurement=f"{qualifier}.{v.measurement}")
            out.append((path, name, v))
        return out

    def write_side_files(self) -> None:
        if not self.verdicts:
            return
        verdicts = self.unique_verdicts()
        platform = ",".join(sorted(self._platforms)) or "pytest"
        allow = self.settings.allow_inconclusive
        if self.settings.json:
            environment = environment_document(self.described)
            write_json(
                self.settings.json,
                verdicts_document(platform, sorted(self._platforms.values()), verdicts, allow, None, environment),
            )
        if self.settings.junit:
            from rtgate.reports.junit import build_junit, write_junit
            from rtgate.reports.text import summary_table

            summary = summary_table(platform, verdicts, allow, header_lines(self.described))
            durations = self.unique_durations()
            write_junit(self.settings.junit, build_junit(platform, verdicts, summary, allow, durations, self.described))


def verdict_from_dict(d: dict[str, Any]) -> Verdict:
    """Verdict.as_dict() read back (how verdicts travel from pytest-xdist workers)."""
    return Verdict(
        measurement=d["measurement"],
        gate=d["gate"],
        kind=d["kind"],
        thread=d["thread"],
        status=Status(d["status"]),
        reason=d["reason"],
        value=d.get("value"),
        value_text=d.get("value_text") or "",
        limit=d.get("limit"),
        unit=d.get("unit") or "",
        bound=d.get("bound"),
        lower=d.get("lower"),
        samples=d.get("samples") or 0,
        critical=bool(d.get("critical")),
        properties=dict(d.get("properties") or {}),
    )


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:100] or "measurement"


def _display(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)
