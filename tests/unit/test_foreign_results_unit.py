# SPDX-License-Identifier: GPL-2.0-or-later
"""Other tools' results judged as strictly as our own, on hand-made rt-tests JSON with known content."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import RT_TESTS
from foreign_docs import ct_json
from rtgate.core.gates import Status
from rtgate.core.setup import evaluate_measured
from rtgate.core.thresholds import load_thresholds
from rtgate.errors import RtgateError
from rtgate.parsers import load_results
from rtgate.parsers.cmdline import parse_cmdline


def test_cmdline_follows_cyclictest_rules() -> None:
    c = parse_cmdline("cyclictest -mq -S -p80 -i 200 -l 5000 -h 300 --histfile=x.hist --json=x.json")
    assert (c.interval_us, c.distance_us, c.loops, c.priority, c.threads, c.histogram) == (200, 0, 5000, 80, None, 300)
    c = parse_cmdline("cyclictest -t 3 --priority=90 --priospread -D 2m -d 100 --policy rr")
    assert c.intervals(3) == [1000, 1100, 1200] and c.priorities(3) == [90, 89, 88] and c.duration_s == 120
    assert c.effective_policy() == "rr"
    c = parse_cmdline("cyclictest -t2 --priospread -D 1.5h")  # spread without -p: threads+1; 1.5h is 1 s
    assert c.priorities(2) == [3, 2] and c.duration_s == 1 and c.effective_policy() == "fifo"
    c = parse_cmdline("cyclictest -t 2 -i 500")  # no priority, no policy: SCHED_OTHER at 0, distance 500
    assert c.priorities(2) == [0, 0] and c.effective_policy() == "other" and c.intervals(2) == [500, 1000]
    assert parse_cmdline("cyclictest -N -D 10").nsecs


def test_loops_stop_every_thread_at_the_first(tmp_path: Path) -> None:
    # -l 5000: thread 0 reached it; thread 1 (same interval, -h) stopped with it at 4700: 299 missed at least,
    # if its latencies allow it (3 wake-ups of 120 ms at 1 ms: up to 357)
    r = ct_json(
        tmp_path,
        "cyclictest -m -t 2 -p 80 -i 1000 -l 5000 -h 200 -q --json=r.json",
        [
            {"cycles": 5000, "max": 150, "histogram": {"20": 4999, "150": 1}},
            {"cycles": 4700, "max": 120000, "avg": 95.0, "histogram": {"20": 4697}},
        ],
    )
    t0, t1 = load_results(r).threads
    assert t0.missed == 0 and t0.missed_upper is None and "reached -l 5000" in (t0.missed_derivation or "")
    assert t1.expected_periods == 5000 and t1.missed == 299
    assert "thread 0 reached -l 5000" in (t1.missed_derivation or "")


def test_fixture_measured_at_another_interval_is_an_error() -> None:
    """tests/fixtures ct-new-S-h300 ran at -i 200 -l 5000; the default platform asks -i 500 for 30 s."""
    tf = load_thresholds("thresholds/default.yaml")
    verdicts = evaluate_measured(tf.measurements["smp"], load_results(RT_TESTS / "ct-new-S-h300.json"))
    assert {v.status for v in verdicts} == {Status.ERROR}
    assert "measured -i 200 for -l 5000 (1 s); thresholds ask -i 500 for 30 s" in verdicts[0].reason


def test_units_stated_by_json_win(tmp_path: Path) -> None:
    r = ct_json(
        tmp_path,
        "cyclictest -N -t 1 -p 80 -i 1000 -l 100 --json=r.json",
        [{"cycles": 100, "min": 1200, "avg": 2000.0, "max": 5000}],
        ns=True,
    )
    assert load_results(r).unit == "ns"
    with pytest.raises(RtgateError, match="--unit us contradicts the results"):
        load_results(r, unit="us")
    r = ct_json(
        tmp_path,
        "cyclictest -t 1 -p 80 -i 1000 -l 100 --json=r.json",
        [{"cycles": 100, "min": 1200, "avg": 2000.0, "max": 5000}],
        ns=True,
    )
    with pytest.raises(RtgateError, match="resolution_in_ns is 1 but the command line has no -N"):
        load_results(r)


def test_more_cycles_than_the_command_line_allows_falls_back_to_latencies(tmp_path: Path) -> None:
    r = ct_json(
        tmp_path,
        "cyclictest -m -t 1 -p 80 -i 1000 -D 2 -h 100 -q --json=r.json",
        [{"cycles": 4000, "max": 60, "histogram": {"20": 3999, "60": 1}}],
    )
    t = load_results(r).threads[0]
    assert t.missed == 0 and t.expected_periods is None and "does not say how it ran" in (t.missed_derivation or "")
