# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate-sampler's own loads (--load, sampler/load.c): real stress-ng and hackbench placed on their CPUs,
held to a level judged from two readings, refused when a level is more than their CPUs can give, "not
measured" when a tool is missing or a stop signal ends the warm-up, and never a load process left behind,
whatever ends the sampler (a signal in the warm-up or mid-run, SIGKILL)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, RT_OPTS, processes, run_tool

pytestmark = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="loads go on a CPU the sampler does not use")

MEASURED = ["-t", "1", "-a", "0", "-i", "1000", "-q"]  # one thread on CPU 0: a load's "others" is CPU 1 and up
SUMMARY_KEYS = ["kind", "command", "cpus", "pgid", "cpu_seconds", "cpu_percent", "seconds", "problem"]


def record(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_text())
    assert isinstance(doc["rtgate_run"], dict)
    return doc["rtgate_run"]


def session_processes(sid: int) -> list[int]:
    """Live processes of a session (zombies are their parent's to reap and hold no CPU)."""
    return [pid for pid, _, fields in processes() if int(fields[3]) == sid and fields[0] != "Z"]


def gone_within(sid: int, seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := session_processes(sid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def load_leader(sampler_pid: int, timeout: float = 20) -> int:
    """The first load's leader: the sampler's child that leads its own session."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid, _, fields in processes():
            if int(fields[1]) == sampler_pid and int(fields[3]) == pid:
                return pid
        time.sleep(0.02)
    raise AssertionError("no load started")


def workdirs(pid: int) -> list[str]:
    tmp = os.environ.get("TMPDIR", "/tmp")
    return [n for n in os.listdir(tmp) if n.startswith(f"rtgate-load-{pid}-")]


def test_cpu_load_reaches_its_level(sampler: str, tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    r = run_tool([sampler, *RT_OPTS, *MEASURED, "-D", "3", "--json", str(out), "--load=kind=cpu,warmup=1,min=5"])
    assert r.returncode == 0, r.stderr
    rec = record(out)
    load = rec["load"]
    assert list(load)[: len(SUMMARY_KEYS)] == SUMMARY_KEYS
    assert load["kind"] == "cpu" and load["cpus"] == list(range(1, os.cpu_count() or 2))
    assert load["command"][:3] == ["stress-ng", "--taskset", ",".join(map(str, load["cpus"]))]
    assert load["problem"] is None and rec["valid"] is True and rec["invalid"] == []
    # the level is the load's CPU time over the measurement, both recorded
    assert load["cpu_percent"] == pytest.approx(100 * load["cpu_seconds"] / load["seconds"], abs=0.2)
    assert load["level"] == {"unit": "% CPU", "min": 5.0, "reached": load["cpu_percent"]}
    assert load["level"]["reached"] >= 5.0
    assert 3.0 <= load["seconds"] < 10.0
    # stress-ng's own figures, kept beside its log
    kept = (tmp_path / "m.load" / "stress-ng.yaml").read_text()
    assert load["stress_ng"][0]["stressor"] == "cpu" and f"bogo-ops: {load['bogo_ops']['cpu']}\n" in kept
    assert (tmp_path / "m.load" / "load.log").is_file()
    assert not session_processes(load["pgid"])


def test_cpu_load_below_its_level_makes_the_run_invalid(sampler: str, tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    # one worker on one CPU cannot hold 150 % CPU
    r = run_tool([sampler, *MEASURED, "-D", "2", "--json", str(out), "--load=kind=cpu,cpus=1,warmup=0.5,min=150"])
    assert r.returncode == 0, r.stderr
    rec = record(out)
    reached = rec["load"]["level"]["reached"]
    assert reached < 150
    assert rec["load"]["problem"] == f"the cpu load reached {reached:.0f} % CPU, below its level of 150 %"
    assert rec["valid"] is False and rec["invalid"] == [rec["load"]["problem"]]


# A custom load that brings CPU time from outside its session into it during the measurement: two
# children leave the session, burn CPU_S each on any CPU in the warm-up, and are reaped by the leader just
# after it, so their time lands in its cutime. Pinned to one CPU, the load then "reached" 2 * CPU_S over a
# measurement of less: more than one CPU can give, as a guest's clock once showed (issue 44: 122.9 %).
OVERFILL = """
import os, sys, time
warm, burn = float(sys.argv[1]), float(sys.argv[2])
t0, kids = time.monotonic(), []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        os.setsid()
        os.sched_setaffinity(0, range(os.cpu_count()))
        end = time.process_time() + burn
        while time.process_time() < end:
            pass
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
time.sleep(max(0.0, t0 + warm + 0.4 - time.monotonic()))
for pid in kids:
    os.waitpid(pid, 0)
time.sleep(3600)
"""


def test_level_above_what_its_cpus_give_is_an_error_not_a_figure(sampler: str, tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    warm, burn = 8.0, 1.2
    words = [sys.executable, "-c", OVERFILL, str(warm), str(burn)]
    r = run_tool(
        [sampler, *MEASURED, "-D", "2", "--json", str(out), f"--load=kind=custom,cpus=1,warmup={warm}"]
        + [f"--load-arg={w}" for w in words]
    )
    assert r.returncode == 0, r.stderr
    load = record(out)["load"]
    assert load["command"] == words  # every word as given, none split
    assert load["cpu_seconds"] >= 2 * burn - 0.05  # the children's time came in during the measurement
    assert load["cpu_percent"] is None and load["level"]["reached"] is None
    assert load["problem"].startswith("the custom load's level cannot be judged: it reached ")
    assert load["problem"].endswith(" % CPU, more than its 1 CPU can give")
    assert record(out)["valid"] is False


def _not_measured(r: subprocess.CompletedProcess[str], out: Path, reason: str) -> dict[str, Any]:
    assert r.returncode == 1, r.stderr
    assert r.stderr.splitlines()[-1] == f"rtgate-sampler: not measured: {reason}"
    doc = json.loads(out.read_text())
    assert doc["thread"] == {}
    rec: dict[str, Any] = doc["rtgate_run"]
    assert rec["measured"] is False and rec["not_measured"] == reason and rec["valid"] is False
    return rec


def test_custom_load_with_a_missing_command_is_not_measured(sampler: str, tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    r = run_tool([sampler, *MEASURED, "-D", "5", "--json", str(out), "--load=kind=custom", "--load-arg=no-such-tool-x"])
    rec = _not_measured(r, out, "load custom: no-such-tool-x not found (apt-get install no-such-tool-x)")
    assert rec["load"]["pgid"] is None


def test_stress_ng_missing_from_path_is_not_measured(sampler: str, tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    empty = tmp_path / "bin"
    empty.mkdir()
    r = run_tool(
        [sampler, *MEASURED, "-D", "5", "--json", str(out), "--load=kind=memory,size=8M", "--load=kind=hackbench"],
        env={**os.environ, "PATH": str(empty)},
    )
    rec = _not_measured(r, out, "load memory: stress-ng not found (apt-get install stress-ng)")
    assert rec["load"]["kind"] == "memory+hackbench" and [x["pgid"] for x in rec["load"]["loads"]] == [None, None]


def test_a_load_that_dies_in_its_warm_up_is_not_measured(sampler: str, tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    r = run_tool([sampler, *MEASURED, "-D", "5", "--json", str(out), "--load=kind=custom,warmup=1", "--load-arg=true"])
    rec = _not_measured(r, out, f"the custom load died during its warm-up (see {tmp_path / 'm.load'}/load.log)")
    assert rec["load"]["pgid"] > 0


@pytest.mark.parametrize(
    ("sig", "delay"), [(signal.SIGTERM, 0.0), (signal.SIGTERM, 0.7), (signal.SIGINT, 1.5), (signal.SIGHUP, 2.5)]
)
def test_stop_signal_in_the_warm_up_ends_it_at_once(
    sampler: str, tmp_path: Path, sig: signal.Signals, delay: float
) -> None:
    out = tmp_path / "m.json"
    argv = [sampler, *MEASURED, "-D", "30", "--json", str(out), "--load=kind=cpu,warmup=60", "--load=kind=hackbench"]
    with subprocess.Popen(argv, stderr=subprocess.PIPE, text=True) as proc:
        leader = load_leader(proc.pid)
        time.sleep(delay)
        sent = time.monotonic()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
    reason = f"stopped by {sig.name} during the load's warm-up"
    rec = _not_measured(subprocess.CompletedProcess(argv, proc.returncode, "", err), out, reason)
    assert took < 12  # SIGTERM, then at most 5 s before SIGKILL: never the 60 s warm-up
    assert rec["stopped_by"] == sig.name
    pgids = [x["pgid"] for x in rec["load"]["loads"]]
    assert leader in pgids and all(p > 0 for p in pgids)
    assert not any(session_processes(p) for p in pgids)
    assert not workdirs(proc.pid)


def test_stop_signal_mid_run_stops_the_loads_and_keeps_the_run(sampler: str, tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    argv = [sampler, *MEASURED, "-D", "60", "--json", str(out), "--load=kind=hackbench,warmup=0.5,workers=1"]
    with subprocess.Popen(argv, stderr=subprocess.PIPE, text=True) as proc:
        leader = load_leader(proc.pid)
        time.sleep(2.5)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert proc.returncode == 0
    rec = record(out)
    load = rec["load"]
    assert rec["measured"] is True and rec["stopped_by"] == "SIGTERM" and load["pgid"] == leader
    assert load["command"][:2] == ["sh", "-c"] and load["cpus"][0] == 1
    runs = (tmp_path / "m.load" / "load.log").read_text().count("rtgate-hackbench-run")
    assert load["hackbench_loops"] == 500 * runs
    assert 1.5 < load["seconds"] < 10
    assert not session_processes(leader) and not workdirs(proc.pid)


@pytest.mark.parametrize("kind", ["cpu", "hackbench", "custom"])
def test_sigkill_of_the_sampler_leaves_no_load_process(sampler: str, tmp_path: Path, kind: str) -> None:
    out = tmp_path / "m.json"
    spec = [f"--load=kind={kind},warmup=0.5"]
    if kind == "custom":  # a command whose own children do not die with their parent
        spec += ["--load-arg=sh", "--load-arg=-c", "--load-arg=sleep 600 & sleep 600 & while :; do :; done"]
    with subprocess.Popen([sampler, *MEASURED, "-D", "600", "--json", str(out), *spec]) as proc:
        leader = load_leader(proc.pid)
        time.sleep(2.0)  # measuring
        assert len(session_processes(leader)) >= (3 if kind == "custom" else 1)
        proc.kill()
        proc.wait(timeout=10)
    assert gone_within(leader, 12.0) == []  # SIGTERM, at most 5 s, SIGKILL
    deadline = time.monotonic() + 5
    while workdirs(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not workdirs(proc.pid)


def test_several_loads_each_in_its_folder_and_judged(sampler: str, tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    r = run_tool(
        [sampler, *MEASURED, "-D", "2", "--json", str(out), "--load=kind=timer,cpus=1,warmup=0.5,workers=1"]
        + ["--load=kind=hackbench,cpus=1,warmup=1,min=0"]
    )
    assert r.returncode == 0, r.stderr
    load = record(out)["load"]
    assert load["kind"] == "timer+hackbench" and load["cpus"] == [1]
    timer, hackbench = load["loads"]
    kept = (tmp_path / "m.load-0-timer" / "stress-ng.yaml").read_text()
    rate = sum(float(x.split(":")[1]) for x in kept.splitlines() if "bogo-ops-per-second-real-time:" in x)
    assert timer["level"] == {"unit": "timer expirations/s", "min": 1.0, "reached": round(rate, 3)}
    assert hackbench["level"]["min"] == 0.0 and (tmp_path / "m.load-1-hackbench" / "load.log").is_file()
    assert load["problem"] == timer["problem"] == hackbench["problem"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--load=kind=cpux"], "--load=kind=cpux: kind: 'cpux' is not a load kind"),
        (["--load=kind=cpu,workerz=2"], "--load=kind=cpu,workerz=2: unknown key 'workerz'"),
        (["--load=kind=cpu,workers=2 --gate=x"], "workers: '2 --gate=x' is not a worker count"),
        (["--load=kind=cpu,warmup=1s"], "warmup: '1s' is not a warm-up in seconds"),
        (["--load=kind=cpu,size=8M"], "size: for memory and io loads only"),
        (["--load=kind=memory,size=8MB"], "size: '8MB' is not a size such as 64M or 1G"),
        (["--load=kind=cpu,cpus=9999"], "cpus: '9999' is not a CPU list"),
        (["--load=kind=cpu,kind=io"], "kind given twice"),
        (["--load-arg=ls"], "--load-arg follows a --load=kind=custom"),
        (["--load=kind=cpu", "--load-arg=ls"], "--load-arg follows a --load=kind=custom"),
        (["--load=kind=custom"], "--load=kind=custom needs its command as --load-arg=WORD options"),
        (["--load=kind=cpu", "-S"], "the load goes on the other CPUs, but the measurement uses every CPU"),
        (["--load-dir=/tmp/x"], "--load-dir needs --load"),
    ],
)
def test_bad_load_options_are_one_line_usage_errors(
    sampler: str, tmp_path: Path, args: list[str], message: str
) -> None:
    cpus = ["-q"] if "-S" in args else MEASURED
    r = run_tool([sampler, *cpus, "-D", "1", "--json", str(tmp_path / "m.json"), *args], timeout=30)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.splitlines()) == 1 and message in r.stderr, r.stderr
    assert not (tmp_path / "m.json").exists()


def test_kcompile_builds_a_tree_out_of_place_and_counts_the_builds(sampler: str, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    # a tree whose every build and clean succeeds at once: the loop's count is then known from the log
    (tree / "Makefile").write_text("all:\n\t@echo built-in-$(O)\ndefconfig clean:\n\t@true\n")
    out = tmp_path / "m.json"
    r = run_tool(
        [sampler, *MEASURED, "-D", "1", "--json", str(out), "--load=kind=kcompile,tree=tree,warmup=0.2,min=0"],
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    load = record(out)["load"]
    assert load["tree"] == str(tree)  # made absolute: the load runs in its own temporary folder
    assert load["command"][-2] == str(tree) and load["command"][-1].endswith("/build")
    log = (tmp_path / "m.load" / "load.log").read_text()
    assert load["builds"] == log.count("rtgate-kcompile-run") > 0
    r = run_tool([sampler, *MEASURED, "-D", "1", "--json", str(out), f"--load=kind=kcompile,tree={tmp_path}"])
    _not_measured(r, out, f"load kcompile: {tmp_path} is not a kernel source tree (no Makefile)")


@pytest.mark.slow
def test_a_load_carries_its_own_bound_when_the_sampler_hangs(sampler: str, tmp_path: Path) -> None:
    """A sampler that never stops its loads (stopped here with SIGSTOP) still cannot leave them running:
    they end at their bound, the warm-up plus 1.1 times the measurement plus 30 s (31 s here), then 5 s."""
    out = tmp_path / "m.json"
    argv = [sampler, *MEASURED, "-D", "1", "--json", str(out), "--load=kind=custom,warmup=0", "--load-arg=sleep"]
    with subprocess.Popen([*argv, "--load-arg=1000"]) as proc:
        leader = load_leader(proc.pid)
        proc.send_signal(signal.SIGSTOP)
        t0 = time.monotonic()
        try:
            assert gone_within(leader, 60) == []
            took = time.monotonic() - t0
        finally:
            proc.send_signal(signal.SIGCONT)
            proc.wait(timeout=60)
    assert 30 < took < 45
    # the record says the load did not hold: ended by SIGTERM, as a load that died mid-run (and the
    # stopped sampler's unmeasured time is an overrun beside it)
    assert "the custom load stopped during the measurement (exit status -15)" in record(out)["invalid"]


NEVER_RAN = json.loads((FIXTURES / "rtgate-sampler" / "loads-never-ran.json").read_text())


@pytest.mark.parametrize("kinds", list(NEVER_RAN))
def test_the_record_of_loads_that_never_ran(sampler: str, tmp_path: Path, kinds: str) -> None:
    """Key for key, value for value and in its key order, the load object is the known answer the Python load
    supervisor gave before the engine replaced it (tests/fixtures/rtgate-sampler/README.md). No tool on PATH:
    nothing runs."""
    out = tmp_path / "m.json"
    args = [f"--load=kind={k},cpus=1" for k in kinds.split("+")] + (["--load-arg=x"] if kinds == "custom" else [])
    r = run_tool([sampler, *MEASURED, "-D", "1", "--json", str(out), *args], env={"PATH": str(tmp_path)})
    c_record = _not_measured(r, out, json.loads(out.read_text())["rtgate_run"]["not_measured"])["load"]
    assert c_record == NEVER_RAN[kinds] and list(c_record) == list(NEVER_RAN[kinds])


def test_load_folders_left_by_a_sigkill_are_reclaimed(sampler: str, tmp_path: Path) -> None:
    """A sampler killed by SIGKILL cannot remove its loads' folders; the next one that runs a load does: those whose
    owner is gone, never a live owner's, a name that is no pid's, or a link."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    dead = subprocess.Popen(["true"])
    dead.wait()  # its pid is free now (reuse within this test is the one case left alone, and harmless)
    left = tmp / f"rtgate-load-{dead.pid}-abc123"
    (left / "project").mkdir(parents=True)
    alive = tmp / f"rtgate-load-{os.getpid()}-def456"
    alive.mkdir()
    other = tmp / "rtgate-load-notapid"
    other.mkdir()
    link = tmp / f"rtgate-load-{dead.pid}-link"
    link.symlink_to(alive)
    load = ["--load=kind=custom,cpus=1,warmup=0", "--load-arg=sleep", "--load-arg=30"]
    argv = [sampler, *MEASURED, "-D", "1", "--json", str(tmp_path / "m.json"), *load]
    r = run_tool(argv, env={**os.environ, "TMPDIR": str(tmp)})
    assert r.returncode in (0, 1), r.stderr
    assert not left.exists() and alive.is_dir() and other.is_dir() and link.is_symlink()
    assert sorted(p.name for p in tmp.iterdir()) == sorted([alive.name, other.name, link.name])  # its own: gone too
