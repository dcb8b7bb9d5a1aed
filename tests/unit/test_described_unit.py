# SPDX-License-Identifier: GPL-2.0-or-later
"""The machine, the load and the preflight warnings of recorded boards in the reports' header, read in-process."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, RT_TESTS, junit_figures
from described_runs import DEFAULT, LOAD, PREFLIGHT, machine_truth, read_sys, saved_folder
from in_process import rtgate
from reference_environment import capture
from rtgate.parsers import load_results
from rtgate.reports.described import NOT_RECORDED, describe_run, header_lines


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


def test_the_board_identity_is_in_the_fingerprint() -> None:
    from rtgate.history.drift import fingerprint, machine_differences

    board = fingerprint({"system": capture(FIXTURES / "systems" / "rt-arm64")})
    other = fingerprint({"system": capture(FIXTURES / "systems" / "nonrt-x86-vm")})
    assert board["board"] == "fsl,imx8mp-evk fsl,imx8mp"
    # a board that differs makes two groups of runs different machines: not comparable
    assert any(line.startswith("board: ") for line in machine_differences([board], [{**board, "board": "x"}]))
    assert other.get("board") != board["board"]


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


def test_history_keeps_what_the_machine_and_load_were(tmp_path: Path) -> None:
    from rtgate.history.store import HistoryDB

    system = capture()
    results = saved_folder(tmp_path, {"system": system, "load": LOAD, "preflight": PREFLIGHT})
    r = rtgate("history", "add", "--db", "h.db", str(results), "--platform", "p", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    with HistoryDB(tmp_path / "h.db") as db:
        (stored,) = db.runs("p", "smp", system["kernel_release"])  # the measurement rtgate-results/smp.json is
        stored_env = json.loads(db.db.execute("SELECT environment FROM runs").fetchone()[0])
    fp = stored.fingerprint
    assert fp["kernel_release"] == read_sys("/proc/sys/kernel/osrelease") and fp["preemption"] == system["preemption"]
    assert fp["clocksource"] == read_sys("/sys/devices/system/clocksource/clocksource0/current_clocksource")
    assert fp["load_kind"] == "cpu" and fp["load_level"] == "93.5 % CPU"
    assert ("board" in fp) == bool(system["machine"]["board"])
    assert (
        stored_env["preflight"] == PREFLIGHT and stored_env["system"]["machine"]["board"] == system["machine"]["board"]
    )


@pytest.mark.skipif(os.uname().machine == "aarch64", reason="the shipped i.MX8MP file is for an aarch64 board")
def test_a_refused_board_file_still_shows_this_machine(tmp_path: Path) -> None:
    """Nothing measured: the reports describe the machine the board file was refused on."""
    board = str(ROOT / "thresholds" / "boards" / "imx8mp-evk.yaml")
    r = rtgate("run", board, "--duration", "1s", "--json", "v.json", "--junit", "j.xml", cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "not measured: " in r.stdout and "this file is for aarch64" in r.stdout
    truth = machine_truth()
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


def test_kcidb_carries_the_recorded_machine(tmp_path: Path) -> None:
    kcidb_io = pytest.importorskip("kcidb_io")
    results = saved_folder(tmp_path, {"system": capture(), "load": LOAD, "preflight": PREFLIGHT})
    r = rtgate("export", "kcidb", DEFAULT, str(results), "--build-id", "rtgate:b1", "-o", "k.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "k.json").read_text())
    kcidb_io.schema.V5_3.validate(doc)
    misc = doc["tests"][0]["environment"]["misc"]
    truth = machine_truth()
    assert misc["kernel_release"] == truth["kernel"]
    assert {k: misc["machine"][k] for k in truth} == truth and misc["conditions"]["load"] == "cpu on CPUs 1"
