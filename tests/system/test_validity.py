# SPDX-License-Identifier: GPL-2.0-or-later
"""Validity travels with the results (issue 21 item 3): what made `rtgate run` judge a run invalid is
in the results file itself, so `check`, `report`, `history add`, `export` and the pytest plugin give
the verdict `run` gave; a validity record missing where rtgate run was measuring, or contradicting
the figures it sits in, is never a PASS; and time no period accounts for (an overrun) is seen from
the sampler's own figures."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import IS_ROOT

needs_root = pytest.mark.skipif(not IS_ROOT or (os.cpu_count() or 1) < 2, reason="needs root and two CPUs")

SPEC = """\
platform: validity
measurements:
  m:
    sampler: {{interval_us: 1000, duration: {seconds}s, priority: 80, threads: [{{name: a, cpus: [0]}}]}}
    load: {load}
    gates:
      - {{name: max, kind: max, limit_us: 1000000}}
"""


def rtgate(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rtgate", *args], cwd=cwd, capture_output=True, text=True, timeout=180)


def check(cwd: Path, results: Path) -> tuple[int, dict]:
    r = rtgate(cwd, "check", "t.yaml", str(results), "--json", "c.json")
    assert "Traceback" not in r.stderr
    return r.returncode, json.loads((cwd / "c.json").read_text())["verdicts"][0]


@pytest.fixture(scope="module")
def good_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real 2 s `rtgate run` without load: a valid run, PASS."""
    d = tmp_path_factory.mktemp("good")
    (d / "t.yaml").write_text(SPEC.format(seconds=2, load="{kind: none}"))
    r = rtgate(d, "run", "t.yaml", "--json", "v.json")
    assert r.returncode == 0, r.stdout + r.stderr
    return d


@needs_root
def test_a_valid_run_carries_a_record_that_check_accepts(good_run: Path) -> None:
    doc = json.loads((good_run / "rtgate-results" / "m.json").read_text())
    rec = doc["rtgate_run"]
    assert rec["valid"] is True and rec["invalid"] == [] and rec["stopped_by"] is None
    assert rec["results"]["cycles"] == [t["cycles"] for t in doc["rtgate"]["threads"]]
    assert rec["environment"] == "m.environment.json"
    env = json.loads((good_run / "rtgate-results" / "m.environment.json").read_text())
    assert env["state"] == "done" and env["results"] == "m.json" and env["rtgate_run"] == rec
    assert check(good_run, good_run / "rtgate-results" / "m.json")[1]["status"] == "PASS"
    # the sampler's own layout is kept byte for byte: only the record was added
    assert doc["rtgate"]["threads"][0]["histogram"]


def _variant(good_run: Path, tmp_path: Path, name: str, edit: object, with_environment: bool = True) -> Path:
    shutil.copy(good_run / "t.yaml", tmp_path / "t.yaml")
    doc = json.loads((good_run / "rtgate-results" / "m.json").read_text())
    edit(doc)  # type: ignore[operator]
    (tmp_path / f"{name}.json").write_text(json.dumps(doc))
    if with_environment:
        env = json.loads((good_run / "rtgate-results" / "m.environment.json").read_text())
        env["results"] = f"{name}.json"
        (tmp_path / f"{name}.environment.json").write_text(json.dumps(env))
    return tmp_path / f"{name}.json"


@needs_root
@pytest.mark.parametrize(
    "case, edit, reason",
    [
        ("missing", lambda d: d.pop("rtgate_run"), "validity record (rtgate_run) is missing: the run did not finish"),
        (
            "says-valid",
            lambda d: d["rtgate_run"].update(invalid=["the cpu load stopped"]),
            "the cpu load stopped; its validity record contradicts itself (valid: true with 1 reasons)",
        ),
        (
            "says-invalid",
            lambda d: d["rtgate_run"].update(valid=False),
            "contradicts itself (valid: false with 0 reasons)",
        ),
        (
            "other-figures",
            # the record's figures edited (the sampler's own missed_periods edited is refused before: its
            # counts must account for the -D it ran, parsers/json_results.py)
            lambda d: d["rtgate_run"]["results"].update(cycles=[1]),
            "written for other figures",
        ),
        ("unreadable", lambda d: d.update(rtgate_run="valid"), "not one this rtgate reads"),
        (
            "request-shorter",  # a --duration on purpose excuses a short run: it must be the -D the sampler ran
            lambda d: d["rtgate_run"].update(request={**d["rtgate_run"]["request"], "duration_s": 1}),
            "asks --duration 1 s but the sampler ran -D 2",
        ),
    ],
)
def test_a_record_missing_or_contradicting_its_data_is_an_error(
    good_run: Path, tmp_path: Path, case: str, edit: object, reason: str
) -> None:
    path = _variant(good_run, tmp_path, case, edit)
    rc, v = check(tmp_path, path)
    assert rc == 1 and v["status"] == "ERROR" and reason in v["reason"], v["reason"]


@needs_root
def test_results_without_a_record_or_rtgate_run_beside_them_are_judged_on_their_figures(
    good_run: Path, tmp_path: Path
) -> None:
    """A sampler run by hand (or on a board) has no record: its figures alone decide."""
    path = _variant(good_run, tmp_path, "bare", lambda d: d.pop("rtgate_run"), with_environment=False)
    assert check(tmp_path, path)[1]["status"] == "PASS"


@needs_root
def test_an_overrun_is_seen_from_the_samplers_own_figures(good_run: Path, tmp_path: Path) -> None:
    """A thread whose span is 3 s longer than its periods account for hid a stall: ERROR, with or without a
    record. The run taking 3 s longer than its threads (the main thread's delay) is not one."""

    def late(d: dict) -> None:
        d.pop("rtgate_run")
        d["rtgate"]["threads"][0]["span_s"] += 3.0
        d["rtgate"]["elapsed_s"] += 3.0

    path = _variant(good_run, tmp_path, "late", late, with_environment=False)
    rc, v = check(tmp_path, path)
    assert rc == 1 and v["status"] == "ERROR" and "overrun: thread 0 ran" in v["reason"]
    assert "s went unmeasured" in v["reason"]

    def main_late(d: dict) -> None:
        d.pop("rtgate_run")
        d["rtgate"]["elapsed_s"] += 3.0

    path = _variant(good_run, tmp_path, "main-late", main_late, with_environment=False)
    assert check(tmp_path, path)[1]["status"] == "PASS"

    # a file without spans (an older sampler's) is judged on the run's elapsed time
    def no_span(d: dict) -> None:
        main_late(d)
        del d["rtgate"]["threads"][0]["span_s"]

    path = _variant(good_run, tmp_path, "no-span", no_span, with_environment=False)
    rc, v = check(tmp_path, path)
    assert rc == 1 and v["status"] == "ERROR" and "overrun: the run took" in v["reason"]

    # just inside the allowance (0.5 s or 10 periods): still judged on its figures
    def slightly_late(d: dict) -> None:
        d.pop("rtgate_run")
        t = d["rtgate"]["threads"][0]
        t["span_s"] = (t["cycles"] + t["missed_periods"]) / 1000 + 0.4

    path = _variant(good_run, tmp_path, "slightly", slightly_late, with_environment=False)
    assert check(tmp_path, path)[1]["status"] == "PASS"

    # relative sleeps (-r) stretch every period: their span has nothing to be accounted against
    def relative(d: dict) -> None:
        late(d)
        d["rtgate"]["relative"] = True

    path = _variant(good_run, tmp_path, "relative", relative, with_environment=False)
    assert check(tmp_path, path)[1]["status"] == "PASS"


@needs_root
@pytest.mark.slow
def test_an_invalid_run_stays_invalid_on_every_path(tmp_path: Path) -> None:
    """The load dies mid-run: run says ERROR, and so do check, report, history add, export and pytest."""
    (tmp_path / "t.yaml").write_text(
        SPEC.format(seconds=4, load="{kind: custom, command: [sleep, '2'], cpus: others, warmup_seconds: 0.5}")
    )
    r = rtgate(tmp_path, "run", "t.yaml", "--json", "v.json")
    assert r.returncode == 1, r.stdout + r.stderr
    ran = json.loads((tmp_path / "v.json").read_text())["verdicts"][0]
    assert ran["status"] == "ERROR" and "the custom load stopped during the measurement" in ran["reason"]
    results = tmp_path / "rtgate-results" / "m.json"
    rec = json.loads(results.read_text())["rtgate_run"]
    assert rec["valid"] is False and rec["invalid"][0].startswith("the custom load stopped")
    # the results file alone, copied elsewhere (no environment file beside it), keeps the verdict
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(results, alone / "results.json")
    shutil.copy(tmp_path / "t.yaml", alone / "t.yaml")
    rc, v = check(alone, alone / "results.json")
    assert (rc, v["status"], v["reason"]) == (1, "ERROR", ran["reason"])
    r = rtgate(alone, "report", "t.yaml", "results.json", "-o", "r.html")
    html = (alone / "r.html").read_text()
    assert "PASS" not in html.split("<h1", 1)[1].split("</h1>", 1)[0] and "ERROR" in html
    r = rtgate(alone, "history", "add", "--db", "h.db", "--thresholds", "t.yaml", "results.json")
    assert r.returncode == 0, r.stderr
    with sqlite3.connect(alone / "h.db") as db:
        assert db.execute("SELECT status FROM verdicts").fetchall() == [("ERROR",)]
    r = rtgate(alone, "export", "kcidb", "t.yaml", "results.json", "--build-id", "test:1", "-o", "k.json")
    assert r.returncode == 0, r.stderr
    tests = json.loads((alone / "k.json").read_text())["tests"]
    assert {t["status"] for t in tests if t["status"] != "DONE"} == {"ERROR"}  # DONE: the figures alone
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "t.yaml", "--rtgate-results", "results.json"],
        cwd=alone,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert r.returncode == 1 and "1 failed" in r.stdout and "the custom load stopped" in r.stdout, r.stdout
