# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 47: no path rtgate reads results from can block it or cost more than its bound. A FIFO, socket or
device is refused before anything is read from it, whether the format is detected or forced; every name in
`rtgate run`'s output folder refuses a FIFO as every other name does. Each case runs the console script
with a time bound: a regression hangs or grows until the bound, and fails saying so."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, RT_TESTS

SPEC = str(ROOT / "thresholds" / "two-thread-example.yaml")
RESULTS = RT_TESTS / "ct-new-S-h300.json"
BOUND_S = 30  # each case ends in well under a second; the bound only catches a hang on a loaded machine


def rtgate(*args: str, cwd: Path | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    try:
        r = subprocess.run(
            [sys.executable, "-m", "rtgate", *args], capture_output=True, text=True, timeout=BOUND_S, cwd=cwd
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"rtgate {' '.join(args)} still ran after {BOUND_S} s")
    return r, time.monotonic() - started


def one_line_error(r: subprocess.CompletedProcess[str], *expected: str) -> None:
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rtgate: error: "), r.stderr
    for text in expected:
        assert text in lines[0], lines[0]


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "results.json"  # named as results are: nothing but its kind gives it away
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("fmt", ["auto", "json", "histogram", "summary", "verbose", "rtla"])
def test_a_fifo_as_results_is_refused_at_once(fifo: Path, fmt: str) -> None:
    r, _ = rtgate("check", "--format", fmt, SPEC, str(fifo))
    one_line_error(r, f"{fifo}: cannot read: it is a FIFO")


@pytest.mark.parametrize(
    "fmt,device",
    [("json", "/dev/zero"), ("histogram", "/dev/urandom"), ("auto", "/dev/zero"), ("verbose", "/dev/null")],
)
def test_a_device_as_results_is_refused_whatever_the_format(fmt: str, device: str) -> None:
    """The issue's cases: --format json on /dev/zero reached 4.3 GB; histogram on /dev/urandom never ended."""
    r, _ = rtgate("check", "--format", fmt, SPEC, device)
    one_line_error(r, f"{device}: cannot read: it is a device")


def test_a_socket_as_results_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        r, _ = rtgate("check", SPEC, str(path))
    one_line_error(r, "cannot read: it is a socket")


def test_a_fifo_where_several_measurements_need_the_file_read_twice(tmp_path: Path, fifo: Path) -> None:
    """With several measurements the file is first looked at for rtgate's own verdicts JSON, then read."""
    r, _ = rtgate("check", str(ROOT / "thresholds" / "default.yaml"), str(fifo))
    one_line_error(r, "cannot read: it is a FIFO")


def test_a_fifo_beside_the_results_is_no_environment(tmp_path: Path) -> None:
    """rtgate run's <measurement>.environment.json beside the results: a FIFO there is not waited on; the results
    are judged as without one (the same verdicts as the file alone)."""
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(RESULTS, alone / "app.json")
    r0, _ = rtgate("check", SPEC, str(alone / "app.json"))
    shutil.copy(RESULTS, tmp_path / "app.json")
    os.mkfifo(tmp_path / "app.environment.json")
    r, _ = rtgate("check", SPEC, str(tmp_path / "app.json"))
    assert r.returncode == r0.returncode and r.returncode in (0, 1), r.stdout + r.stderr
    assert r.stdout.replace(str(tmp_path), "D") == r0.stdout.replace(str(alone), "D")


def test_a_fifo_as_threshold_or_lab_file_is_refused(tmp_path: Path, fifo: Path) -> None:
    r, _ = rtgate("check", str(fifo), str(RESULTS))
    one_line_error(r, str(fifo))  # not a threshold file rtgate finds
    r, _ = rtgate("lab", str(fifo), "--dry-run")
    one_line_error(r, "cannot read: it is a FIFO")


def test_lava_results_and_log_refuse_a_fifo(tmp_path: Path, fifo: Path) -> None:
    r, _ = rtgate("lava", "results", str(fifo))
    one_line_error(r, "cannot read: it is a FIFO")
    log = tmp_path / "log.yaml"
    os.mkfifo(log)
    export = tmp_path / "results.yaml"
    export.write_text("- {suite: 1_rtgate, name: max-all, result: pass}\n")
    r, _ = rtgate("lava", "results", str(export), "--log", str(log))
    one_line_error(r, f"{log}: cannot read: it is a FIFO")


def test_lines_that_are_not_rows_count_towards_the_cap(tmp_path: Path) -> None:
    """Random bytes are no rows: the cap counts every line read, so 5 million junk lines before '# Histogram'
    (the histogram parser skips them) end at line 4,194,305 (MAX_LINES + 1): every text parser reads
    through the same counting reader."""
    from rtgate.parsers.common import MAX_LINES

    junk = tmp_path / "junk.hist"
    with junk.open("w") as f:
        f.write("#\n" * 5_000_000 + "# Histogram\n")
    r, _ = rtgate("check", "--format", "histogram", SPEC, str(junk))
    one_line_error(r, f"junk.hist:{MAX_LINES + 1}: more than {MAX_LINES} lines")


LONG = """platform: long
measurements:
  m:
    sampler:
      interval_us: 1000
      duration: 20s
      mlockall: false
      threads: [{name: a, cpus: [0]}]
    gates: [{name: max, kind: max, limit_us: 100000}]
"""


@pytest.mark.parametrize("planted", ["m.load/stress-ng.yaml", "m.load/load.log", "m.json", "m.stdout"])
def test_run_refuses_a_fifo_planted_at_any_name_it_writes(planted: str, tmp_path: Path, sampler: str) -> None:
    """The issue's case: a FIFO at <measurement>.load/stress-ng.yaml was replaced without a word. Every name is
    now refused before measuring (the 20 s measurement would print "measuring"), the FIFO left in place."""
    (tmp_path / "long.yaml").write_text(LONG)
    out = tmp_path / "out"
    (out / "m.load").mkdir(parents=True)
    os.mkfifo(out / planted)
    r, _ = rtgate("run", str(tmp_path / "long.yaml"), "--sampler", sampler, "--output-dir", str(out))
    one_line_error(r, f"{out / planted}: cannot write: it is a device, FIFO or socket")
    assert "measuring" not in r.stdout
    assert (out / planted).is_fifo()
