# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate under a real LAVA dispatcher: lava-run boots Debian's kernel in QEMU with a busybox
initramfs holding the static sampler, runs the generated job, and LAVA records each gate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import IS_ROOT, ROOT

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lava"))
from build_initramfs import PROMPT, build

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not IS_ROOT, reason="lava-run needs root")]

SPEC = """\
platform: qemu-tcg
measurements:
  smp:
    sampler:
      interval_us: 1000
      duration: 5s
      priority: 80
      threads: [{name: all, count: 2}]
    gates:
      - {name: max, kind: max, limit_us: 10000000}
      - {name: impossible, kind: max, limit_us: 0}
"""


def newest_kernel(tool: Any) -> tuple[Path, str]:
    kernels = sorted(Path("/boot").glob("vmlinuz-*"))
    if not kernels:
        if os.environ.get("CI"):
            pytest.fail("Debian's linux-image-amd64 is required in CI: .ci/run installs it")
        pytest.skip("no kernel in /boot (apt-get install linux-image-amd64)")
    version = kernels[-1].name.removeprefix("vmlinuz-")
    assert (Path("/lib/modules") / version / "modules.dep").is_file()
    return kernels[-1], version


def run(argv: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(argv, capture_output=True, text=True, **kw)
    assert r.returncode == 0, (argv, r.stdout[-3000:], r.stderr[-3000:])
    return r


def test_lava_run_records_each_gate_with_its_measurement(tmp_path: Path, tool: Any, static_sampler: Path) -> None:
    lava_run = tool("lava-run", "lava-dispatcher")
    tool("qemu-system-x86_64", "qemu-system-x86")
    tool("cpio", "cpio")
    kernel, version = newest_kernel(tool)

    initrd = build(tmp_path / "initrd.cpio.gz", static_sampler, version)

    repo = tmp_path / "repo"  # the test definition from a local git repository, as a lab's would come
    run(["cp", "-r", str(ROOT / "lava-defs"), str(repo / "lava-defs")]) if repo.mkdir() is None else None
    for argv in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.email=ci@rtgate", "-c", "user.name=ci", "commit", "-qm", "defs"],
    ):
        run(argv, cwd=repo)

    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    job = tmp_path / "job.yaml"
    run(
        [
            sys.executable,
            "-m",
            "rtgate",
            "lava",
            "job",
            str(spec),
            "--device-type",
            "qemu",
            "--no-kvm",
            "--kernel",
            kernel.as_uri(),
            "--ramdisk",
            initrd.as_uri(),
            "--testdef-repo",
            repo.as_uri(),
            "--prompt",
            PROMPT,
            "-o",
            str(job),
        ]
    )

    # Nested KVM hangs this kernel's early boot on our VMs, and libguestfs boots a VM too: use TCG.
    env = {**os.environ, "LIBGUESTFS_BACKEND_SETTINGS": "force_tcg"}
    log = tmp_path / "lava-run.log"
    with log.open("w") as out:
        r = subprocess.run(
            [
                lava_run,
                "--job-id",
                "1",
                "--output-dir",
                str(tmp_path / "out"),
                "--device",
                str(ROOT / "tests" / "lava" / "qemu-device.yaml"),
                str(job),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            timeout=1200,
        )
    import yaml

    lines = [yaml.safe_load(x) for x in log.read_text().splitlines() if x.startswith("{")]  # YAML flow lines
    job_result = [x["msg"] for x in lines if x.get("lvl") == "results" and x["msg"].get("case") == "job"]
    assert r.returncode == 0 and job_result and job_result[-1]["result"] == "pass", log.read_text()[-4000:]

    verdicts = tmp_path / "v.json"
    back = subprocess.run(
        [
            sys.executable,
            "-m",
            "rtgate",
            "lava",
            "results",
            str(log),
            "--thresholds",
            str(spec),
            "--json",
            str(verdicts),
        ],
        capture_output=True,
        text=True,
    )
    assert back.returncode == 1, back.stdout + back.stderr  # the impossible gate fails
    doc = json.loads(verdicts.read_text())
    got = {(v["gate"], v["thread"]): v for v in doc["verdicts"]}
    assert set(got) == {("max", "t0"), ("max", "t1"), ("impossible", "t0"), ("impossible", "t1")}
    assert got[("max", "t0")]["status"] == got[("max", "t1")]["status"] == "PASS"
    assert got[("impossible", "t0")]["status"] == got[("impossible", "t1")]["status"] == "FAIL"
    for v in got.values():
        assert v["value"] is not None and v["value"] > 0 and v["value_text"].endswith(" us")
    assert got[("max", "t0")]["value"] == got[("impossible", "t0")]["value"]  # one run, two gates
