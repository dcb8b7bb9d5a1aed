# SPDX-License-Identifier: GPL-2.0-or-later
"""The timerlat backend on real rtla outputs recorded on Debian's PREEMPT_RT kernel (tests/fixtures/rtla):
read, gated, checked and kept in history in-process; threshold file mistakes. rtla's command line, which the engine
builds: tests/system/test_timerlat.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES
from in_process import rtgate
from rtgate.core.gates import Status, evaluate
from rtgate.core.thresholds import load_thresholds
from rtgate.errors import ResultsError, ThresholdsError
from rtgate.measure.timerlat import TRACE_LINES, analysis_text
from rtgate.parsers import load_results
from rtgate.safe_io import Folder
from rtla_specs import RTLA, spec, verdicts


def summary_rows(path: Path) -> dict[str, list[int]]:
    return {
        ln.split(":")[0]: [int(x) for x in ln.split()[1:]]
        for ln in path.read_text().splitlines()
        if ln.split(":")[0] in ("over", "count", "min", "avg", "max")
    }


@pytest.mark.parametrize("fixture", ["basic.txt", "wide.txt", "nano.txt", "bucket10.txt"])
def test_every_column_becomes_a_thread_with_rtlas_figures(fixture: str) -> None:
    run = load_results(RTLA / fixture)
    rows = summary_rows(RTLA / fixture)
    assert run.format == "rtla-timerlat-hist" and run.unit == ("ns" if fixture == "nano.txt" else "us")
    assert [(t.label, t.cpu) for t in run.threads] == [("irq", 0), ("irq", 1), ("thread", 0), ("thread", 1)]
    column = {("irq", 0): 0, ("thread", 0): 1, ("irq", 1): 2, ("thread", 1): 3}  # rtla's column order
    for t in run.threads:
        j = column[(t.label, t.cpu)]
        assert (t.cycles, t.min, t.avg, t.max) == (rows["count"][j], rows["min"][j], rows["avg"][j], rows["max"][j])
        assert t.histogram.overflow == rows["over"][j] and t.histogram.total == t.cycles
        assert t.missed is None  # rtla does not count missed periods
    assert run.stop_reason is None and "invalid" not in run.environment


def test_bucket_widths_come_from_the_printed_rows() -> None:
    assert load_results(RTLA / "bucket10.txt").threads[0].histogram.buckets[0] == (10, 20, 1)
    nano = load_results(RTLA / "nano.txt").threads[0].histogram.buckets
    assert all(hi - lo == 1000 for lo, hi, _ in nano)
    assert all(hi - lo == 1 for lo, hi, _ in load_results(RTLA / "wide.txt").threads[3].histogram.buckets)


def test_overflow_counts_above_any_limit_below_the_exact_max(tmp_path: Path) -> None:
    # basic.txt has 256 1-us buckets; thread-cpu0 put 341 of 4954 samples in over:, max 4850 us.
    v = verdicts(tmp_path, "{name: r, kind: miss_rate, above_us: 300, rate: 10%}", "basic.txt")
    assert v["thread-cpu0"].value == pytest.approx(341 / 4954) and v["thread-cpu0"].status == Status.PASS
    v = verdicts(tmp_path, "{name: r, kind: miss_rate, above_us: 4850, rate: 0.001%}", "basic.txt")
    assert v["thread-cpu0"].value == 0 and v["thread-cpu1"].value > 0  # max 4850 vs 5188
    # Which of the overflowed samples lie above 1000 us is hidden: a range of counts, judged both ways
    # (never PASS; FAIL only where even the fewest possible exceed the 1 % allowed).
    v = verdicts(tmp_path, "{name: p, kind: percentile, percentile: 99, limit_us: 1000}", "basic.txt")
    assert all(x.status in (Status.INCONCLUSIVE, Status.FAIL) for x in v.values())
    assert all("between" in x.reason for x in v.values() if x.status == Status.INCONCLUSIVE)
    v = verdicts(tmp_path, "{name: p, kind: percentile, percentile: 99, limit_us: 6000}", "basic.txt")
    assert all(x.status == Status.PASS for x in v.values())  # the max bounds the overflow


def test_without_overflow_counts_come_from_the_rows(tmp_path: Path) -> None:
    text = (RTLA / "wide.txt").read_text().splitlines()
    above = sum(int(ln.split()[2]) for ln in text if ln.split()[0].isdigit() and int(ln.split()[0]) > 500)
    v = verdicts(tmp_path, "{name: r, kind: miss_rate, above_us: 500, rate: 50%}", "wide.txt")
    assert v["thread-cpu0"].value == pytest.approx(above / 4538)


def test_truncated_averages_are_taken_at_their_upper_bound(tmp_path: Path) -> None:
    # thread-cpu0 of basic.txt prints avg 119: rtla truncates, so the true average is below 120.
    assert verdicts(tmp_path, "{name: a, kind: avg, limit_us: 119}", "basic.txt")["thread-cpu0"].status == Status.FAIL
    assert verdicts(tmp_path, "{name: a, kind: avg, limit_us: 120}", "basic.txt")["thread-cpu0"].status == Status.PASS


def test_groups_select_irq_or_thread_latency(tmp_path: Path) -> None:
    v = verdicts(tmp_path, "{name: irq, kind: max, threads: [irq], limit_us: 5000}", "basic.txt")
    assert {k: x.status for k, x in v.items()} == {"irq-cpu0": Status.PASS, "irq-cpu1": Status.FAIL}
    assert "cpu 1 (irq latency)" in v["irq-cpu1"].reason
    v = verdicts(tmp_path, "{name: t, kind: max, threads: thread, cpus: [1], limit_us: 6000}", "basic.txt")
    assert list(v) == ["thread-cpu1"] and v["thread-cpu1"].status == Status.PASS


def test_a_stopped_run_fails_its_gate_keeps_the_analysis_and_passes_nothing(tmp_path: Path) -> None:
    run = load_results(RTLA / "stop.txt")
    assert run.stop_reason == "threshold" and "hit stop tracing" in run.environment["analysis"]
    v = verdicts(
        tmp_path,
        "{name: t, kind: max, threads: [thread], limit_us: 1};{name: i, kind: max, threads: [irq], limit_us: 100000}",
        "stop.txt",
    )
    assert v["thread-cpu0"].status == Status.FAIL and "hit stop tracing" in v["thread-cpu0"].properties["analysis"]
    # rtla printed no column for CPU 1 (no sample): its threads are there, without samples: ERROR.
    assert v["thread-cpu1"].status == Status.ERROR and "no samples" in v["thread-cpu1"].reason
    assert v["irq-cpu0"].status == Status.INCONCLUSIVE and "stop-tracing" in v["irq-cpu0"].reason


def test_one_context_with_zero_rows(tmp_path: Path) -> None:
    run = load_results(RTLA / "one-cpu-no-irq-zeros.txt")
    assert [(t.label, t.cpu, t.cycles, t.histogram.overflow) for t in run.threads] == [("thread", 1, 1986, 1986)]
    tf = load_thresholds(
        spec(
            tmp_path,
            "{name: t, kind: max, threads: [thread], limit_us: 3000};{name: all, kind: max, limit_us: 3000}",
            "{duration: 2s, cpus: [1]}",
        )
    )
    v = [(x.gate, x.thread, x.status) for x in evaluate(tf.measurements["kernel"], run)]
    # The file has no IRQ latency (--no-irq), which the threshold file measures: that gate is ERROR.
    assert v == [
        ("t", "thread-cpu1", Status.PASS),
        ("all", "irq-cpu1", Status.ERROR),
        ("all", "thread-cpu1", Status.PASS),
    ]


def _broken(tmp_path: Path, fixture: str, old: str, new: str) -> Path:
    text = (RTLA / fixture).read_text()
    assert old in text
    p = tmp_path / f"broken-{fixture}"
    p.write_text(text.replace(old, new, 1))
    return p


def test_counts_that_do_not_add_up_are_an_error_naming_the_line(tmp_path: Path) -> None:
    p = _broken(tmp_path, "basic.txt", "count:     4954      4954", "count:     4955      4954")
    with pytest.raises(ResultsError, match=r"broken-basic.txt:\d+: irq-cpu0: the rows and 'over:' hold 4954"):
        load_results(p)


def test_a_cut_off_or_foreign_file_is_an_error(tmp_path: Path) -> None:
    text = (RTLA / "basic.txt").read_text()
    cut = tmp_path / "cut.txt"
    cut.write_text(text[: text.index("avg:")])
    with pytest.raises(ResultsError, match="no 'avg:' row"):
        load_results(cut)
    twice = tmp_path / "twice.txt"
    twice.write_text(text + text)
    with pytest.raises(ResultsError, match="a second histogram"):
        load_results(twice)
    with pytest.raises(ResultsError, match="not a format rtgate reads"):
        load_results(RTLA / "user-threads.stderr")  # rtla 6.1's answer to -u (exit status 0)


def test_lost_events_invalidate_the_run(tmp_path: Path) -> None:
    # Newer rtla reports trace events it lost after the summary (osnoise_report_missed_events).
    p = tmp_path / "lost.txt"
    p.write_text((RTLA / "wide.txt").read_text() + "12 (0.13%) events missed, results might not be accurate\n")
    tf = load_thresholds(spec(tmp_path, "{name: m, kind: max, limit_us: 100000}"))
    assert {v.status for v in evaluate(tf.measurements["kernel"], load_results(p))} == {Status.ERROR}
    # rtla 6.1 does not say so: a thread count that the IRQ count does not match is the sign.
    q = _broken(tmp_path, "basic.txt", "over:       230       341", "over:       230       339")
    q.write_text(q.read_text().replace("count:     4954      4954", "count:     4954      4952", 1))
    run = load_results(q)
    assert run.environment["invalid"] == ["cpu 0: 4954 IRQ but 4952 thread events: trace events were lost"]
    assert {v.status for v in evaluate(tf.measurements["kernel"], run)} == {Status.ERROR}


def test_results_of_the_other_backend_are_an_error(tmp_path: Path) -> None:
    tf = load_thresholds(spec(tmp_path, "{name: m, kind: max, limit_us: 100000}"))
    run = load_results(FIXTURES / "rt-tests" / "ct-new-S-h300.json")
    v = evaluate(tf.measurements["kernel"], run)
    assert {x.status for x in v} == {Status.ERROR} and "backend" in v[0].reason


@pytest.mark.parametrize(
    "body, message",
    [
        ("    backend: rtla\n    timerlat: {duration: 5s}\n", "unknown backend 'rtla'"),
        ("    backend: timerlat\n    sampler: {duration: 5s}\n", "takes timerlat:, not sampler:"),
        ("    timerlat: {duration: 5s}\n", "timerlat: needs backend: timerlat"),
        ("    backend: timerlat\n    timerlat: {interval_us: 100}\n", "missing required key 'duration'"),
        ("    backend: timerlat\n    timerlat: {duration: 5s, priority: 0}\n", "from 1 to 99"),
        # the kernel's timerlat tracer refuses a period under 100 us, rtla one over 1 s
        ("    backend: timerlat\n    timerlat: {duration: 5s, interval_us: 99}\n", "from 100 to 1000000"),
        ("    backend: timerlat\n    timerlat: {duration: 5s, interval_us: 1000001}\n", "from 100 to 1000000"),
        ("    backend: timerlat\n    timerlat: {duration: 5s, loops: 10}\n", "unknown key"),
        # a list or mapping where a policy goes: named, not a TypeError (found by comparing loaders on mutated files)
        ("    backend: timerlat\n    timerlat: {duration: 5s, policy: [fifo]}\n", r"unknown policy \['fifo'\]"),
        ("    backend: timerlat\n    timerlat: {duration: 5s, policy: {fifo: 1}}\n", "unknown policy"),
    ],
)
def test_threshold_file_mistakes_are_named(tmp_path: Path, body: str, message: str) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text(
        "platform: p\nmeasurements:\n  kernel:\n" + body + "    gates:\n      - {name: m, kind: max, limit_us: 10}\n"
    )
    with pytest.raises(ThresholdsError, match=message) as e:
        load_thresholds(p)
    assert str(e.value).startswith(f"{p}:")


def test_newer_rtla_totals_and_dashes_are_read(tmp_path: Path) -> None:
    # rtla after 6.1 prints '-' for figures of an empty column and an ALL: block of totals after the
    # per-CPU summary (timerlat_print_stats_all); the per-CPU columns are what is gated.
    text = (
        (RTLA / "stop.txt")
        .read_text()
        .replace(
            "rtla timerlat hit stop tracing",
            "ALL:        IRQ       Thr\n"
            "count:        1         1\nmin:       5240      9341\n"
            "avg:       5240      9341\nmax:       5240      9341\n"
            "rtla timerlat hit stop tracing",
        )
    )
    p = tmp_path / "newer.txt"
    p.write_text(text)
    run = load_results(p)
    assert [(t.label, t.cycles, t.max) for t in run.threads] == [("irq", 1, 5240), ("thread", 1, 9341)]
    assert run.stop_reason == "threshold"
    q = tmp_path / "dash.txt"
    q.write_text(
        text.replace("count:        1         1 \n", "count:        0         1 \n", 1)
        .replace("over:         1         1 ", "over:         0         1 ", 1)
        .replace("min:       5240      9341 ", "min:          -      9341 ", 1)
    )
    irq = load_results(q).threads[0]
    assert (irq.cycles, irq.min) == (0, None)


def test_a_stop_before_any_sample_is_an_error_with_the_analysis(tmp_path: Path) -> None:
    # Real: rtla stopped at the first thread latency above 2 us before it counted any sample.
    run = load_results(RTLA / "stop-no-sample.txt")
    assert run.threads == [] and run.stop_reason == "threshold"
    for timerlat in ("{duration: 20s, cpus: [0, 1]}", "{duration: 20s}"):  # CPUs known, or not
        v = verdicts(tmp_path, "{name: t, kind: max, threads: [thread], limit_us: 1}", "stop-no-sample.txt", timerlat)
        assert v and all(
            x.status == Status.ERROR and "hit stop tracing" in x.properties["analysis"] for x in v.values()
        )
    with pytest.raises(ResultsError, match="no CPU had a sample"):
        cut = tmp_path / "cut.txt"
        cut.write_text((RTLA / "stop-no-sample.txt").read_text().split("rtla timerlat hit")[0])
        load_results(cut)


def test_a_context_without_samples_beside_one_with_them_is_read(tmp_path: Path) -> None:
    # Real: the stop came after CPU 1's IRQ sample and before its thread's; rtla 6.1 printed that
    # thread's min as it started (2^64 - 1), avg '-' and max 0.
    run = load_results(RTLA / "stop-one-context.txt")
    got = {f"{t.label}-cpu{t.cpu}": (t.cycles, t.min, t.max) for t in run.threads}
    assert got == {
        "irq-cpu0": (1, 43, 43),
        "irq-cpu1": (1, 57, 57),
        "thread-cpu0": (1, 121, 121),
        "thread-cpu1": (0, None, None),
    }
    v = verdicts(tmp_path, "{name: t, kind: max, threads: [thread], limit_us: 1}", "stop-one-context.txt")
    assert v["thread-cpu0"].status == Status.FAIL and v["thread-cpu0"].value == 121
    assert v["thread-cpu1"].status == Status.ERROR and "no samples" in v["thread-cpu1"].reason
    # That value stands for "no sample" only: with samples counted, or as another figure, it is refused.
    text = (RTLA / "basic.txt").read_text()
    low = next(ln for ln in text.splitlines() if ln.startswith("min:"))
    broken = tmp_path / "broken.txt"
    broken.write_text(text.replace(low, low.replace(low.split()[1], str(2**64 - 1), 1)))
    with pytest.raises(ResultsError, match="samples but no min"):
        load_results(broken)
    broken.write_text(text.replace(low, low.replace(low.split()[1], str(2**64 - 2), 1)))
    with pytest.raises(ResultsError, match="beyond 64 bits"):
        load_results(broken)


def test_the_analysis_quotes_the_saved_traces_end_or_says_it_is_empty(tmp_path: Path) -> None:
    printed = "rtla timerlat hit stop tracing"
    events = [ln for ln in (RTLA / "stop.trace.txt").read_text().splitlines() if ln.strip() and ln[0] != "#"]
    for name in ("stop.trace.txt", "stop-no-sample.trace.txt"):
        (tmp_path / name).write_bytes((RTLA / name).read_bytes())
    with Folder(tmp_path) as folder:
        full = analysis_text(printed, folder, "stop.trace.txt")
        empty = analysis_text(printed, folder, "stop-no-sample.trace.txt")
        missing = analysis_text(printed, folder, "absent.trace.txt")
    assert full.startswith(printed) and full.endswith("\n".join(events[-TRACE_LINES:]))
    assert "timer_latency" in full
    assert empty == f"{printed}\nstop-no-sample.trace.txt holds no events: tracing stopped before rtla recorded any"
    assert missing == f"{printed}\nrtla saved no readable absent.trace.txt"


def test_text_report_quotes_the_analysis(tmp_path: Path) -> None:
    p = spec(tmp_path, "{name: t, kind: max, threads: [thread], limit_us: 1}")
    r = rtgate("check", str(p), str(RTLA / "stop.txt"))
    assert r.returncode == 1
    assert "rtla analysis of kernel:\n    rtla timerlat hit stop tracing\n" in r.stdout


def test_gates_name_rtlas_contexts(tmp_path: Path) -> None:
    with pytest.raises(ThresholdsError, match=r"no thread group 'user' .*groups: irq, thread"):
        load_thresholds(spec(tmp_path, "{name: m, kind: max, threads: [user], limit_us: 10}"))
    tf = load_thresholds(
        spec(tmp_path, "{name: m, kind: max, threads: [user], limit_us: 10}", "{duration: 5s, user_threads: true}")
    )
    assert [g.name for g in tf.measurements["kernel"].sampler.threads] == ["irq", "thread", "user"]
    with pytest.raises(ThresholdsError, match="rtla does not count missed periods"):
        load_thresholds(spec(tmp_path, "{name: m, kind: missed, max_count: 0}"))


def test_history_keeps_irq_and_thread_latency_of_one_cpu_apart(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    r = rtgate(
        "history",
        "add",
        "--db",
        str(db),
        "--platform",
        "qemu-rt",
        "--kernel-release",
        "6.1.0-56-rt-amd64",
        str(RTLA / "basic.txt"),
    )
    assert r.returncode == 0, r.stderr
    import sqlite3

    rows = sqlite3.connect(db).execute("SELECT idx, thread, cycles FROM threads ORDER BY idx").fetchall()
    # history names threads that share a CPU by their index: irq-cpu0 is t0-cpu0, thread-cpu0 t2-cpu0
    assert rows == [(0, "t0-cpu0", 4954), (1, "t1-cpu1", 4952), (2, "t2-cpu0", 4954), (3, "t3-cpu1", 4952)]
