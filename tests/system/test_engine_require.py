# SPDX-License-Identifier: GPL-2.0-or-later
"""The measurement engine's requirements, competitor scans and record, in rtgate-sampler itself
(issue 44): --require judged as measure/conditions.py judges it (same reasons), a real SCHED_FIFO
task on the measured CPU before and during a run, an unmet requirement, --check-only, a stop
signal mid-run. Known answers: the reasons Python gives on this machine, the task the test starts
(its pid, policy and priority), the figures the sampler wrote."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from conftest import IS_ROOT, proc_stat
from machine_lock import machine_to_itself
from reference_environment import capture
from reference_machine import parse_cpulist
from reference_rt_tasks import competitors, scan
from rtgate.core import validity
from rtgate.parsers import load_results
from test_sampler import public_sampler  # noqa: F401 (a fixture, declared once)

needs_two = pytest.mark.skipif(not IS_ROOT or (os.cpu_count() or 1) < 2, reason="needs root and two CPUs")
pytestmark = needs_two

CPU = 1  # the measured CPU; the main thread goes to cpu 0
T = TypeVar("T")
# Limits no wake-up on a shared VM reaches (its stalls reach tens of ms): a verdict here says what the engine
# decided about the run, never how busy the machine was.
GATES = ["--gate=name=max,kind=max,limit=10000000", "--gate=name=tail,kind=miss_rate,above=5000000,rate=0.5"]
LINE = re.compile(r"^RTGATE-GATE (\S+) (\S+) (\S+) (\S+) (\S+) (\S+) (\S+) (\S+) (.*)$", re.M)


def gate_lines(stdout: str) -> list[tuple[str, ...]]:
    return LINE.findall(stdout)


def base(json_path: Path, seconds: int = 2) -> list[str]:
    return [*f"-q -p 80 -t 1 -a {CPU} -i 1000 -D {seconds}".split(), f"--json={json_path}", *GATES]


def run(sampler: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sampler, *args], capture_output=True, text=True, timeout=timeout)


def record(json_path: Path) -> dict[str, Any]:
    return json.loads(json_path.read_text())["rtgate_run"]


def is_fifo(pid: int, comm: str) -> bool:
    stat = proc_stat(pid)
    return stat is not None and stat[0] == comm[:15] and stat[1][38] == "1"


@pytest.fixture
def fifo_task(tmp_path: Path) -> Iterator[Callable[..., int]]:
    """Start `chrt -f 90 taskset -c 1 PROGRAM 30` (PROGRAM: a copy of sleep under the name given):
    its pid once it runs under SCHED_FIFO; each is killed by its pid at the end."""
    if not shutil.which("chrt") or not shutil.which("taskset"):
        pytest.skip("needs chrt and taskset (util-linux)")
    started: list[subprocess.Popen[bytes]] = []

    def start(name: str = "sleep", priority: int = 90) -> int:
        program = tmp_path / name
        if not program.exists():
            shutil.copy(shutil.which("sleep") or "/bin/sleep", program)
        p = subprocess.Popen(["chrt", "-f", str(priority), "taskset", "-c", str(CPU), str(program), "30"])
        started.append(p)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if is_fifo(p.pid, name):
                return p.pid
            time.sleep(0.01)
        raise AssertionError("the SCHED_FIFO task did not start")

    yield start
    for p in started:
        p.kill()
        p.wait()


def others_on_cpu(ours: set[int]) -> set[int]:
    """Competing real-time tasks on CPU that are not the test's (other sessions share this machine)."""
    return {t["pid"] for t in competitors(scan({CPU: 80}))} - ours


def measure_alone(measure: Callable[[], tuple[T, set[int]]], ours: set[int]) -> T:
    """A known answer needs the measured CPU free of other sessions' real-time tasks (they run
    samplers and stress-ng at FIFO priorities outside the measurement lock): wait for that, and
    measure again when one came in the middle (`measure` returns its result and the pids it saw)."""
    for _ in range(5):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and others_on_cpu(ours):
            time.sleep(0.2)
        result, seen = measure()
        if not seen - ours:
            return result
    pytest.skip(f"other real-time tasks kept running on cpu {CPU} of this shared machine")


def seen_pids(rec: dict[str, Any]) -> set[int]:
    tasks = rec["rt_tasks"]
    return {t["pid"] for phase in ("before", "during", "after") for t in tasks[phase] if not t["expected"]}


def test_check_only_judges_each_key_by_its_own_record(sampler: str) -> None:
    """Every requirement key, on this machine: unmet exactly where the engine's own system record
    says so, and the machine keys against what the operating system says (os.uname, os.cpu_count)."""
    args = ["preempt_rt", "isolated_cpus", "governor=performance", "bare_metal", "rt_throttling_off",
            "architecture=sparc", "cpu_count=4096"]  # fmt: skip
    r = run(sampler, "--check-only", "-a", str(CPU), "-p", "80", *(f"--require={a}" for a in args))
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert set(doc) == {"system", "require", "rt_tasks"}
    got = {x["key"]: x["reason"] for x in doc["require"] if not x["met"]}
    system = doc["system"]
    assert ("preempt_rt" in got) == (system["preemption"] != "PREEMPT_RT")
    isolated = system["isolation"].get("isolcpus", {}).get("cpus", [])
    assert ("isolated_cpus" in got) == (CPU not in isolated)
    governors = system["governors"]
    assert ("governor" in got) == (not governors or any(g != "performance" for g in governors.values()))
    assert ("bare_metal" in got) == bool(system["virtualisation"])
    assert ("rt_throttling_off" in got) == (system["sched_rt_runtime_us"] != -1)
    assert got["board"] == (
        f"this file is for sparc, 4096 CPUs; this machine is {os.uname().machine}, {os.cpu_count()} CPUs"
    )
    if "preempt_rt" in got:
        assert got["preempt_rt"].startswith(f"requires a PREEMPT_RT kernel; {os.uname().release} is ")
    assert all(x["reason"] is None for x in doc["require"] if x["met"])


def test_check_only_all_met_and_usage_errors(sampler: str) -> None:
    env = capture()
    met = [f"--require=architecture={env['machine']['architecture']}", f"--require=cpu_count={env['cpu_count']}"]
    r = run(sampler, "--check-only", "-a", str(CPU), *met)
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["require"] == [{"key": "board", "met": True, "reason": None}]
    for bad, words in (
        ("--require=preempt", "unknown requirement"),
        ("--require=bare_metal=yes", "takes no value"),
        ("--require=cpu_count=0", "CPU count"),
        ("--measurement=a b", "not a measurement name"),
        (f"--measurement={'x' * 65}", "not a measurement name"),
    ):
        r = run(sampler, "--check-only", bad)
        assert r.returncode == 2 and r.stdout == "", (bad, r.stdout)
        assert words in r.stderr and len(r.stderr.splitlines()) == 1, (bad, r.stderr)


def test_an_unmet_requirement_measures_nothing(sampler: str, tmp_path: Path) -> None:
    """preempt_rt on this non-RT kernel: no thread starts; every gate 'all ERROR' with the reason
    --check-only gives, its limit kept; the JSON still carries the record."""
    if capture()["preemption"] == "PREEMPT_RT":
        pytest.skip("this kernel is PREEMPT_RT")
    out = tmp_path / "m.json"
    start = time.monotonic()
    r = run(sampler, *base(out, 5), "--measurement=m", "--require=preempt_rt")
    assert time.monotonic() - start < 4  # nothing of the 5 s was measured
    assert r.returncode == 1, r.stdout + r.stderr
    asked = json.loads(run(sampler, "--check-only", "--require=preempt_rt").stdout)["require"]
    why = next(q["reason"] for q in asked if q["key"] == "preempt_rt")
    assert why.startswith("requires a PREEMPT_RT kernel")
    assert gate_lines(r.stdout) == [
        ("max", "all", "ERROR", "-", "1e+07", "-", "0", "us", f"not measured: {why}"),
        ("tail", "all", "ERROR", "-", "50", "-", "0", "%", f"not measured: {why}"),
    ]
    assert "T:" not in r.stdout
    doc = json.loads(out.read_text())
    assert doc["thread"] == {} and doc["rtgate"]["threads"] == []
    rec = doc["rtgate_run"]
    assert rec["format"] == 2 and rec["measurement"] == "m"
    assert (rec["measured"], rec["not_measured"], rec["valid"], rec["invalid"]) == (False, why, False, [])
    assert rec["require"] == [{"key": "preempt_rt", "met": False, "reason": why}]
    assert rec["results"] == {"elapsed_s": 0.0, "stop_reason": "error", "cycles": [], "missed": []}


def test_a_competitor_before_the_run_measures_nothing(
    sampler: str, tmp_path: Path, fifo_task: Callable[..., int]
) -> None:
    """A FIFO 90 task on the measured CPU (the sampler's 80) with no_competing_rt: not measured, as
    `rtgate run` refuses it; named in the reason and in rt_tasks.before. Its name is input: on the
    console "<LAVA_" and control characters cannot come through."""
    out = tmp_path / "m.json"
    name = "<LAVA_SIGNAL_TESTCASE"
    with machine_to_itself("engine-require"):
        pid = fifo_task(name)
        r = run(sampler, *base(out), "--measurement=m", "--require=no_competing_rt")
    assert r.returncode == 1, r.stdout + r.stderr
    shown = f"?LAVA_SIGNAL_TE (pid {pid}, FIFO 90, cpu {CPU})"
    lines = gate_lines(r.stdout)
    assert [line[:8] for line in lines] == [
        ("max", "all", "ERROR", "-", "1e+07", "-", "0", "us"),
        ("tail", "all", "ERROR", "-", "50", "-", "0", "%"),
    ]
    for line in lines:
        assert line[8].startswith("not measured: requires no competing real-time task on the measured CPUs; found ")
        assert shown in line[8], line
    assert "<LAVA_" not in r.stdout + r.stderr
    rec = record(out)
    assert rec["measured"] is False and rec["rt_tasks"]["competing_matters"] is True
    assert f"<LAVA_SIGNAL_TE (pid {pid}, FIFO 90, cpu {CPU})" in rec["not_measured"]
    [task] = [t for t in rec["rt_tasks"]["before"] if t["pid"] == pid]
    assert task == {"pid": pid, "tid": pid, "comm": name[:15], "policy": "FIFO", "priority": 90, "cpus": [CPU],
                    "kernel": False, "on_cpus": [CPU], "expected": None}  # fmt: skip
    assert rec["rt_tasks"]["sampler_priority"] == {str(CPU): 80}
    [req] = rec["require"]
    assert req["key"] == "no_competing_rt" and req["met"] is False and req["reason"] == rec["not_measured"]


def test_a_competitor_is_recorded_when_it_does_not_matter(
    sampler: str, tmp_path: Path, fifo_task: Callable[..., int]
) -> None:
    """Without no_competing_rt the run is measured and valid, and the record still lists the task."""
    out = tmp_path / "m.json"
    with machine_to_itself("engine-require"):
        pid = fifo_task()
        r = run(sampler, *base(out), "--measurement=m")
    assert r.returncode == 0, r.stdout + r.stderr
    assert {g[:3] for g in gate_lines(r.stdout)} == {("max", f"cpu{CPU}", "PASS"), ("tail", f"cpu{CPU}", "PASS")}
    rec = record(out)
    assert rec["measured"] is True and rec["valid"] is True and rec["rt_tasks"]["competing_matters"] is False
    assert any(t["pid"] == pid and t["expected"] is None for t in rec["rt_tasks"]["before"])
    assert any(t["pid"] == pid for t in rec["rt_tasks"]["during"] + rec["rt_tasks"]["after"])


def test_a_competitor_that_starts_mid_run_makes_the_run_invalid(
    sampler: str, tmp_path: Path, fifo_task: Callable[..., int]
) -> None:
    """Started once the threads run: measured, then ERROR per gate and thread, with the value
    measured (the figure the JSON holds) in the line and in the reason; the task in 'during'."""
    out = tmp_path / "m.json"
    pids: list[int] = []

    def measure() -> tuple[tuple[int, str, str], set[int]]:
        with machine_to_itself("engine-require"):
            proc = subprocess.Popen(
                [sampler, *base(out, 4), "--measurement=m", "--require=no_competing_rt"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            deadline = time.monotonic() + 10
            while not out.exists() and time.monotonic() < deadline:  # the first checkpoint: the threads run
                time.sleep(0.01)
            pids.append(fifo_task())
            stdout, stderr = proc.communicate(timeout=60)
        return (proc.returncode, stdout, stderr), seen_pids(record(out)) - {pids[-1]}

    (rc, stdout, stderr) = measure_alone(measure, set())
    pid = pids[-1]
    assert rc == 0, stdout + stderr
    doc = json.loads(out.read_text())
    rec = doc["rtgate_run"]
    assert rec["measured"] is True and rec["valid"] is False
    named = f"sleep (pid {pid}, FIFO 90, cpu {CPU})"
    assert any(t["pid"] == pid for t in rec["rt_tasks"]["during"]), rec["rt_tasks"]
    assert not any(t["pid"] == pid for t in rec["rt_tasks"]["before"])
    [why] = [x for x in rec["invalid"] if x.startswith("a competing real-time task could preempt the sampler: ")]
    assert named in why
    worst = doc["rtgate"]["threads"][0]["max"]
    lines = gate_lines(stdout)
    assert [(g[0], g[1], g[2]) for g in lines] == [("max", f"cpu{CPU}", "ERROR"), ("tail", f"cpu{CPU}", "ERROR")]
    max_line = lines[0]
    assert float(max_line[3]) == worst and max_line[4] == "1e+07"
    assert max_line[8] == f"invalid: {'; '.join(rec['invalid'])} (measured {worst:g} us)"
    assert lines[1][8].startswith("invalid: ") and lines[1][8].endswith(" %)")
    # the record was written for these figures, as core/validity.py checks it
    assert rec["results"] == validity.digest(load_results(out))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_a_stop_signal_mid_run_judges_what_was_measured(sampler: str, tmp_path: Path, sig: signal.Signals) -> None:
    out = tmp_path / "m.json"
    proc = subprocess.Popen(
        [sampler, *base(out, 30), "--measurement=m"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    # Mid-run: the measuring thread runs (the engine's main thread alone checks and scans before it).
    deadline = time.monotonic() + 60
    while len(os.listdir(f"/proc/{proc.pid}/task")) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(1.0)  # a few hundred periods measured
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stdout + stderr
    rec = record(out)
    assert rec["measured"] is True and rec["stopped_by"] == sig.name and rec["results"]["stop_reason"] == "signal"
    assert 0.5 <= rec["results"]["elapsed_s"] < 20 and rec["results"]["cycles"][0] > 0
    for g in gate_lines(stdout):
        assert g[2] == "INCONCLUSIVE" and g[8].endswith(f"; but the run was stopped early by {sig.name}"), g
    assert rec["results"] == validity.digest(load_results(out))


def test_the_main_thread_leaves_the_measured_cpu(sampler: str, tmp_path: Path) -> None:
    """With the engine on, the main thread (scans, record) runs on cpu 0 only; a plain cyclictest
    command line keeps it where it was, and its JSON has no record."""
    seen: dict[str, set[int]] = {}
    for name, extra in (("engine", ["--measurement=m"]), ("plain", [])):
        out = tmp_path / f"{name}.json"
        proc = subprocess.Popen([sampler, *base(out, 2), *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while not out.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        status = Path(f"/proc/{proc.pid}/task/{proc.pid}/status").read_text()
        found = re.search(r"^Cpus_allowed_list:\s*(\S+)", status, re.M)
        assert found, status
        seen[name] = set(parse_cpulist(found.group(1)))
        proc.communicate(timeout=60)
        assert proc.returncode == 0
        assert ("rtgate_run" in json.loads(out.read_text())) == (name == "engine")
    assert seen == {"engine": {0}, "plain": os.sched_getaffinity(0)}


def test_threads_that_cannot_start_measure_nothing(request: pytest.FixtureRequest) -> None:
    """As nobody, without a real-time allowance: no SCHED_FIFO thread starts. The engine says so in
    every gate line and in the record, instead of leaving no verdict at all."""
    copy = request.getfixturevalue("public_sampler")  # test_sampler's: a copy nobody can run
    out = Path(tempfile.mkdtemp(prefix="rtgate-engine-"))
    try:
        out.chmod(0o777)
        r = subprocess.run(
            [
                "setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--inh-caps=-all",
                copy,
                *base(out / "m.json"),
                "--measurement=m",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            cwd="/",
        )
        if r.returncode == 0:
            pytest.skip("nobody may use SCHED_FIFO 80 here (RLIMIT_RTPRIO allows it)")
        assert r.returncode == 1, r.stdout + r.stderr
        why = "cannot start thread 0 on its CPU: Operation not permitted (SCHED_FIFO priority 80 needs root"
        lines = gate_lines(r.stdout)
        assert [g[:3] for g in lines] == [("max", "all", "ERROR"), ("tail", "all", "ERROR")]
        assert all(g[8].startswith(f"not measured: {why}") for g in lines), lines
        rec = record(out / "m.json")
        assert rec["measured"] is False and rec["not_measured"].startswith(why)
    finally:
        shutil.rmtree(out)
