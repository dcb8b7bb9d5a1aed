# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers the text parsers share."""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from pathlib import Path

from rtgate.errors import ResultsError
from rtgate.safe_io import open_input, read_input

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


# What any text result of cyclictest, rtgate-sampler or rtla can hold (they print at most 1024 threads, a
# few columns each), so that no input costs more than seconds and a few hundred MB (benchmarks/README.md).
MAX_LINE = 64 * 1024  # characters: a histogram row of 1025 columns is under 8 KiB
MAX_COLUMNS = 1025  # threads (MAX_THREADS of the sampler; cyclictest's -H adds a sum column)
MAX_ROWS = 200_000  # histogram rows: cyclictest -h and rtla -E as anyone runs them print far fewer

# The largest results file read: about an hour of -v samples of one thread at 1 ms; every other format
# of a real run stays under a few MB. Within it, reading costs seconds (benchmarks/README.md). Counted
# as the bytes are read, whatever the file's size says.
MAX_RESULTS_BYTES = 64 * 2**20
# Lines of any text result, counted whether they parse or not (lines a parser skips, such as those
# before '# Histogram', cost as much as rows): the shortest line cyclictest, rtgate-sampler or rtla
# writes in bulk is a -v sample of 27 bytes, so no real result comes near 16 bytes a line.
MAX_LINES = MAX_RESULTS_BYTES // 16


def open_results(path: Path) -> io.TextIOWrapper:
    """A results file opened once for reading: a FIFO, socket or device is refused (ResultsError)."""
    return io.TextIOWrapper(open_input(path, ResultsError, "results"), encoding="utf-8", errors="replace")


def read_results_bytes(path: Path) -> bytes:
    """A whole results file, at most MAX_RESULTS_BYTES (refused beyond, never read past it)."""
    return read_input(path, MAX_RESULTS_BYTES, ResultsError, "results")


def numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Lines without their newline; a file that does not end in one was cut off mid-write.
    A line longer than MAX_LINE is refused before it is read whole, and a file as soon as more than
    MAX_RESULTS_BYTES or MAX_LINES lines are read."""
    number = 0
    rest = ""
    with open_results(path) as f:
        while chunk := f.read(1 << 20):
            if os.lseek(f.fileno(), 0, os.SEEK_CUR) > MAX_RESULTS_BYTES:  # bytes read: a regular file's offset
                raise ResultsError(
                    f"larger than {MAX_RESULTS_BYTES >> 20} MiB: not a result rtgate reads", path=str(path)
                )
            lines = (rest + chunk).split("\n")
            rest = lines.pop()
            if len(rest) > MAX_LINE:
                raise ResultsError(
                    f"a line longer than {MAX_LINE} characters", path=str(path), line=number + len(lines) + 1
                )
            if number + len(lines) > MAX_LINES:
                raise ResultsError(
                    f"more than {MAX_LINES} lines: not a result rtgate reads", path=str(path), line=MAX_LINES + 1
                )
            for line in lines:
                number += 1
                if len(line) > MAX_LINE:
                    raise ResultsError(f"a line longer than {MAX_LINE} characters", path=str(path), line=number)
                yield number, line.rstrip("\r")
    if rest:
        number += 1
        yield number, rest.rstrip("\r")
        raise ResultsError("truncated: the last line has no newline", path=str(path), line=number)


def check_unit(unit: str, path: Path) -> None:
    if unit not in ("us", "ns"):
        raise ResultsError(f"unit must be 'us' or 'ns', not {unit!r}", path=str(path))


MAX_DIGITS = 19  # 2^63-1 has 19 digits: cyclictest and rtgate-sampler print 64-bit integers


def whole(text: str, path: Path, line: int | None, what: str) -> int:
    """A printed count or latency, refused beyond 64 bits instead of overflowing a float later.
    ASCII digits only: int() reads other scripts' digits (and regex \\d matches them) too."""
    if not (text.isascii() and text.isdigit()):
        raise ResultsError(f"{what} {text[:24]!r} is not a number in ASCII digits", path=str(path), line=line)
    digits = text.lstrip("0")
    if len(digits) > MAX_DIGITS or (len(digits) == MAX_DIGITS and int(digits) > 2**63 - 1):
        raise ResultsError(
            f"{what} {text[:24]}{'...' if len(text) > 24 else ''} is beyond 64 bits", path=str(path), line=line
        )
    return int(digits or "0")


def line_locator(lines: dict[tuple[int, str], int], default: dict[int, int] | None = None):  # type: ignore[no-untyped-def]
    """For check_run: the line a thread's field was read from, and the thread as the key."""

    def locate(pos: int, name: str) -> tuple[int | None, str | None]:
        line = lines.get((pos, name)) or (default or {}).get(pos)
        return line, f"thread {pos}: {name}" if name else f"thread {pos}"

    return locate
