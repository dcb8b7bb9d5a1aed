# SPDX-License-Identifier: GPL-2.0-or-later
"""Parsers: recorded and freshly generated outputs of cyclictest and rtgate-sampler, one model."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest

from conftest import RT_OPTS, RT_TESTS, run_tool
from rtgate.core.model import Histogram, RunResult
from rtgate.errors import ResultsError
from rtgate.parsers import load_results


def figures(run: RunResult) -> list[tuple[int, float | None, float | None]]:
    return [(t.cycles, t.min, t.max) for t in run.threads]


# ------------------------------------------------------------- recorded fixtures (two versions)


@pytest.mark.parametrize(
    "stem, threads, cycles", [("ct-24-S-h300", 2, 5000), ("ct-new-S-h300", 2, 5000), ("ct-new-t2-H200", 2, 3000)]
)
def test_recorded_json_and_histogram_agree(stem: str, threads: int, cycles: int) -> None:
    js = load_results(RT_TESTS / f"{stem}.json")
    hist = load_results(RT_TESTS / f"{stem}.hist")
    assert js.format == "rt-tests-json" and hist.format == "histogram-text"
    assert len(js.threads) == len(hist.threads) == threads
    assert figures(js) == figures(hist)
    for a, b in zip(js.threads, hist.threads):
        assert a.cycles == cycles
        assert a.histogram is not None and b.histogram is not None
        assert a.histogram.overflow == b.histogram.overflow
        assert sorted(a.histogram.buckets) == sorted(b.histogram.buckets)
        # cyclictest does not count them: derived from its command line and latencies (JSON), unknowable
        # from histogram text alone
        assert a.missed is not None and a.missed_derivation and b.missed is None and b.missed_derivation


def test_rt_tests_overflow_is_derived_from_cycles() -> None:
    run = load_results(RT_TESTS / "ct-24-S-h300.json")
    t0 = run.threads[0]
    assert t0.histogram is not None
    assert t0.histogram.overflow == 1 and t0.histogram.range_end == 300 and t0.max == 894


def test_json_without_histogram() -> None:
    run = load_results(RT_TESTS / "ct-new-nohist.json")
    assert run.threads[0].histogram is None
    assert figures(run) == [(2000, 12, 111)]
    assert figures(run) == figures(load_results(RT_TESTS / "ct-new-nohist.stdout"))


def test_live_output_with_ansi_codes_takes_the_last_state() -> None:
    run = load_results(RT_TESTS / "ct-new-live.stdout")
    assert run.format == "summary-text"
    assert figures(run) == [(2000, 10, 136)]
    assert run.threads[0].priority == 80 and run.threads[0].interval_us == 1000


def test_verbose_samples() -> None:
    run = load_results(RT_TESTS / "ct-24-verbose.stdout")
    t = run.threads[0]
    assert run.format == "verbose-text"
    assert t.cycles == 2000 and t.histogram is not None and t.histogram.total == 2000
    assert t.min == 11 and t.max == 448


@pytest.mark.parametrize("name", ["ct-24-unknown.stdout", "ct-24-S-h300.stdout"])
def test_help_text_and_banner_only_are_refused(name: str) -> None:
    with pytest.raises(ResultsError, match=name):
        load_results(RT_TESTS / name)


def test_nan_and_sentinel_min_mean_no_samples(tmp_path: Path) -> None:
    src = (RT_TESTS / "ct-new-nohist.json").read_text()
    src = (
        src.replace('"cycles": 2000', '"cycles": 0')
        .replace('"min": 12', '"min": 1000000')
        .replace('"avg": 18.00', '"avg": -nan')
    )
    path = tmp_path / "empty.json"
    path.write_text(src)
    t = load_results(path).threads[0]
    assert (t.cycles, t.min, t.max, t.avg) == (0, None, None, None)


# ------------------------------------------------------------- garbage and truncation


def _cut(src: Path, dst: Path, fraction: float) -> Path:
    data = src.read_bytes()
    dst.write_bytes(data[: int(len(data) * fraction)])
    return dst


@pytest.mark.parametrize(
    "name, fraction",
    [
        ("ct-24-S-h300.json", 0.5),
        ("ct-24-S-h300.hist", 0.5),
        ("ct-24-S-h300.hist", 0.97),
        ("ct-24-verbose.stdout", 0.5),
        ("ct-new-live.stdout", 0.5),
    ],
)
def test_truncated_files_are_errors_naming_file_and_line(tmp_path: Path, name: str, fraction: float) -> None:
    cut = _cut(RT_TESTS / name, tmp_path / name, fraction)
    with pytest.raises(ResultsError) as e:
        load_results(cut)
    assert str(cut) in str(e.value)
    assert e.value.line is not None or "truncated" in str(e.value)


def test_garbage_line_in_histogram_names_the_line(tmp_path: Path) -> None:
    lines = (RT_TESTS / "ct-24-S-h300.hist").read_text().splitlines(keepends=True)
    lines[10] = "000009 garbage\n"
    bad = tmp_path / "bad.hist"
    bad.write_text("".join(lines))
    with pytest.raises(ResultsError) as e:
        load_results(bad)
    assert e.value.line == 11


def test_inconsistent_total_is_an_error(tmp_path: Path) -> None:
    text = (RT_TESTS / "ct-24-S-h300.hist").read_text().replace("# Total: 000004999", "# Total: 000004000")
    bad = tmp_path / "bad.hist"
    bad.write_text(text)
    with pytest.raises(ResultsError, match="Total"):
        load_results(bad)


def test_verbose_gap_is_an_error(tmp_path: Path) -> None:
    lines = (RT_TESTS / "ct-24-verbose.stdout").read_text().splitlines(keepends=True)
    del lines[100]
    bad = tmp_path / "gap.txt"
    bad.write_text("".join(lines))
    with pytest.raises(ResultsError, match="missing"):
        load_results(bad)


def test_binary_garbage_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "x.bin"
    bad.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ResultsError):
        load_results(bad)


# ------------------------------------------------------------- one real run, every format


def _binned_like(samples: Histogram, layout: Histogram) -> tuple[list[tuple[int, int | None, int]], int]:
    """Exact 1-unit sample counts re-counted in `layout`'s buckets, plus those at or above its
    range end: what `layout` must hold when it recorded the same samples. (A loaded machine can
    wake a thread late beyond -h's range, or into the sampler's log-width buckets.)"""
    counts = {(lo, hi): 0 for lo, hi, _ in layout.buckets}
    overflow = 0
    for value, _, n in samples.buckets:
        if layout.range_end is not None and value >= layout.range_end:
            overflow += n
            continue
        key = next(
            ((lo, hi) for lo, hi, _ in layout.buckets if lo <= value and (hi is None or value < hi)), (value, value + 1)
        )  # a sample `layout` lacks: shows up in the comparison
        counts[key] = counts.get(key, 0) + n
    return sorted((lo, hi, n) for (lo, hi), n in counts.items() if n), overflow


def _nonzero(h: Histogram) -> list[tuple[int, int | None, int]]:
    return sorted(b for b in h.buckets if b[2])


def _same_numbers(runs: dict[str, RunResult], exact_avg: set[str]) -> None:
    ref = runs["json"]
    for name, run in runs.items():
        assert len(run.threads) == len(ref.threads), name
        for a, b in zip(ref.threads, run.threads):
            assert (b.cycles, b.min, b.max) == (a.cycles, a.min, a.max), name
            assert a.avg is not None and b.avg is not None
            if name in exact_avg:
                assert math.isclose(a.avg, b.avg, abs_tol=0.006), name
            else:
                # Each format gives the average as a range: the JSON rounds it to 0.01 (17.996 is
                # "18.00"), the text formats truncate it (17.996 is "17"); both ranges hold the true
                # average, so they must overlap. Comparing int(17.996) with int(18.0) was wrong.
                json_lo, json_hi = a.avg - 0.005, a.avg + 0.005
                text_lo, text_hi = b.avg, b.avg + 1
                assert json_lo < text_hi and text_lo <= json_hi, (name, a.avg, b.avg)


def test_cyclictest_run_reads_the_same_in_every_format(cyclictest: str, tmp_path: Path) -> None:
    """Each run compared with what it wrote itself. (cyclictest's live screen can show a stale last
    line for a thread that stops between its print and the stop check: the recorded live fixture
    covers that format instead.)"""
    js, hist = tmp_path / "r.json", tmp_path / "r.hist"
    r = run_tool(
        [
            cyclictest,
            *RT_OPTS,
            "-t",
            "2",
            "-i",
            "500",
            "-l",
            "2000",
            "-q",
            "-h",
            "20000",
            f"--histfile={hist}",
            f"--json={js}",
        ]
    )
    assert r.returncode == 0, r.stderr
    runs = {"json": load_results(js), "hist": load_results(hist)}
    _same_numbers(runs, exact_avg=set())
    for a, b in zip(runs["json"].threads, runs["hist"].threads):
        assert a.histogram is not None and b.histogram is not None
        assert sorted(a.histogram.buckets) == sorted(b.histogram.buckets)
    # The -q summary printed after the threads joined, and the JSON, of one run.
    js_q = tmp_path / "q.json"
    r = run_tool([cyclictest, *RT_OPTS, "-t", "2", "-i", "500", "-l", "2000", "-q", f"--json={js_q}"])
    (tmp_path / "q.txt").write_text(r.stdout)
    q = {"json": load_results(js_q), "summary": load_results(tmp_path / "q.txt")}
    assert q["summary"].format == "summary-text"
    _same_numbers(q, exact_avg=set())
    # -v from one run with its JSON: the samples rebuild the same histogram.
    js2 = tmp_path / "v.json"
    r = run_tool(
        [
            cyclictest,
            *RT_OPTS,
            "-t",
            "1",
            "-i",
            "1000",
            "-l",
            "1000",
            "-v",
            "-h",
            "20000",
            f"--histfile={tmp_path / 'v.hist'}",
            f"--json={js2}",
        ]
    )
    (tmp_path / "v.txt").write_text(r.stdout)
    v, j = load_results(tmp_path / "v.txt"), load_results(js2)
    assert v.format == "verbose-text"
    assert figures(v) == figures(j)
    jh, vh = j.threads[0].histogram, v.threads[0].histogram
    assert jh is not None and vh is not None
    assert _binned_like(vh, jh) == (_nonzero(jh), jh.overflow)


def test_sampler_run_reads_the_same_in_every_format(sampler: str, tmp_path: Path) -> None:
    js, hist = tmp_path / "r.json", tmp_path / "r.hist"
    r = run_tool(
        [sampler, *RT_OPTS, "-t", "2", "-i", "500", "-l", "2000", "-h", "20000", f"--histfile={hist}", f"--json={js}"]
    )
    assert r.returncode == 0, r.stderr
    (tmp_path / "live.txt").write_text(r.stdout)
    runs = {"json": load_results(js), "hist": load_results(hist), "live": load_results(tmp_path / "live.txt")}
    assert runs["json"].format == "rtgate-json"
    _same_numbers(runs, exact_avg=set())
    js2 = tmp_path / "v.json"
    r = run_tool([sampler, *RT_OPTS, "-t", "1", "-i", "1000", "-l", "1000", "-v", f"--json={js2}"])
    (tmp_path / "v.txt").write_text(r.stdout)
    v, j = load_results(tmp_path / "v.txt"), load_results(js2)
    _same_numbers({"json": j, "verbose": v}, exact_avg={"verbose"})
    jh, vh = j.threads[0].histogram, v.threads[0].histogram
    assert jh is not None and vh is not None and jh.overflow == 0
    assert _binned_like(vh, jh) == (_nonzero(jh), 0)


def test_verbose_parser_streams_in_constant_memory(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    with big.open("w") as f:
        f.write("Max CPUs = 2\nOnline CPUs = 2\nThread 0 Interval: 1000\n")
        for c in range(300_000):
            f.write(f"{0:8d}:{c:8d}:{c % 97:8d}\n")
    code = (
        "import resource, sys; from rtgate.parsers import load_results; "
        "r = load_results(sys.argv[1]); assert r.threads[0].cycles == 300000; "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    small = tmp_path / "small.txt"
    small.write_text("".join(big.read_text().splitlines(keepends=True)[:3003]))
    rss_big = int(
        subprocess.run(
            ["python3" if False else __import__("sys").executable, "-c", code, str(big)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    code_small = code.replace("300000", "3000")
    rss_small = int(
        subprocess.run(
            [__import__("sys").executable, "-c", code_small, str(small)], capture_output=True, text=True, check=True
        ).stdout
    )
    # 100x the samples may not cost more than a few MiB more: the samples are never held.
    assert rss_big - rss_small < 8 * 1024, (rss_small, rss_big)


# ---------------------------------------------------------------- bounded cost, ASCII numbers


def test_inputs_beyond_the_limits_are_refused_before_they_cost(tmp_path: Path) -> None:
    """A 6 MB histogram row of 3M columns took 546 MB, 107 MB of -v 1.33 GB: refused while reading now."""
    from rtgate.parsers.common import MAX_COLUMNS, MAX_LINE

    big = tmp_path / "big.txt"
    with big.open("wb") as f:
        f.truncate(65 * 2**20)  # sparse: its size is what is refused
    with pytest.raises(ResultsError, match="65 MiB is larger than any result"):
        load_results(big)
    row = tmp_path / "row.hist"
    row.write_text("# Histogram\n000000 " + "\t".join(["000001"] * (MAX_LINE // 6)) + "\n")
    with pytest.raises(ResultsError, match=f"longer than {MAX_LINE}"):
        load_results(row)
    cols = tmp_path / "cols.hist"
    cols.write_text("# Histogram\n000000 " + "\t".join(["1"] * (MAX_COLUMNS + 1)) + "\n")
    with pytest.raises(ResultsError, match=f"more than {MAX_COLUMNS} columns"):
        load_results(cols)


@pytest.mark.parametrize("digit", ["\u0663", "\uff13", "\u09e9"])
def test_digits_of_other_scripts_are_refused_in_every_text_format(tmp_path: Path, digit: str) -> None:
    """int() and regex \\d read '٣' as 3: a histogram count, a T: field, a -v sample or an rtla count in
    another script's digits is refused, not read."""
    hist = (RT_TESTS / "ct-new-S-h300.hist").read_text().replace("# Max Latencies: 0", f"# Max Latencies: {digit}", 1)
    summary = (RT_TESTS / "ct-new-nohist.stdout").read_text().replace("C:", f"C:{digit}", 1)
    verbose = (RT_TESTS / "ct-24-verbose.stdout").read_text().replace(":      ", f":      {digit}", 1)
    rtla = (RT_TESTS.parent / "rtla" / "basic.txt").read_text().replace("count:     ", f"count:     {digit}", 1)
    for name, text in (("h.hist", hist), ("s.stdout", summary), ("v.stdout", verbose), ("r.txt", rtla)):
        p = tmp_path / name
        p.write_text(text)
        with pytest.raises(ResultsError, match=r"not a number in ASCII digits|not a verbose sample|malformed"):
            load_results(p)
