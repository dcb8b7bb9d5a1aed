# SPDX-License-Identifier: GPL-2.0-or-later
"""In-process halves of tests/system/test_input_bounds.py (issue 47): the byte and line caps of the text
results reader, the bounded reader of any input, and the output folder refusing a FIFO at every name."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rtgate import safe_io
from rtgate.errors import ResultsError, RtgateError
from rtgate.parsers import common
from rtgate.safe_io import Folder, check_output_dir, read_input


def test_the_byte_cap_counts_bytes_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "MAX_RESULTS_BYTES", 1000)
    path = tmp_path / "r.txt"
    path.write_text("0123456789\n" * 100)  # 1100 bytes: over the cap within the first read
    with pytest.raises(ResultsError, match=r"r\.txt: larger than 0 MiB: not a result rtgate reads"):
        list(common.numbered_lines(path))
    path.write_text("0123456789\n" * 90)  # 990 bytes: read whole
    assert [n for n, _ in common.numbered_lines(path)] == list(range(1, 91))


def test_the_line_cap_counts_every_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "MAX_LINES", 50)
    path = tmp_path / "r.txt"
    path.write_text("\n" * 51)
    with pytest.raises(ResultsError, match=r"r\.txt:51: more than 50 lines"):
        list(common.numbered_lines(path))
    path.write_text("\n" * 50)
    assert len(list(common.numbered_lines(path))) == 50


def test_read_input_never_reads_past_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 4097)
    assert read_input(path, 4097) == b"x" * 4097
    with pytest.raises(RtgateError, match=r"f: larger than 4096 bytes: more than rtgate reads as input"):
        read_input(path, 4096)


def test_a_ctrl_c_inside_fdopen_closes_the_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C inside os.fdopen: io.open has closed the descriptor it was given; closing it again
    replaced the Ctrl-C with 'Bad file descriptor' (exit 2 on a busy runner), and could close a file
    opened since under the same number. The Ctrl-C comes out as itself."""
    path = tmp_path / "f"
    path.write_bytes(b"x")

    def interrupted(fd: int, mode: str) -> None:
        try:
            raise KeyboardInterrupt
        finally:
            os.close(fd)  # what io.open does with a descriptor when it fails after taking it

    monkeypatch.setattr(safe_io.os, "fdopen", interrupted)
    with pytest.raises(KeyboardInterrupt) as e:
        read_input(path, 10)
    assert e.value.__context__ is None, repr(e.value.__context__)


def test_a_device_is_refused_as_input() -> None:
    with pytest.raises(ResultsError, match=r"/dev/null: cannot read: it is a device; rtgate reads results only"):
        common.read_results_bytes(Path("/dev/null"))


def test_removing_a_name_refuses_a_fifo_as_writing_it_does(tmp_path: Path) -> None:
    """A stale name (a load's stress-ng.yaml) removed before a run: a FIFO there was removed without a word."""
    os.mkfifo(tmp_path / "stress-ng.yaml")
    (tmp_path / "gone.yaml").write_text("x")
    with Folder(tmp_path) as d:
        with pytest.raises(RtgateError, match=r"stress-ng\.yaml: cannot write: it is a device, FIFO or socket"):
            d.unlink("stress-ng.yaml")
        d.unlink("gone.yaml")
        d.unlink("absent.yaml")
    assert (tmp_path / "stress-ng.yaml").is_fifo() and not (tmp_path / "gone.yaml").exists()


def test_the_output_folder_check_looks_inside_the_folders_rtgate_writes_in(tmp_path: Path) -> None:
    (tmp_path / "m.load").mkdir()
    (tmp_path / "m.load" / "load.log").write_text("old\n")
    check_output_dir(tmp_path, ["m.json", "m.load/"])  # a regular file there is replaced: fine
    os.mkfifo(tmp_path / "m.load" / "stress-ng.yaml")
    with pytest.raises(RtgateError, match=r"m\.load/stress-ng\.yaml: cannot write: it is a device, FIFO or socket"):
        check_output_dir(tmp_path, ["m.json", "m.load/"])
    (tmp_path / "m.load" / "stress-ng.yaml").unlink()
    (tmp_path / "m.load" / "stress-ng.yaml").mkdir()
    with pytest.raises(RtgateError, match=r"m\.load/stress-ng\.yaml: cannot write: it is a directory"):
        check_output_dir(tmp_path, ["m.json", "m.load/"])
