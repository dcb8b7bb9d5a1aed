# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate under a real LAVA server: Debian's lava-server (PostgreSQL, gunicorn, lava-scheduler)
and lava-worker with stock `qemu` devices, jobs rendered by `rtgate lava job` submitted through the
REST API, results read back through the REST API. QEMU runs under TCG (nested KVM hangs this
kernel's early boot), booting Debian's kernels with a busybox initramfs holding the static sampler."""

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
import yaml

from conftest import IS_ROOT, LAVA_QEMU_DEVICES, ROOT

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lava"))
from build_initramfs import PROMPT, build
from server import LavaSetupError, LocalLava

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not IS_ROOT, reason="lava-server and lava-run need root")]

DEVICES = LAVA_QEMU_DEVICES
JOB_WAIT_S = 900

# One threshold file, every outcome with a known answer:
#   smp/max        PASS with a value (no TCG wake-up takes 10 s)
#   smp/impossible FAIL with a value (limit 0: every wake-up is later than that)
#   smp/p9999      INCONCLUSIVE without a value (5 s at 1 ms is < 10000 samples, what p99.99 needs)
#   smp/cpu7       ERROR without a value (no thread runs on CPU 7 of a 2-vCPU board)
#   missed/p50     FAIL without a value (a 1 us period: most periods are missed, so p50 is a missed one)
#   broken/max     ERROR: the sampler fails on the board (its thread is pinned to CPU 5 of 2)
SPEC = """\
platform: qemu-lava
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
      - {name: p9999, kind: percentile, percentile: 99.99, limit_us: 10000000}
      - {name: cpu7, kind: max, limit_us: 10000000, cpus: [7]}
  missed:
    sampler:
      interval_us: 1
      duration: 2s
      priority: 80
      threads: [{name: t, count: 1}]
    gates:
      - {name: p50, kind: percentile, percentile: 50, limit_us: 10000000}
  broken:
    sampler:
      interval_us: 1000
      duration: 2s
      threads: [{name: far, cpus: [5]}]
    gates:
      - {name: max, kind: max, limit_us: 10000000}
"""

# What LAVA must record per (measurement, case): result, and whether a measurement comes with it.
EXPECTED_LAVA = {
    ("smp", "max-t0"): ("pass", True),
    ("smp", "max-t1"): ("pass", True),
    ("smp", "impossible-t0"): ("fail", True),
    ("smp", "impossible-t1"): ("fail", True),
    ("smp", "p9999-t0"): ("fail", False),
    ("smp", "p9999-t1"): ("fail", False),
    ("smp", "cpu7-all"): ("fail", False),
    ("missed", "p50-t0"): ("fail", False),
    ("broken", "rtgate-setup"): ("fail", False),  # the sampler refuses the plan: no verdict line
}
# And what rtgate reads back, per (measurement, gate, thread): status, and whether it has a value.
EXPECTED_RTGATE = {
    ("smp", "max", "t0"): ("PASS", True),
    ("smp", "max", "t1"): ("PASS", True),
    ("smp", "impossible", "t0"): ("FAIL", True),
    ("smp", "impossible", "t1"): ("FAIL", True),
    ("smp", "p9999", "t0"): ("INCONCLUSIVE", False),
    ("smp", "p9999", "t1"): ("INCONCLUSIVE", False),
    ("smp", "cpu7", "all"): ("ERROR", False),
    ("missed", "p50", "t0"): ("FAIL", False),
    ("broken", "max", "all"): ("ERROR", False),
}


def run(argv: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(argv, capture_output=True, text=True, timeout=600, **kw)
    assert r.returncode == 0, (argv, r.stdout[-3000:], r.stderr[-3000:])
    return r


def rtgate(*args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rtgate", *args], capture_output=True, text=True, timeout=1800, **kw)


def kernels() -> dict[str, tuple[Path, str]]:
    """Debian's generic and PREEMPT_RT kernels in /boot: {"generic"|"rt": (vmlinuz, release)}."""
    found: dict[str, tuple[Path, str]] = {}
    for k in sorted(Path("/boot").glob("vmlinuz-*")):
        release = k.name.removeprefix("vmlinuz-")
        if (Path("/lib/modules") / release / "modules.dep").is_file():
            found["rt" if release.endswith("-rt-amd64") else "generic"] = (k, release)
    return found


@pytest.fixture(scope="session")
def images(tmp_path_factory: pytest.TempPathFactory, tool: Any, static_sampler: Path) -> dict[str, Any]:
    """The static sampler, an initramfs per kernel, and the test definition in a git repository."""
    tool("qemu-system-x86_64", "qemu-system-x86")
    tool("cpio", "cpio")
    tool("lava-worker", "lava-dispatcher")
    tool("lava-server", "lava-server")
    tool("pg_ctlcluster", "postgresql")
    found = kernels()
    if "generic" not in found:
        if os.environ.get("CI"):
            pytest.fail("Debian's linux-image-amd64 is required in CI: .ci/run installs it")
        pytest.skip("no kernel in /boot (apt-get install linux-image-amd64)")
    base = tmp_path_factory.mktemp("lava-images")
    out: dict[str, Any] = {"kernels": {}}
    for flavour, (vmlinuz, release) in found.items():
        initrd = build(base / f"initrd-{flavour}.cpio.gz", static_sampler, release)
        out["kernels"][flavour] = {"kernel": vmlinuz, "ramdisk": initrd, "release": release}
    repo = base / "repo"  # the test definition from a git repository, as a lab's would come
    repo.mkdir()
    run(["cp", "-r", str(ROOT / "lava-defs"), str(repo / "lava-defs")])
    for argv in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.email=ci@rtgate", "-c", "user.name=ci", "commit", "-qm", "defs"],
    ):
        run(argv, cwd=repo)
    out["repo"] = repo
    spec = base / "spec.yaml"
    spec.write_text(SPEC)
    out["spec"] = spec
    return out


@pytest.fixture(scope="session")
def lava(lava_server: LocalLava, images: dict[str, Any]) -> LocalLava:
    """The suite's LAVA instance (tests/conftest.py), once the images its QEMU boards boot are there."""
    return lava_server


def submit(lava: LocalLava, job: Path) -> int:
    reply = lava.api("jobs/", {"definition": job.read_text()})
    return int(reply["job_ids"][0])


def wait_jobs(lava: LocalLava, ids: list[int], seconds: float = JOB_WAIT_S) -> dict[int, dict[str, Any]]:
    deadline = time.monotonic() + seconds
    done: dict[int, dict[str, Any]] = {}
    while time.monotonic() < deadline and len(done) < len(ids):
        try:
            lava.check_alive("LAVA jobs")
        except LavaSetupError as e:
            pytest.fail(f"{e}\n{lava.logs()}")
        for i in ids:
            if i not in done:
                job = lava.api(f"jobs/{i}/")
                if job["state"] == "Finished":
                    done[i] = job
        if len(done) < len(ids):
            time.sleep(1)
    if len(done) < len(ids):
        for i in ids:
            if i not in done:
                lava.api(f"jobs/{i}/cancel/")
        pytest.fail(f"LAVA jobs {sorted(set(ids) - set(done))} did not finish in {seconds:.0f} s\n{lava.logs()}")
    return done


def fetch(lava: LocalLava, job_id: int, where: Path) -> tuple[Path, Path]:
    """The job's results export and its log, through the REST API."""
    results = where / f"job-{job_id}-results.yaml"
    results.write_text(lava.api(f"jobs/{job_id}/yaml/", raw=True))
    log = where / f"job-{job_id}-log.yaml"
    log.write_text(lava.api(f"jobs/{job_id}/logs/", raw=True))
    return results, log


def render(images: dict[str, Any], out: Path, flavour: str, *extra: str) -> Path:
    k = images["kernels"][flavour]
    r = rtgate(
        "lava",
        "job",
        str(images["spec"]),
        "--device-type",
        "qemu",
        "--no-kvm",
        "--cpus",
        "2",
        "--kernel",
        k["kernel"].as_uri(),
        "--ramdisk",
        k["ramdisk"].as_uri(),
        "--prompt",
        PROMPT,
        "-o",
        str(out),
        *extra,
    )
    assert r.returncode == 0, r.stderr
    return out


def check_lava_recorded(results: Path, log: Path, job: dict[str, Any], measurements: list[str]) -> None:
    rows = yaml.safe_load(results.read_text())
    assert job["health"] == "Complete", (job, log.read_text()[-6000:])
    lava_job = [r for r in rows if r["suite"] == "lava" and r["name"] == "job"]
    assert lava_job and lava_job[0]["result"] == "pass", rows
    got: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        if r["suite"].split("_", 1)[-1].startswith("rtgate-"):
            got[(r["suite"].split("_", 1)[-1].removeprefix("rtgate-"), r["name"])] = r
    want = {k: v for k, v in EXPECTED_LAVA.items() if k[0] in measurements}
    assert set(got) == set(want), (sorted(got), log.read_text()[-6000:])
    for key, (result, valued) in want.items():
        row = got[key]
        assert row["result"] == result, (key, row)
        has_value = row["measurement"] not in ("None", "", None)
        assert has_value == valued, (key, row)
        if valued:
            assert float(row["measurement"]) > 0 and row["unit"] == "us", (key, row)


def check_rtgate_reads_back(results: Path, log: Path, spec: Path, measurements: list[str], where: Path) -> None:
    verdicts = where / f"{results.stem}-verdicts.json"
    args = [a for m in measurements for a in ("--measurement", m)]
    back = rtgate(
        "lava", "results", str(results), "--thresholds", str(spec), "--log", str(log), *args, "--json", str(verdicts)
    )
    assert back.returncode == 1, back.stdout + back.stderr  # FAIL and ERROR gates: the job does not pass
    doc = json.loads(verdicts.read_text())
    got = {(v["measurement"], v["gate"], v["thread"]): v for v in doc["verdicts"]}
    want = {k: v for k, v in EXPECTED_RTGATE.items() if k[0] in measurements}
    assert set(got) == set(want), sorted(got)
    for key, (status, valued) in want.items():
        assert got[key]["status"] == status, (key, got[key])
        assert (got[key]["value"] is not None) == valued, (key, got[key])


def test_lava_server_records_every_gate_git_inline_and_rt(
    lava: LocalLava, images: dict[str, Any], tmp_path: Path
) -> None:
    started = time.monotonic()
    every = ["smp", "missed", "broken"]
    jobs: dict[str, tuple[int, list[str]]] = {}
    git = render(
        images,
        tmp_path / "git.yaml",
        "generic",
        "--testdef-repo",
        images["repo"].as_uri(),
        "--job-name",
        "rtgate e2e git",
    )
    jobs["git"] = (submit(lava, git), every)
    inline = render(images, tmp_path / "inline.yaml", "generic", "--inline", "--job-name", "rtgate e2e inline")
    jobs["inline"] = (submit(lava, inline), every)
    if "rt" in images["kernels"]:  # issue 16: once on Debian's PREEMPT_RT kernel
        rt = render(
            images,
            tmp_path / "rt.yaml",
            "rt",
            "--inline",
            "--measurement",
            "smp",
            "--job-name",
            "rtgate e2e PREEMPT_RT",
        )
        jobs["rt"] = (submit(lava, rt), ["smp"])
    elif os.environ.get("CI"):
        pytest.fail("Debian's linux-image-rt-amd64 is required in CI: .ci/run installs it")
    finished = wait_jobs(lava, [i for i, _ in jobs.values()])
    print(
        f"\nLAVA jobs {', '.join(f'{k}={i}' for k, (i, _) in jobs.items())} finished in "
        f"{time.monotonic() - started:.0f} s"
    )
    for flavour, (job_id, measurements) in jobs.items():
        results, log = fetch(lava, job_id, tmp_path)
        check_lava_recorded(results, log, finished[job_id], measurements)
        check_rtgate_reads_back(results, log, images["spec"], measurements, tmp_path)
        if flavour == "rt":
            text = log.read_text()
            release = images["kernels"]["rt"]["release"]
            assert f"Linux version {release}" in text and "PREEMPT_RT" in text, text[-3000:]


def lab_file(images: dict[str, Any], where: Path) -> Path:
    """Three boards, one per device: one that runs, one whose kernel cannot boot, one the test cancels."""
    k = images["kernels"]["generic"]
    garbage = where / "not-a-kernel"
    garbage.write_bytes(b"\x7fnot a kernel\n" * 64)
    lab = {
        "name": "ci-lab",
        "defaults": {
            "device_type": "qemu",
            "thresholds": str(images["spec"]),
            "measurements": ["smp"],
            "inline": True,
            "no_kvm": True,
            "cpus": 2,
            "prompt": PROMPT,
            "kernel": k["kernel"].as_uri(),
            "ramdisk": k["ramdisk"].as_uri(),
        },
        "boards": [
            {"name": "good", "device": DEVICES[0]},
            {"name": "no-boot", "device": DEVICES[1], "kernel": garbage.as_uri()},
            {"name": "cancelled", "device": DEVICES[2], "duration": "10m"},
        ],
    }
    path = where / "lab.yaml"
    path.write_text(yaml.safe_dump(lab, sort_keys=False))
    return path


def test_rtgate_lab_gates_three_boards_through_lava(
    lava: LocalLava, images: dict[str, Any], tmp_path: Path, tool: Any
) -> None:
    lavacli = tool("lavacli", "lavacli")
    lava.wait_idle()
    started = time.monotonic()
    lab = lab_file(images, tmp_path)
    # The server and token from lavacli's own identities file, written by lavacli itself.
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env.pop("RTGATE_LAVA_URL", None)
    env.pop("RTGATE_LAVA_TOKEN", None)
    run(
        [
            lavacli,
            "identities",
            "add",
            "--uri",
            lava.url + "RPC2",
            "--username",
            lava.user,
            "--token",
            lava.token,
            "local",
        ],
        env=env,
    )
    assert "2023" in run([lavacli, "-i", "local", "system", "version"], env=env).stdout  # the identity works

    junit, verdicts, history = tmp_path / "lab.xml", tmp_path / "lab.json", tmp_path / "history.db"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rtgate",
            "lab",
            str(lab),
            "--identity",
            "local",
            "--poll",
            "2",
            "--timeout",
            "20m",
            "--junit",
            str(junit),
            "--json",
            str(verdicts),
            "--history",
            str(history),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        # Follow rtgate's progress lines; cancel the third board's job through LAVA once it runs.
        cancelled = None
        lines: list[str] = []
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if cancelled is None and line.startswith("rtgate lab: cancelled: job ") and "submitted" in line:
                cancelled = int(line.split("job ")[1].split()[0])
            if cancelled is not None and "cancelled: job" in line and " Running" in line:
                lava.api(f"jobs/{cancelled}/cancel/")
        out = proc.stdout.read() if proc.stdout else ""
        rc = proc.wait(timeout=JOB_WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    progress = "".join(lines)
    print(f"\nrtgate lab finished in {time.monotonic() - started:.0f} s:\n{progress}")
    assert rc == 1, progress + out  # a FAIL and several ERRORs
    for board in ("good", "no-boot", "cancelled"):
        assert f"rtgate lab: {board}: job " in progress and "submitted" in progress, progress
    assert "good: job" in progress and "Running" in progress and "Complete" in progress, progress

    doc = json.loads(verdicts.read_text())
    got = {(v["measurement"], v["gate"], v["thread"]): v for v in doc["verdicts"]}
    want = {(f"good/{m}", g, t): s for (m, g, t), s in EXPECTED_RTGATE.items() if m == "smp"}
    for board in ("no-boot", "cancelled"):  # every gate of the threshold file: ERROR, never missing
        want.update({(f"{board}/smp", g, "all"): ("ERROR", False) for g in ("max", "impossible", "p9999", "cpu7")})
    assert set(got) == set(want), (sorted(got), progress)
    for key, (status, valued) in want.items():
        assert got[key]["status"] == status, (key, got[key], progress)
        assert (got[key]["value"] is not None) == valued, (key, got[key])
    assert "Incomplete" in got[("no-boot/smp", "max", "all")]["reason"], got[("no-boot/smp", "max", "all")]
    assert "Canceled" in got[("cancelled/smp", "max", "all")]["reason"], got[("cancelled/smp", "max", "all")]

    from junitparser import JUnitXml

    cases = [c for s in JUnitXml.fromfile(str(junit)) for c in s]
    assert len(cases) == len(want)
    assert sum(c.is_passed for c in cases) == 2  # good's max on both threads

    from rtgate.history.store import HistoryDB

    release = images["kernels"]["generic"]["release"]
    with HistoryDB(history) as db:
        assert db.releases("good", "smp") == [release]  # from the board's own boot log
        assert db.releases("no-boot", "smp") == db.releases("cancelled", "smp") == ["unknown"]
        rows = db.db.execute(
            "SELECT r.platform, v.gate, v.thread, v.status FROM verdicts v JOIN runs r ON r.id = v.run_id"
        ).fetchall()
        environments = dict(db.db.execute("SELECT platform, environment FROM runs").fetchall())
    assert {(p, g, t, s) for p, g, t, s in rows} == {(k[0].split("/")[0], k[1], k[2], v[0]) for k, v in want.items()}
    # Issue 28: the good board's row holds what the engine recorded in the guest, not this machine's.
    good = json.loads(environments["good"])
    assert good["written_by"].startswith("rtgate-sampler ") and good["system"]["kernel_release"] == release, good
    assert json.loads(environments["no-boot"]) in ({}, None) or "system" not in json.loads(environments["no-boot"])
    assert release in json.dumps(doc["environment"]), doc["environment"]


def test_rtgate_lab_stopped_by_sigterm_cancels_its_jobs_and_reports(
    lava: LocalLava, images: dict[str, Any], tmp_path: Path
) -> None:
    """Issue 18 for `rtgate lab`: stopped from outside, it cancels the jobs it submitted, marks what
    they did not record INCONCLUSIVE (stopped early), and still writes every report."""
    lava.wait_idle()
    lab = lab_file(images, tmp_path)
    doc = yaml.safe_load(lab.read_text())
    doc["boards"] = [{"name": "long", "device": DEVICES[0], "duration": "30m"}]
    lab.write_text(yaml.safe_dump(doc))
    env = {**os.environ, "RTGATE_LAVA_URL": lava.url, "RTGATE_LAVA_TOKEN": lava.token}
    verdicts = tmp_path / "v.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "rtgate", "lab", str(lab), "--poll", "1", "--json", str(verdicts)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    job_id = None
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "submitted" in line:
                job_id = int(line.split("job ")[1].split()[0])
                proc.send_signal(signal.SIGTERM)
                break
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert job_id is not None
    assert proc.returncode == 3, out + err  # INCONCLUSIVE: stopped early
    assert f"stopped by SIGTERM: cancelling job {job_id}" in err, err
    got = {(v["measurement"], v["gate"], v["status"]) for v in json.loads(verdicts.read_text())["verdicts"]}
    assert got == {("long/smp", g, "INCONCLUSIVE") for g in ("max", "impossible", "p9999", "cpu7")}, got
    # The cancel request returns once LAVA has recorded it: the job is Canceling (or already ended
    # Canceled, if it was still queued) the moment rtgate lab has exited, whatever the timing.
    job = lava.api(f"jobs/{job_id}/")
    assert job["state"] == "Canceling" or (job["state"], job["health"]) == ("Finished", "Canceled"), job
    # LAVA ends a cancelled job when lava-run acts on the worker's SIGTERM: at once between two
    # actions, but only when the call it is in returns (libguestfs booting the overlay disk's
    # appliance under TCG takes minutes on a loaded host), else at lava-worker's SIGKILL 120 s
    # later (FINISH_MAX_DURATION). So the job gets the wait of any job here, with its daemons
    # watched, not a bound of its own below LAVA's.
    assert wait_jobs(lava, [job_id])[job_id]["health"] == "Canceled"


# Issue 28: the board carries out the whole threshold file. Known answers in the qemu guest: the
# guest is x86_64 (an aarch64 requirement is not met), its busybox initramfs has no stress-ng (a cpu
# load cannot run), and busybox's md5sum on /dev/zero keeps the other vCPU busy.
BOARD_SPEC = """\
platform: qemu-lava
measurements:
  loaded:
    sampler: {interval_us: 1000, duration: 3s, priority: 80, threads: [{name: a, cpus: [0]}]}
    load: {kind: custom, command: [md5sum, /dev/zero], cpus: others, min_cpu_percent: 50, warmup_seconds: 1}
    gates: [{name: max, kind: max, limit_us: 10000000}]
  required:
    require: {architecture: aarch64, compatible: 'acme,imx8'}
    sampler: {interval_us: 1000, duration: 2s, priority: 80, threads: [{name: a, cpus: [0]}]}
    gates: [{name: max, kind: max, limit_us: 10000000}, {name: p99, kind: percentile, percentile: 99, limit_us: 1.0e+7}]
  stress:
    sampler: {interval_us: 1000, duration: 2s, priority: 80, threads: [{name: a, cpus: [0]}]}
    load: {kind: cpu, workers: 1}
    gates: [{name: max, kind: max, limit_us: 10000000}]
"""


def test_the_board_runs_the_load_and_checks_require(lava: LocalLava, images: dict[str, Any], tmp_path: Path) -> None:
    spec = tmp_path / "board.yaml"
    spec.write_text(BOARD_SPEC)
    k = images["kernels"]["generic"]
    job = tmp_path / "board-job.yaml"
    r = rtgate(
        "lava", "job", str(spec), "--device-type", "qemu", "--no-kvm", "--cpus", "2",
        "--kernel", k["kernel"].as_uri(), "--ramdisk", k["ramdisk"].as_uri(), "--prompt", PROMPT,
        "--inline", "--job-name", "rtgate board side", "-o", str(job),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    job_id = submit(lava, job)
    finished = wait_jobs(lava, [job_id])
    results, log = fetch(lava, job_id, tmp_path)
    assert finished[job_id]["health"] == "Complete", log.read_text()[-6000:]
    rows = yaml.safe_load(results.read_text())
    lava_rows = {
        (r["suite"].split("_", 1)[-1].removeprefix("rtgate-"), r["name"]): r["result"]
        for r in rows
        if r["suite"].split("_", 1)[-1].startswith("rtgate-")
    }
    assert lava_rows == {
        ("loaded", "max-cpu0"): "pass",
        ("required", "max-all"): "fail",
        ("required", "p99-all"): "fail",
        ("stress", "max-all"): "fail",
    }, (lava_rows, log.read_text()[-6000:])
    verdicts = tmp_path / "board-verdicts.json"
    back = rtgate(
        "lava", "results", str(results), "--thresholds", str(spec), "--log", str(log), "--json", str(verdicts)
    )
    assert back.returncode == 1, back.stdout + back.stderr
    doc = json.loads(verdicts.read_text())
    got = {(v["measurement"], v["gate"]): v for v in doc["verdicts"]}
    assert got[("loaded", "max")]["status"] == "PASS"
    for key in (("required", "max"), ("required", "p99"), ("stress", "max")):
        assert got[key]["status"] == "ERROR", got[key]
    assert "this file is for aarch64" in got[("required", "max")]["reason"]
    assert "load cpu: stress-ng not found" in got[("stress", "max")]["reason"]
    # The guest's record, not this machine's: its kernel, and the level its load reached.
    env = doc["environment"]
    text = json.dumps(env)
    assert k["release"] in text, text
    loaded = json.dumps(env["measurements"]["loaded"]) if "measurements" in env else text
    assert "custom on CPUs 1" in loaded and "reached" in loaded, loaded
    print(f"\nboard-side load level in the guest: {loaded}")
