# SPDX-License-Identifier: GPL-2.0-or-later
"""The verdict matrix through processes: the pytest plugin (terminal summary, --rtgate-json,
--rtgate-junit, pytest's own --junitxml), alone and under pytest-xdist -n 2, on every fixture of
tests/verdict_matrix.py; and a live run, whose own reports, `check`, `report`, the exports and the
sampler's own gate lines (what LAVA and Fuego jobs report) must agree."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from junitparser import JUnitXml

from conftest import IS_ROOT
from verdict_matrix import (
    CASES,
    Case,
    Shown,
    disagreements,
    from_html,
    from_json,
    from_junit,
    from_kcidb,
    from_squad,
    from_text,
    one,
)


def rtgate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rtgate", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def terminal(out: str) -> Shown:
    """The plugin's summary section: STATUS <file>::<measurement>::<gate>[<thread>]  value."""
    found = re.findall(r"^(PASS|FAIL|INCONCLUSIVE|ERROR) +\S+?::([^:\s]+)::(.+?)\[([^\]]+)\] ", out, re.MULTILINE)
    return {(m, g, t): one(s) for s, m, g, t in found}


def pytest_junit_statuses(path: Path) -> Shown:
    """pytest's own --junitxml (xunit2): the figures as testsuite properties <nodeid>::status."""
    out: Shown = {}
    for suite in JUnitXml.fromfile(str(path)):
        for p in suite.properties():
            m = re.fullmatch(r"[^:]+::([^:]+)::(.+)\[([^\]]+)\]::status", p.name)
            if m:
                out[(m.group(1), m.group(2), m.group(3))] = one(p.value)
    return out


@pytest.mark.parametrize("xdist", [False, True], ids=["plain", "xdist"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_plugin_shows_checks_verdict(pytester: pytest.Pytester, case: Case, xdist: bool) -> None:
    if xdist:
        pytest.importorskip("xdist")
    spec, results = case.make(pytester.path)
    r = rtgate("check", spec.name, results.name, "--json", "check.json", *case.accept_args(), cwd=pytester.path)
    assert r.returncode in (0, 1, 3), r.stderr
    truth = {
        (v["measurement"], v["gate"], v["thread"]): v["status"]
        for v in json.loads((pytester.path / "check.json").read_text())["verdicts"]
    }
    args = [spec.name, "--rtgate-results", results.name, "--rtgate-json", "p.json", "--rtgate-junit", "p.xml"]
    args += ["--junitxml=out.xml", *case.accept_args("--rtgate-accept-setup")]
    if xdist:
        args += ["-n", "2", "-p", "xdist"]
    p = pytester.runpytest_subprocess(*args, timeout=300)
    assert p.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), p.stdout.str() + p.stderr.str()
    shown = {
        "pytest terminal": terminal(p.stdout.str()),
        "--rtgate-json": from_json(pytester.path / "p.json"),
        "--rtgate-junit": from_junit(pytester.path / "p.xml"),
        "--junitxml": pytest_junit_statuses(pytester.path / "out.xml"),
    }
    outcomes = p.parseoutcomes()
    assert outcomes.get("passed", 0) == sum(s == "PASS" for s in truth.values()), outcomes
    wrong = {path: d for path, got in shown.items() if (d := disagreements(truth, got))}
    assert not wrong, json.dumps(wrong, indent=1)


LIVE = """\
platform: live
measurements:
  m:
    sampler: {interval_us: 1000, duration: 3s, priority: 80, threads: [{name: all, count: 2}]}
    gates:
      - {name: max-big, kind: max, limit_us: 10000000}
      - {name: max-0, kind: max, limit_us: 0}
      - {name: missed-big, kind: missed, max_count: 1000000}
      - {name: over-1s, kind: miss_rate, above_us: 1000000, rate: "0.0001%"}
"""


@pytest.mark.skipif(not IS_ROOT, reason="needs root for SCHED_FIFO")
def test_a_live_run_shows_one_verdict_everywhere(tmp_path: Path) -> None:
    """max-big PASS, max-0 FAIL (no latency is 0 us), over-1s INCONCLUSIVE (3000 samples cannot show
    a rate of 1e-6): run's text, JSON and JUnit, then check, report and the exports of its folder, and
    the sampler's own RTGATE-GATE lines of the same data (what lava-defs and Fuego's parser read)."""
    (tmp_path / "t.yaml").write_text(LIVE)
    r = rtgate("run", "t.yaml", "--json", "run.json", "--junit", "run.xml", "--output-dir", "res", cwd=tmp_path)
    assert r.returncode in (1, 3), r.stdout + r.stderr
    truth = {k: next(iter(v)) for k, v in from_json(tmp_path / "run.json").items()}
    assert {truth[("m", "max-big", t)] for t in ("t0", "t1")} == {"PASS"}
    assert {truth[("m", "max-0", t)] for t in ("t0", "t1")} == {"FAIL"}
    # over-1s counts missed periods too: INCONCLUSIVE on a clean run, FAIL where the host stalled a thread
    # for a whole period (seen on a loaded machine); never PASS, and the same in every reader below.
    doc = json.loads((tmp_path / "run.json").read_text())
    for t in ("t0", "t1"):
        v = next(v for v in doc["verdicts"] if (v["gate"], v["thread"]) == ("over-1s", t))
        assert v["status"] == ("FAIL" if "missed" in v["reason"].split("(")[0] else "INCONCLUSIVE"), v
    shown = {"run text": from_text(r.stdout), "run JUnit": from_junit(tmp_path / "run.xml")}
    c = rtgate("check", "t.yaml", "res/m.json", "--json", "c.json", "--junit", "c.xml", cwd=tmp_path)
    shown["check text"] = from_text(c.stdout)
    shown["check JSON"] = from_json(tmp_path / "c.json")
    shown["check JUnit"] = from_junit(tmp_path / "c.xml")
    assert rtgate("report", "t.yaml", "res/m.json", "-o", "r.html", cwd=tmp_path).returncode == 0
    shown["HTML report"] = from_html(tmp_path / "r.html")
    k = rtgate("export", "kcidb", "t.yaml", "res/m.json", "--build-id", "rtgate:1", cwd=tmp_path)
    shown["KCIDB"] = from_kcidb(json.loads(k.stdout), gate_names_of(LIVE))
    q = rtgate("export", "squad", "t.yaml", "res/m.json", cwd=tmp_path)
    shown["SQUAD"] = from_squad(json.loads(q.stdout)["tests"], gate_names_of(LIVE))
    # The board's evaluator: the sampler's own --gate verdicts, on a run of the same file's arguments.
    args = rtgate("lava", "args", "t.yaml", "--duration", "3s", cwd=tmp_path)
    assert args.returncode == 0, args.stderr
    sampler = subprocess.run(
        [sys.executable, "-c", "from rtgate.measure.runner import find_sampler; print(find_sampler())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    board = subprocess.run(
        [sampler, *args.stdout.split(), "-q", "--json=board.json"], capture_output=True, text=True, cwd=tmp_path
    )
    assert board.returncode == 0, board.stderr
    lines = re.findall(r"^RTGATE-GATE (\S+) (\S+) (\S+) ", board.stdout + board.stderr, re.MULTILINE)
    native = {("m", g, t): one(s) for g, t, s in lines}
    c2 = rtgate("check", "t.yaml", "board.json", "--json", "c2.json", cwd=tmp_path)
    board_truth = {k: next(iter(v)) for k, v in from_json(tmp_path / "c2.json").items()}
    wrong = {path: d for path, got in shown.items() if (d := disagreements(truth, got))}
    if d := disagreements(board_truth, native):
        wrong["sampler's RTGATE-GATE lines vs check of its JSON"] = d
    assert not wrong, json.dumps(wrong, indent=1) + c2.stdout


def gate_names_of(spec: str) -> list[str]:
    return re.findall(r"name: ([\w.-]+), kind", spec)
