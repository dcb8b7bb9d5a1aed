# SPDX-License-Identifier: GPL-2.0-or-later
"""A latency bisection, live (issue 48 item 4): real `git bisect run` with the shipped wrapper
(scripts/bisect-step.sh, the script doc/history.rst prints) over a throwaway git history whose
commits make p99 worse by x1.5 from one commit onwards (the latency injector beside every run,
stronger from that commit on). Each step measures with `rtgate run --history` until `rtgate
history bisect` decides; git must name that commit."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import IS_ROOT, ROOT
from history_live import measured_cpu

COMMITS = 4
FIRST_BAD = 3  # commits 1..4 after the known-good commit 0; the regression is in from commit 3
# Every run has the injector beside it, so that its p99 is the injection's, not this host's noise:
# the known-good kernel and the good commits steal GOOD_US of every PERIOD_MS (20 % of wake-ups
# delayed by up to 1 ms: p99 ~0.98 ms), commit 3 and later BAD_US (30 %, up to 1.5 ms: p99 ~1.46 ms).
# The regression is x1.5 of p99; the bisection is asked to call bad anything worse by x1.2.
GOOD_US, BAD_US, PERIOD_MS = 1000, 1500, 5
WORSE_BY = 1.2

THRESHOLDS = """\
platform: bisect-live
description: one measurement per bisect run; the injector runs beside it from one commit on
measurements:
  idle:
    sampler:
      interval_us: 1000
      duration: 1s
      threads: [{{name: rt, cpus: [{cpu}], priority: 80}}]
    gates:
      - {{name: p99, kind: percentile, percentile: 99, limit_us: 100000}}
"""

# The user's measure command of the wrapper, as doc/history.rst's local paired recipe: a run of
# the known-good setting and one of the commit's, in random order, under one pair id, each with
# `rtgate run --history`; the injector on while the checked-out commit says so.
MEASURE = """\
import random, subprocess, sys
sys.path.insert(0, {tests!r})
from history_live import injected_latency
label, n = sys.argv[1], sys.argv[2]
def run(release, busy_us):
    argv = [{python!r}, "-m", "rtgate", "run", {thresholds!r}, "--history", {db!r}, "--release", release,
            "--force-label", "--pair-id", f"{{label}}-{{n}}"]
    with injected_latency({cpu}, busy_us, {period}):
        return subprocess.run(argv).returncode
regressed = open("inject").read().strip() == "1"
order = [("good", {good}), (label, {bad} if regressed else {good})]
random.shuffle(order)
codes = [run(release, on) for release, on in order]
sys.exit(max(codes))
"""


def git(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)


@pytest.mark.slow
@pytest.mark.skipif(not IS_ROOT, reason="needs root for SCHED_FIFO")
def test_git_bisect_run_finds_the_commit_that_injects_latency(tmp_path: Path) -> None:
    cpu = measured_cpu()
    thresholds, db = tmp_path / "board.yaml", tmp_path / "h.db"
    thresholds.write_text(THRESHOLDS.format(cpu=cpu))
    program = tmp_path / "measure.py"
    program.write_text(
        MEASURE.format(
            python=sys.executable,
            tests=str(ROOT / "tests"),
            thresholds=str(thresholds),
            db=str(db),
            cpu=cpu,
            good=GOOD_US,
            bad=BAD_US,
            period=PERIOD_MS,
        )
    )
    # A shell script runs it: a #! line cannot name an interpreter whose path holds a blank.
    measure = tmp_path / "measure"
    measure.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(program))} "$@"\n')
    measure.chmod(0o755)
    repo = tmp_path / "tree"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    hashes = []
    for i in range(COMMITS + 1):
        (repo / "inject").write_text("1\n" if i >= FIRST_BAD else "0\n")
        git("add", "inject", cwd=repo)
        git("commit", "-q", "--allow-empty", "-m", f"commit {i}", cwd=repo)
        hashes.append(git("rev-parse", "--short=12", "HEAD", cwd=repo).stdout.strip())
    git("bisect", "start", hashes[-1], hashes[0], cwd=repo)
    env = os.environ | {
        "RTGATE": str(Path(sys.executable).parent / "rtgate"),
        "RTGATE_BUILD": "true",
        "RTGATE_MEASURE": str(measure),
    }
    wrapper = ["sh", str(ROOT / "scripts" / "bisect-step.sh")]
    # Bad: p99 worse by x1.2 at least; paired runs, whose host drift cancels and which the drift
    # guard compares on the categorical fingerprint only.
    step = ["--db", str(db), "--thresholds", str(thresholds), "--base", "good", "--paired"]
    step += ["--metric", "p99", "--worse-by", str(WORSE_BY), "--error", "0.05", "--max-runs", "20"]
    r = subprocess.run(
        ["git", "bisect", "run", *wrapper, *step], cwd=repo, env=env, capture_output=True, text=True, timeout=600
    )
    assert f"{hashes[FIRST_BAD]}" in r.stdout and "is the first bad commit" in r.stdout, r.stdout + r.stderr
    # Every step printed its decision with its error bound, and trend marks the commits measured.
    assert "wrong with chance <= 0.05 each way per step" in r.stdout
    # The regression found is the one injected: p99 worse by x1.5 (the median ratio of each BAD step's pairs).
    ratios = [float(x) for x in re.findall(r"BAD .*?median ratio x([0-9.]+)", r.stdout)]
    assert ratios and all(1.3 <= x <= 1.7 for x in ratios), r.stdout
    trend = subprocess.run(
        [
            sys.executable,
            "-m",
            "rtgate",
            "history",
            "trend",
            "--db",
            str(db),
            "--platform",
            "bisect-live",
            "--metric",
            "max",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    marked = [line for line in trend.splitlines() if " after " in line and "run(s)" in line]
    assert any(line.startswith(hashes[FIRST_BAD]) and "BAD" in line for line in marked), trend
    assert any("GOOD" in line for line in marked), trend  # the bisection decided a good commit too
