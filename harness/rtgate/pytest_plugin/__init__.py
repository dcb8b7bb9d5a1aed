# SPDX-License-Identifier: GPL-2.0-or-later
"""pytest plugin: threshold files as tests, results from elsewhere, and a fixture for users' own tests.

Only pytest hooks, nodes and fixtures live here. Running measurements, parsing and gate math
are rtgate's own modules (session.py, gates.py), which know nothing about pytest.
"""

from __future__ import annotations

import dataclasses
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from rtgate.core.gates import Status, Verdict, predicted_thread_ids
from rtgate.core.thresholds import Measurement, ThresholdFile, load_thresholds
from rtgate.errors import RtgateError, ThresholdsError
from rtgate.options import (
    ACCEPT_SETUP,
    ALLOW_INCONCLUSIVE,
    DURATION,
    JSON,
    JUNIT,
    OUTPUT_DIR,
    SAMPLER,
    SHARED,
    STRICT,
    Option,
)
from rtgate.pytest_plugin.session import GateSession, Settings
from rtgate.pytest_plugin.window import LatencyResult, Window
from rtgate.reports.text import limit_text

T = TypeVar("T")
_SESSION = pytest.StashKey[GateSession]()
_SAVED_HANDLERS = pytest.StashKey[dict[int, Any]]()
_SUITE_FIGURE = "rtgate-suite-property::"
_CONFIG: dict[str, pytest.Config] = {}  # for hooks that get no config (pytest_runtest_logreport)


# ------------------------------------------------------------------ options


# The plugin's own options (the command takes threshold and results files as arguments); the others are the
# rtgate command's, declared once in rtgate.options.
THRESHOLDS = Option("thresholds", "collect the gates of this threshold file (repeatable)", "FILE", default=[])
RESULTS = Option("results", "evaluate these results instead of running the sampler", "[MEASUREMENT=]PATH", default=[])


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rtgate", "rtgate latency gates")
    group.addoption(
        THRESHOLDS.plugin_option, action="append", default=[], metavar=THRESHOLDS.metavar, help=_help(THRESHOLDS)
    )
    group.addoption(
        RESULTS.plugin_option, action="extend", nargs="+", default=[], metavar=RESULTS.metavar, help=_help(RESULTS)
    )
    parser.addini(THRESHOLDS.ini, THRESHOLDS.help, type="args", default=[])
    parser.addini(RESULTS.ini, RESULTS.help, type="args", default=[])
    for o in SHARED:
        # default None: an option not given leaves the word to the ini setting, whose default is the option's
        if o.flag:
            group.addoption(o.plugin_option, action="store_true", default=None, help=_help(o))
            parser.addini(o.ini, o.help, type="bool", default=o.default)
        else:
            group.addoption(o.plugin_option, metavar=o.metavar, type=o.type, default=None, help=_help(o))
            parser.addini(o.ini, o.help, default="" if o.default is None else o.default)


def _help(o: Option) -> str:
    return f"{o.help} (ini: {o.ini})"


def _settings(config: pytest.Config) -> Settings:
    """Command line first, then the ini file."""

    def pick(o: Option) -> Any:
        value = config.getoption(o.ini)
        return value if value not in (None, [], "") else config.getini(o.ini)

    output_dir = Path(str(pick(OUTPUT_DIR) or OUTPUT_DIR.default))
    worker = getattr(config, "workerinput", None)
    if worker is not None:  # a pytest-xdist worker: its results in a folder of its own
        output_dir = output_dir / str(worker.get("workerid", "worker"))
    return Settings(
        thresholds=[str(p) for p in pick(THRESHOLDS)],
        results=[str(p) for p in pick(RESULTS)],
        duration=pick(DURATION) or None,
        sampler=pick(SAMPLER) or None,
        allow_inconclusive=bool(pick(ALLOW_INCONCLUSIVE)),
        output_dir=output_dir,
        junit=pick(JUNIT) or None,
        json=pick(JSON) or None,
        accept_setup=str(pick(ACCEPT_SETUP) or ""),
        strict=bool(pick(STRICT)),
    )


def _stop_as_ctrl_c(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def pytest_configure(config: pytest.Config) -> None:
    _CONFIG["config"] = config
    config.addinivalue_line("markers", "rtgate: a latency gate collected from an rtgate threshold file")
    config.addinivalue_line("markers", "rtgate_critical: a gate its threshold file marks critical")
    try:
        config.stash[_SESSION] = GateSession(_settings(config), rootdir=Path(str(config.rootpath)))
    except RtgateError as e:
        raise pytest.UsageError(f"rtgate: {e}") from e
    _check_distribution(config)
    # SIGTERM and SIGHUP (a CI cancel, a lost ssh session) end the session as Ctrl-C does: pytest
    # then reports and writes --junitxml. During a measurement, rtgate's own stop takes over.
    saved: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for s in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(s) == signal.SIG_DFL:
                saved[s] = signal.signal(s, _stop_as_ctrl_c)
    config.stash[_SAVED_HANDLERS] = saved


def _check_distribution(config: pytest.Config) -> None:
    """pytest-xdist --dist each runs every test on every worker: each would measure the same
    measurement again, and the reports would mix their verdicts. Refused; the other modes keep a
    measurement's gates on one worker (pytest_xdist_make_scheduler below)."""
    if getattr(config, "workerinput", None) is not None or not config.pluginmanager.hasplugin("xdist"):
        return
    if config.getoption("dist", "no") == "each" and (
        config.stash[_SESSION].settings.thresholds
        or any(a.split("::")[0].endswith((".yaml", ".yml")) for a in config.args)
    ):
        raise pytest.UsageError(
            "rtgate: --dist each would run every measurement once per worker, and its gates would get "
            "several verdicts: use --dist load, loadscope, loadfile or loadgroup (rtgate keeps a measurement's "
            "gates on one worker in each)"
        )


def _gate_scope(nodeid: str) -> str | None:
    """file.yaml::measurement for a gate collected from a threshold file, else None."""
    parts = nodeid.split("@")[0].split("::")
    if len(parts) == 3 and parts[0].endswith((".yaml", ".yml")):
        return "rtgate:" + "::".join(parts[:2])
    return None


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist: one measurement, one run per session. Every gate of a measurement goes to the
    one worker that measures it; any other test is scheduled as --dist load (or loadgroup) would.
    loadscope and loadfile already keep a measurement together; each is refused at configure."""
    if config.getvalue("dist") not in ("load", "loadgroup", "worksteal"):
        return None
    from xdist.scheduler import LoadGroupScheduling  # type: ignore[import-untyped]

    class MeasurementScheduling(LoadGroupScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            scope = _gate_scope(nodeid)
            return scope if scope is not None else str(super()._split_scope(nodeid))

    return MeasurementScheduling(config, log)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _CONFIG.get("config") is config:
        del _CONFIG["config"]
    for s, handler in config.stash.get(_SAVED_HANDLERS, {}).items():
        signal.signal(s, handler)


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """A stop signal cut a measurement short: report its gates (INCONCLUSIVE), then end the session."""
    gate_session = item.config.stash.get(_SESSION, None)
    if gate_session is None or not gate_session.stopped_by:
        return
    if nextitem is None or not isinstance(item, GateItem) or nextitem.parent is not item.parent:
        item.session.shouldstop = f"rtgate: stopped by {gate_session.stopped_by}"


# ------------------------------------------------------------------ collection


def _named(config: pytest.Config, path: Path) -> bool:
    """Only threshold files the user names are collected: never every YAML file in a tree."""
    session = config.stash[_SESSION]
    resolved = path.resolve()
    if resolved in session.requested_files():
        return True
    for arg in config.args:
        target = Path(arg.split("::")[0]).resolve()
        if target == resolved:
            return True
        if target.is_dir() and target in resolved.parents:
            head = resolved.read_text(encoding="utf-8", errors="replace")[:65536]
            return "platform:" in head and "measurements:" in head
    return False


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix in (".yaml", ".yml") and _named(parent.config, file_path):
        return ThresholdsFile.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Threshold files named by option or ini but not on the command line are collected here."""
    gate_session = config.stash[_SESSION]
    seen = {Path(str(item.path)).resolve() for item in items if isinstance(item, GateItem)}
    for path in sorted(gate_session.requested_files()):
        if path in seen:
            continue
        node = ThresholdsFile.from_parent(session, path=path)
        try:
            groups = [c for c in node.collect() if isinstance(c, pytest.Collector)]
            items.extend(i for c in groups for i in c.collect() if isinstance(i, pytest.Item))
        except ThresholdsError as e:
            raise pytest.UsageError(f"rtgate: {e}") from e


class ThresholdsFile(pytest.File):
    def collect(self) -> Iterator[pytest.Collector]:
        tf = load_thresholds(self.path)
        for m in tf.measurements.values():
            yield MeasurementNode.from_parent(self, name=m.name, tf=tf, measurement=m)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, RtgateError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)  # type: ignore[return-value]


class MeasurementNode(pytest.Collector):
    def __init__(self, *, tf: ThresholdFile, measurement: Measurement, **kw: Any) -> None:
        super().__init__(**kw)
        self.tf = tf
        self.measurement = measurement

    def collect(self) -> Iterator[pytest.Item]:
        gate_session = self.config.stash[_SESSION]
        ids = predicted_thread_ids(self.measurement, gate_session.results_for(self.tf, self.measurement.name))
        for gate in self.measurement.gates:
            for thread in ["worst"] if gate.scope == "worst" else ids.get(gate.name, []):
                item = GateItem.from_parent(self, name=f"{gate.name}[{thread}]", gate=gate.name, thread=thread)
                item.add_marker("rtgate")
                if gate.critical:
                    item.add_marker("rtgate_critical")
                yield item


class GateFailure(Exception):
    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.reason)
        self.verdict = verdict


class GateItem(pytest.Item):
    def __init__(self, *, gate: str, thread: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.gate = gate
        self.thread = thread

    @property
    def measurement_node(self) -> MeasurementNode:
        assert isinstance(self.parent, MeasurementNode)
        return self.parent

    def runtest(self) -> None:
        node = self.measurement_node
        gate_session = self.config.stash[_SESSION]
        verdict = gate_session.verdict(node.tf, node.measurement, self.gate, self.thread)
        record_figures(self.config, self, verdict)
        if verdict.status == Status.PASS:
            return
        if verdict.status == Status.INCONCLUSIVE and gate_session.settings.allow_inconclusive:
            pytest.skip(f"INCONCLUSIVE: {verdict.reason}")
        raise GateFailure(verdict)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, GateFailure):
            return failure_text(excinfo.value.verdict)
        if isinstance(excinfo.value, RtgateError):
            return f"rtgate: {excinfo.value}"
        return super().repr_failure(excinfo)  # type: ignore[return-value]

    def reportinfo(self) -> tuple[Path, int, str]:
        gate = next(g for g in self.measurement_node.measurement.gates if g.name == self.gate)
        return self.path, max(0, gate.where[1] - 1), f"{self.measurement_node.name}::{self.name}"


def failure_text(v: Verdict) -> str:
    """The gate's one-line reason and a short table: no traceback."""
    rows = [
        ("value", v.value_text or "-"),
        ("limit", limit_text(v) or "-"),
        ("bound", "-" if v.bound is None else f"{v.bound * 100:.4g} %"),
        ("samples", str(v.samples)),
    ]
    for key in ("cycles", "min_us", "avg_us", "max_us", "p99.9_us", "missed_periods", "source"):
        if key in v.properties and v.properties[key] is not None:
            rows.append((key, str(v.properties[key])))
    width = max(len(k) for k, _ in rows)
    return f"{v.status.value}: {v.reason}\n" + "\n".join(f"  {k.ljust(width)}  {val}" for k, val in rows)


def record_figures(config: pytest.Config, node: pytest.Item, verdict: Verdict, per_gate: bool = False) -> None:
    """Put a verdict's figures where pytest's --junitxml writes them, in either JUnit family.

    xunit1/legacy: testcase <properties> (what record_property does). xunit2, pytest's default,
    has no testcase properties in its schema and record_property warns there; the figures go
    into the testsuite's <properties> instead, named "<test id>::<figure>" (what
    record_testsuite_property does), which Jenkins keeps with keepProperties.

    per_gate: the test judged several gates or threads (the rt_latency fixture): each figure is
    named after its gate and thread too, so two threads never write the same property.
    """
    figures: dict[str, Any] = {
        "status": verdict.status.value,
        "value": verdict.value_text,
        "limit": verdict.limit,
        "bound": verdict.bound,
        "samples": verdict.samples,
    }
    figures.update({k: v for k, v in verdict.properties.items() if not isinstance(v, (list, dict))})
    figures = {k: v for k, v in figures.items() if v is not None}
    if per_gate:
        figures = {f"{verdict.gate}[{verdict.thread}]::{k}": v for k, v in figures.items()}
    if hasattr(config, "workerinput") and config.getini("junit_family") not in ("xunit1", "legacy"):
        # A pytest-xdist worker has no JUnit writer: the figures travel with the test's report and
        # the controller moves them into its testsuite properties (pytest_runtest_logreport below).
        node.user_properties.extend((f"{_SUITE_FIGURE}{node.nodeid}::{k}", v) for k, v in figures.items())
        return
    if config.getini("junit_family") in ("xunit1", "legacy"):
        node.user_properties.extend((f"rtgate.{k}", v) for k, v in figures.items())
        return
    from _pytest.junitxml import xml_key  # the LogXML of --junitxml, as record_testsuite_property uses

    xml = config.stash.get(xml_key, None)
    if xml is not None:
        for k, v in figures.items():
            xml.add_global_property(f"{node.nodeid}::{k}", v)


# ------------------------------------------------------------------ reporting


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    gate_session = config.stash.get(_SESSION, None)
    if gate_session is None or not gate_session.verdicts:
        return
    terminalreporter.section("rtgate")
    for path, v in gate_session.verdicts:
        limit = f" (limit {limit_text(v)})" if v.limit is not None else ""
        terminalreporter.write_line(f"{v.status.value:12} {path}::{v.test_id}  {v.value_text or '-'}{limit}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    gate_session = session.config.stash.get(_SESSION, None)
    if gate_session is None:
        return
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # a pytest-xdist worker: the controller summarises and writes
        workeroutput["rtgate_verdicts"] = [(path, v.as_dict()) for path, v in gate_session.verdicts]
        workeroutput["rtgate_platforms"] = dict(gate_session._platforms)
        workeroutput["rtgate_described"] = {k: dataclasses.asdict(d) for k, d in gate_session.described.items()}
        # JUnit times: how long each measurement took, written by the controller
        workeroutput["rtgate_durations"] = [(path, name, s) for (path, name), s in gate_session.durations.items()]
        return
    gate_session.write_side_files()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist: a worker finished; its verdicts join the controller's summary and reports."""
    gate_session = node.config.stash.get(_SESSION, None)
    output = getattr(node, "workeroutput", None) or {}
    if gate_session is not None and output.get("rtgate_verdicts"):
        gate_session.merge(
            output["rtgate_verdicts"],
            output.get("rtgate_platforms") or {},
            output.get("rtgate_described") or {},
            output.get("rtgate_durations") or [],
        )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """pytest-xdist controller: figures a worker recorded go to the testsuite properties, as without xdist."""
    config = _CONFIG.get("config")
    if config is None or hasattr(config, "workerinput"):  # on a worker: they travel on to the controller
        return
    mine = [(k, v) for k, v in report.user_properties if isinstance(k, str) and k.startswith(_SUITE_FIGURE)]
    if not mine:
        return
    report.user_properties = [p for p in report.user_properties if p not in mine]
    from _pytest.junitxml import xml_key

    xml = config.stash.get(xml_key, None)
    if xml is not None and report.when == "call":
        for k, v in mine:
            xml.add_global_property(k[len(_SUITE_FIGURE) :], v)


# ------------------------------------------------------------------ fixture for users' own tests


class RtLatency:
    """The rt_latency fixture: `rt_latency(...)` measures now; `with rt_latency.measuring(...) as window:`
    measures while the test's own code runs in the block. Keyword arguments: doc/pytest.rst (an unknown
    one is named, with the ones it takes). `gates=[...]` are judged, and the test fails unless each
    PASSes (INCONCLUSIVE is skipped under --rtgate-allow-inconclusive)."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self._request = request
        self._session: GateSession = request.config.stash[_SESSION]

    def __call__(self, **settings: Any) -> LatencyResult:
        result = _or_fail(lambda: self._session.measure_for_test(settings, self._request.node.name))
        self._watch(result)
        judge_test_gates(self._request, result.verdicts, self._session.settings.allow_inconclusive)
        return result

    def measuring(self, **settings: Any) -> _Measuring:
        """A measurement of `duration` (with its `load`) around the block's code: the code starts once
        every sampler thread measures and must end before the measurement does (`window.measuring`
        says whether there is time left); the gates are judged on the window when the block ends."""
        return _Measuring(self, _or_fail(lambda: self._session.window(settings, self._request.node.name)))

    def _watch(self, result: LatencyResult) -> None:
        config, node = self._request.config, self._request.node
        result.on_gate = lambda v: record_figures(config, node, v, per_gate=True)


class _Measuring:
    def __init__(self, fixture: RtLatency, window: Window) -> None:
        self.fixture = fixture
        self.window = window

    def __enter__(self) -> Window:
        try:
            _or_fail(self.window.start)
        except KeyboardInterrupt:
            self.fixture._session.stopped_by = "SIGINT"
            raise
        return self.window

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        if kind is not None:  # the code failed or was interrupted: its error is the test's, not a verdict
            interrupted = issubclass(kind, KeyboardInterrupt)
            self.window.stop("SIGINT" if interrupted else "the test's code raised")
            if interrupted:
                self.fixture._session.stopped_by = "SIGINT"
            return
        verdicts = _or_fail(self.window.finish)
        assert self.window.result is not None
        self.fixture._watch(self.window.result)
        judge_test_gates(self.fixture._request, verdicts, self.fixture._session.settings.allow_inconclusive)


def _or_fail(call: Callable[[], T]) -> T:
    """call(); an RtgateError (a wrong argument, a measurement not made) fails the test with its one line."""
    try:
        return call()
    except RtgateError as e:
        error = e
    pytest.fail(f"rtgate: {error}", pytrace=False)  # outside the except: no "during handling" chain


def judge_test_gates(request: pytest.FixtureRequest, verdicts: list[Verdict], allow_inconclusive: bool) -> None:
    """The gates a test gave rt_latency: figures into the JUnit, and the test fails unless each PASSes."""
    for v in verdicts:
        record_figures(request.config, request.node, v, per_gate=True)
    bad = [v for v in verdicts if v.status != Status.PASS]
    if not bad:
        return
    if allow_inconclusive and all(v.status == Status.INCONCLUSIVE for v in bad):
        pytest.skip("INCONCLUSIVE: " + "; ".join(v.reason for v in bad))
    pytest.fail("\n".join(f"{v.gate}[{v.thread}] " + failure_text(v) for v in bad), pytrace=False)


@pytest.fixture
def rt_latency(request: pytest.FixtureRequest) -> RtLatency:
    """Measurements in a test of one's own (doc/pytest.rst):

    def test_my_board(rt_latency):
        result = rt_latency(duration="10s", interval_us=500, priority=90, threads=2)
        assert result.gate(max_us=80).passed

    def test_my_code_path(rt_latency):
        with rt_latency.measuring(duration="10s", load="cpu", gates=[{"kind": "max", "limit_us": 200}]) as window:
            while window.measuring:
                my_code_path()
    """
    return RtLatency(request)
