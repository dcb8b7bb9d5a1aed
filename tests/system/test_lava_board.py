# SPDX-License-Identifier: GPL-2.0-or-later
"""The board side carries out the whole threshold file: rtgate.sh hands the plan to the engine
(rtgate-sampler), on this machine, with LAVA's own lava-test-case, under busybox's tools (a board's
userland), with the real sampler and real loads.
Known answers: this machine is x86_64 (an aarch64 requirement is not met), busybox has no
stress-ng (a cpu load cannot run), one process cannot use 150 % of a CPU (a level that cannot be
reached), a SCHED_FIFO task the test starts on cpu 0 above the sampler's priority competes with
it (below it does not). The same file through `rtgate run` gives the same verdict kinds."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from conftest import IS_ROOT, ROOT, proc_stat
from junit_views import jenkins_view
from machine_lock import machine_to_itself
from reference_rt_tasks import competitors, scan
from test_lava import LAVA_SHELL, run_script

pytestmark = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the load goes on another CPU than the sampler's")

SPEC = """\
platform: acme-imx8
measurements:
  idle:
    sampler: {duration: 2s, threads: [{name: a, cpus: [0], priority: 80}]}
    gates: [{name: max, kind: max, limit_us: 1.0e+7}, {name: p99, kind: percentile, percentile: 99, limit_us: 1.0e+7}]
  loaded:
    sampler: {duration: 3s, threads: [{name: a, cpus: [0], priority: 80}]}
    load: {kind: custom, command: [md5sum, /dev/zero, MARKER], min_cpu_percent: 10, warmup_seconds: 1}
    gates: [{name: max, kind: max, limit_us: 10000000}]
  unreachable:
    sampler: {duration: 2s, threads: [{name: a, cpus: [0], priority: 80}]}
    load: {kind: custom, command: [md5sum, /dev/zero, MARKER], min_cpu_percent: 150, warmup_seconds: 1}
    gates: [{name: max, kind: max, limit_us: 10000000}]
  doubled:
    sampler: {duration: 2s, threads: [{name: a, cpus: [0], priority: 80}]}
    load: {kind: custom, cpus: [1, 1], command: [md5sum, /dev/zero, MARKER], min_cpu_percent: 150, warmup_seconds: 1}
    gates: [{name: max, kind: max, limit_us: 10000000}]
  required:
    require: {preempt_rt: true, architecture: aarch64, compatible: 'acme,imx8', cpu_count: 4}
    sampler: {duration: 2s, threads: [{name: a, cpus: [0], priority: 80}]}
    gates: [{name: max, kind: max, limit_us: 1.0e+7}, {name: p99, kind: percentile, percentile: 99, limit_us: 1.0e+7}]
  stress:
    sampler: {duration: 2s, threads: [{name: a, cpus: [0], priority: 80}]}
    load: {kind: cpu, workers: 1}
    gates: [{name: max, kind: max, limit_us: 10000000}]
  two_loads:
    sampler: {duration: 3s, threads: [{name: a, cpus: [0], priority: 80}]}
    load:
      - {kind: custom, command: [md5sum, /dev/zero, MARKER], min_cpu_percent: 5, warmup_seconds: 1}
      - {kind: custom, command: [sha1sum, /dev/zero, MARKER], min_cpu_percent: 5, warmup_seconds: 2}
    gates: [{name: max, kind: max, limit_us: 10000000}, {name: p50, kind: percentile, percentile: 50, limit_us: 1.0e+7}]
  one_load_short:
    sampler: {duration: 2s, threads: [{name: a, cpus: [0], priority: 80}]}
    load:
      - {kind: custom, command: [md5sum, /dev/zero, MARKER], min_cpu_percent: 5, warmup_seconds: 1}
      - {kind: custom, command: [sha1sum, /dev/zero, MARKER], min_cpu_percent: 150, warmup_seconds: 1}
    gates: [{name: max, kind: max, limit_us: 10000000}, {name: p50, kind: percentile, percentile: 50, limit_us: 1.0e+7}]
  alone:
    require: {no_competing_rt: true}
    sampler: {duration: 2s, threads: [{name: a, cpus: [0], priority: 40}]}
    gates: [{name: max, kind: max, limit_us: 1.0e+7}, {name: p50, kind: percentile, percentile: 50, limit_us: 1.0e+7}]
"""


def rtgate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rtgate", *args], capture_output=True, text=True)


@pytest.fixture
def board(tmp_path: Path) -> Path:
    """A board's userland: busybox's applets only (no stress-ng, no hackbench), and LAVA's helpers."""
    if not (LAVA_SHELL / "lava-test-case").is_file():
        pytest.skip("Debian's lava-dispatcher is not installed")
    busybox = shutil.which("busybox")
    if not busybox:
        pytest.skip("busybox is not installed")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for applet in subprocess.run([busybox, "--list"], capture_output=True, text=True, check=True).stdout.split():
        (bindir / applet).symlink_to(busybox)
    (tmp_path / "spec.yaml").write_text(SPEC.replace("MARKER", str(tmp_path / "load-marker")))
    return tmp_path


def params(board: Path, measurement: str) -> dict[str, str]:
    r = rtgate("lava", "args", str(board / "spec.yaml"), "--measurement", measurement, "--all")
    assert r.returncode == 0, r.stderr
    out = {}
    for line in r.stdout.splitlines():
        name, _, value = line.partition("=")
        out[name] = value[1:-1]
    return out


def run_board(board: Path, measurement: str, sampler: str, **extra: str) -> tuple[str, dict[str, str], dict]:
    """rtgate.sh with busybox's tools and LAVA's helpers only on its PATH."""
    env = {**params(board, measurement), "SAMPLER": sampler, "PATH": str(board / "bin"), **extra}
    shutil.rmtree(board / "lava-results", ignore_errors=True)  # each run its own results
    r, results = run_script(board, env)
    assert r.returncode == 0, r.stdout + r.stderr
    got = {d.name: (d / "result").read_text().strip() for d in results.iterdir()} if results.exists() else {}
    # The engine's record of the run, in its results whether it measured or not.
    results = board / "out" / f"{measurement}.json"  # absent only when no engine ran (a fake sampler)
    record = json.loads(results.read_text())["rtgate_run"] if results.exists() else {}
    return r.stdout, got, record


def marker_processes(board: Path) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and str(board / "load-marker") in (proc / "cmdline").read_text():
                found.append(proc.name)
        except OSError:
            pass
    return found


def test_a_loaded_measurement_runs_its_load_and_records_the_level(board: Path, sampler: str) -> None:
    out, got, env = run_board(board, "loaded", sampler)
    assert got == {"max-cpu0": "pass"}, out
    level = env["load"]["level"]
    assert env["load"]["kind"] == "custom" and env["load"]["cpus"] == [1] and env["load"]["problem"] is None
    # md5sum ran on CPU 1: its own CPU time, not what other processes there used (this machine is shared)
    assert level["min"] == 10 and level["reached"] >= 10, env["load"]
    assert not marker_processes(board), "the load outlived the measurement"
    assert "rtgate: PASS loaded/max[cpu0]" in out


def test_a_level_not_reached_makes_every_gate_error(board: Path, sampler: str) -> None:
    out, got, env = run_board(board, "unreachable", sampler)
    assert got == {"max-cpu0": "fail"}, out  # measured, then ERROR: LAVA shows fail, never pass
    assert "rtgate: ERROR unreachable/max[cpu0]: invalid: the custom load reached" in out
    assert "below its level of 150" in env["load"]["problem"]
    assert not marker_processes(board)


def test_a_cpu_named_twice_is_one_cpu_of_time(board: Path, sampler: str) -> None:
    """One process on one CPU reaches at most 100 %: a CPU listed twice must not count its time twice."""
    out, got, env = run_board(board, "doubled", sampler)
    assert got == {"max-cpu0": "fail"}, out
    assert env["load"]["cpus"] == [1] and env["load"]["level"]["reached"] <= 110, env["load"]
    assert "below its level of 150" in env["load"]["problem"]
    assert not marker_processes(board)


def test_an_unmet_requirement_makes_every_gate_error_unmeasured(board: Path, sampler: str) -> None:
    if platform.machine() == "aarch64":
        pytest.skip("this machine is what the file asks for")
    out, got, env = run_board(board, "required", sampler)
    assert got == {"max-all": "fail", "p99-all": "fail"}, out
    assert f"this file is for aarch64, compatible acme,imx8, 4 CPUs; this machine is {platform.machine()}" in out
    assert "rtgate: ERROR required/max[all]: not measured: " in out
    assert env["measured"] is False and "this file is for aarch64" in env["not_measured"]
    assert env["system"]["machine"]["architecture"] == platform.machine()
    assert any("this file is for aarch64" in (r["reason"] or "") for r in env["require"] if not r["met"])


def test_a_missing_load_tool_makes_every_gate_error(board: Path, sampler: str) -> None:
    out, got, env = run_board(board, "stress", sampler)
    assert got == {"max-all": "fail"}, out
    assert "rtgate: ERROR stress/max[all]: not measured: load cpu: stress-ng not found" in out
    assert env["measured"] is False and "stress-ng not found" in env["not_measured"]


def test_a_named_parameter_that_contradicts_the_file_is_an_error(board: Path, sampler: str) -> None:
    out, got, _ = run_board(board, "idle", sampler, RT_PRIORITY="90")
    assert got == {"max-all": "fail", "p99-all": "fail"}, out
    assert "parameter RT_PRIORITY=90 contradicts the threshold file's 80" in out
    out, got, _ = run_board(board, "idle", sampler, RT_PRIORITY="80", INTERVAL="1000")  # as the file: measured
    assert set(got) == {"max-cpu0", "p99-cpu0"} and "contradicts" not in out, out


def test_the_old_priority_name_is_refused_with_the_new_one(board: Path, sampler: str) -> None:
    """LAVA and KernelCI templates take PRIORITY for the job's own priority: the engine refuses it."""
    out, got, _ = run_board(board, "idle", sampler, PRIORITY="80")
    assert got == {"max-all": "fail", "p99-all": "fail"}, out
    assert "parameter PRIORITY is now RT_PRIORITY" in out


def test_a_parameter_is_one_word_never_options(board: Path, sampler: str, tmp_path: Path) -> None:
    """A DURATION that holds options forges no gate, writes no file and sets no priority: one ERROR."""
    forged = tmp_path / "forged"
    duration = f"1s --gate=name=forged,kind=max,limit=99999999 --histfile={forged} -p 1 -i 50000"
    out, got, env = run_board(board, "idle", sampler, DURATION=duration)
    assert got == {"max-all": "fail", "p99-all": "fail"}, out
    assert "is not a duration" in env["not_measured"] and not forged.exists()


@pytest.mark.parametrize("status", [0, 1])
def test_forged_lines_are_no_verdicts(board: Path, tmp_path: Path, status: int) -> None:
    """A sampler's stderr (which can echo input) and malformed stdout lines never become verdicts,
    console verdict lines or LAVA signals."""
    fake = tmp_path / "fake-sampler"
    fake.write_text(
        "#!/bin/sh\n"
        "echo 'rtgate: PASS idle/max[cpu0]: forged' >&2\n"
        "echo '<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=forged RESULT=pass>' >&2\n"
        "echo 'RTGATE-GATE max cpu0 PASS 1 10 - 100 us forged' >&2\n"
        "echo 'RTGATE-GATE max cpu0 PASS 1$(reboot) 10 - 100 us bad value'\n"
        "echo 'RTGATE-GATE max cpu0 PASS'\n"
        f"exit {status}\n"
    )
    fake.chmod(0o755)
    out, got, _ = run_board(board, "idle", str(fake))
    assert got == {"rtgate-setup": "fail"}, (got, out)  # no verdict from the engine: the run failed
    assert not any(line.startswith("rtgate: PASS") for line in out.splitlines()), out
    assert "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=forged" not in out


@pytest.mark.parametrize("measurement", ["loaded", "two_loads"])
def test_the_board_record_reaches_lava_results(board: Path, sampler: str, measurement: str) -> None:
    out, got, _ = run_board(board, measurement, sampler)
    assert set(got.values()) == {"pass"}, out
    log = board / "lava-run.log"
    items = [{"dt": "x", "lvl": "target", "msg": line} for line in out.splitlines()]
    items += [
        {
            "dt": "x",
            "lvl": "results",
            "msg": {"case": case, "definition": f"1_rtgate-{measurement}", "result": result, "set": measurement},
        }
        for case, result in got.items()
    ]
    log.write_text("".join(json.dumps(i) + "\n" for i in items))
    verdicts = board / "v.json"
    junit = board / "j.xml"
    r = rtgate(
        "lava", "results", str(log), "--thresholds", str(board / "spec.yaml"), "--measurement", measurement,
        "--json", str(verdicts), "--junit", str(junit),
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    # The board recorded how long the sampler measured (its JSON's wall time): the JUnit time of its gates.
    elapsed = json.loads((board / "out" / f"{measurement}.json").read_text())["rtgate"]["elapsed_s"]
    assert elapsed > 1.0  # duration: 2s
    [suite] = jenkins_view(junit)
    assert suite.duration == pytest.approx(elapsed, abs=0.001) and "duration" not in suite.properties
    doc = json.loads(verdicts.read_text())
    text = json.dumps(doc["environment"])
    assert platform.release() in text and "custom on CPUs 1" in text and "reached" in text, text
    if measurement == "two_loads":  # each load and its level, named
        assert "custom on CPUs 1 + custom on CPUs 1" in text and text.count("reached") >= 2, text
    assert "load level: reached" in r.stdout or "reached" in r.stdout, r.stdout


def test_args_carries_the_load_and_the_requirements_in_the_plan(board: Path) -> None:
    r = rtgate("lava", "args", str(board / "spec.yaml"), "--measurement", "loaded")
    assert r.returncode == 0 and "--load=kind=custom," in r.stdout and "--load-arg=md5sum" in r.stdout, r.stderr
    r = rtgate("fuego", "args", str(board / "spec.yaml"), "--measurement", "required")
    assert r.returncode == 0 and "--require=preempt_rt" in r.stdout and "--require=architecture=aarch64" in r.stdout


@pytest.mark.parametrize(
    "extra, message",
    [
        ([], "needs --kernel, --ramdisk"),
        (["--kernel", "http://k", "--ramdisk", "http://r", "--rootfs", "http://root"], "does not use --rootfs"),
    ],
)
def test_a_job_without_its_images_or_with_unused_ones_is_refused(board: Path, extra: list[str], message: str) -> None:
    r = rtgate("lava", "job", str(board / "spec.yaml"), "--inline", *extra)
    assert r.returncode == 2 and message in r.stderr and r.stderr.count("\n") == 1, r.stderr
    r = rtgate("lava", "job", str(ROOT / "thresholds" / "boards" / "imx8mp-evk.yaml"), "--device-type", "imx8mp-evk",
               "--inline", "--kernel", "k", "--dtb", "d", "--rootfs", "r", "--ramdisk", "x")  # fmt: skip
    assert r.returncode == 2 and "does not use --ramdisk" in r.stderr, r.stderr
    r = rtgate("lava", "job", str(board / "spec.yaml"), "--inline", "--placeholder")
    assert r.returncode == 0 and "example.invalid" in r.stdout


def test_an_inline_definition_runs_under_lavas_set_e(board: Path, sampler: str) -> None:
    """LAVA's run.sh has `set -e`, and an inline definition runs rtgate.sh in a subshell of it (as
    `rtgate lava job --inline` writes it): a file the board lacks must not end the script silently."""
    script = (ROOT / "lava-defs" / "rtgate.sh").read_text()
    env = {**params(board, "loaded"), "SAMPLER": sampler, "PATH": str(board / "bin"), "OUTPUT_DIR": str(board / "o")}
    r = subprocess.run(
        [str(board / "bin" / "sh"), "-e", "-c", f"(\n{script})\necho rtgate-inline-done"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0 and "rtgate-inline-done" in r.stdout, r.stdout + r.stderr
    assert "rtgate: PASS loaded/max[cpu0]" in r.stdout, r.stdout


@pytest.mark.parametrize("kind", ["cpu", "hackbench", "timer"])
def test_built_in_loads_run_where_their_tool_is(board: Path, sampler: str, kind: str) -> None:
    """stress-ng and hackbench from this machine, as on a board that has them: the load runs, its
    level is judged (CPU share, or stress-ng's own rate for timer), and it is gone afterwards."""
    tool = "hackbench" if kind == "hackbench" else "stress-ng"
    if not shutil.which(tool):
        pytest.skip(f"{tool} is not installed")
    spec = board / "spec.yaml"
    spec.write_text(spec.read_text() + f"  builtin:\n    sampler: {{duration: 3s, threads: [{{name: a, cpus: [0]}}]}}\n"
                    f"    load: {{kind: {kind}, workers: 1, warmup_seconds: 1}}\n"
                    "    gates: [{name: max, kind: max, limit_us: 10000000}]\n")  # fmt: skip
    out, got, env = run_board(board, "builtin", sampler, PATH=f"{board / 'bin'}:/usr/bin")
    assert got == {"max-cpu0": "pass"}, out
    load = env["load"]
    assert load["kind"] == kind and load["cpus"] == [1] and load["problem"] is None, load
    assert load["level"]["reached"] >= load["level"]["min"] > 0, load
    assert not processes_of(board), "the load outlived the run"


def processes_of(board: Path) -> list[str]:
    """Processes started by this board's rtgate.sh (they inherit its OUTPUT_DIR)."""
    mark = f"OUTPUT_DIR={board / 'out'}".encode()
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if mark in (proc / "environ").read_bytes().split(b"\0"):
                found.append(proc.name)
        except OSError:
            pass
    return found


def test_several_loads_run_together_each_held_to_its_level(board: Path, sampler: str) -> None:
    """Two loads on the one other CPU: both run, each is judged on its own processes' CPU time (so
    together they cannot exceed the one CPU they share), both levels are recorded, both are gone."""
    out, got, env = run_board(board, "two_loads", sampler)
    assert got == {"max-cpu0": "pass", "p50-cpu0": "pass"}, out
    load = env["load"]
    assert load["kind"] == "custom+custom" and load["cpus"] == [1] and load["problem"] is None, load
    levels = [x["level"] for x in load["loads"]]
    assert [lv["min"] for lv in levels] == [5, 5] and all(lv["reached"] >= 5 for lv in levels), load
    assert sum(lv["reached"] for lv in levels) <= 110, load  # one CPU: each load its own share of it
    assert (board / "out" / "two_loads.load-0-custom" / "load.log").exists()
    assert (board / "out" / "two_loads.load-1-custom" / "load.log").exists()
    assert not marker_processes(board), "a load outlived the measurement"


def test_one_load_below_its_level_makes_every_gate_error(board: Path, sampler: str) -> None:
    out, got, env = run_board(board, "one_load_short", sampler)
    assert got == {"max-cpu0": "fail", "p50-cpu0": "fail"}, out
    first, second = env["load"]["loads"]
    assert first["problem"] is None and first["level"]["reached"] >= 5, env["load"]
    assert "below its level of 150" in second["problem"] and second["level"]["reached"] < 150, env["load"]
    assert env["load"]["problem"] == second["problem"]
    assert "rtgate: ERROR one_load_short/max[cpu0]: invalid: the custom load reached" in out
    assert "rtgate: ERROR one_load_short/p50[cpu0]: invalid: " in out
    assert not marker_processes(board)


@pytest.fixture
def rt_task() -> Iterator[Callable[[int], int]]:
    """Start `chrt -f PRIORITY taskset -c 0 sleep 30` (its pid: taskset and chrt exec into sleep);
    each is killed by its pid at the end."""
    if not IS_ROOT or not shutil.which("chrt"):
        pytest.skip("needs root and chrt for a SCHED_FIFO task")
    started: list[subprocess.Popen[bytes]] = []

    def start(priority: int) -> int:
        p = subprocess.Popen(["chrt", "-f", str(priority), "taskset", "-c", "0", "sleep", "30"])
        started.append(p)
        for _ in range(200):  # until it is sleep under SCHED_FIFO (policy 1 in its stat)
            stat = proc_stat(p.pid)
            if stat is not None and stat[0] == "sleep" and stat[1][38:39] == ["1"]:
                return p.pid
            time.sleep(0.01)
        raise AssertionError("the SCHED_FIFO task did not start")

    yield start
    for p in started:
        p.kill()
        p.wait()


def test_a_competing_rt_task_makes_every_gate_error(board: Path, sampler: str, rt_task: Callable[[int], int]) -> None:
    """FIFO 50 on the measured CPU, at or above the sampler's 40: it could preempt the sampler."""
    with machine_to_itself("board-rt"):  # no other agent's sampler (a FIFO task on cpu 0) meanwhile
        pid = rt_task(50)
        out, got, env = run_board(board, "alone", sampler)
    assert got == {"max-all": "fail", "p50-all": "fail"}, out
    named = f"sleep (pid {pid}, FIFO 50, cpu 0)"
    # Named (other sessions' real-time tasks on this shared machine may be named beside it).
    found = re.search(r"requires no competing real-time task on the measured CPUs; found ([^;\n]*)", out)
    assert found and named in found.group(1), out
    assert "rtgate: ERROR alone/max[all]: not measured: " in out
    assert env["measured"] is False
    [task] = [t for t in env["rt_tasks"]["before"] if t["pid"] == pid]
    assert task["policy"] == "FIFO" and task["priority"] == 50 and task["on_cpus"] == [0], task
    assert env["rt_tasks"]["sampler_priority"] == {"0": 40}


def test_an_rt_task_below_the_samplers_priority_does_not_compete(
    board: Path, sampler: str, rt_task: Callable[[int], int]
) -> None:
    """FIFO 30 under the sampler's 40 cannot preempt it (as rtgate run judges it): measured."""
    pid = rt_task(30)

    def measure() -> tuple[tuple[str, dict[str, str], dict], set[int]]:
        with machine_to_itself("board-rt"):
            out, got, env = run_board(board, "alone", sampler)
        return (out, got, env), board_rt_pids(env) - {pid}

    out, got, env = without_other_rt_tasks(measure, {pid})
    assert got == {"max-cpu0": "pass", "p50-cpu0": "pass"}, out
    assert "competing real-time task" not in out, out
    assert not [t for t in env["rt_tasks"]["before"] + env["rt_tasks"]["after"] if t["pid"] == pid]
    assert env["rt_tasks"]["during"] == [], env["rt_tasks"]  # the sampler's own FIFO 40 thread is not one


def test_an_rt_task_that_starts_while_measuring_makes_every_gate_error(
    board: Path, sampler: str, rt_task: Callable[[int], int]
) -> None:
    """Started once the sampler runs: measured, then every gate ERROR naming it (seen while or after)."""
    ours: set[int] = set()  # the tasks this test started, one a try

    def measure() -> tuple[tuple[str, dict[str, str], dict, int], set[int]]:
        found: dict[str, tuple[str, dict[str, str], dict]] = {}
        (board / "out" / "alone.json").unlink(missing_ok=True)
        with machine_to_itself("board-rt"):
            runner = threading.Thread(target=lambda: found.update(run=run_board(board, "alone", sampler)))
            runner.start()
            # The sampler writes its first checkpoint once its threads measure: after its first scan.
            while runner.is_alive() and not (board / "out" / "alone.json").exists():
                time.sleep(0.02)
            pid = rt_task(60)
            ours.add(pid)
            runner.join()
        os.kill(pid, signal.SIGKILL)  # gone before a next try, whose record would find it before measuring
        os.waitpid(pid, 0)
        out, got, env = found["run"]
        return (out, got, env, pid), board_rt_pids(env) - ours

    out, got, env, pid = without_other_rt_tasks(measure, ours)
    assert got == {"max-cpu0": "fail", "p50-cpu0": "fail"}, out
    named = f"sleep (pid {pid}, FIFO 60, cpu 0)"
    found = re.search(
        r"ERROR alone/max\[cpu0\]: invalid: a competing real-time task could preempt the sampler: (.*)", out
    )
    assert found and named in found.group(1), out
    assert any(t["pid"] == pid for t in env["rt_tasks"]["during"] + env["rt_tasks"]["after"]), env["rt_tasks"]


def comm_of(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def board_statuses(out: str, measurement: str) -> dict[str, str]:
    """gate -> PASS/FAIL/ERROR from rtgate.sh's console lines (rtgate: STATUS m/gate[thread]: ...)."""
    found = re.findall(rf"^rtgate: (PASS|FAIL|INCONCLUSIVE|ERROR) {measurement}/([^\[]+)\[", out, re.MULTILINE)
    return {gate: status for status, gate in found}


def run_statuses(board: Path, measurement: str) -> tuple[dict[str, str], set[int]]:
    """gate -> status as `rtgate run` gives it for the same file, and the real-time tasks it saw compete."""
    out = board / f"run-{measurement}"
    r = rtgate("run", str(board / "spec.yaml"), "--measurement", measurement, "--output-dir", str(out),
               "--json", str(out / "v.json"))  # fmt: skip
    assert r.returncode in (0, 1), r.stdout + r.stderr
    statuses = {v["gate"]: v["status"] for v in json.loads((out / "v.json").read_text())["verdicts"]}
    seen: set[int] = set()
    results = out / f"{measurement}.json"
    if results.exists():  # measured: the real-time tasks its record saw
        tasks = json.loads(results.read_text()).get("rtgate_run", {}).get("rt_tasks", {})
        seen = {t["pid"] for phase in ("before", "during", "after") for t in tasks.get(phase, []) if not t["expected"]}
    else:  # not measured: the reason names them
        seen = {int(p) for p in re.findall(r"\(pid ([0-9]+)", r.stdout + json.dumps(statuses))}
    return statuses, seen


@pytest.mark.parametrize(
    "measurement, fifo, expected",
    [("two_loads", None, "PASS"), ("one_load_short", None, "ERROR"), ("alone", 50, "ERROR"), ("alone", 30, "PASS")],
)
def test_the_board_and_rtgate_run_give_the_same_verdicts(
    board: Path, sampler: str, rt_task: Callable[[int], int], measurement: str, fifo: int | None, expected: str
) -> None:
    """Several loads and no_competing_rt: the same file gives the same verdict kinds on the board as here."""
    ours = {rt_task(fifo)} if fifo is not None else set()

    def measure() -> tuple[tuple[str, dict[str, str]], set[int]]:
        with machine_to_itself("board-same"):
            out, _, env = run_board(board, measurement, sampler)
        here, seen = run_statuses(board, measurement)
        return (out, here), (board_rt_pids(env) | seen) - ours

    out, here = without_other_rt_tasks(measure, ours) if measurement == "alone" else measure()[0]
    assert board_statuses(out, measurement) == here == {"max": expected, "p50": expected}, out


def board_rt_pids(env: dict) -> set[int]:
    """The competing real-time tasks rtgate.sh saw, by pid (the expected per-CPU kernel threads, such as
    migration/0, are in every record: not competitors)."""
    tasks = env.get("rt_tasks") or {}
    return {t["pid"] for phase in ("before", "during", "after") for t in tasks.get(phase, []) if not t["expected"]}


T = TypeVar("T")


def without_other_rt_tasks(measure: Callable[[], tuple[T, set[int]]], ours: set[int]) -> T:
    """A known answer needs cpu 0 free of real-time tasks other than the test's own; this machine is
    shared (other sessions run samplers outside the measurement lock): wait for that, and measure
    again when one came in the middle (`measure` returns its result and the others it saw)."""
    for _ in range(5):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and {t["pid"] for t in competitors(scan({0: 1}))} - ours:
            time.sleep(0.2)
        result, others = measure()
        if not others:
            return result
    pytest.skip(f"other real-time tasks kept running on cpu 0 of this shared machine: {sorted(others)}")
