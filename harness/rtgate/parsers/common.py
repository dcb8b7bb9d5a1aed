"""Helpers the text parsers share."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

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
