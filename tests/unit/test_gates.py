# SPDX-License-Identifier: GPL-2.0-or-later
"""Known-answer tests for every gate kind: the verdict and its reason on inputs with known latencies."""

from __future__ import annotations

from pathlib import Path

import pytest

from rtgate.core.gates import Status, evaluate, exit_code
from rtgate.core.model import Histogram, RunResult, ThreadResult
from rtgate.core.thresholds import load_thresholds


def thresholds(tmp_path: Path, gates: str, threads: str = "- {name: all, count: 1}") -> object:
    path = tmp_path / "t.yaml"
    path.write_text(f"""
platform: test
measurements:
  m:
    sampler:
      loops: 1000
      threads:
        {threads}
    gates:
{gates}
""")
    return load_thresholds(path).measurements["m"]


def thread(
    values: dict[int, int],
    index: int = 0,
    cpu: int = 0,
    missed: int | None = 0,
    overflow: int = 0,
    range_end: int | None = None,
    max_: float | None = None,
    hist: bool = True,
) -> ThreadResult:
    cycles = sum(values.values()) + overflow
    top = max(values) if values else None
    return ThreadResult(
        index=index,
        cycles=cycles,
        cpu=cpu,
        priority=80,
        min=min(values) if values else None,
        max=max_ if max_ is not None else top,
        avg=(sum(v * c for v, c in values.items()) / sum(values.values())) if values else None,
        missed=missed,
        histogram=Histogram("us", [(v, v + 1, c) for v, c in sorted(values.items())], overflow, range_end)
        if hist
        else None,
    )


def run(*threads: ThreadResult, fmt: str = "rtgate-json", **kw: object) -> RunResult:
    return RunResult(source="known", format=fmt, unit="us", threads=list(threads), **kw)  # type: ignore[arg-type]


def one(verdicts: list) -> object:
    assert len(verdicts) == 1, [v.test_id for v in verdicts]
    return verdicts[0]


# ---------------------------------------------------------------- max


def test_max_pass_and_fail_with_reason(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: mx, kind: max, limit_us: 80}")
    v = one(evaluate(m, run(thread({10: 500, 80: 1}))))
    assert v.status == Status.PASS and v.value == 80 and v.limit == 80
    v = one(evaluate(m, run(thread({10: 500, 112: 1}))))
    assert v.status == Status.FAIL
    assert v.reason == "max 112 us > 80 us on thread 0 (cpu 0, prio 80)"
    assert v.test_id == "m::mx[cpu0]"


def test_max_in_ns_results_is_converted(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: mx, kind: max, limit_us: 80}")
    r = run(thread({10_000: 10, 80_500: 1}))
    r.unit = "ns"
    v = one(evaluate(m, r))
    assert v.status == Status.FAIL and v.value == pytest.approx(80.5)


# ---------------------------------------------------------------- overflow and percentiles


def test_overflow_above_the_limit_counts_as_misses(tmp_path: Path) -> None:
    """rt-tests -h 300: the histogram shows nothing above 150 us, but 10 samples overflowed (>= 300 us)."""
    m = thresholds(tmp_path, "      - {name: mr, kind: miss_rate, above_us: 150, rate: 0.01%}")
    t = thread({20: 9990}, overflow=10, range_end=300, max_=400)
    v = one(evaluate(m, run(t, fmt="rt-tests-json")))
    assert v.status == Status.FAIL  # 10 of 10000 surely above: lower bound 0.054 % > 0.01 %
    assert v.reason.startswith("10 of 10000 samples above 150 us")
    assert v.lower == pytest.approx(0.000542, rel=1e-2)


def test_overflow_beyond_limit_is_cleared_only_by_the_exact_max(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: mr, kind: miss_rate, above_us: 500, rate: 0.1%}")
    v = one(evaluate(m, run(thread({20: 9998}, overflow=2, range_end=300, max_=450), fmt="rt-tests-json")))
    assert v.status == Status.PASS  # max 450 <= 500: no sample can be above
    v = one(evaluate(m, run(thread({20: 9998}, overflow=20, range_end=300, max_=501), fmt="rt-tests-json")))
    assert v.status == Status.INCONCLUSIVE  # between 1 (the max) and 20 overflowed samples are above 500
    assert v.reason.startswith("between 1 and 20 of 10018 samples above 500 us")


def test_percentile_in_overflow_is_a_range(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: p, kind: percentile, percentile: 99, limit_us: 1000}")
    t = thread({20: 980}, overflow=20, range_end=300, max_=None)
    t.max = None
    v = one(evaluate(m, run(t, fmt="rt-tests-json")))
    assert v.status == Status.INCONCLUSIVE  # 0 to 20 of 1000 above 1000 us: it could be either
    assert v.value_text == ">= 300 us"
    assert "between 0 and 20 of 1000" in v.reason and "does not show which" in v.reason
    t.max = 900  # the exact max clears the limit: none above, and 1000 clean samples pass 1 %
    v = one(evaluate(m, run(t, fmt="rt-tests-json")))
    assert v.status == Status.PASS and v.value_text == "300..900 us"  # upper bound 0.3 % <= 1 %


@pytest.mark.parametrize(
    "above, status, value",
    [
        (4, Status.PASS, 10),  # 95 % upper bound of 4 in 10000: 0.092 % <= 0.1 %
        (10, Status.INCONCLUSIVE, 50),  # the sample p99.9 is 50 us, but 10 in 10000 cannot tell
        (11, Status.INCONCLUSIVE, 70),  # observed 0.11 %: the lower bound 0.062 % is not above 0.1 %
        (16, Status.FAIL, 70),
    ],
)  # lower bound 0.1004 % > 0.1 %
def test_percentile_is_judged_by_the_bounds_of_its_exceedance_rate(
    tmp_path: Path, above: int, status: Status, value: float
) -> None:
    """p99.9 <= 50 us is "at most 0.1 % of samples above 50 us"."""
    m = thresholds(tmp_path, "      - {name: p, kind: percentile, percentile: 99.9, limit_us: 50}")
    v = one(evaluate(m, run(thread({10: 9999 - above, 50: 1, 70: above}))))
    assert v.status == status, v.reason
    assert v.value == value
    assert f"{above} of 10000 samples above 50 us" in v.reason


def test_percentile_needs_enough_samples(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: p, kind: percentile, percentile: 99.9, limit_us: 50}")
    v = one(evaluate(m, run(thread({10: 999}))))
    assert v.status == Status.INCONCLUSIVE
    assert "only 999 samples" in v.reason and "needs 1000" in v.reason


def test_percentile_in_a_wide_bucket_takes_its_top(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: p, kind: percentile, percentile: 50, limit_us: 20000}")
    t = thread({10: 4})
    t.histogram = Histogram("us", [(10, 11, 4), (19968, 20096, 6)])
    t.cycles = 10
    t.max = 20100
    v = one(evaluate(m, run(t)))
    assert v.status == Status.INCONCLUSIVE and v.value == 20095 and v.value_text == "19968..20095 us"
    assert "between 1 and 6 of 10" in v.reason


# ---------------------------------------------------------------- miss rate with a confidence bound


@pytest.mark.parametrize(
    "clean, expected",
    [(999, Status.INCONCLUSIVE), (2994, Status.INCONCLUSIVE), (3000, Status.PASS), (1_000_000, Status.PASS)],
)
def test_a_tenth_of_a_percent_gate_with_clean_samples(tmp_path: Path, clean: int, expected: Status) -> None:
    m = thresholds(tmp_path, "      - {name: b, kind: miss_rate, above_us: 100, rate: 0.1%}")
    v = one(evaluate(m, run(thread({30: clean}))))
    assert v.status == expected, v.reason
    assert v.samples == clean and v.lower == 0.0
    if expected == Status.INCONCLUSIVE:
        assert f"{2995 - clean} more clean samples would pass it" in v.reason  # 2995 pass (test_stats)


def test_a_tenth_of_a_percent_gate_with_a_million_samples_and_misses(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: b, kind: miss_rate, above_us: 100, rate: 0.1%}")
    v = one(evaluate(m, run(thread({30: 1_000_000 - 900, 150: 900}))))
    assert v.status == Status.PASS and v.bound is not None and v.bound < 0.001
    v = one(evaluate(m, run(thread({30: 1_000_000 - 999, 150: 999}))))
    assert v.status == Status.INCONCLUSIVE  # 0.0999 % observed but the upper bound is above 0.1 %
    v = one(evaluate(m, run(thread({30: 1_000_000 - 1001, 150: 1001}))))
    # 0.1001 % observed, but the lower bound (0.095 %) is not above 0.1 %: not shown to fail either.
    assert v.status == Status.INCONCLUSIVE and "1001 of 1000000 samples above 100 us" in v.reason
    assert "more at the observed rate would fail it" in v.reason
    v = one(evaluate(m, run(thread({30: 1_000_000 - 1053, 150: 1053}))))
    assert v.status == Status.FAIL and v.lower is not None and v.lower > 0.001


def test_missed_periods_count_as_misses(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: b, kind: miss_rate, above_us: 100, rate: 0.1%}")
    v = one(evaluate(m, run(thread({30: 9984}, missed=16))))
    assert v.status == Status.FAIL and v.reason.startswith("16 of 10000 samples above 100 us or missed")
    v = one(evaluate(m, run(thread({30: 9989}, missed=11))))
    assert v.status == Status.INCONCLUSIVE  # 0.11 % observed: neither bound decides
    v = one(evaluate(m, run(thread({30: 9000}, missed=20))))
    assert v.status == Status.FAIL and "20 missed" in v.reason


def test_missed_gate_by_count_and_unknown_for_cyclictest(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: ms, kind: missed, max_count: 0}")
    assert one(evaluate(m, run(thread({30: 100}, missed=0)))).status == Status.PASS
    v = one(evaluate(m, run(thread({30: 100}, missed=3))))
    assert v.status == Status.FAIL and v.reason.startswith("3 missed periods > 0")
    v = one(evaluate(m, run(thread({30: 100}, missed=None), fmt="rt-tests-json")))
    assert v.status == Status.ERROR and "missed periods" in v.reason


def test_missed_periods_push_a_percentile_up(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: p, kind: percentile, percentile: 99, limit_us: 100}")
    v = one(evaluate(m, run(thread({30: 980}, missed=20))))
    assert v.status == Status.FAIL and v.value_text == "missed"  # 2 % missed: lower bound 1.3 % > 1 %
    v = one(evaluate(m, run(thread({30: 991}, missed=9))))
    assert v.status == Status.INCONCLUSIVE and v.value == 30  # 0.9 % missed: below the limit, not shown


# ---------------------------------------------------------------- avg


def test_avg_exact_and_truncated(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: a, kind: avg, limit_us: 20}")
    assert one(evaluate(m, run(thread({20: 10})))).status == Status.PASS
    t = thread({20: 10})
    t.avg = 20  # printed truncated: the true average is somewhere in [20, 21)
    v = one(evaluate(m, run(t, fmt="summary-text")))
    assert v.status == Status.FAIL and "may be higher" in v.reason
    t.avg = 19  # in [19, 20): under the limit whatever it is
    assert one(evaluate(m, run(t, fmt="summary-text"))).status == Status.PASS
    t.avg = 19.999  # rt-tests JSON rounds to two decimals: the truth may be 20.0039
    assert one(evaluate(m, run(t, fmt="rt-tests-json"))).status == Status.FAIL
    t.avg = 19.99
    assert one(evaluate(m, run(t, fmt="rt-tests-json"))).status == Status.PASS


# ---------------------------------------------------------------- errors that must never pass


def test_zero_cycles_is_an_error(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: mx, kind: max, limit_us: 80}")
    t = ThreadResult(index=0, cycles=0, min=None, max=None, avg=None, cpu=0, missed=0)
    v = one(evaluate(m, run(t)))
    assert v.status == Status.ERROR and v.reason.startswith("no samples (0 cycles)")


def test_missing_thread_is_an_error(tmp_path: Path) -> None:
    m = thresholds(
        tmp_path,
        "      - {name: mx, kind: max, limit_us: 80, threads: [B]}",
        threads="- {name: A, cpus: [0]}\n        - {name: B, cpus: [1]}",
    )
    v = one(evaluate(m, run(thread({10: 100}))))  # one thread where two were measured
    assert v.status == Status.ERROR and "2 threads" in v.reason


def test_gate_naming_a_cpu_that_did_not_run(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: mx, kind: max, limit_us: 80, cpus: [3]}")
    v = one(evaluate(m, run(thread({10: 100}, cpu=0))))
    assert v.status == Status.ERROR and "no thread ran on cpu 3" in v.reason


def test_no_histogram_cannot_pass_a_miss_rate_unless_max_proves_it(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: b, kind: miss_rate, above_us: 100, rate: 0.1%}")
    v = one(evaluate(m, run(thread({30: 5000, 150: 1}, hist=False), fmt="summary-text")))
    assert v.status == Status.ERROR and "no histogram" in v.reason
    v = one(evaluate(m, run(thread({30: 5000}, hist=False), fmt="summary-text")))
    assert v.status == Status.PASS


def test_checkpoint_is_an_error_and_early_stop_inconclusive(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: mx, kind: max, limit_us: 80}")
    v = one(evaluate(m, run(thread({10: 100}), complete=False, stop_reason="running")))
    assert v.status == Status.ERROR and "did not finish" in v.reason
    v = one(evaluate(m, run(thread({10: 100}), stop_reason="signal", signal="SIGINT")))
    assert v.status == Status.INCONCLUSIVE and "stopped early by SIGINT" in v.reason
    v = one(evaluate(m, run(thread({10: 100, 90: 1}), stop_reason="signal", signal="SIGINT")))
    assert v.status == Status.FAIL  # a failure seen before the stop is still a failure


def test_worst_scope_reports_one_verdict(tmp_path: Path) -> None:
    m = thresholds(
        tmp_path, "      - {name: mx, kind: max, limit_us: 80, scope: worst}", threads="- {name: all, cpus: [0, 1]}"
    )
    v = one(evaluate(m, run(thread({10: 100, 50: 1}, index=0, cpu=0), thread({10: 100, 95: 1}, index=1, cpu=1))))
    assert v.status == Status.FAIL and v.thread == "worst" and v.value == 95
    assert v.properties["worst_of"] == ["cpu0", "cpu1"]


def test_group_selection_and_ids(tmp_path: Path) -> None:
    m = thresholds(
        tmp_path,
        "      - {name: a, kind: max, limit_us: 80, threads: [A]}\n"
        "      - {name: b, kind: max, limit_us: 80, threads: [B]}",
        threads="- {name: A, cpus: [0], priority: 51}\n        - {name: B, cpus: [1], priority: 48}",
    )
    vs = evaluate(m, run(thread({10: 100, 90: 1}, index=0, cpu=0), thread({10: 100}, index=1, cpu=1)))
    assert [(v.test_id, v.status) for v in vs] == [("m::a[A-cpu0]", Status.FAIL), ("m::b[B-cpu1]", Status.PASS)]


def test_exit_codes() -> None:
    from rtgate.core.gates import Verdict

    def mk(s: Status) -> Verdict:
        return Verdict("m", "g", "max", "t0", s, "r")

    assert exit_code([mk(Status.PASS)], False) == 0
    assert exit_code([mk(Status.PASS), mk(Status.FAIL)], False) == 1
    assert exit_code([mk(Status.ERROR)], True) == 1
    assert exit_code([mk(Status.INCONCLUSIVE)], False) == 3
    assert exit_code([mk(Status.INCONCLUSIVE)], True) == 0


# ---------------------------------------------------------------- overflow as bounds both ways (issue 12)


def _issue12(tmp_path: Path, gate: str) -> object:
    from rtgate.parsers import load_results

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "composed" / "ct-h15-issue12.json"
    m = thresholds(tmp_path, f"      - {gate}")
    return one(evaluate(m, load_results(str(fixture), "auto", "us")))


def test_overflow_hides_how_many_are_above_the_limit(tmp_path: Path) -> None:
    """rt-tests -h 15: 594 of 3,988 samples in the overflow, max 4,878 us; at most 1 % above 1000 us."""
    v = _issue12(tmp_path, "{name: mr, kind: miss_rate, above_us: 1000, rate: 1%}")
    assert v.status == Status.INCONCLUSIVE, v.reason
    assert v.reason.startswith("between 1 and 594 of 3988 samples above 1000 us")
    from rtgate.core.stats import clopper_pearson_lower, clopper_pearson_upper

    assert v.lower == clopper_pearson_lower(1, 3988) < 0.01 < v.bound == clopper_pearson_upper(594, 3988)
    assert v.value_text == "0.02508..14.89 %"


def test_overflow_and_derived_missed_periods_add_up(tmp_path: Path) -> None:
    """The same file without -r: a wake-up 4878 us late at -i 1000 skipped 4 periods, counted above any limit."""
    import json

    from rtgate.parsers import load_results

    src = Path(__file__).resolve().parents[1] / "fixtures" / "composed" / "ct-h15-issue12.json"
    data = json.loads(src.read_text())
    data["cmdline:"] = data["cmdline:"].replace(" -r ", " ")
    path = tmp_path / "absolute.json"
    path.write_text(json.dumps(data))
    m = thresholds(tmp_path, "      - {name: mr, kind: miss_rate, above_us: 1000, rate: 1%}")
    v = one(evaluate(m, load_results(str(path), "auto", "us")))
    assert v.status == Status.INCONCLUSIVE, v.reason
    assert v.reason.startswith("between 5 and 598 of 3992 samples above 1000 us or missed (4 missed)")


def test_overflow_fails_only_when_the_fewest_fail(tmp_path: Path) -> None:
    # Above 10 us: the overflow starts at 15, so all 594 are above for sure: the lower bound fails.
    v = _issue12(tmp_path, "{name: mr, kind: miss_rate, above_us: 10, rate: 1%}")
    assert v.status == Status.FAIL and "lower bound > 1 %" in v.reason
    # Above 4878 us (the max): none can be, and 3988 clean samples pass 1 %.
    v = _issue12(tmp_path, "{name: mr, kind: miss_rate, above_us: 4878, rate: 1%}")
    assert v.status == Status.PASS


def test_percentile_in_the_overflow_is_a_range_not_a_failure(tmp_path: Path) -> None:
    v = _issue12(tmp_path, "{name: p, kind: percentile, percentile: 99, limit_us: 1000}")
    assert v.status == Status.INCONCLUSIVE, v.reason
    assert v.value_text == "15..4878 us"
    assert v.reason.startswith("p99 15..4878 us: between 1 and 594 of 3988 samples above 1000 us")


def test_real_cyclictest_overflow_is_bounded_both_ways(tmp_path: Path) -> None:
    """Real cyclictest -h 15 output: every sample overflowed (min 16 us), max 721 us."""
    from rtgate.parsers import load_results

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "rt-tests"
    for name in ("ct-24-t1-h15.json", "ct-24-t1-h15.hist"):
        r = load_results(str(fixtures / name), "auto", "us")

        def verdict(gate: str, r: RunResult = r) -> object:
            return one(evaluate(thresholds(tmp_path, f"      - {gate}"), r))

        v = verdict("{name: mr, kind: miss_rate, above_us: 500, rate: 1%}")
        assert v.status == Status.INCONCLUSIVE and v.reason.startswith("between 1 and 3988 of 3988"), v.reason
        assert verdict("{name: mr, kind: miss_rate, above_us: 721, rate: 1%}").status == Status.PASS
        assert verdict("{name: mr, kind: miss_rate, above_us: 14, rate: 1%}").status == Status.FAIL
        v = verdict("{name: p, kind: percentile, percentile: 99, limit_us: 500}")
        assert v.status == Status.INCONCLUSIVE and v.value_text == "15..721 us", v.reason


def test_show_prints_a_percentile_in_the_overflow_as_a_range() -> None:
    from rtgate.commands.show import describe
    from rtgate.parsers import load_results

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "composed" / "ct-h15-issue12.json"
    text = describe(load_results(str(fixture), "auto", "us"))
    assert "15..4878" in text and ">=" not in text


def test_percentile_gate_takes_a_confidence(tmp_path: Path) -> None:
    """33 of 5000 above 50 us: the 95 % upper bound (0.88 %) passes 1 %; so does the 99 % one (0.997 %)."""
    values = {10: 5000 - 34, 50: 1, 70: 33}
    for conf, status in ((0.95, Status.PASS), (0.99, Status.PASS)):
        m = thresholds(
            tmp_path, f"      - {{name: p, kind: percentile, percentile: 99, limit_us: 50, confidence: {conf}}}"
        )
        assert one(evaluate(m, run(thread(values)))).status == status
    values = {10: 5000 - 35, 50: 1, 70: 34}  # 99 % upper bound 1.02 %: no longer passes at 99 %
    m = thresholds(tmp_path, "      - {name: p, kind: percentile, percentile: 99, limit_us: 50, confidence: 0.99}")
    v = one(evaluate(m, run(thread(values))))
    assert v.status == Status.INCONCLUSIVE and "99 % bounds" in v.reason
