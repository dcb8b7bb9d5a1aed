# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers the text parsers share."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from rtgate.errors import ResultsError

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


# What any text result of cyclictest, rtgate-sampler or rtla can hold (they print at most 1024 threads, a
# few columns each), so that no input costs more than seconds and a few hundred MB (benchmarks/README.md).
MAX_LINE = 64 * 1024  # characters: a histogram row of 1025 columns is under 8 KiB
MAX_COLUMNS = 1025  # threads (MAX_THREADS of the sampler; cyclictest's -H adds a sum column)
MAX_ROWS = 200_000  # histogram rows: cyclictest -h and rtla -E as anyone runs them print far fewer


def numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Lines without their newline; a file that does not end in one was cut off mid-write.
    A line longer than MAX_LINE is refused before it is read whole."""
    number = 0
    rest = ""
    with path.open("r", encoding="utf-8", errors="replace") as f:
        while chunk := f.read(1 << 20):
            lines = (rest + chunk).split("\n")
            rest = lines.pop()
            if len(rest) > MAX_LINE:
                raise ResultsError(
                    f"a line longer than {MAX_LINE} characters", path=str(path), line=number + len(lines) + 1
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
