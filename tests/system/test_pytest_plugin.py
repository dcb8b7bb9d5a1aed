# SPDX-License-Identifier: GPL-2.0-or-later
"""The pytest plugin, through real pytest sessions (pytester): ids, verdicts, JUnit, fixture, options."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml, Properties

from conftest import IS_ROOT, ROOT, RT_TESTS, junit_figures
from junit_views import jenkins_view
from rtgate.parsers import load_results
from rtgate.reports.duration import measured_seconds

SPEC = """\
platform: board
measurements:
  app-thread-a:
    # how ct-24-S-h300 was measured
    sampler: {{interval_us: 200, loops: 5000, priority: 80,
              threads: [{{name: all, count: 2}}]}}
    gates:
      - {{name: max, kind: max, limit_us: {max}}}
      - {{name: over-900, kind: miss_rate, above_us: 900, rate: {rate}}}
"""


@pytest.fixture
def board(pytester: pytest.Pytester) -> Path:
    shutil.copy(RT_TESTS / "ct-24-S-h300.json", pytester.path / "results.json")  # maxima 894 and 155 us
    return pytester.path


def spec(pytester: pytest.Pytester, max_us: float = 1000, rate: str = "1%", name: str = "board.yaml") -> Path:
    path = pytester.path / name
    path.write_text(SPEC.format(max=max_us, rate=rate))
    return path


def test_collects_one_item_per_gate_and_thread(pytester: pytest.Pytester, board: Path) -> None:
    spec(pytester)
    r = pytester.runpytest("board.yaml", "--rtgate-results", "results.json", "--collect-only", "-q")
    assert r.ret == 0
    ids = [ln for ln in r.outlines if "::" in ln]
    assert ids == [
        "board.yaml::app-thread-a::max[cpu0]",
        "board.yaml::app-thread-a::max[cpu1]",
        "board.yaml::app-thread-a::over-900[cpu0]",
        "board.yaml::app-thread-a::over-900[cpu1]",
    ]


def test_pass_and_fail_per_gate_with_readable_failure(pytester: pytest.Pytester, board: Path) -> None:
    spec(pytester, max_us=500)
    r = pytester.runpytest("board.yaml", "--rtgate-results", "results.json")
    r.assert_outcomes(passed=3, failed=1)
    out = r.stdout.str()
    assert "FAIL: max 894 us > 500 us on thread 0 (cpu 0, prio 80)" in out
    assert "Traceback" not in out and "raise GateFailure" not in out
    assert "cycles" in out and "5000" in out  # the short table
    r.stdout.fnmatch_lines(["*= rtgate =*", "FAIL * board.yaml::app-thread-a::max[[]cpu0[]]  894 us (limit 500 us)"])


def test_rates_read_as_percentages(pytester: pytest.Pytester, board: Path) -> None:
    spec(pytester, rate="0.05%")  # INCONCLUSIVE: 0 of 5000 above 900 us cannot prove 0.05 %
    r = pytester.runpytest("board.yaml", "--rtgate-results", "results.json")
    r.stdout.fnmatch_lines(["INCONCLUSIVE*board.yaml::app-thread-a::over-900[[]cpu1[]]  0 % (limit 0.05 %)"])
    out = r.stdout.str()
    assert re.search(r"^  limit +0\.05 %$", out, re.M) and "0.0005" not in out  # the failure's short table


def test_inconclusive_fails_unless_allowed(pytester: pytest.Pytester, board: Path) -> None:
    spec(pytester, rate="0.1%")  # cpu0: 4 periods skipped by its 894 us wake-up, 4 of 5004 cannot prove 0.1 %
    r = pytester.runpytest("board.yaml", "--rtgate-results", "results.json")
    r.assert_outcomes(passed=3, failed=1)
    assert "INCONCLUSIVE: 4 of 5004 samples above 900 us or missed" in r.stdout.str()
    r = pytester.runpytest("board.yaml", "--rtgate-results", "results.json", "--rtgate-allow-inconclusive", "-rs")
    r.assert_outcomes(passed=3, skipped=1)
    assert "INCONCLUSIVE: 4 of 5004" in r.stdout.str()


@pytest.mark.parametrize("family", ["xunit1", "xunit2"])
def test_measurements_land_in_junitxml(pytester: pytest.Pytester, board: Path, family: str) -> None:
    spec(pytester, max_us=500)
    pytester.makeini(f"[pytest]\njunit_family = {family}\n")
    r = pytester.runpytest("board.yaml", "--rtgate-results", "results.json", "--junitxml=out.xml", "-W", "error")
    r.assert_outcomes(passed=3, failed=1)
    xml = JUnitXml.fromfile(str(pytester.path / "out.xml"))
    suite = next(iter(xml))
    cases = {c.name: c for c in suite}
    assert isinstance(cases["max[cpu0]"].result[0], Failure)
    assert "max 894 us > 500 us" in cases["max[cpu0]"].result[0].message
    if family == "xunit1":
        props = {p.name: p.value for p in cases["max[cpu0]"].child(Properties)}
        assert props["rtgate.value"] == "894 us" and props["rtgate.limit"] == "500.0"
        assert props["rtgate.cycles"] == "5000" and props["rtgate.status"] == "FAIL"
    else:
        assert cases["max[cpu0]"].child(Properties) is None  # xunit2: no testcase properties
        props = {p.name: p.value for p in suite.properties()}
        key = "board.yaml::app-thread-a::max[cpu0]"
        assert props[f"{key}::value"] == "894 us" and props[f"{key}::cycles"] == "5000"
        assert props["board.yaml::app-thread-a::max[cpu1]::status"] == "PASS"


def test_bad_threshold_file_is_a_collection_error_naming_file_and_line(pytester: pytest.Pytester) -> None:
    (pytester.path / "bad.yaml").write_text(SPEC.format(max="fast", rate="1%"))
    r = pytester.runpytest("bad.yaml")
    assert r.ret == pytest.ExitCode.INTERRUPTED
    r.stdout.fnmatch_lines(
        ["*ERROR collecting bad.yaml*", "*bad.yaml:8: measurements.app-thread-a.gates[[]0[]].limit_us:*"]
    )
    assert "Traceback" not in r.stdout.str()


def test_options_and_ini_precedence(pytester: pytest.Pytester, board: Path) -> None:
    spec(pytester, max_us=500)
    shutil.copy(RT_TESTS / "ct-new-t2-H200.json", pytester.path / "other.json")  # maxima 1547 and 145
    pytester.makeini("[pytest]\nrtgate_thresholds = board.yaml\nrtgate_results = results.json\n")
    r = pytester.runpytest("-p", "no:cacheprovider")
    r.assert_outcomes(passed=3, failed=1)
    assert "894 us > 500 us" in r.stdout.str()
    # the command line wins; other.json was measured at -i 500 -l 3000: accepted, and said so
    r = pytester.runpytest(
        "--rtgate-results", "other.json", "--rtgate-accept-setup", "interval,duration", "--rtgate-json", "v.json"
    )
    r.assert_outcomes(passed=3, failed=1)
    assert "1547 us > 500 us" in r.stdout.str()
    accepted = {
        v["properties"].get("setup_accepted") for v in json.loads((pytester.path / "v.json").read_text())["verdicts"]
    }
    assert accepted == {"measured -i 500; thresholds ask -i 200"}  # -l 3000 at 500 us is the longer run
    # Results from elsewhere: what the results file says of its machine, the rest unknown with why.
    machine = json.loads((pytester.path / "v.json").read_text())["environment"]["machine"]
    assert machine["clocksource"].startswith("unknown (")
    r = pytester.runpytest("--rtgate-results", "other.json")  # not accepted: every gate is an error
    r.assert_outcomes(failed=4)
    assert "measured -i 500" in r.stdout.str()


def test_ordinary_yaml_files_are_not_collected(pytester: pytest.Pytester) -> None:
    (pytester.path / "config.yaml").write_text("a: 1\n")
    pytester.makepyfile(test_x="def test_ok():\n    pass\n")
    r = pytester.runpytest()
    r.assert_outcomes(passed=1)


def test_help_lists_the_rtgate_group(pytester: pytest.Pytester) -> None:
    r = pytester.runpytest("--help")
    r.stdout.fnmatch_lines(
        ["rtgate latency gates:", "*--rtgate-thresholds=FILE*", "*--rtgate-duration=TIME*", "*rtgate_duration*"]
    )


def _subcommand_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += [sub, *_subcommand_parsers(sub)]
    return found


def test_the_shared_options_are_one_declaration_in_the_command_and_the_plugin(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each option of rtgate.options.SHARED is a subcommand's --NAME and the plugin's --rtgate-NAME with its
    ini setting rtgate_NAME: the same help, value name, type and default on both sides."""
    from rtgate.cli import build_parser
    from rtgate.options import SHARED

    commands = _subcommand_parsers(build_parser())
    monkeypatch.setenv("COLUMNS", "1000")  # help on one line each, so it reads back whole
    shown = " ".join(pytester.runpytest("--help").stdout.str().split())
    for o in SHARED:
        # the command: every subcommand that takes it takes the declared one (doctor --strict or plot's
        # --output-dir mean something else, and say so in a help of their own)
        taken = [a for p in commands for a in p._actions if f"--{o.name}" in a.option_strings and a.help == o.help]
        assert taken, f"no subcommand takes the shared --{o.name}"
        for a in taken:
            assert (a.metavar, a.default, a.nargs == 0) == (o.metavar, o.default, o.flag), a.option_strings
            assert a.type is o.type
        # the plugin: the option (unset: the ini setting decides), its value read by the same type, the ini default
        value_text = "7"  # a value every shared option takes: 7 seconds, a file or folder named 7, ...
        config = pytester.parseconfig()
        given = pytester.parseconfig(o.plugin_option) if o.flag else pytester.parseconfig(o.plugin_option, value_text)
        assert config.getoption(o.ini) is None
        assert config.getini(o.ini) == ("" if o.default is None else o.default)
        assert given.getoption(o.ini) == (True if o.flag else (o.type or str)(value_text))
        # the plugin's help: the command's, with its ini setting
        option = o.plugin_option if o.flag else f"{o.plugin_option}={o.metavar}"
        assert f"{option} {o.help} (ini: {o.ini})" in shown
        assert f"{o.ini} ({'bool' if o.flag else 'string'}): {o.help}" in shown
        written = f"``{o.plugin_option}{'' if o.flag else ' ' + str(o.metavar)}``"
        assert written in (ROOT / "doc" / "pytest.rst").read_text(), f"doc/pytest.rst's table lacks {written}"


@pytest.mark.skipif(not IS_ROOT, reason="needs root for SCHED_FIFO")
def test_fixture_in_users_own_tests(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_board="""
        def test_latency(rt_latency):
            result = rt_latency(duration="1s", interval_us=1000, priority=80, threads=2)
            # Every 1 ms period of the second, sampled or missed (a shared VM can miss many).
            assert len(result.threads) == 2 and all(t.cycles + t.missed >= 1000 for t in result.threads)
            assert result.gate(max_us=1_000_000).passed
            assert result.gate(above_us=1_000_000, rate="99%").passed

        def test_impossible(rt_latency):
            result = rt_latency(duration="1s", threads=2)
            assert result.gate(max_us=0).passed
    """
    )
    r = pytester.runpytest("--junitxml=out.xml", "-o", "junit_family=xunit1")
    r.assert_outcomes(passed=1, failed=1)
    r.stdout.fnmatch_lines(["*where False = <GateResult FAIL: max * us > 0 us on thread 0 (prio 80)*>.passed*"])
    cases = {c.name: c for s in JUnitXml.fromfile(str(pytester.path / "out.xml")) for c in s}
    pairs = [(p.name, p.value) for p in cases["test_impossible"].child(Properties)]
    props = dict(pairs)
    assert len(props) == len(pairs)  # two threads: every property name once, no value overwritten
    for thread in ("t0", "t1"):
        assert props[f"rtgate.max-0us[{thread}]::status"] == "FAIL"
        assert int(props[f"rtgate.max-0us[{thread}]::cycles"]) > 0
    assert props["rtgate.max-0us[t0]::value"] != "" and props["rtgate.max-0us[t1]::value"] != ""


@pytest.mark.skipif(not IS_ROOT, reason="needs root for SCHED_FIFO")
def test_real_short_run_of_the_default_platform(pytester: pytest.Pytester) -> None:
    """`pytest thresholds/default.yaml --rtgate-duration 5s` passes or fails honestly here."""
    shutil.copy(ROOT / "thresholds" / "default.yaml", pytester.path / "default.yaml")
    r = pytester.runpytest(
        "default.yaml", "--rtgate-duration", "5s", "--rtgate-json", "v.json", "--rtgate-junit", "rtgate.xml"
    )
    import json

    doc = json.loads((pytester.path / "v.json").read_text())
    outcomes = r.parseoutcomes()
    statuses = [v["status"] for v in doc["verdicts"]]
    assert outcomes.get("passed", 0) == statuses.count("PASS")
    assert outcomes.get("failed", 0) == len(statuses) - statuses.count("PASS")
    assert len(statuses) == 4 * len(__import__("os").sched_getaffinity(0))
    assert r.ret == (0 if all(s == "PASS" for s in statuses) else 1)
    assert {c.name for s in JUnitXml.fromfile(str(pytester.path / "rtgate.xml")) for c in s} == {
        f"{v['gate']}[{v['thread']}]" for v in doc["verdicts"]
    }
    # Where it was measured, as `rtgate run` reports it: the machine and the preflight it recorded.
    kernel = Path("/proc/sys/kernel/osrelease").read_text().strip()
    env = doc["environment"]
    assert env["machine"]["kernel"] == kernel and env["machine"]["architecture"] == os.uname().machine
    recorded = json.loads((pytester.path / "rtgate-results" / "default" / "smp.environment.json").read_text())
    assert env["measurements"]["smp"]["preflight"] == recorded["preflight"]
    assert junit_figures(pytester.path / "rtgate.xml")["environment"]["kernel"] == kernel


def test_a_worst_scope_gate_is_one_test(pytester: pytest.Pytester, board: Path) -> None:
    """scope: worst is one verdict over every thread: one collected test, judged, never a thread mismatch."""
    (pytester.path / "w.yaml").write_text(
        "platform: board\nmeasurements:\n  app-thread-a:\n"
        "    sampler: {interval_us: 200, loops: 5000, priority: 80, threads: [{name: all, count: 2}]}\n"
        "    gates: [{name: worst-max, kind: max, limit_us: 500, scope: worst}]\n"
    )
    r = pytester.runpytest("w.yaml", "--rtgate-results", "results.json", "-v")
    r.assert_outcomes(failed=1)
    out = r.stdout.str()
    assert "w.yaml::app-thread-a::worst-max[worst] FAILED" in out
    assert "FAIL: max 894 us > 500 us" in out and "do not match" not in out


def test_two_threshold_files_sharing_a_measurement_name_stay_apart(pytester: pytest.Pytester, board: Path) -> None:
    """Two boards with a measurement of the same name: every JUnit class and test name is unique,
    so GitLab (which keys cases by suite, class and name) shows every test."""
    spec(pytester, name="board.yaml")
    (pytester.path / "other.yaml").write_text(
        SPEC.format(max=100, rate="1%").replace("platform: board", "platform: other")
    )
    r = pytester.runpytest(
        "board.yaml",
        "other.yaml",
        "--rtgate-results",
        "results.json",
        "--rtgate-junit",
        "rt.xml",
        "--rtgate-json",
        "v.json",
    )
    r.assert_outcomes(passed=6, failed=2)  # board: 894 us < 1000 passes; other: 894 and 155 us > 100 fail
    cases = [(c.classname, c.name) for s in JUnitXml.fromfile(str(pytester.path / "rt.xml")) for c in s]
    assert len(cases) == 8 and len(set(cases)) == 8, cases
    # Each suite's time is its measurement's duration (5000 periods of 200 us and more), as `check` writes it,
    # whatever its name became.
    seconds = measured_seconds(load_results(pytester.path / "results.json"), 200)
    assert seconds is not None and seconds > 0.9
    suites = jenkins_view(pytester.path / "rt.xml")
    assert len(suites) == 2 and all(s.duration == pytest.approx(seconds, abs=0.001) for s in suites)
    assert all(c.duration > 0 for s in suites for c in s.cases)
    doc = json.loads((pytester.path / "v.json").read_text())
    ids = {(v["measurement"], v["gate"], v["thread"]): v["status"] for v in doc["verdicts"]}
    assert len(ids) == 8
    assert ids[("board.app-thread-a", "max", "cpu0")] == "PASS"
    assert ids[("other.app-thread-a", "max", "cpu0")] == "FAIL"


@pytest.mark.slow
@pytest.mark.skipif(not IS_ROOT, reason="needs root for SCHED_FIFO")
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the sampler's CPU 1 and a load on CPU 0")
def test_measuring_gates_a_window_around_the_tests_own_code(pytester: pytest.Pytester) -> None:
    """Known answer: the test's own code, inside the window, runs a SCHED_FIFO thread above the sampler on
    its CPU, busy 3 ms every 100 ms. A 1 ms sampler period then wakes at most one period into a busy
    window and waits out the rest: its max is at least 2 ms, and a 1.5 ms max gate fails. Without the
    injection, under a CPU load, a generous gate passes; code that outruns the window is ERROR."""
    pytester.makepyfile(
        test_window="""
        import time
        from injector import inject

        GATE = [{"kind": "max", "limit_us": 1500}]

        def test_injected(rt_latency, tmp_path):
            with rt_latency.measuring(duration="3s", cpus=[1], priority=80, gates=GATE) as window:
                # the window holds the machine's measurement lock already: no second hold
                with inject(1, 90, 3000, 100, 1.5, tmp_path / "injector.json", exclusive=False) as log:
                    pass
            # never reached: the gate fails at the end of the block

        def test_quiet(rt_latency):
            gates = [{"kind": "max", "limit_us": 1_000_000}]
            # a level a dead or stalled load misses, and a shared machine's load still reaches
            load = {"kind": "cpu", "min_cpu_percent": 5}
            with rt_latency.measuring(duration="4s", cpus=[1], load=load, gates=gates) as window:
                assert window.measuring
                loops = 0
                # 2 s to spare, not window.measuring's 0.1 s: a busy runner can stall this process
                # for most of a second, and code past the end is rightly ERROR
                while window.remaining_s > 2.0:
                    sum(range(10_000))
                    loops += 1
                    time.sleep(0.01)
            assert not window.measuring and window.remaining_s == 0  # the window is over
            assert loops > 10 and 1.0 < window.code_seconds < 4.0
            assert window.result.gate(max_us=1_000_000).passed  # the helpers judge the same window
            assert window.result.run.environment["load"]["kind"] == "cpu"

        def test_outrun(rt_latency):
            with rt_latency.measuring(duration="2s", gates=[{"kind": "max", "limit_us": 1_000_000}]):
                time.sleep(3)
    """
    )
    r = pytester.runpytest("-p", "no:cacheprovider")
    r.assert_outcomes(passed=1, failed=2)
    text = r.stdout.str()
    m = re.search(r"max\[cpu1\] FAIL: max (\d+) us > 1500 us on thread 0 \(cpu 1, prio 80\)", text)
    assert m and int(m.group(1)) >= 2000, text
    # invalid, with what was measured kept per thread (as the engine reports an invalid run on a board)
    assert re.search(
        r"max\[(?!all\])[\w-]+\] ERROR: invalid: the test's code ran [\d.]+ s past.*\(measured \d+ us\)", text
    ), text
    assert "Traceback" not in text and "TypeError" not in text
