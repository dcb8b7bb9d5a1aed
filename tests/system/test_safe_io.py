# SPDX-License-Identifier: GPL-2.0-or-later
"""Files the harness writes (it may run as root): exclusive temporary file, fsync, rename; no device replaced."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import RT_TESTS
from rtgate.errors import RtgateError
from rtgate.safe_io import atomic_open, check_output_dir, check_output_file, write_text

DEFAULT = "thresholds/default.yaml"
RESULTS = str(RT_TESTS / "ct-new-S-h300.json")


def rtgate(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rtgate.cli", *args], capture_output=True, text=True, timeout=300, cwd=cwd
    )


def test_write_replaces_atomically_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old\n")
    write_text(target, "new\n")
    assert target.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask  # as open() makes it, not mkstemp's 0600


def test_replaces_in_a_row_share_one_folder_sync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file's data is flushed before its rename; a replace with sync=False leaves the folder's sync
    to the next one, which makes both renames durable (run's two files before and after the sampler)."""
    from rtgate.safe_io import Folder

    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append("folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with Folder(tmp_path) as out:
        out.replace("a.json", "a\n", sync=False)
        out.replace("b.cmdline", "b\n")
        assert synced == ["file", "file", "folder"]
        out.replace("c.json", "c\n")
    assert synced == ["file", "file", "folder", "file", "folder"]
    assert [(tmp_path / n).read_text() for n in ("a.json", "b.cmdline", "c.json")] == ["a\n", "b\n", "c\n"]


def test_a_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic_open(target) as f:
            f.write("half")
            raise RuntimeError("writer failed")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_a_symlink_planted_as_the_target_is_replaced_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    link = tmp_path / "report.xml"
    link.symlink_to(victim)
    write_text(link, "report\n")
    assert victim.read_text() == "precious\n"
    assert not link.is_symlink() and link.read_text() == "report\n"


@pytest.mark.parametrize("device", ["/dev/full", "/dev/null"])
def test_a_device_is_refused_and_left_alone(device: str) -> None:
    before = os.stat(device)
    with pytest.raises(RtgateError, match="not a regular file"):
        write_text(device, "x")
    with pytest.raises(RtgateError, match="not a regular file"):
        check_output_file(device)
    after = os.stat(device)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev


def test_a_directory_target_and_a_missing_directory_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RtgateError, match="directory"):
        check_output_file(tmp_path)
    with pytest.raises(RtgateError, match="does not exist"):
        check_output_file(tmp_path / "no" / "such" / "out.xml")
    (tmp_path / "file").write_text("")
    with pytest.raises(RtgateError, match="not a directory"):
        check_output_dir(tmp_path / "file")


def test_check_cli_refuses_dev_full_as_a_report(tmp_path: Path) -> None:
    r = rtgate("check", DEFAULT, RESULTS, "--json", "/dev/full")
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [r.stderr.strip()] and "/dev/full" in r.stderr
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_check_cli_writes_reports_through_a_planted_symlink_safely(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / "junit.xml").symlink_to(victim)
    r = rtgate("check", DEFAULT, RESULTS, "--junit", str(tmp_path / "junit.xml"))
    assert r.returncode in (0, 1, 3), r.stderr
    assert victim.read_text() == "precious\n"
    assert (tmp_path / "junit.xml").read_text().startswith("<?xml")


@pytest.mark.parametrize(
    "option,value",
    [
        ("--junit", "/dev/full"),
        ("--json", "{tmp}/missing/v.json"),
        ("--output-dir", "/dev/null/x"),
        ("--history", "/dev/full"),
    ],
)
def test_run_refuses_unwritable_outputs_before_measuring(option: str, value: str, tmp_path: Path, sampler: str) -> None:
    """The sampler is never started: the 20 s measurement would print "measuring" first."""
    thresholds = tmp_path / "long.yaml"
    thresholds.write_text("""platform: long
measurements:
  m:
    sampler:
      interval_us: 1000
      duration: 20s
      mlockall: false
      threads: [{name: a, cpus: [0]}]
    gates: [{name: max, kind: max, limit_us: 100000}]
""")
    args = [
        "run",
        str(thresholds),
        "--sampler",
        sampler,
        "--output-dir",
        str(tmp_path / "out"),
        option,
        value.format(tmp=tmp_path),
    ]
    r = rtgate(*args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "measuring" not in r.stdout, r.stdout
    assert r.stderr.startswith("rtgate: error: ") and len(r.stderr.strip().splitlines()) == 1, r.stderr


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


@pytest.mark.parametrize("planted", ["m.cmdline", "m.stdout", "m.stderr", "m.load", "m.load/load.log", "other"])
def test_run_refuses_a_link_planted_in_the_output_folder(planted: str, tmp_path: Path, sampler: str) -> None:
    """The issue's reproducer: a link in the output folder is refused before measuring, its target untouched."""
    (tmp_path / "long.yaml").write_text(LONG)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    out = tmp_path / "out"
    (out / "m.load").mkdir(parents=True)
    if planted == "m.load":
        (out / "m.load").rmdir()
        victim = tmp_path / "victim.d"
        victim.mkdir()
    (out / planted).symlink_to(victim)
    r = rtgate("run", str(tmp_path / "long.yaml"), "--sampler", sampler, "--output-dir", str(out))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "measuring" not in r.stdout and "symbolic link" in r.stderr, r.stdout + r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    if victim.is_file():
        assert victim.read_text() == "precious\n"
    else:
        assert not list(victim.iterdir())


@pytest.mark.parametrize("option", ["--json", "--junit", "--history"])
def test_run_refuses_a_report_named_as_a_results_file(option: str, tmp_path: Path, sampler: str) -> None:
    (tmp_path / "long.yaml").write_text(LONG)
    out = tmp_path / "o"
    r = rtgate(
        "run",
        str(tmp_path / "long.yaml"),
        "--sampler",
        sampler,
        "--output-dir",
        str(out),
        option,
        "o/m.json",
        cwd=tmp_path,
    )
    assert r.returncode == 2 and "measuring" not in r.stdout, r.stdout + r.stderr
    assert f"{option} names a file the measurement writes" in r.stderr, r.stderr


def test_run_refuses_a_history_that_is_not_a_database(tmp_path: Path, sampler: str) -> None:
    (tmp_path / "long.yaml").write_text(LONG)
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n" * 100)
    r = rtgate(
        "run",
        str(tmp_path / "long.yaml"),
        "--sampler",
        sampler,
        "--output-dir",
        str(tmp_path / "o"),
        "--history",
        str(notes),
    )
    assert r.returncode == 2 and "measuring" not in r.stdout, r.stdout + r.stderr
    assert "history database" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert notes.read_text() == "my notes\n" * 100


def test_folder_never_follows_a_link(tmp_path: Path) -> None:
    from rtgate.safe_io import Folder

    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / "log").symlink_to(victim)
    (tmp_path / "sub").symlink_to(tmp_path)
    with Folder(tmp_path) as d:
        with d.create("log") as f:  # the link is removed, a new file made: never written through
            f.write(b"new\n")
        with pytest.raises(RtgateError, match="symbolic link"):
            d.sub("sub")
        (tmp_path / "rd").symlink_to(victim)
        with pytest.raises(RtgateError, match="symbolic link"):
            d.read_bytes("rd")
    assert victim.read_text() == "precious\n" and (tmp_path / "log").read_text() == "new\n"


def _disk_fills_at(limit: int):  # type: ignore[no-untyped-def]
    """A preexec_fn: files grow to `limit` bytes, then writes fail with EFBIG, as on a full disk."""
    import resource
    import signal

    def setup() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return setup


def test_a_report_that_cannot_be_written_loses_only_itself(tmp_path: Path) -> None:
    """JUnit (34 kB) hits the full disk, the verdicts JSON (14 kB) is still written; the loss is said in one
    line and the exit status is 2 (a gate fails in this fixture: 1 without the loss), never an internal error."""
    r = subprocess.run(
        [sys.executable, "-m", "rtgate.cli", "check", "default.yaml", RESULTS, "--junit", "j.xml", "--json", "v.json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        preexec_fn=_disk_fills_at(20_000),
    )
    assert r.returncode == 2, r.stdout + r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "j.xml" in lines[0] and "lost" in lines[0], r.stderr
    assert "FAIL" in r.stdout  # the summary
    assert json.loads((tmp_path / "v.json").read_text())["verdicts"]
    assert not (tmp_path / "j.xml").exists() and not list(tmp_path.glob(".j.xml*"))


def test_a_lost_report_never_leaves_a_pass(tmp_path: Path) -> None:
    (tmp_path / "loose.yaml").write_text(LOOSE)
    r = subprocess.run(
        [sys.executable, "-m", "rtgate.cli", "check", "loose.yaml", RESULTS, "--junit", "j.xml"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        preexec_fn=_disk_fills_at(1000),
    )
    assert "PASS" in r.stdout and r.returncode == 2, r.stdout + r.stderr
    assert "j.xml" in r.stderr and "lost" in r.stderr and "internal error" not in r.stderr


LOOSE = """platform: loose
measurements:
  m:
    sampler: {interval_us: 200, loops: 5000}
    gates: [{name: max, kind: max, limit_us: 100000}]
"""
