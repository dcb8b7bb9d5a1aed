# SPDX-License-Identifier: GPL-2.0-or-later
"""A first run that explains itself: the machine's load beside the verdict, shipped threshold names
in every command, critical gates, the HTML environment of `rtgate run` results, honest plots.
The tests of this topic that start no process: tests/unit/test_first_run_unit.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import RT_TESTS

IS_ROOT = os.geteuid() == 0


def rtgate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rtgate", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


# ------------------------------------------------------------------ machine load


@pytest.mark.skipif(not IS_ROOT, reason="needs root for SCHED_FIFO")
def test_run_prints_and_records_the_machine_load(tmp_path: Path) -> None:
    spec = tmp_path / "t.yaml"
    spec.write_text(
        "platform: p\nmeasurements:\n  m:\n    sampler: {interval_us: 1000, duration: 1s, priority: 80,"
        " threads: [{name: a, cpus: [0]}]}\n    gates:\n      - {name: max, kind: max, limit_us: 1}\n"
    )
    r = rtgate("run", str(spec), cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr  # 1 us: every machine fails it
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("rtgate: m: load average"))
    assert "CPU steal" in line and "(" + str(len(os.sched_getaffinity(0))) + " CPUs)" in line
    doc = json.loads((tmp_path / "rtgate-results/m.json").read_text())
    rec = doc["rtgate_run"]["machine_load"]
    env = json.loads((tmp_path / "rtgate-results/m.environment.json").read_text())
    assert env["machine_load"] == rec and len(rec["loadavg_before"]) == 3
    assert rec["steal_percent"] is not None and 0 <= rec["steal_percent"] <= 100
    # the note appears exactly when the record says the machine was busy
    assert ("rtgate: note: m: FAIL measured on a busy machine" in r.stdout) == bool(rec["busy"])
    # and the HTML report of these results shows it, with the system rtgate run recorded
    out = tmp_path / "r.html"
    r = rtgate("report", str(spec), str(tmp_path / "rtgate-results/m.json"), "-o", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    html = out.read_text()
    table = html[html.index('<table id="environment">') :]
    assert "m machine load" in table and "CPU steal" in table
    assert os.uname().release in table and "preemption" in table


# ------------------------------------------------------------------ shipped names everywhere


def test_shipped_names_work_in_every_command(tmp_path: Path) -> None:
    results = str(RT_TESTS / "ct-new-t2-H200.json")
    name = "two-thread-example.yaml"
    for args, ok in (
        (["validate", name], {0}),
        (["doctor", name], {0, 1}),
        (["check", name, results], {0, 1}),
        (["plot", name, results, "-o", str(tmp_path / "p.png")], {0}),
        (["report", name, results, "-o", str(tmp_path / "r.html")], {0}),
        (["export", "kcidb", name, results, "--build-id", "rtgate:b1", "-o", str(tmp_path / "k.json")], {0, 1}),
        (
            [
                "history",
                "add",
                "--db",
                str(tmp_path / "h.db"),
                "--thresholds",
                name,
                results,  # labelled with the kernel the results recorded
            ],
            {0},
        ),
    ):
        r = rtgate(*args, cwd=tmp_path)
        assert r.returncode in ok, (args, r.stdout, r.stderr)
        assert "no such threshold file" not in r.stderr
    r = rtgate("validate", "no-such-file.yaml", cwd=tmp_path)
    assert r.returncode == 2 and "no such threshold file" in r.stderr and "two-thread-example.yaml" in r.stderr
    # a file of that name in the current folder comes first
    (tmp_path / name).write_text(
        "platform: local\nmeasurements: {m: {sampler: {loops: 10},\n  gates: [{name: g, kind: max, limit_us: 1}]}}\n"
    )
    r = rtgate("validate", name, cwd=tmp_path)
    assert r.returncode == 0 and "local" in r.stdout, r.stdout + r.stderr


def test_pytest_plugin_takes_a_shipped_name(pytester: pytest.Pytester) -> None:
    results = RT_TESTS / "ct-new-t2-H200.json"
    r = pytester.runpytest_subprocess(
        "--rtgate-thresholds",
        "two-thread-example.yaml",
        "--rtgate-results",
        str(results),
        "--rtgate-accept-setup",
        "all",
        "--collect-only",
        "-q",
    )
    assert "a-max[A-t0]" in r.stdout.str(), r.stdout.str() + r.stderr.str()
