# SPDX-License-Identifier: GPL-2.0-or-later
"""The rtgate command on recorded results: exit codes, reports, and JUnit read back by junitparser.
The tests of this topic that start no process: tests/unit/test_cli_unit.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cli_specs import SMP, write
from conftest import RT_TESTS

RTGATE = [sys.executable, "-m", "rtgate"]


def rtgate(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RTGATE, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_check_pass_and_fail_exit_codes(tmp_path: Path) -> None:
    res = str(RT_TESTS / "ct-24-S-h300.json")  # maxima 894 and 155 us
    ok = rtgate("check", str(write(tmp_path, SMP.format(max=1000, rate="1%"))), res)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = rtgate("check", str(write(tmp_path, SMP.format(max=500, rate="1%"))), res)
    assert bad.returncode == 1
    assert "FAIL: smp::max[cpu0]: max 894 us > 500 us on thread 0 (cpu 0, prio 80)" in bad.stdout
    assert "PASS    smp          max       cpu1" in bad.stdout


def test_errors_exit_2_naming_the_input(tmp_path: Path) -> None:
    bad = write(tmp_path, "platform: p\nmeasurements: {}\n")
    r = rtgate("validate", str(bad))
    assert r.returncode == 2 and f"{bad}:2: measurements" in r.stderr
    t = write(tmp_path, SMP.format(max=1000, rate="1%"), "ok.yaml")
    trunc = tmp_path / "cut.json"
    trunc.write_text((RT_TESTS / "ct-24-S-h300.json").read_text()[:500])
    r = rtgate("check", str(t), str(trunc))
    assert r.returncode == 2 and str(trunc) in r.stderr and "truncated" in r.stderr
    r = rtgate("check", str(t), "other=" + str(trunc))
    assert r.returncode == 2 and "no measurement 'other'" in r.stderr
    r = rtgate("run", "--bogus")
    assert r.returncode == 2 and "--bogus" in r.stderr
    r = rtgate("check", str(t), str(tmp_path / "absent.json"))
    assert r.returncode == 2 and "absent.json" in r.stderr


def test_show_every_format() -> None:
    """Each thread's row shows the parser's own figures for that file: index, cycles and max."""
    from rtgate.parsers import load_results

    for name in ("ct-24-S-h300.json", "ct-24-S-h300.hist", "ct-new-live.stdout", "ct-24-verbose.stdout"):
        r = rtgate("show", str(RT_TESTS / name))
        assert r.returncode == 0, r.stderr
        assert "THREAD" in r.stdout and name in r.stdout
        rows = [line.split() for line in r.stdout.splitlines()[2:] if line.strip()]
        threads = load_results(RT_TESTS / name).threads
        assert len(rows) == len(threads), r.stdout
        for row, thread in zip(rows, threads):
            assert int(row[0]) == thread.index and int(row[3]) == thread.cycles, (row, thread)
            assert thread.max is not None and float(row[6]) == thread.max, (row, thread)
