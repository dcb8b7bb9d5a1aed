"""Parsers: every supported output format becomes one RunResult."""

from __future__ import annotations

from pathlib import Path

from rtgate.errors import ResultsError
from rtgate.core.model import RunResult
from rtgate.parsers import histtext, json_results, summary, verbose

FORMATS = ("auto", "json", "histogram", "summary", "verbose")


def detect_format(path: Path, head: str) -> str:
    stripped = head.lstrip()
    if stripped.startswith("{"):
        return "json"
    if "# Histogram" in head:
        return "histogram"
    if verbose.looks_like(head):
        return "verbose"
    if summary.looks_like(head):
        return "summary"
    raise ResultsError("not a format rtgate reads (rtgate or rt-tests JSON, cyclictest histogram, "
                       "T: summary lines or -v samples)", path=str(path))


def load_results(path: str | Path, fmt: str = "auto", unit: str = "us") -> RunResult:
    """Read one results file. Text formats do not say their unit: `unit` says it (us or ns)."""
    p = Path(path)
    try:
        with p.open("r", encoding="utf-8", errors="replace") as f:
            head = f.read(65536)
    except OSError as e:
        raise ResultsError(f"cannot read: {e.strerror}", path=str(p)) from e
    if not head.strip():
        raise ResultsError("file is empty", path=str(p))
    if fmt == "auto":
        fmt = detect_format(p, head)
    if fmt == "json":
        return json_results.parse(p)
    if fmt == "histogram":
        return histtext.parse(p, unit)
    if fmt == "summary":
        return summary.parse(p, unit)
    if fmt == "verbose":
        return verbose.parse(p, unit)
    raise ResultsError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})", path=str(p))
