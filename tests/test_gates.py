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


def thread(values: dict[int, int], index: int = 0, cpu: int = 0, missed: int | None = 0,
           overflow: int = 0, range_end: int | None = None, max_: float | None = None,
           hist: bool = True) -> ThreadResult:
    cycles = sum(values.values()) + overflow
    top = max(values) if values else None
    return ThreadResult(
        index=index, cycles=cycles, cpu=cpu, priority=80,
        min=min(values) if values else None,
        max=max_ if max_ is not None else top,
        avg=(sum(v * c for v, c in values.items()) / sum(values.values())) if values else None,
        missed=missed,
        histogram=Histogram("us", [(v, v + 1, c) for v, c in sorted(values.items())], overflow, range_end)
        if hist else None)


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

def test_overflow_only_tail_counts_as_misses(tmp_path: Path) -> None:
    """rt-tests -h 300: the histogram shows nothing above 100 us, but 2 samples overflowed."""
    m = thresholds(tmp_path, "      - {name: mr, kind: miss_rate, above_us: 150, rate: 0.01%}")
    t = thread({20: 9998}, overflow=2, range_end=300, max_=400)
    v = one(evaluate(m, run(t, fmt="rt-tests-json")))
    assert v.status == Status.FAIL
    assert v.reason.startswith("2 of 10000 samples above 150 us")


def test_overflow_beyond_limit_is_cleared_only_by_the_exact_max(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: mr, kind: miss_rate, above_us: 500, rate: 0.1%}")
    v = one(evaluate(m, run(thread({20: 9998}, overflow=2, range_end=300, max_=450), fmt="rt-tests-json")))
    assert v.status == Status.PASS  # max 450 <= 500: no sample can be above
    v = one(evaluate(m, run(thread({20: 9998}, overflow=20, range_end=300, max_=501), fmt="rt-tests-json")))
    assert v.status == Status.FAIL  # 20 overflowed samples may all be above 500


def test_percentile_in_overflow_is_at_least_the_range(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: p, kind: percentile, percentile: 99, limit_us: 1000}")
    t = thread({20: 980}, overflow=20, range_end=300, max_=None)
    t.max = None
    v = one(evaluate(m, run(t, fmt="rt-tests-json")))
    assert v.status == Status.FAIL
    assert v.value_text == ">= 300 us"
    assert "overflow" in v.reason


def test_percentile_known_answer(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: p, kind: percentile, percentile: 99.9, limit_us: 50}")
    values = {10: 9989, 50: 1, 70: 10}  # rank 9990 of 10000 is the 50 us sample
    v = one(evaluate(m, run(thread(values))))
    assert v.status == Status.PASS and v.value == 50
    values = {10: 9988, 50: 1, 70: 11}
    v = one(evaluate(m, run(thread(values))))
    assert v.status == Status.FAIL and v.value == 70


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
    assert v.status == Status.FAIL and v.value == 20095


# ---------------------------------------------------------------- miss rate with a confidence bound

@pytest.mark.parametrize("clean, expected", [
    (999, Status.INCONCLUSIVE), (2994, Status.INCONCLUSIVE), (3000, Status.PASS), (1_000_000, Status.PASS)])
def test_a_tenth_of_a_percent_gate_with_clean_samples(tmp_path: Path, clean: int, expected: Status) -> None:
    m = thresholds(tmp_path, "      - {name: b, kind: miss_rate, above_us: 100, rate: 0.1%}")
    v = one(evaluate(m, run(thread({30: clean}))))
    assert v.status == expected, v.reason
    assert v.samples == clean
    if expected == Status.INCONCLUSIVE:
        assert "about 2995 clean samples are needed" in v.reason


def test_a_tenth_of_a_percent_gate_with_a_million_samples_and_misses(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: b, kind: miss_rate, above_us: 100, rate: 0.1%}")
    v = one(evaluate(m, run(thread({30: 1_000_000 - 900, 150: 900}))))
    assert v.status == Status.PASS and v.bound is not None and v.bound < 0.001
    v = one(evaluate(m, run(thread({30: 1_000_000 - 999, 150: 999}))))
    assert v.status == Status.INCONCLUSIVE  # 0.0999 % observed but the bound is above 0.1 %
    v = one(evaluate(m, run(thread({30: 1_000_000 - 1001, 150: 1001}))))
    assert v.status == Status.FAIL and "1001 of 1000000 samples above 100 us" in v.reason


def test_missed_periods_count_as_misses(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: b, kind: miss_rate, above_us: 100, rate: 0.1%}")
    v = one(evaluate(m, run(thread({30: 9989}, missed=11))))
    assert v.status == Status.FAIL and v.reason.startswith("11 of 10000 samples above 100 us or missed")
    v = one(evaluate(m, run(thread({30: 9990}, missed=10))))
    assert v.status == Status.INCONCLUSIVE  # exactly 0.1 % observed: the bound is above it
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
    assert v.status == Status.FAIL and v.value_text == "missed"


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
    m = thresholds(tmp_path, "      - {name: mx, kind: max, limit_us: 80, threads: [B]}",
                   threads="- {name: A, cpus: [0]}\n        - {name: B, cpus: [1]}")
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
    m = thresholds(tmp_path, "      - {name: mx, kind: max, limit_us: 80, scope: worst}",
                   threads="- {name: all, cpus: [0, 1]}")
    v = one(evaluate(m, run(thread({10: 100, 50: 1}, index=0, cpu=0), thread({10: 100, 95: 1}, index=1, cpu=1))))
    assert v.status == Status.FAIL and v.thread == "worst" and v.value == 95
    assert v.properties["worst_of"] == ["cpu0", "cpu1"]


def test_group_selection_and_ids(tmp_path: Path) -> None:
    m = thresholds(tmp_path, "      - {name: a, kind: max, limit_us: 80, threads: [A]}\n"
                             "      - {name: b, kind: max, limit_us: 80, threads: [B]}",
                   threads="- {name: A, cpus: [0], priority: 51}\n        - {name: B, cpus: [1], priority: 48}")
    vs = evaluate(m, run(thread({10: 100, 90: 1}, index=0, cpu=0), thread({10: 100}, index=1, cpu=1)))
    assert [(v.test_id, v.status) for v in vs] == [("m::a[A-cpu0]", Status.FAIL), ("m::b[B-cpu1]", Status.PASS)]


def test_exit_codes() -> None:
    from rtgate.core.gates import Verdict
    mk = lambda s: Verdict("m", "g", "max", "t0", s, "r")  # noqa: E731
    assert exit_code([mk(Status.PASS)], False) == 0
    assert exit_code([mk(Status.PASS), mk(Status.FAIL)], False) == 1
    assert exit_code([mk(Status.ERROR)], True) == 1
    assert exit_code([mk(Status.INCONCLUSIVE)], False) == 3
    assert exit_code([mk(Status.INCONCLUSIVE)], True) == 0
