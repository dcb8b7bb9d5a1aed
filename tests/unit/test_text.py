# SPDX-License-Identifier: GPL-2.0-or-later
"""The text table: every figure with its unit, one line per distinct reason, plurals right."""

from __future__ import annotations

from rtgate.core.gates import Status, Verdict
from rtgate.reports.text import summary_table


def _v(gate: str, thread: str, status: Status, reason: str, unit: str = "us", limit: float = 80.0) -> Verdict:
    return Verdict("m", gate, "max", thread, status, reason, value=183.0, value_text="183 us", limit=limit, unit=unit)


def test_limits_carry_their_units() -> None:
    text = summary_table(
        "p",
        [_v("max", "cpu0", Status.FAIL, "max 183 us > 80 us"), _v("rate", "cpu0", Status.PASS, "", "%", 0.001)],
    )
    rows = text.splitlines()
    assert rows[1].split()[-2:] == ["LIMIT", "SAMPLES"]
    assert "183 us  80 us" in rows[2]
    assert "0.1 %" in rows[3]
    assert rows[-1] == "rtgate: FAIL: 1 passed, 1 failed, 0 inconclusive, 0 errors"


def test_one_line_per_distinct_reason_and_one_error() -> None:
    why = "not measured: requires preempt_rt"
    text = summary_table(
        "p",
        [
            _v("max", "cpu0", Status.ERROR, why),
            _v("max", "cpu1", Status.FAIL, "max 183 us > 80 us"),
        ],
    )
    assert text.count(why) == 1
    text = summary_table("p", [_v("max", "cpu0", Status.ERROR, why), _v("p99", "cpu0", Status.ERROR, why)])
    assert f"ERROR: m::max[cpu0], m::p99[cpu0]: {why}" in text and text.count(why) == 1
    assert text.rstrip().endswith("0 inconclusive, 2 errors")
    text = summary_table("p", [_v("max", "cpu0", Status.ERROR, why)])
    assert text.rstrip().endswith("0 inconclusive, 1 error")
