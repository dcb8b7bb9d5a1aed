# SPDX-License-Identifier: GPL-2.0-or-later
"""An arm64 board with a PREEMPT_RT kernel under the real LAVA server (issue 45): the suite's LAVA
instance (tests/conftest.py's lava_server) boots its arm64 device, the stock qemu type as QEMU's
virt machine (TCG, cortex-a57, 2 vCPUs, 1 GiB), with Debian's linux-image-rt-arm64 kernel and a
busybox initramfs holding the static aarch64 sampler of the suite's cross build, Debian's arm64
packages fetched without being installed (tests/lava/foreign.py; scripts/bootstrap --test fetches
them). Jobs rendered by `rtgate lava job --arch arm64 --inline` go through the REST API; the
results come back through it and `rtgate lava results`, with the board's record: its
architecture, its preemption model and the level its load reached."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import IS_ROOT, LAVA_ARM64_DEVICE

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lava"))
from build_initramfs import PROMPT, build
from foreign import FetchError, fetch
from server import LocalLava

from test_lava_server import fetch as fetch_job
from test_lava_server import rtgate, submit, wait_jobs

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not IS_ROOT, reason="lava-server and lava-run need root")]

# Known answers on the arm64 PREEMPT_RT guest: no TCG wake-up takes 10 s (max PASS), every one is
# later than 0 us (impossible FAIL); busybox's shell loop keeps the other vCPU busy (a custom load:
# no stress-ng in the initramfs), above the 50 % its level asks.
SPEC = """\
platform: qemu-arm64-rt
require: {preempt_rt: true, architecture: aarch64}
measurements:
  idle:
    sampler: {interval_us: 1000, duration: 3s, priority: 80, threads: [{name: a, cpus: [0]}]}
    gates:
      - {name: max, kind: max, limit_us: 10000000}
      - {name: impossible, kind: max, limit_us: 0}
  loaded:
    sampler: {interval_us: 1000, duration: 3s, priority: 80, threads: [{name: a, cpus: [0]}]}
    load:
      kind: custom
      command: [sh, -c, "while :; do :; done"]
      cpus: others
      min_cpu_percent: 50
      warmup_seconds: 1
    gates:
      - {name: max, kind: max, limit_us: 10000000}
      - {name: impossible, kind: max, limit_us: 0}
"""
# A second job, two known answers: `require: isolated_cpus` for the thread on CPU 1 makes `rtgate lava
# job` put isolcpus=1 nohz_full=1 rcu_nocbs=1 on the guest's kernel command line, so the guest isolates
# it and the measurement is made there (PASS, and FAIL at 0 us, with values); `require: bare_metal`
# is unmet in QEMU's virt machine, which its devicetree names (linux,dummy-virt): nothing measured,
# every gate ERROR.
ISOLATED_SPEC = """\
platform: qemu-arm64-rt
measurements:
  isolated:
    require: {isolated_cpus: true}
    sampler: {interval_us: 1000, duration: 2s, priority: 80, threads: [{name: b, cpus: [1]}]}
    gates:
      - {name: max, kind: max, limit_us: 10000000}
      - {name: impossible, kind: max, limit_us: 0}
  bare:
    require: {bare_metal: true}
    sampler: {interval_us: 1000, duration: 2s, priority: 80, threads: [{name: b, cpus: [0]}]}
    gates:
      - {name: max, kind: max, limit_us: 10000000}
"""
EXPECTED = {
    ("idle", "max", "cpu0"): "PASS",
    ("idle", "impossible", "cpu0"): "FAIL",
    ("loaded", "max", "cpu0"): "PASS",
    ("loaded", "impossible", "cpu0"): "FAIL",
}
EXPECTED_ISOLATED = {
    ("isolated", "max", "cpu1"): "PASS",
    ("isolated", "impossible", "cpu1"): "FAIL",
    ("bare", "max", "all"): "ERROR",
}
# What LAVA itself records per (measurement, case): pass or fail, and whether with a value.
EXPECTED_LAVA = {
    "rt": {
        ("idle", "max-cpu0"): ("pass", True),
        ("idle", "impossible-cpu0"): ("fail", True),
        ("loaded", "max-cpu0"): ("pass", True),
        ("loaded", "impossible-cpu0"): ("fail", True),
    },
    "isolated": {
        ("isolated", "max-cpu1"): ("pass", True),
        ("isolated", "impossible-cpu1"): ("fail", True),
        ("bare", "max-all"): ("fail", False),
    },
}


@pytest.fixture(scope="module")
def arm64(tmp_path_factory: pytest.TempPathFactory, tool: Any, cross_build: Any) -> dict[str, Any]:
    """Debian's arm64 PREEMPT_RT kernel and an initramfs with busybox:arm64, its modules and the static
    aarch64 sampler."""
    tool("qemu-system-aarch64", "qemu-system-arm")
    tool("qemu-aarch64-static", "qemu-user-static")
    tool("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu")
    tool("cpio", "cpio")
    tool("depmod", "kmod")
    try:
        packages = fetch()
    except FetchError as e:
        if os.environ.get("CI"):
            pytest.fail(f"Debian's arm64 kernel is required in CI: scripts/bootstrap --test fetches it ({e})")
        pytest.skip(f"no arm64 PREEMPT_RT kernel: {e} (sh scripts/bootstrap --test fetches it)")
    sampler = cross_build("aarch64") / "sampler" / "rtgate-sampler"
    base = tmp_path_factory.mktemp("lava-arm64")
    initrd = build(base / "initrd-arm64-rt.cpio.gz", sampler, packages.release, "arm64", packages.root)
    return {"kernel": packages.kernel, "ramdisk": initrd, "release": packages.release, "base": base}


def render(arm64: dict[str, Any], spec: Path, out: Path, name: str) -> Path:
    r = rtgate(
        "lava", "job", str(spec), "--device-type", "qemu", "--arch", "arm64", "--no-kvm", "--cpus", "2",
        "--kernel", arm64["kernel"].as_uri(), "--ramdisk", arm64["ramdisk"].as_uri(), "--prompt", PROMPT,
        "--tag", LAVA_ARM64_DEVICE, "--inline", "--job-name", name, "-o", str(out),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return out


def read_back(spec: Path, results: Path, log: Path) -> dict[str, Any]:
    verdicts = results.with_suffix(".verdicts.json")
    back = rtgate(
        "lava", "results", str(results), "--thresholds", str(spec), "--log", str(log), "--json", str(verdicts)
    )
    assert back.returncode == 1, back.stdout + back.stderr  # FAIL and ERROR gates: the job does not pass
    return dict(json.loads(verdicts.read_text()))


def test_arm64_preempt_rt_board_through_lava(lava_server: LocalLava, arm64: dict[str, Any], tmp_path: Path) -> None:
    lava = lava_server
    spec, isolated = tmp_path / "arm64.yaml", tmp_path / "isolated.yaml"
    spec.write_text(SPEC)
    isolated.write_text(ISOLATED_SPEC)
    started = time.monotonic()
    ids = {
        "rt": submit(lava, render(arm64, spec, tmp_path / "rt-job.yaml", "rtgate arm64 PREEMPT_RT")),
        "isolated": submit(lava, render(arm64, isolated, tmp_path / "iso-job.yaml", "rtgate arm64 isolated, bare")),
    }
    finished = wait_jobs(lava, list(ids.values()), seconds=1500)
    print(f"\nLAVA arm64 jobs {ids} finished in {time.monotonic() - started:.0f} s")
    docs = {}
    for what, job_id in ids.items():
        results, log = fetch_job(lava, job_id, tmp_path)
        text = log.read_text()
        assert finished[job_id]["health"] == "Complete", text[-6000:]
        assert "qemu-system-aarch64" in text, text[-3000:]
        assert f"Linux version {arm64['release']}" in text and "PREEMPT_RT" in text, text[-3000:]
        rows = yaml.safe_load(results.read_text())
        assert [r["result"] for r in rows if r["suite"] == "lava" and r["name"] == "job"] == ["pass"], rows
        cases = {
            (r["suite"].split("_", 1)[-1].removeprefix("rtgate-"), r["name"]): (
                r["result"],
                r["measurement"] not in ("None", "", None),
            )
            for r in rows
            if r["suite"].split("_", 1)[-1].startswith("rtgate-")
        }
        assert cases == EXPECTED_LAVA[what], (cases, text[-6000:])
        docs[what] = read_back(spec if what == "rt" else isolated, results, log)
        steps = re.findall(r"end: \d+ ([a-z-]+) \(duration (\d\d:\d\d:\d\d)\)", text)
        print(f"{what}: job {job_id}, LAVA's actions: {', '.join(f'{a} {d}' for a, d in steps)}")

    got = {(v["measurement"], v["gate"], v["thread"]): v for v in docs["rt"]["verdicts"]}
    assert {k: v["status"] for k, v in got.items()} == EXPECTED, got
    for key, v in got.items():
        assert isinstance(v["value"], (int, float)) and v["value"] > 0, (key, v)
    # What the engine recorded in the guest (its ENVIRONMENT line, read back from the job's log).
    env = docs["rt"]["environment"]
    machine = env["machine"]
    assert machine["architecture"] == "aarch64" and machine["kernel"] == arm64["release"], machine
    assert machine["preemption"] == "PREEMPT_RT (/sys/kernel/realtime)", machine
    assert machine["cpu_count"] == "2" and "linux,dummy-virt" in machine["board"], machine
    assert env["measurements"]["idle"]["load_record"] == {"kind": "none"}, env["measurements"]
    load = env["measurements"]["loaded"]["load_record"]
    assert load["kind"] == "custom" and load["cpus"] == [1] and load["problem"] is None, load
    level = load["level"]
    assert level["unit"] == "% CPU" and level["min"] == 50.0 and 50.0 <= level["reached"] <= 100.0, load
    print(f"arm64 guest: {machine['architecture']}, {machine['preemption']}, load {load}")

    iso = {(v["measurement"], v["gate"], v["thread"]): v for v in docs["isolated"]["verdicts"]}
    assert {k: v["status"] for k, v in iso.items()} == EXPECTED_ISOLATED, iso
    assert "isolcpus=1 nohz_full=1 rcu_nocbs=1" in (tmp_path / "iso-job.yaml").read_text()
    assert docs["isolated"]["environment"]["machine"]["isolated_cpus"] == "1", docs["isolated"]["environment"]
    bare = iso[("bare", "max", "all")]
    assert bare["value"] is None and bare["reason"].endswith(
        "on the board: ERROR: not measured: requires bare metal; running under QEMU (devicetree linux,dummy-virt)"
    ), bare
    print(f"isolated_cpus: cpu 1 isolated by the job's kernel command line; bare_metal: {bare['reason']}")
