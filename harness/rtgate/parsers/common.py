# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers the text parsers share."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from rtgate.errors import ResultsError

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Lines without their newline; a file that does not end in one was cut off mid-write."""
    last = ""
    number = 0
    with path.open("r", encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, start=1):
            last = line
            yield number, line.rstrip("\r\n")
    if last and not last.endswith("\n"):
        raise ResultsError("truncated: the last line has no newline", path=str(path), line=number)


def check_unit(unit: str, path: Path) -> None:
    if unit not in ("us", "ns"):
        raise ResultsError(f"unit must be 'us' or 'ns', not {unit!r}", path=str(path))


MAX_DIGITS = 19  # 2^63-1 has 19 digits: cyclictest and rtgate-sampler print 64-bit integers


def whole(text: str, path: Path, line: int, what: str) -> int:
    """A printed count or latency, refused beyond 64 bits instead of overflowing a float later."""
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
