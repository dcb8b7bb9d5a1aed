"""The real rtgate-sampler: outputs, exit statuses, and results that survive being stopped."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import IS_ROOT, RT_OPTS, load_json, run_tool

T_LINE = re.compile(r"^T:\s*(\d+) \(\s*\d+\) P:\s*\d+ I:\d+ C:\s*(\d+) Min:\s*\d+ Act:\s*\d+ Avg:\s*\d+ Max:\s*\d+$")


def test_quiet_run_prints_one_t_line_per_thread(sampler: str) -> None:
    r = run_tool([sampler, *RT_OPTS, "-t", "2", "-i", "1000", "-l", "200", "-q"])
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("T:")]
    assert len(lines) == 2
    for i, ln in enumerate(lines):
        m = T_LINE.match(ln)
        assert m, ln
        assert int(m.group(1)) == i and int(m.group(2)) == 200


def test_json_cycles_equal_histogram_total_plus_overflow(sampler: str, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    r = run_tool([sampler, *RT_OPTS, "-S", "-i", "200", "-l", "3000", "-q", "-h", "30",
                  f"--histfile={tmp_path / 'h.txt'}", f"--json={out}"])
    assert r.returncode == 0, r.stderr
    doc = load_json(out)
    assert doc["num_threads"] == os.cpu_count()
    for key, t in doc["thread"].items():
        rg = doc["rtgate"]["threads"][int(key)]
        in_view = sum(t["histogram"].values())
        assert t["cycles"] == 3000
        assert t["cycles"] == in_view + rg["overflows"]
        assert sum(b[2] for b in rg["histogram"]) == t["cycles"]  # full range: nothing unknown
        assert all(int(k) < 30 for k in t["histogram"])
        assert rg["min"] == t["min"] and rg["max"] == t["max"]
        assert rg["cpu"] == int(key)
    assert doc["rtgate"]["complete"] is True
    assert doc["rtgate"]["stop_reason"] == "loops"
    text = (tmp_path / "h.txt").read_text()
    assert text.startswith("# Histogram\n000000 ")
    assert "# Histogram Overflow at cycle number:" in text


def test_block_maxima_cover_the_run(sampler: str, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    r = run_tool([sampler, *RT_OPTS, "-t", "1", "-i", "500", "-l", "2100", "--block=0.1", "-q", f"--json={out}"])
    assert r.returncode == 0, r.stderr
    t = load_json(out)["rtgate"]["threads"][0]
    bm = t["block_maxima"]
    assert bm["block_cycles"] == 200
    assert len(bm["values"]) == 10 and bm["partial_cycles"] == 100
    assert max(bm["values"] + [bm["partial_max"]]) == t["max"]


@pytest.mark.parametrize("argv, needle", [
    (["--bogus-option"], "--bogus-option"),
    (["-i", "abc"], "'abc'"),
    (["-D", "1.5h"], "1.5h"),
    (["-a", "4096"], "-a"),
    (["-p", "120"], "priority"),
    (["-t", "2", "stray"], "stray"),
])
def test_bad_options_exit_2_with_one_line(sampler: str, argv: list[str], needle: str) -> None:
    r = run_tool([sampler, *argv])
    assert r.returncode == 2
    assert needle in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert r.stdout == ""


def test_old_nanosleep_option_is_accepted(sampler: str) -> None:
    r = run_tool([sampler, "-n", "-l", "10", "-i", "1000", "-q"])
    assert r.returncode == 0, r.stderr
    assert "C:     10" in r.stdout


@pytest.fixture(scope="module")
def public_sampler(sampler: str) -> Any:
    """A copy that nobody can run: the installed one may sit below a directory only root may enter."""
    import shutil
    import tempfile
    d = tempfile.mkdtemp(prefix="rtgate-public-")
    os.chmod(d, 0o755)
    path = os.path.join(d, "rtgate-sampler")
    shutil.copy(sampler, path)
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(d)


def test_missing_privilege_is_named(sampler: str, public_sampler: str) -> None:
    if not IS_ROOT:
        r = run_tool([sampler, "-p", "80", "-l", "10", "-q"])
    else:
        # Run as nobody, with no real-time allowance.
        r = run_tool(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                      "--inh-caps=-all", public_sampler, "-p", "80", "-l", "10", "-q"], cwd="/")
    if r.returncode == 0:
        pytest.skip("this account may use SCHED_FIFO 80 (RLIMIT_RTPRIO allows it)")
    assert r.returncode == 1
    assert "CAP_SYS_NICE" in r.stderr and "RLIMIT_RTPRIO" in r.stderr
    assert "SCHED_FIFO priority 80" in r.stderr


def test_mlock_failure_is_named(public_sampler: str) -> None:
    if not IS_ROOT:
        pytest.skip("needs root to drop to an unprivileged user")
    r = run_tool(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
                  "prlimit", "--memlock=65536", public_sampler, "-m", "-l", "10", "-q"], cwd="/")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "CAP_IPC_LOCK" in r.stderr and "RLIMIT_MEMLOCK" in r.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_at_a_random_moment_leaves_complete_json(sampler: str, tmp_path: Path, sig: int) -> None:
    rng = random.Random(sig)
    for attempt in range(6):
        out = tmp_path / f"r{attempt}.json"
        p = subprocess.Popen([sampler, *RT_OPTS, "-t", "2", "-i", "200", "-q", "-h", "100",
                              f"--histfile={tmp_path / 'h.txt'}", f"--json={out}"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(rng.uniform(0.0, 0.6))
        p.send_signal(sig)
        stdout, stderr = p.communicate(timeout=30)
        assert p.returncode == 0, stderr
        doc = json.loads(out.read_text())
        assert doc["rtgate"]["complete"] is True
        assert doc["rtgate"]["stop_reason"] == "signal"
        assert doc["rtgate"]["signal"] == signal.Signals(sig).name
        for key, t in doc["thread"].items():
            rg = doc["rtgate"]["threads"][int(key)]
            assert t["cycles"] == sum(t["histogram"].values()) + rg["overflows"]
            assert t["cycles"] == sum(b[2] for b in rg["histogram"])
            if t["cycles"] == 0:
                assert t["min"] is None and t["avg"] is None
        assert (tmp_path / "h.txt").read_text().startswith("# Histogram")
        assert not list(tmp_path.glob("*.tmp.*"))


def test_sigkill_leaves_the_last_checkpoint(sampler: str, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    p = subprocess.Popen([sampler, *RT_OPTS, "-t", "1", "-i", "1000", "-q", f"--json={out}", "--checkpoint=1"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    cycles = 0
    while time.monotonic() < deadline and cycles == 0:
        time.sleep(0.3)
        if out.exists():
            cycles = json.loads(out.read_text())["thread"]["0"]["cycles"]
    p.kill()
    p.wait(timeout=10)
    doc = json.loads(out.read_text())
    assert cycles > 0, "no checkpoint with samples was written"
    assert doc["rtgate"]["complete"] is False
    assert doc["rtgate"]["stop_reason"] == "running"
    assert doc["thread"]["0"]["cycles"] >= cycles
    assert doc["thread"]["0"]["cycles"] == sum(b[2] for b in doc["rtgate"]["threads"][0]["histogram"])


def test_breaktrace_stops_and_reports(sampler: str, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    r = run_tool([sampler, *RT_OPTS, "-t", "1", "-i", "1000", "-D", "20s", "-b", "1", "-q", f"--json={out}"])
    assert r.returncode == 0, r.stderr
    assert "# Break value:" in r.stdout
    doc = load_json(out)
    assert doc["rtgate"]["stop_reason"] == "breaktrace"
    assert doc["rtgate"]["break_thread"] == 0
    assert doc["thread"]["0"]["max"] > 1


def test_verbose_prints_every_sample(sampler: str) -> None:
    r = run_tool([sampler, *RT_OPTS, "-t", "1", "-i", "500", "-l", "300", "-v"])
    assert r.returncode == 0, r.stderr
    samples = [ln for ln in r.stdout.splitlines() if re.match(r"^\s+0:\s+\d+:\s+\d+$", ln)]
    assert [int(s.split(":")[1]) for s in samples] == list(range(300))


def test_posix_timers_and_relative_modes_measure(sampler: str) -> None:
    for extra in (["-x"], ["-r"], ["-x", "-r"], ["-N"], ["-c", "1"], ["--secaligned"], ["-A", "100", "-t", "2"]):
        r = run_tool([sampler, *RT_OPTS, "-i", "1000", "-l", "50", "-q", *extra])
        assert r.returncode == 0, (extra, r.stderr)
        assert "C:     50" in r.stdout, (extra, r.stdout)


def test_sigusr1_prints_status_to_stderr(sampler: str) -> None:
    p = subprocess.Popen([sampler, *RT_OPTS, "-t", "1", "-i", "1000", "-D", "3s", "-q"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    p.send_signal(signal.SIGUSR1)
    time.sleep(0.3)
    p.send_signal(signal.SIGTERM)
    _, stderr = p.communicate(timeout=30)
    assert "current status" in stderr and "T: 0" in stderr
