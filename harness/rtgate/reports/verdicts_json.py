# SPDX-License-Identifier: GPL-2.0-or-later
"""Verdicts as JSON, for scripts and dashboards."""

from __future__ import annotations

import json
import re
from typing import Any

from rtgate import __version__
from rtgate.core.gates import Verdict, exit_code
from rtgate.safe_io import write_text

# How gates write a figure known only between two values (gate_kinds.us_range, pct_range): "15..4878 us",
# ">= 300 us" (an overflow with no known max), "<= 894 us" (only the max bounds it), "0.1..0.3 %".
_SPAN = re.compile(r"(?P<lo>[0-9.]+)\.\.(?P<hi>[0-9.]+) ?(?P<unit>us|%)")
_AT_LEAST = re.compile(r">= ?(?P<lo>[0-9.]+) ?us")
_AT_MOST = re.compile(r"<= ?(?P<hi>[0-9.]+) ?us")


def value_range(v: Verdict) -> tuple[float | None, float | None] | None:
    """A verdict's figure as (lowest, highest) when only a range is known, in the unit of `value` (a fraction for
    rates), None at an end nothing bounds; None when the figure is a point. The high end is `value` itself (the
    conservative figure gates judge); the low end is read from the text the gate wrote (two decimals in us, four
    significant digits in %)."""
    text = v.value_text.strip()
    span = _SPAN.fullmatch(text)
    if span:
        low = float(span["lo"] + ("e-2" if span["unit"] == "%" else ""))  # a percentage as a fraction, no rounding
        return low, v.value
    at_least = _AT_LEAST.fullmatch(text)
    if at_least:
        return float(at_least["lo"]), None
    if _AT_MOST.fullmatch(text):
        return None, v.value
    return None


def range_text(low: float | None, high: float | None, unit: str) -> str:
    """A range for people: "15..4878 us", ">= 300 us", "<= 894 us"."""
    if high is None:
        return f">= {low:g} {unit}"
    if low is None:
        return f"<= {high:g} {unit}"
    return f"{low:g}..{high:g} {unit}"


def verdict_dict(v: Verdict) -> dict[str, Any]:
    """A verdict as JSON: its fields, and `value_range` [low, high] when its figure is only known as a range
    (then `value` is the range's high end, the conservative figure the gate judged)."""
    d = v.as_dict()
    span = value_range(v)
    if span is not None:
        d["value_range"] = list(span)
    return d


def verdicts_document(
    platform: str,
    threshold_files: list[str],
    verdicts: list[Verdict],
    allow_inconclusive: bool,
    extra: dict[str, Any] | None = None,
    environment: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`environment`: the machine and each measurement's load and preflight (reports/described.py)."""
    doc: dict[str, Any] = {
        "rtgate_version": __version__,
        "platform": platform,
        "threshold_files": threshold_files,
        "exit_code": exit_code(verdicts, allow_inconclusive),
        "verdicts": [verdict_dict(v) for v in verdicts],
    }
    if environment is not None:
        doc["environment"] = environment
    if extra:
        doc.update(extra)
    return doc


def write_json(path: str, doc: dict[str, Any]) -> None:
    write_text(path, json.dumps(doc, indent=2, sort_keys=False, allow_nan=False) + "\n")
