# SPDX-License-Identifier: GPL-2.0-or-later
"""What rtgate-sampler costs the machine it measures (issue 15): memory, against the real cyclictest.

Checkpoints copy only the non-zero buckets of running threads; the final results are read in place;
libm (native gates only) is loaded after the run, so -m does not lock it. With -m, a histogram is
locked and mapped before the run only below 1 ms; its later pages on first use (issue 32)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from statistics import median
from typing import Any

import pytest

from conftest import IS_ROOT, RT_OPTS, load_json, run_tool
from history_live import measured_cpu
from injector import inject
from known_answers import CPU
from machine_lock import machine_to_itself


def _peak_rss_kib(argv: list[str]) -> int:
    """Peak resident set of one run: the child's own VmHWM, polled until it exits. (wait4's
    ru_maxrss would be the forking Python's: exec records the old mm's high-water mark.)"""
    exe = Path(shutil.which(argv[0]) or argv[0]).resolve()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while p.poll() is None:
        try:
            if Path(f"/proc/{p.pid}/exe").resolve() == exe:  # not the Python before exec
                m = re.search(r"^VmHWM:\s+(\d+) kB", Path(f"/proc/{p.pid}/status").read_text(), re.M)
                peak = max(peak, int(m.group(1)) if m else 0)
        except OSError:
            break
        time.sleep(0.02)
    assert p.wait(timeout=30) == 0, argv
    assert peak > 0, argv
    return peak


def test_checkpoint_of_running_threads_is_consistent(sampler: str, tmp_path: Path) -> None:
    """A checkpoint copies the non-zero buckets while the threads run: both histograms, the
    -h overflows and the block maxima of one checkpoint agree with each other."""
    out = tmp_path / "r.json"
    p = subprocess.Popen(
        [sampler, *RT_OPTS, "-t", "2", "-i", "500", "-h", "40", "--block=0.2", "-q", f"--json={out}", "--checkpoint=1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        doc: dict[str, Any] = {}
        while time.monotonic() < deadline:
            time.sleep(0.3)
            if out.exists():
                doc = json.loads(out.read_text())
                if all(doc["rtgate"]["threads"][i]["block_maxima"]["values"] for i in (0, 1)):
                    break
    finally:
        p.kill()
        p.wait(timeout=10)
    assert doc and doc["rtgate"]["complete"] is False
    for key, t in doc["thread"].items():
        rg = doc["rtgate"]["threads"][int(key)]
        full = rg["histogram"]
        assert t["cycles"] == rg["cycles"] == sum(b[2] for b in full) > 0
        # the -h view is the start of the full histogram, bucket for bucket
        assert {int(k): v for k, v in t["histogram"].items()} == {b[0]: b[2] for b in full if b[1] <= 40}
        assert t["cycles"] == sum(t["histogram"].values()) + rg["overflows"]
        assert [b[0] for b in full] == sorted(b[0] for b in full)
        bm = rg["block_maxima"]
        assert bm["values"], "no complete block in a checkpoint 1 s into the run"
        assert max(bm["values"]) <= t["max"]


@pytest.mark.skipif(not IS_ROOT, reason="-m needs root here")
def test_mlockall_run_does_not_map_libm_until_the_gates(sampler: str) -> None:
    """libm serves only the native gates: with -m it would be locked for the whole run."""
    p = subprocess.Popen(
        [sampler, "-m", "-p", "80", "-t", "1", "-i", "1000", "-D", "2s", "-q", "--gate=name=g,kind=max,limit=1000000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(1.0)
        maps = Path(f"/proc/{p.pid}/maps").read_text()
        stdout, stderr = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(timeout=10)
    assert p.returncode == 0, stderr
    assert "rtgate-sampler" in maps
    assert "libm." not in maps, "libm is mapped (and locked) during the run"
    # after the run the gate is evaluated with the real libm
    assert re.search(r"^RTGATE-GATE g \S+ PASS ", stdout, re.M), stdout


@pytest.mark.parametrize("threads", ["2", "16"])
def test_peak_rss_not_above_cyclictest(sampler: str, cyclictest: str, threads: str) -> None:
    """Unlocked: every buffer is untouched until a run uses it, as cyclictest's. Five alternating
    pairs; the median of each program's figures: one run of either varies by ~200 KiB (-t 2 on a busy
    runner: ours 1920-2124, cyclictest 2084-2288), so the smaller of two pairs, used before, failed
    one run in three there (2116 against 2064). Every page of the
    histogram that a run's spread of latencies touches (512 us of 1-us buckets per page) is the
    histogram's price, which cyclictest without -h does not pay: so the threads run where late
    samples are few, at FIFO 80 (as root) on a CPU no other real-time task holds. Unpinned, on a
    busy runner's hogs (SCHED_OTHER) and its FIFO 95 task, 16 threads came out above cyclictest.
    Not 64 threads: there, those pages can outweigh the margin even so (benchmarks/README.md)."""
    ours, theirs = [], []
    with machine_to_itself("peak rss"):  # no other measurement's FIFO threads on that CPU meanwhile
        where = ["-p", "80", "-a", str(measured_cpu())] if IS_ROOT else []
        opts = ["-t", threads, *where, "-i", "1000", "-l", "1000", "-q"]
        for _ in range(5):
            ours.append(_peak_rss_kib([sampler, *opts]))
            theirs.append(_peak_rss_kib([cyclictest, *opts]))
    assert median(ours) <= median(theirs), f"rtgate-sampler {ours} KiB, cyclictest {theirs} KiB"


@pytest.mark.skipif(not IS_ROOT, reason="-m needs root here")
@pytest.mark.parametrize("threads", ["2", "64"])
def test_locked_peak_rss_not_above_cyclictest(sampler: str, cyclictest: str, threads: str) -> None:
    """-m maps and locks everything before the run, so both figures are steady: rtgate-sampler's
    per-thread cost (stack, the histogram's first 1 ms, the block maxima a 1 s run can fill) must
    stay under cyclictest's. Before issue 32 it was 1.01x at 2 threads and 2.19x at 64. Pages of
    buckets above 1 ms that late samples touch add 4 KiB each; the margin is ~13 % at 2 threads
    and ~25 % at 64 (benchmarks/README.md)."""
    opts = ["-m", "-p", "80", "-t", threads, "-i", "1000", "-l", "1000", "-q"]
    ours, theirs = [], []
    for _ in range(2):
        ours.append(_peak_rss_kib([sampler, *opts]))
        theirs.append(_peak_rss_kib([cyclictest, *opts]))
    assert min(ours) <= min(theirs), f"rtgate-sampler {ours} KiB, cyclictest {theirs} KiB"


@pytest.mark.skipif(not IS_ROOT or (os.cpu_count() or 1) < 2, reason="needs root (SCHED_FIFO, -m) and two CPUs")
def test_locked_run_counts_samples_beyond_its_locked_head(sampler: str, tmp_path: Path) -> None:
    """With -m only the buckets below 1 ms are mapped before the run; a sample later than that is
    counted in a page the kernel maps when it is first written. Known answer: a SCHED_FIFO 95 busy
    loop on the sampler's CPU for 4 ms every 100 ms; the first 1 ms deadline inside each window
    is sampled at its end, more than 3 ms late. Every window inside the run shows as such a sample,
    and the full-range histogram still accounts for every cycle."""
    out, log = tmp_path / "r.json", tmp_path / "injector.json"
    argv = [sampler, "-m", "-p", "80", "-a", str(CPU), "-t", "1", "-i", "1000", "-D", "3", "-q", f"--json={out}"]
    with inject(CPU, 95, 4000, 100, 5, log):
        t0 = time.monotonic_ns()
        r = run_tool(argv, timeout=60)
        t1 = time.monotonic_ns()
    assert r.returncode == 0, r.stderr
    windows = json.loads(log.read_text())["windows_ns"]
    inside = [w for w in windows if w[0] >= t0 + 300_000_000 and w[1] <= t1 - 300_000_000]
    assert len(inside) >= 20, "the injector did not run as planned"
    doc = load_json(out)
    rg = doc["rtgate"]["threads"][0]
    hist = rg["histogram"]  # [lower, upper, count], non-zero buckets
    assert sum(b[2] for b in hist) == rg["cycles"] == doc["thread"]["0"]["cycles"]
    assert rg["cycles"] + rg["missed_periods"] == 3000
    late = sum(b[2] for b in hist if b[0] >= 2500)
    assert late >= len(inside), (late, len(inside), hist[-5:])
    top = hist[-1]  # the exact max lies in the highest non-zero bucket
    assert top[0] <= rg["max"] and (top[1] is None or rg["max"] < top[1]), (top, rg["max"])
