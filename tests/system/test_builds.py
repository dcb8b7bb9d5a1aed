# SPDX-License-Identifier: GPL-2.0-or-later
"""The sampler's other builds: sanitizers, a static aarch64 cross build run under qemu."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, RT_OPTS, run_tool


def meson(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(["meson", *args], capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r


@pytest.fixture(scope="module")
def asan_build(tmp_path_factory: pytest.TempPathFactory, tool: object) -> Path:
    tool("meson", "meson")  # type: ignore[operator]
    build = tmp_path_factory.mktemp("asan") / "build"
    meson(
        "setup",
        str(build),
        str(ROOT),
        "-Db_sanitize=address,undefined",
        "-Db_lundef=false",
        "-Dbuildtype=debug",
        "-Dharness=disabled",
    )
    meson("compile", "-C", str(build))
    return build


def test_unit_tests_under_sanitizers(asan_build: Path) -> None:
    r = meson("test", "-C", str(asan_build), "--print-errorlogs")
    ok = re.search(r"^Ok:\s+(\d+)\s*$", r.stdout, re.M)
    assert ok and int(ok.group(1)) >= 5 and re.search(r"^Fail:\s+0\s*$", r.stdout, re.M), r.stdout


def test_sampler_runs_clean_under_sanitizers(asan_build: Path, tmp_path: Path) -> None:
    exe = asan_build / "sampler" / "rtgate-sampler"
    env = {
        "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=1",
        "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
        "PATH": "/usr/bin:/bin",
    }
    out = tmp_path / "r.json"
    r = run_tool(
        [
            str(exe),
            *[o for o in RT_OPTS if o != "-m"],
            "-t",
            "2",
            "-i",
            "200",
            "-l",
            "2000",
            "-h",
            "50",
            "--loops-per-thread",
            "--spike=20",
            "-v",
            "-o",
            "10",
            f"--json={out}",
            "--checkpoint=1",
        ],
        env=env,
    )
    assert r.returncode == 0, r.stderr[-4000:]
    assert "runtime error" not in r.stderr and "AddressSanitizer" not in r.stderr
    doc = json.loads(out.read_text())
    assert doc["thread"]["1"]["cycles"] + doc["rtgate"]["threads"][1]["missed_periods"] == 2000
    p = subprocess.Popen(
        [str(exe), "-t", "2", "-i", "500", "-q", f"--json={out}"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0 and "Sanitizer" not in err and "runtime error" not in err, err[-4000:]
    # The timerlat backend's paths this kernel takes (its needs judged, rtla's command line built, the
    # record of a run not measured); tests/system/test_timerlat_qemu.py runs rtla itself.
    timerlat = ["-S", "-p", "95", "-D", "2s", "--measurement=k", "--timerlat=bucket=1,entries=100,sched=f:95,irq=9"]
    for extra in ([f"--output-dir={tmp_path}"], ["--check-only", f"--output-dir={tmp_path}"]):
        r = run_tool([str(exe), *timerlat, *extra], env=env)
        assert r.returncode in (0, 1), r.stderr[-4000:]
        assert "Sanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr[-4000:]
    assert json.loads(r.stdout)["backend"]["command"][1:3] == ["timerlat", "hist"]


CROSS = [
    pytest.param(
        "aarch64",
        "aarch64-linux-gnu-gcc",
        "gcc-aarch64-linux-gnu",
        "qemu-aarch64-static",
        "aarch64",
        "aarch64",
        id="aarch64",
    ),
    pytest.param(
        "powerpc", "powerpc-linux-gnu-gcc", "gcc-powerpc-linux-gnu", "qemu-ppc-static", "PowerPC", "ppc", id="powerpc32"
    ),
]


@pytest.mark.parametrize("name, gcc, package, qemu_name, file_arch, machine", CROSS)
def test_static_cross_build_runs_under_qemu(
    tmp_path: Path,
    tool: object,
    cross_build: Any,
    name: str,
    gcc: str,
    package: str,
    qemu_name: str,
    file_arch: str,
    machine: str,
) -> None:
    tool(gcc, package)  # type: ignore[operator]
    qemu = tool(qemu_name, "qemu-user-static")  # type: ignore[operator]
    build = cross_build(name)  # the build tests/system/test_lava_arm64.py boots on an arm64 board
    exe = build / "sampler" / "rtgate-sampler"
    info = subprocess.run(["file", str(exe)], capture_output=True, text=True).stdout if shutil.which("file") else ""
    if info:
        assert file_arch in info and "statically linked" in info
    out = tmp_path / "r.json"
    r = run_tool([qemu, str(exe), "-t", "1", "-i", "1000", "-l", "200", "-q", f"--json={out}"])
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    t = doc["rtgate"]["threads"][0]
    assert doc["thread"]["0"]["cycles"] + t["missed_periods"] == 200 and doc["sysinfo"]["machine"] == machine
    meson("test", "-C", str(build))  # the C unit tests, run through the cross file's qemu wrapper


@pytest.mark.slow
def test_fuzz_targets_run_clean(tmp_path: Path, tool: object) -> None:
    """libFuzzer over the option, gate, load and system-record parsers (ASan + UBSan), briefly: sampler/fuzz/run.sh."""
    tool("clang", "clang")  # type: ignore[operator]
    r = subprocess.run(
        ["sh", str(ROOT / "sampler" / "fuzz" / "run.sh"), "20", str(tmp_path / "fuzz")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    runs = [int(n) for n in re.findall(r"number_of_executed_units: (\d+)", r.stdout)]
    assert len(runs) == 4 and min(runs) > 1000, r.stdout
