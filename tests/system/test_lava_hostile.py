# SPDX-License-Identifier: GPL-2.0-or-later
"""`rtgate lab` against a hostile server (issue 47): tests/lava/hostile.py answers LAVA's REST API with
one job of known results and log, and makes the answers the test names hostile. The token never
reaches another host; a same-server redirect still works; a 3 GB log or results export costs a
bounded memory and CPU (its own rusage, from wait4 in a small parent); --timeout and SIGTERM end the command on
time against a server that trickles a byte every 2 s or never answers; garbage is retried a bounded
number of times, then said. The proof against a real LAVA server is test_lava_server.py's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from conftest import ROOT

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lava"))
from hostile import GARBAGE, JOB, Hostile

from rtgate.lava.client import MAX_LOG_BYTES, MAX_RESULTS_BYTES
from rtgate.lava.lab import STOP_GRACE_S

TOKEN = "s3cret-token-47"
SPEC = str(ROOT / "thresholds" / "two-thread-example.yaml")
KNOWN = {("a/app", "a-max"): "PASS", ("a/app", "b-over-100us"): "INCONCLUSIVE"}  # hostile.py's job
LIMIT_S = 120  # any run here that is not stopped on purpose ends in seconds; this only catches a hang


@dataclass
class Ran:
    code: int
    stdout: str
    stderr: str
    wall_s: float
    cpu_s: float
    max_rss_kib: int
    ended: float  # time.monotonic() when the child was seen gone


def lab_file(tmp_path: Path) -> Path:
    doc = {
        "name": "hostile",
        "boards": [
            {
                "name": "a",
                "device_type": "qemu",
                "thresholds": SPEC,
                "inline": True,
                "kernel": "https://lab.example/bzImage",
                "ramdisk": "https://lab.example/initrd.gz",
            }
        ],
    }
    path = tmp_path / "lab.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


# The command's own CPU time and peak memory: it is forked from this small parent, which reports them.
# (Forked from pytest itself, its ru_maxrss would start at pytest's peak: exec carries the forking
# process's high-water mark over, and pytest grows to hundreds of MiB over the suite.)
OWN_USAGE = """
import json, os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    json.dump({"cpu_s": usage.ru_utime + usage.ru_stime, "max_rss_kib": usage.ru_maxrss}, f)
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def start_lab(
    tmp_path: Path, url: str, *args: str, usage: Path | None = None
) -> tuple[subprocess.Popen[bytes], Path, Path]:
    """`rtgate lab` as a child of this test (signals go to it), or, with `usage`, as a child of OWN_USAGE."""
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    env = {**os.environ, "RTGATE_LAVA_URL": url, "RTGATE_LAVA_TOKEN": TOKEN}
    argv = [sys.executable, "-m", "rtgate", "lab", str(lab_file(tmp_path)), "--poll", "1", *args]
    if usage is not None:
        argv = [sys.executable, "-c", OWN_USAGE, str(usage), *argv]
    with out.open("wb") as o, err.open("wb") as e:
        proc = subprocess.Popen(argv, stdout=o, stderr=e, env=env)
    return proc, out, err


def finish(
    proc: subprocess.Popen[bytes],
    out: Path,
    err: Path,
    started: float,
    limit_s: float = LIMIT_S,
    usage: Path | None = None,
) -> Ran:
    """Wait for the child, killing it past limit_s; its CPU time and peak memory from `usage`, else wait4's."""
    while True:
        pid, status, waited = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - started > limit_s:
            proc.kill()
            os.wait4(proc.pid, 0)
            pytest.fail(f"rtgate lab still ran after {limit_s} s:\n{err.read_text()}")
        time.sleep(0.05)
    ended = time.monotonic()
    proc.returncode = os.waitstatus_to_exitcode(status)
    own = json.loads(usage.read_text()) if usage is not None else {}
    return Ran(
        proc.returncode,
        out.read_text(),
        err.read_text(),
        ended - started,
        own.get("cpu_s", waited.ru_utime + waited.ru_stime),
        own.get("max_rss_kib", waited.ru_maxrss),
        ended,
    )


def lab(tmp_path: Path, url: str, *args: str) -> Ran:
    started = time.monotonic()
    usage = tmp_path / "usage.json"
    proc, out, err = start_lab(tmp_path, url, *args, usage=usage)
    return finish(proc, out, err, started, usage=usage)


def verdicts(tmp_path: Path) -> dict[tuple[str, str], dict[str, object]]:
    doc = json.loads((tmp_path / "v.json").read_text())
    return {(v["measurement"], v["gate"]): v for v in doc["verdicts"]}


def error_lines(r: Ran) -> list[str]:
    return [line for line in r.stderr.splitlines() if line.startswith("rtgate: error: ")]


# -- credentials ------------------------------------------------------------------------------


@pytest.mark.parametrize("route", ["submit", "list", "results", "log"])
def test_a_redirect_to_another_host_is_refused_and_the_token_stays(tmp_path: Path, route: str) -> None:
    """The issue's collector: every request redirected to another host logged the token. Now the redirect
    is an error naming both servers, and the other host sees no request at all."""
    with Hostile() as other, Hostile(faults={route: "redirect-away"}, state="Finished") as lava:
        lava.away = f"http://localhost:{other.port}/"
        r = lab(tmp_path, lava.url, "--json", str(tmp_path / "v.json"))
        assert other.seen == [], [s.headers for s in other.seen]
    assert "Traceback" not in r.stderr
    assert "redirected /api/v0.2/jobs/" in r.stderr and f"to http://localhost:{other.port}/" in r.stderr, r.stderr
    assert f"(http://localhost:{other.port}, not http://127.0.0.1:{lava.port})" in r.stderr, r.stderr
    got = verdicts(tmp_path)
    if route == "list":  # no poll can be answered: given up at once, the job cancelled, exit 2
        assert r.code == 2 and len(error_lines(r)) == 1 and "gave up on LAVA" in error_lines(r)[0], r.stderr
        assert len(lava.requests_to("list")) == 2 and lava.requests_to("cancel"), lava.seen  # the poll, the check
    elif route == "log":  # LAVA's rows still count; the board's own INCONCLUSIVE is then not known
        assert r.code == 1 and {k: v["status"] for k, v in got.items()} == {**KNOWN, ("a/app", "b-over-100us"): "FAIL"}
    else:
        assert r.code == 1 and {v["status"] for v in got.values()} == {"ERROR"}, got
        assert all("redirected" in str(v["reason"]) for v in got.values()), got


def test_a_redirect_to_another_scheme_is_refused(tmp_path: Path) -> None:
    with Hostile(faults={"results": "redirect-scheme"}) as lava:
        r = lab(tmp_path, lava.url, "--json", str(tmp_path / "v.json"))
    assert r.code == 1, r.stderr
    assert f"(https://127.0.0.1:{lava.port}, not http://127.0.0.1:{lava.port})" in r.stderr, r.stderr
    assert {v["status"] for v in verdicts(tmp_path).values()} == {"ERROR"}


def test_a_redirect_on_the_same_server_is_followed_with_the_token(tmp_path: Path) -> None:
    routes = ("list", "job", "results", "log")
    with Hostile(faults=dict.fromkeys(routes, "redirect-same")) as lava:
        r = lab(tmp_path, lava.url, "--json", str(tmp_path / "v.json"))
    assert r.code == 3, r.stderr  # INCONCLUSIVE, as the board's console said
    assert {k: v["status"] for k, v in verdicts(tmp_path).items()} == KNOWN
    moved = [s for s in lava.seen if s.path.startswith("/moved/")]
    assert {s.path.split("/")[-2] if s.path.endswith("/") else "list" for s in moved} >= {"yaml", "logs", "list"}
    assert all(s.headers.get("Authorization") == f"Token {TOKEN}" for s in moved), moved


# -- bodies -----------------------------------------------------------------------------------


def test_a_3_gb_log_costs_bounded_memory_and_cpu(tmp_path: Path) -> None:
    """The issue: a 3 GB log cost 6.28 GB and 8.7 s of CPU. Now at most MAX_LOG_BYTES are read, as a stream
    keeping only the lines rtgate reads, and the cut is said; the console line at its start still counts."""
    with Hostile(faults={"log": "huge"}) as lava:
        r = lab(tmp_path, lava.url, "--json", str(tmp_path / "v.json"))
    assert r.code == 3, r.stderr
    assert {k: v["status"] for k, v in verdicts(tmp_path).items()} == KNOWN
    mib = MAX_LOG_BYTES >> 20
    assert f"rtgate lab: a: job {JOB}'s log is larger than {mib} MiB: only its first {mib} MiB were read" in r.stderr
    assert r.max_rss_kib < 200 * 1024 and r.cpu_s < 5.0, (r.max_rss_kib, r.cpu_s)


def test_3_gb_of_results_are_refused_at_their_bound(tmp_path: Path) -> None:
    with Hostile(faults={"results": "huge"}) as lava:
        r = lab(tmp_path, lava.url, "--json", str(tmp_path / "v.json"))
    assert r.code == 1, r.stderr
    got = verdicts(tmp_path)
    assert {v["status"] for v in got.values()} == {"ERROR"}, got
    why = f"job {JOB}'s results from LAVA is larger than {MAX_RESULTS_BYTES >> 20} MiB: not read"
    assert all(why in str(v["reason"]) for v in got.values()), got
    assert r.max_rss_kib < 200 * 1024 and r.cpu_s < 5.0, (r.max_rss_kib, r.cpu_s)


# -- time ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("fault", ["trickle", "silent"])
def test_timeout_is_a_deadline_against_a_slow_server(tmp_path: Path, fault: str) -> None:
    """--timeout 20s against a server that trickles a byte every 2 s (each read gets one, so no per-read
    timeout trips) or never answers: the job is submitted, every later answer is slow, and the command
    ends at 20 s plus the STOP_GRACE_S it gives the cancel, with every gate a verdict."""
    slow = dict.fromkeys(("list", "job", "cancel", "results", "log"), fault)
    with Hostile(faults=slow, state="Running") as lava:
        r = lab(tmp_path, lava.url, "--timeout", "20s", "--json", str(tmp_path / "v.json"))
        assert lava.requests_to("cancel"), lava.seen  # asked for, even if never answered
        submitted = lava.requests_to("submit")[0].at  # the deadline is set just before: from here, not startup
    assert 20 - 1 <= r.ended - submitted <= 20 + STOP_GRACE_S + 4, r.ended - submitted
    assert r.code == 1, r.stderr
    assert f"stopped by its --timeout (20 s): cancelling job {JOB}" in r.stderr, r.stderr
    assert {v["status"] for v in verdicts(tmp_path).values()} == {"ERROR"}


@pytest.mark.parametrize("fault", ["trickle", "silent"])
def test_sigterm_ends_it_within_seconds_against_a_slow_server(tmp_path: Path, fault: str) -> None:
    """The issue: after SIGTERM it printed "cancelling job 1" and still ran 5 s later. The signal interrupts
    the blocked read; cancelling and collecting end within STOP_GRACE_S."""
    slow = dict.fromkeys(("list", "job", "cancel", "results", "log"), fault)
    with Hostile(faults=slow, state="Running") as lava:
        started = time.monotonic()
        proc, out, err = start_lab(tmp_path, lava.url, "--json", str(tmp_path / "v.json"))
        while not lava.requests_to("list") and time.monotonic() - started < LIMIT_S:
            time.sleep(0.05)  # the poll is under way: rtgate is blocked in its read
        time.sleep(1.0)
        proc.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        r = finish(proc, out, err, started)
        assert lava.requests_to("cancel"), lava.seen
    assert r.ended - signalled <= STOP_GRACE_S + 4, r.ended - signalled
    assert r.code == 3, r.stderr  # INCONCLUSIVE: stopped early
    assert f"stopped by SIGTERM: cancelling job {JOB}" in r.stderr, r.stderr
    assert {v["status"] for v in verdicts(tmp_path).values()} == {"INCONCLUSIVE"}


# -- garbage ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(GARBAGE))
def test_garbage_results_are_retried_then_said(tmp_path: Path, kind: str) -> None:
    """A garbage answer to a read (XML-RPC's fault, an HTML error page, cut or misshapen JSON, nothing) is
    asked again, GET_ATTEMPTS times in all, backing off; then every gate is an ERROR saying what came."""
    from rtgate.lava.client import GET_ATTEMPTS

    with Hostile(faults={"results": kind}) as lava:
        r = lab(tmp_path, lava.url, "--json", str(tmp_path / "v.json"))
        asked = len(lava.requests_to("results"))
    assert asked == GET_ATTEMPTS, asked
    assert r.code == 1, r.stderr
    got = verdicts(tmp_path)
    assert {v["status"] for v in got.values()} == {"ERROR"}, got
    why = f"cannot read the results of job {JOB}: LAVA {lava.url} sent no list of results for jobs/{JOB}/yaml/: "
    assert all(why in str(v["reason"]) for v in got.values()), got
    assert f"rtgate lab: a: {why}" in r.stderr, r.stderr


def test_a_job_list_of_garbage_is_given_up_after_a_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --timeout, a job list answered with garbage was asked for ever. Now MAX_FAILED_POLLS failed
    polls in a row (backing off) give the server up: the job is cancelled, and the run is incomplete.
    In-process, with the bound and the poll shortened: the backing off at the real ones takes minutes."""
    from rtgate.lava import lab as lab_module
    from rtgate.lava.client import LavaServer
    from rtgate.lava.lab import load_lab, run_lab

    monkeypatch.setattr(lab_module, "MAX_FAILED_POLLS", 3)
    for kind in ("xml", "shape"):  # each kind is read by the same code: test_garbage_results_... has them all
        with Hostile(faults={"list": kind, "job": kind}, state="Running") as lava:
            lost: list[str] = []
            lines: list[str] = []
            started = time.monotonic()
            runs = run_lab(load_lab(lab_file(tmp_path)), LavaServer(lava.url, TOKEN), lines.append, 0.05, None, lost)
            assert time.monotonic() - started < 30
            assert len(lava.requests_to("list")) == 3 + 1, (kind, lava.seen)  # 3 polls and the cancel check
            assert len(lava.requests_to("cancel")) == 1, kind
        assert len(lost) == 1 and lost[0].startswith("gave up on LAVA after 3 failed polls in a row"), lost
        assert "jobs/?id__in=7" in lost[0], lost
        # what the job had recorded (its results still read once the polls were given up) counts
        assert {(v.measurement, v.gate): v.status.value for v in runs[0].verdicts} == KNOWN
