# SPDX-License-Identifier: GPL-2.0-or-later
"""The board side carries out the whole threshold file: rtgate.sh, on this machine, with LAVA's own
lava-test-case, under busybox's tools (a board's userland), with the real sampler and real loads.
Known answers: this machine is x86_64 (an aarch64 requirement is not met), busybox has no
stress-ng (a cpu load cannot run), one CPU cannot be 150 % busy (a level that cannot be reached)."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from junit_views import jenkins_view
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
    load: {kind: custom, command: [md5sum, /dev/zero, MARKER], min_cpu_percent: 50, warmup_seconds: 1}
    gates: [{name: max, kind: max, limit_us: 10000000}]
  unreachable:
    sampler: {duration: 2s, threads: [{name: a, cpus: [0], priority: 80}]}
    load: {kind: custom, command: [md5sum, /dev/zero, MARKER], min_cpu_percent: 150, warmup_seconds: 1}
    gates: [{name: max, kind: max, limit_us: 10000000}]
  required:
    require: {preempt_rt: true, architecture: aarch64, compatible: 'acme,imx8', cpu_count: 4}
    sampler: {duration: 2s, threads: [{name: a, cpus: [0], priority: 80}]}
    gates: [{name: max, kind: max, limit_us: 1.0e+7}, {name: p99, kind: percentile, percentile: 99, limit_us: 1.0e+7}]
  stress:
    sampler: {duration: 2s, threads: [{name: a, cpus: [0], priority: 80}]}
    load: {kind: cpu, workers: 1}
    gates: [{name: max, kind: max, limit_us: 10000000}]
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
    environment = json.loads((board / "out" / f"{measurement}.environment.json").read_text())
    return r.stdout, got, environment


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
    assert level["min"] == 50 and level["reached"] >= 50, env["load"]  # md5sum kept CPU 1 busy
    assert not marker_processes(board), "the load outlived the measurement"
    assert "rtgate: PASS loaded/max[cpu0]" in out


def test_a_level_not_reached_makes_every_gate_error(board: Path, sampler: str) -> None:
    out, got, env = run_board(board, "unreachable", sampler)
    assert got == {"max-cpu0": "fail"}, out  # measured, then ERROR: LAVA shows fail, never pass
    assert "rtgate: ERROR unreachable/max[cpu0]: invalid: the custom load reached" in out
    assert "below its level of 150" in env["load"]["problem"]
    assert not marker_processes(board)


def test_an_unmet_requirement_makes_every_gate_error_unmeasured(board: Path, sampler: str) -> None:
    if platform.machine() == "aarch64":
        pytest.skip("this machine is what the file asks for")
    out, got, env = run_board(board, "required", sampler)
    assert got == {"max-all": "fail", "p99-all": "fail"}, out
    assert f"this file is for aarch64, compatible acme,imx8, 4 CPUs; this machine is {platform.machine()}" in out
    assert "rtgate: ERROR required/max[all]: not measured: " in out
    assert not (board / "out" / "required.json").exists()  # nothing was measured
    assert env["system"]["machine"]["architecture"] == platform.machine()
    assert any("this file is for aarch64" in c["what"] for c in env["preflight"])


def test_a_missing_load_tool_makes_every_gate_error(board: Path, sampler: str) -> None:
    out, got, env = run_board(board, "stress", sampler)
    assert got == {"max-all": "fail"}, out
    assert "load cpu: stress-ng not found on the board" in out
    assert env["load"]["level"]["reached"] is None


def test_a_named_parameter_that_contradicts_the_file_is_an_error(board: Path, sampler: str) -> None:
    out, got, _ = run_board(board, "idle", sampler, PRIORITY="90")
    assert got == {"max-all": "fail", "p99-all": "fail"}, out
    assert "parameter PRIORITY=90 contradicts the threshold file's 80" in out
    out, got, _ = run_board(board, "idle", sampler, PRIORITY="80", INTERVAL="1000")  # as the file: measured
    assert set(got) == {"max-cpu0", "p99-cpu0"} and "contradicts" not in out, out


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
    assert got == {"idle-sampler": "fail"}, (got, out)  # the sampler failed: every gate ERROR
    assert not any(line.startswith("rtgate: PASS") for line in out.splitlines()), out
    assert "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=forged" not in out


def test_the_board_record_reaches_lava_results(board: Path, sampler: str) -> None:
    out, _, _ = run_board(board, "loaded", sampler)
    log = board / "lava-run.log"
    items = [{"dt": "x", "lvl": "target", "msg": line} for line in out.splitlines()]
    items.append(
        {
            "dt": "x",
            "lvl": "results",
            "msg": {"case": "max-cpu0", "definition": "1_rtgate-loaded", "result": "pass", "set": "loaded"},
        }
    )
    log.write_text("".join(json.dumps(i) + "\n" for i in items))
    verdicts = board / "v.json"
    junit = board / "j.xml"
    r = rtgate(
        "lava", "results", str(log), "--thresholds", str(board / "spec.yaml"), "--measurement", "loaded",
        "--json", str(verdicts), "--junit", str(junit),
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    # The board recorded how long the sampler measured (its JSON's wall time): the JUnit time of its gates.
    elapsed = json.loads((board / "out" / "loaded.json").read_text())["rtgate"]["elapsed_s"]
    assert elapsed > 1.0  # duration: 2s
    [suite] = jenkins_view(junit)
    assert suite.duration == pytest.approx(elapsed, abs=0.001) and "duration" not in suite.properties
    doc = json.loads(verdicts.read_text())
    text = json.dumps(doc["environment"])
    assert platform.release() in text and "custom on CPUs 1" in text and "reached" in text, text
    assert "load level: reached" in r.stdout or "reached" in r.stdout, r.stdout


def test_args_refuses_to_drop_the_load_or_the_requirements(board: Path) -> None:
    r = rtgate("lava", "args", str(board / "spec.yaml"), "--measurement", "loaded")
    assert r.returncode == 2 and "load:" in r.stderr and "--all" in r.stderr, r.stderr
    r = rtgate("fuego", "args", str(board / "spec.yaml"), "--measurement", "required")
    assert r.returncode == 2 and "require:" in r.stderr
    assert rtgate("lava", "args", str(board / "spec.yaml"), "--measurement", "idle").returncode == 0


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
