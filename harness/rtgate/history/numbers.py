# SPDX-License-Identifier: GPL-2.0-or-later
"""How the history writes a figure: with its unit, to three significant digits, never in
e-notation. Every figure `history` prints (compare, trend, drift, plot titles) comes through
here; a leaf module, so that every part of the history can use it."""

from __future__ import annotations

import math


def plain(v: float, digits: int = 3) -> str:
    """A number to `digits` significant digits, never in e-notation: 3370 and 0.000012, not
    3.37e+03 and 1.2e-05 (a reader compares figures across lines at a glance)."""
    text = f"{v:.{digits}g}"  # the common case, and the quick one (a trend prints thousands)
    if "e" not in text or not math.isfinite(v):
        return text
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(v))))
    text = f"{round(v, decimals):.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def figure_text(v: float, unit: str, signed: bool = False) -> str:
    """A figure of the history with its unit: 'us' (latency), or 'share' (of samples, in %; a
    signed share is a change, in points of %). Every figure history prints comes through here."""
    sign = "+" if signed and v > 0 else ""
    if unit == "share":
        return f"{sign}{plain(v * 100)} {'points of %' if signed else '%'}"
    return f"{sign}{plain(v)} {unit}"


def metric_unit(metric: str) -> str:
    """The unit of a metric's figures: a share above a latency, or microseconds."""
    return "share" if metric.startswith("above_") else "us"
