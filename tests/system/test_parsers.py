# SPDX-License-Identifier: GPL-2.0-or-later
"""Parsers: recorded and freshly generated outputs of cyclictest and rtgate-sampler, one model.
The tests of this topic that start no process: tests/unit/test_parsers_unit.py."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

from conftest import RT_OPTS, run_tool
from rtgate.core.model import Histogram, RunResult
from rtgate.parsers import load_results


def figures(run: RunResult) -> list[tuple[int, float | None, float | None]]:
    return [(t.cycles, t.min, t.max) for t in run.threads]


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
