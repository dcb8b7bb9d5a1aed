# SPDX-License-Identifier: GPL-2.0-or-later
"""Other tools' results judged as strictly as our own, on hand-made rt-tests JSON with known content."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT, RT_TESTS
from foreign_docs import ct_json, judge, thresholds
from in_process import rtgate
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
    tf = load_thresholds(str(ROOT / "thresholds" / "default.yaml"))
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


def test_more_cycles_than_the_command_line_allows_is_refused(tmp_path: Path) -> None:
    """Issue 46: the command line is a field that loosens a verdict (-i 200 edited to -i 1000 makes a wake-up
    894 us late skip no period): one its own counts contradict is refused, not judged by latencies alone."""
    r = ct_json(
        tmp_path,
        "cyclictest -m -t 1 -p 80 -i 1000 -D 2 -h 100 -q --json=r.json",
        [{"cycles": 4000, "max": 60, "histogram": {"20": 3999, "60": 1}}],
    )
    with pytest.raises(RtgateError, match="2000 periods expected but thread 0 has 4000 cycles"):
        load_results(r)


def test_duration_deficit_counts_as_missed(tmp_path: Path) -> None:
    # -D 10 at 1 ms: 10000 periods; 9600 cycles; 10 wake-ups 40 ms late (overflow) skip 39 or 40 each
    hist = {"20": 9590}
    r = ct_json(
        tmp_path,
        "cyclictest -m -t 1 -p 80 -i 1000 -D 10 -h 100 -q --json=r.json",
        [{"cycles": 9600, "max": 40000, "avg": 61.65, "histogram": hist}],
    )
    t = load_results(r).threads[0]
    assert t.expected_periods == 10000 and t.missed == 399 and t.missed_upper == 400
    assert "-D 10 s at -i 1000: 10000 periods expected, 9600 cycles, 399..400 missed" in (t.missed_derivation or "")
    v = judge(
        thresholds(tmp_path, "{interval_us: 1000, duration: 10s, priority: 80, threads: [{name: a, count: 1}]}"), r
    )
    assert v["missed[t0]"].status == Status.FAIL and "399 missed periods > 0" in v["missed[t0]"].reason
    assert v["over[t0]"].status == Status.FAIL and "10000 periods expected" in v["over[t0]"].reason
    assert v["max[t0]"].status == Status.PASS


def test_deficit_no_latency_explains_is_an_early_stop(tmp_path: Path) -> None:
    # SIGINT after 1.5 s of -D 10: cyclictest writes its JSON anyway, saying nothing
    r = ct_json(
        tmp_path,
        "cyclictest -m -t 1 -p 80 -i 1000 -D 10 -h 100 -q --json=r.json",
        [{"cycles": 1500, "max": 60, "histogram": {"20": 1499, "60": 1}}],
        end="14:00:01",
    )
    run = load_results(r)
    assert run.measured_setup.stopped_early and "at most 2 s" in run.measured_setup.stopped_early
    v = judge(
        thresholds(tmp_path, "{interval_us: 1000, duration: 10s, priority: 80, threads: [{name: a, count: 1}]}"), r
    )
    assert v["max[t0]"].status == Status.INCONCLUSIVE and "stopped early" in v["max[t0]"].reason
    assert v["missed[t0]"].status == Status.INCONCLUSIVE  # nothing missed, but the run is a tenth of its length
    # the same shortfall with a clock that does not show it: the counts alone
    r = ct_json(
        tmp_path,
        "cyclictest -m -t 1 -p 80 -i 1000 -D 10 -h 100 -q --json=r.json",
        [{"cycles": 1500, "max": 60, "histogram": {"20": 1499, "60": 1}}],
    )
    assert "latencies explain at most 0" in load_results(r).measured_setup.stopped_early


def test_missed_range_is_judged_at_both_ends(tmp_path: Path) -> None:
    # -l with 20 samples in a -h 100 overflow and a 30 ms max at 1 ms: 29..600 skipped periods
    r = ct_json(
        tmp_path,
        "cyclictest -m -t 1 -p 80 -i 1000 -l 5000 -h 100 -q --json=r.json",
        [{"cycles": 5000, "max": 30000, "avg": 140.0, "histogram": {"20": 4980}}],
    )
    t = load_results(r).threads[0]
    assert (t.missed, t.missed_upper) == (29, 600)
    v = judge(
        thresholds(
            tmp_path,
            "{interval_us: 1000, loops: 5000, priority: 80, threads: [{name: a, count: 1}]}",
            "      - {name: over, kind: miss_rate, above_us: 500, rate: 2%}\n"
            "      - {name: missed, kind: missed, max_count: 0}\n",
        ),
        r,
    )
    over = v["over[t0]"]
    assert over.status == Status.INCONCLUSIVE and over.reason.startswith("29..600 missed periods: at 29: PASS")
    assert "at 600: FAIL" in over.reason
    assert v["missed[t0]"].status == Status.FAIL  # even the fewest, 29, fail max_count 0


def test_setup_reconciliation_and_accepting(tmp_path: Path) -> None:
    r = ct_json(
        tmp_path,
        "cyclictest -m -a 1 -t 1 -p 80 -i 1000 -D 10 -h 100 -q --json=r.json",
        [{"cycles": 10000, "max": 60, "cpu": 1, "histogram": {"20": 9999, "60": 1}}],
    )
    t = thresholds(tmp_path, "{interval_us: 200, duration: 1h, priority: 99, threads: [{name: a, cpus: [0]}]}")
    v = judge(t, r)["max[cpu1]"]
    assert v.status == Status.ERROR
    assert (
        "measured -i 1000 at prio 80 on cpu 1 for 10 s; thresholds ask -i 200 at prio 99 on cpu 0 for 1 h" in v.reason
    ) and "--accept-setup interval,priority,cpus,duration" in v.reason
    v = judge(t, r, frozenset({"interval", "priority", "cpus"}))["max[cpu1]"]
    assert v.status == Status.INCONCLUSIVE and "shorter than asked" in v.reason
    assert v.properties["setup_accepted"] == (
        "measured -i 1000 at prio 80 on cpu 1; thresholds ask -i 200 at prio 99 on cpu 0"
    )
    v = judge(t, r, frozenset({"interval", "priority", "cpus", "duration"}))["max[cpu1]"]
    assert v.status == Status.PASS
    # the CLI: the accepted differences in every report
    out = rtgate("check", str(t), str(r), "--accept-setup", "all", "--junit", str(tmp_path / "j.xml"))
    assert out.returncode == 0, out.stdout
    assert "accepted set-up differences: m: measured -i 1000 at prio 80 on cpu 1 for 10 s" in out.stdout
    assert '::setup_accepted" value="measured -i 1000' in (tmp_path / "j.xml").read_text()
    bad = rtgate("check", str(t), str(r), "--accept-setup", "colour")
    assert bad.returncode == 2 and "--accept-setup: unknown difference colour" in bad.stderr


def test_histogram_text_in_us_read_as_ns_is_refused() -> None:
    """The issue's example: --unit ns on a histogram in us read a 894 us max as 0.9 us and passed."""
    r = rtgate("check", "--unit", "ns", str(ROOT / "thresholds" / "default.yaml"), str(RT_TESTS / "ct-24-S-h300.hist"))
    assert r.returncode == 2 and "these values look like microseconds" in r.stderr


def test_text_formats_say_what_cannot_be_known() -> None:
    for name in ("ct-24-S-h300.hist", "ct-24-verbose.stdout"):
        assert all(
            t.missed is None and "cannot be known" in (t.missed_derivation or "")
            for t in load_results(RT_TESTS / name).threads
        )
    t = load_results(RT_TESTS / "ct-new-live.stdout").threads[0]
    assert t.missed == 0 and "T: lines do not say how long the run was" in (t.missed_derivation or "")
    show = rtgate("show", str(RT_TESTS / "ct-24-S-h300.hist")).stdout
    assert "16..17" in show  # the average printed truncated is a range, not 16.00
