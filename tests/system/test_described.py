# SPDX-License-Identifier: GPL-2.0-or-later
"""The machine, the load and the preflight warnings in every report: the text summary's header, JUnit properties,
the verdicts JSON and the HTML table, read from what rtgate run recorded, live or from a saved results folder.
Each item is checked against its source of truth on this machine (/proc, /sys, uname), or on a recorded board."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, IS_ROOT, ROOT, RT_TESTS, junit_figures
from rtgate.measure.environment import capture
from rtgate.parsers import load_results
from rtgate.reports.described import NOT_RECORDED, describe_run, header_lines

SCHEMA = Path(__file__).resolve().parents[1] / "schemas" / "junit-10.xsd"
DEFAULT = str(ROOT / "thresholds" / "default.yaml")
PREFLIGHT = [
    {"status": "warn", "check": "smt", "what": "SMT is on: a sibling thread shares the core", "fix": "nosmt"},
    {"status": "fail", "check": "rt-throttling", "what": "RT throttling is on", "fix": "sysctl -w x=-1"},
]
LOAD = {
    "kind": "cpu",
    "cpus": [1],
    "cpu_percent": 93.5,
    "level": {"unit": "% CPU", "min": 25.0, "reached": 93.5},
    "problem": None,
}


def rtgate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rtgate", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def _sys(rel: str) -> str:
    return Path(rel).read_text().strip()


def _truth() -> dict[str, str]:
    """This machine's items read straight from their sources, as the reports must show them."""
    cpuinfo = Path("/proc/cpuinfo").read_text()
    clock = "/sys/devices/system/clocksource/clocksource0/"
    return {
        "kernel": _sys("/proc/sys/kernel/osrelease"),
        "architecture": os.uname().machine,
        "cpu_count": str(len(re.findall(r"^processor\s*:", cpuinfo, re.M))),
        "clocksource": f"{_sys(clock + 'current_clocksource')} (available: "
        + ", ".join(_sys(clock + "available_clocksource").split())
        + ")",
        "isolated_cpus": _sys("/sys/devices/system/cpu/isolated") or "none",
    }


def _saved_folder(tmp_path: Path, environment: dict[str, Any]) -> Path:
    """A results folder as rtgate run leaves it: the results and <measurement>.environment.json beside them."""
    folder = tmp_path / "rtgate-results"
    folder.mkdir()
    shutil.copy(RT_TESTS / "ct-new-S-h300.json", folder / "smp.json")
    (folder / "smp.environment.json").write_text(
        json.dumps({"results": "smp.json", "state": "done", **environment}, default=str)
    )
    return folder / "smp.json"


def test_a_saved_folder_is_described_in_every_report(tmp_path: Path, tool: Any) -> None:
    xmllint = tool("xmllint", "libxml2-utils")
    truth = _truth()
    results = _saved_folder(tmp_path, {"system": capture(), "load": LOAD, "preflight": PREFLIGHT})
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


def test_results_without_a_record_say_so(tmp_path: Path) -> None:
    """A plain cyclictest file: what its sysinfo says, and every other item unknown with why."""
    run = load_results(RT_TESTS / "ct-new-S-h300.json")
    d = describe_run(run)
    assert d.machine["kernel"] == run.environment["sysinfo"]["release"] + " (rt-tests sysinfo)"
    assert d.machine["clocksource"] == f"unknown ({NOT_RECORDED})"
    assert all(v == f"unknown ({NOT_RECORDED})" for v in d.measurement.values())
    assert d.preflight is None
    lines = header_lines({"smp": d})
    assert len(lines) == 2 and lines[1] == f"rtgate: load: unknown ({NOT_RECORDED})"


def test_a_recorded_board_and_what_it_could_not_read() -> None:
    run = load_results(RT_TESTS / "ct-new-S-h300.json")
    run.environment = {"system": capture(FIXTURES / "systems" / "rt-arm64"), "preflight": []}
    d = describe_run(run)
    assert d.machine["board"] == "NXP i.MX8MPlus EVK board; compatible fsl,imx8mp-evk, fsl,imx8mp"
    assert d.machine["preemption"].startswith("PREEMPT_RT (")
    assert d.machine["clocksource"].startswith("arch_sys_counter")
    assert d.machine["isolated_cpus"] == "2,3" and d.machine["nohz_full_cpus"] == "2,3"
    # a copy of another system's tree has no uname and no live process list: unknown, with why
    assert d.machine["architecture"].startswith("unknown (recorded from a copy")
    assert d.machine["smt"] == "off (from thread siblings)"  # no smt/control there: its siblings say it
    assert d.machine["pm_qos"].startswith("unknown (")
    assert (
        header_lines({"m": d})[1] == "rtgate: load: m unknown (not recorded), unknown (not recorded); preflight clean"
    )


def test_history_keeps_what_the_machine_and_load_were(tmp_path: Path) -> None:
    from rtgate.history.store import HistoryDB

    system = capture()
    results = _saved_folder(tmp_path, {"system": system, "load": LOAD, "preflight": PREFLIGHT})
    r = rtgate("history", "add", "--db", "h.db", str(results), "--platform", "p", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    with HistoryDB(tmp_path / "h.db") as db:
        (stored,) = db.runs("p", "default", system["kernel_release"])
        stored_env = json.loads(db.db.execute("SELECT environment FROM runs").fetchone()[0])
    fp = stored.fingerprint
    assert fp["kernel_release"] == _sys("/proc/sys/kernel/osrelease") and fp["preemption"] == system["preemption"]
    assert fp["clocksource"] == _sys("/sys/devices/system/clocksource/clocksource0/current_clocksource")
    assert fp["load_kind"] == "cpu" and fp["load_level"] == "93.5 % CPU"
    assert ("board" in fp) == bool(system["machine"]["board"])
    assert (
        stored_env["preflight"] == PREFLIGHT and stored_env["system"]["machine"]["board"] == system["machine"]["board"]
    )


def test_the_board_identity_is_in_the_fingerprint() -> None:
    from rtgate.history.drift import fingerprint, machine_differences

    board = fingerprint({"system": capture(FIXTURES / "systems" / "rt-arm64")})
    other = fingerprint({"system": capture(FIXTURES / "systems" / "nonrt-x86-vm")})
    assert board["board"] == "fsl,imx8mp-evk fsl,imx8mp"
    # a board that differs makes two groups of runs different machines: not comparable
    assert any(line.startswith("board: ") for line in machine_differences([board], [{**board, "board": "x"}]))
    assert other.get("board") != board["board"]


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
    truth = _truth()
    assert {k: docs[0]["machine"][k] for k in truth} == truth


@pytest.mark.skipif(os.uname().machine == "aarch64", reason="the shipped i.MX8MP file is for an aarch64 board")
def test_a_refused_board_file_still_shows_this_machine(tmp_path: Path) -> None:
    """Nothing measured: the reports describe the machine the board file was refused on."""
    board = str(ROOT / "thresholds" / "boards" / "imx8mp-evk.yaml")
    r = rtgate("run", board, "--duration", "1s", "--json", "v.json", "--junit", "j.xml", cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "not measured: " in r.stdout and "this file is for aarch64" in r.stdout
    truth = _truth()
    assert f"rtgate: machine: kernel {truth['kernel']}, " in r.stdout
    assert "rtgate: load: idle none: not measured; " in r.stdout
    env = json.loads((tmp_path / "v.json").read_text())["environment"]
    assert {k: env["machine"][k] for k in truth} == truth
    assert env["measurements"]["idle"]["load"] == "none: not measured"
    # refused, yet its preflight is reported: on a kernel that is not PREEMPT_RT, that check fails
    checks = {c["check"]: c["status"] for c in env["measurements"]["idle"]["preflight"]}
    if capture()["preemption"] != "PREEMPT_RT":
        assert checks["preempt_rt"] == "fail" and "preflight::preempt_rt" in (tmp_path / "j.xml").read_text()
    assert junit_figures(tmp_path / "j.xml")["environment"]["kernel"] == truth["kernel"]


def test_timerlat_results_find_their_environment_file(tmp_path: Path) -> None:
    """The timerlat backend leaves <measurement>.rtla.txt beside <measurement>.environment.json."""
    shutil.copy(FIXTURES / "rtla" / "basic.txt", tmp_path / "m.rtla.txt")
    system = capture(FIXTURES / "systems" / "rt-arm64")
    (tmp_path / "m.environment.json").write_text(json.dumps({"results": "m.rtla.txt", "system": system}))
    d = describe_run(load_results(tmp_path / "m.rtla.txt"))
    assert d.recorded and d.machine["clocksource"].startswith("arch_sys_counter")
    (tmp_path / "m.environment.json").write_text(json.dumps({"results": "other.rtla.txt", "system": system}))
    assert not describe_run(load_results(tmp_path / "m.rtla.txt")).recorded  # a file about other results


def test_measurements_on_two_machines_get_a_machine_line_each() -> None:
    runs = []
    for name, tree in (("a", "rt-arm64"), ("b", "nonrt-x86-vm")):
        run = load_results(RT_TESTS / "ct-new-S-h300.json")
        run.environment = {"system": capture(FIXTURES / "systems" / tree), "load": {"kind": "none"}, "preflight": []}
        runs.append((name, run))
    from rtgate.reports.described import describe_runs, environment_document

    described = describe_runs(runs)
    lines = header_lines(described)
    assert [ln.split(":", 2)[1] for ln in lines[:2]] == [" machine (a)", " machine (b)"]
    assert lines[2] == "rtgate: load: a none; b none; preflight clean"
    doc = environment_document(described)
    assert "machine" not in doc["measurements"]["a"] and doc["measurements"]["b"]["machine"] != doc["machine"]


def test_kcidb_carries_the_recorded_machine(tmp_path: Path) -> None:
    kcidb_io = pytest.importorskip("kcidb_io")
    results = _saved_folder(tmp_path, {"system": capture(), "load": LOAD, "preflight": PREFLIGHT})
    r = rtgate("export", "kcidb", DEFAULT, str(results), "--build-id", "rtgate:b1", "-o", "k.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "k.json").read_text())
    kcidb_io.schema.V5_3.validate(doc)
    misc = doc["tests"][0]["environment"]["misc"]
    truth = _truth()
    assert misc["kernel_release"] == truth["kernel"]
    assert {k: misc["machine"][k] for k in truth} == truth and misc["conditions"]["load"] == "cpu on CPUs 1"
