# SPDX-License-Identifier: GPL-2.0-or-later
"""The machine, the load and the preflight warnings in every report: the text summary's header, JUnit properties,
the verdicts JSON and the HTML table, read from what rtgate run recorded, live or from a saved results folder.
Each item is checked against its source of truth on this machine (/proc, /sys, uname), or on a recorded board.
The tests of this topic that start no process: tests/unit/test_described_unit.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import IS_ROOT, junit_figures
from described_runs import DEFAULT, LOAD, PREFLIGHT, machine_truth, saved_folder
from reference_environment import capture

SCHEMA = Path(__file__).resolve().parents[1] / "schemas" / "junit-10.xsd"


def rtgate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rtgate", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_a_saved_folder_is_described_in_every_report(tmp_path: Path, tool: Any) -> None:
    xmllint = tool("xmllint", "libxml2-utils")
    truth = machine_truth()
    results = saved_folder(tmp_path, {"system": capture(), "load": LOAD, "preflight": PREFLIGHT})
    r = rtgate("check", DEFAULT, str(results), "--json", "v.json", "--junit", "j.xml", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    head = r.stdout.splitlines()
    assert head[0] == "rtgate: platform default"
    machine_line, load_line = head[1], head[2]
    assert machine_line.startswith("rtgate: machine: kernel " + truth["kernel"] + ", preemption ")
    for key in ("architecture", "clocksource"):
        assert truth[key] in machine_line, key
    assert f"{truth['cpu_count']} CPUs " in machine_line and f"isolated CPUs {truth['isolated_cpus']}" in machine_line
    assert "board " in machine_line and "SMT " in machine_line
    assert load_line == (
        "rtgate: load: smp cpu on CPUs 1, reached 93.5 % CPU (level 25 % CPU); "
        "preflight 1 fail, 1 warn: smt, rt-throttling"
    )

    doc = json.loads((tmp_path / "v.json").read_text())
    assert doc["platform"] == "default" and doc["verdicts"]  # existing keys kept
    machine = doc["environment"]["machine"]
    for key, value in truth.items():
        assert machine[key] == value, key
    assert machine["cpu_model"] == capture()["cpu_model"]
    smp = doc["environment"]["measurements"]["smp"]
    assert smp["preflight"] == PREFLIGHT and smp["load_record"]["level"] == LOAD["level"]
    assert smp["load_level"] == "reached 93.5 % CPU (level 25 % CPU)"

    subprocess.run(
        [xmllint, "--noout", "--schema", str(SCHEMA), "j.xml"], cwd=tmp_path, check=True, capture_output=True
    )
    props = junit_figures(tmp_path / "j.xml")
    assert {k: props["environment"][k] for k in truth} == truth
    assert props["environment"]["load"] == "cpu on CPUs 1"
    assert props["preflight"]["smt"] == "warn: SMT is on: a sibling thread shares the core (fix: nosmt)"
    assert props["preflight"]["rt-throttling"].startswith("fail: RT throttling is on")

    r = rtgate("report", DEFAULT, str(results), "-o", "r.html", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "r.html").read_text()
    table = html[html.index('<table id="environment">') :]
    rows = dict(re.findall(r"<tr><th>([^<]*)</th><td>([^<]*)</td></tr>", table))
    assert rows["kernel"] == truth["kernel"] and rows["clocksource"] == truth["clocksource"]
    assert rows["smp load level"] == "reached 93.5 % CPU (level 25 % CPU)"
    assert rows["smp preflight smt"] == "WARN: SMT is on: a sibling thread shares the core (fix: nosmt)"
    assert "machine load" in "".join(rows)


@pytest.mark.skipif(not IS_ROOT, reason="needs root for SCHED_FIFO")
def test_run_and_check_of_its_folder_describe_the_same_machine(tmp_path: Path, tool: Any) -> None:
    """Live: the header rtgate run prints is the one check prints for the folder it left, with the load's own
    figure; both match this machine's sources."""
    tool("stress-ng", "stress-ng")
    spec = tmp_path / "t.yaml"
    spec.write_text(
        "platform: p\nmeasurements:\n  m:\n    sampler: {interval_us: 1000, duration: 2s, priority: 80,"
        " threads: [{name: a, cpus: [0]}]}\n"
        "    load: {kind: cpu, cpus: others, warmup_seconds: 0.5, min_cpu_percent: 0.1}\n"
        "    gates:\n      - {name: max, kind: max, limit_us: 1000000}\n"
    )
    live = rtgate("run", str(spec), "--json", "live.json", cwd=tmp_path)
    assert live.returncode == 0, live.stdout + live.stderr
    saved = rtgate("check", str(spec), "rtgate-results/m.json", "--json", "saved.json", cwd=tmp_path)
    assert saved.returncode == 0, saved.stdout + saved.stderr

    def header(out: str) -> list[str]:
        return [ln for ln in out.splitlines() if ln.startswith(("rtgate: machine:", "rtgate: load:"))]

    assert len(header(live.stdout)) == 2 and header(live.stdout) == header(saved.stdout)
    env = json.loads((tmp_path / "rtgate-results" / "m.environment.json").read_text())
    reached = env["load"]["level"]["reached"]
    assert f"rtgate: load: m cpu on CPUs 1, reached {reached:g} % CPU (level 0.1 % CPU)" in header(live.stdout)[1]
    docs = [json.loads((tmp_path / f).read_text())["environment"] for f in ("live.json", "saved.json")]
    assert docs[0] == docs[1]
    # the preflight rtgate run made, as it recorded it beside the results, in every report
    assert docs[0]["measurements"]["m"]["preflight"] == env["preflight"]
    checks = ", ".join(c["check"] for c in env["preflight"])
    assert header(live.stdout)[1].endswith(checks if checks else "preflight clean")
    truth = machine_truth()
    assert {k: docs[0]["machine"][k] for k in truth} == truth
