# SPDX-License-Identifier: GPL-2.0-or-later
"""Known answers from RECORDED cyclictest runs under an injected load of known size (live runs: tests/system)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import RT_TESTS
from known_answers import (
    assert_no_format_passes_what_json_fails,
    same_run_verdicts,
    thresholds,
    true_skipped,
    verdicts_by_gate,
)
from rtgate.core.gates import Status
from rtgate.errors import RtgateError
from rtgate.parsers import load_results


@pytest.mark.parametrize("stem, length", [("ct-inject-D6", "duration: 6s"), ("ct-inject-l5000-h100", "loops: 5000")])
def test_recorded_injected_runs(stem: str, length: str, tmp_path: Path) -> None:
    log = RT_TESTS / f"{stem}.injector.json"
    meta = json.loads((RT_TESTS / f"{stem}.truth.json").read_text())
    windows, truth = true_skipped(log, meta["since_ns"], meta["until_ns"], 1000)
    assert windows >= 6 and truth > 150
    res = RT_TESTS / f"{stem}.json"
    t = load_results(res).threads[0]
    hi = t.missed_upper if t.missed_upper is not None else t.missed
    assert t.missed is not None and hi is not None and hi >= truth - 2
    got = verdicts_by_gate(thresholds(tmp_path, length, cpu=meta["cpu"]), res)
    for gate in ("over-1ms", "p99", "missed"):
        assert got[gate] != Status.PASS, (gate, got, t.missed_derivation)


FORMATS_DIR = RT_TESTS / "inject-formats"


@pytest.mark.parametrize("run", ["ct-t", "ct-v", "rs-t", "rs-v"])
def test_recorded_formats_of_one_run_never_pass_what_its_json_fails(tmp_path: Path, run: str) -> None:
    """Histogram text of a run with 40 ms stalls PASSed where its JSON FAILed: '# Max Latencies: 39482' at
    the 1 ms the thresholds ask shows at least 39 periods skipped per stall. Every format of one run of
    cyclictest and of rtgate-sampler now agrees with the JSON's FAIL."""
    assert_no_format_passes_what_json_fails(tmp_path, FORMATS_DIR / run)


@pytest.mark.parametrize("run", ["ct-v", "rs-v"])
@pytest.mark.parametrize("keep", [0.05, 0.5, 0.9])
def test_cut_verbose_output_never_passes(tmp_path: Path, run: str, keep: float) -> None:
    """A -v file cut at a line: 200 of 2,000 samples PASSed where the whole file FAILs. Cut anywhere, with
    the stalls or without, it is never PASS: the thresholds' length shows the periods it lacks."""
    lines = (FORMATS_DIR / run / "v.txt").read_text().splitlines(keepends=True)
    cut = tmp_path / run
    cut.mkdir()
    (cut / "v.txt").write_text("".join(lines[: int(len(lines) * keep)]))
    got = same_run_verdicts(tmp_path, cut, "v.txt")
    assert Status.PASS not in got.values(), got
    # cut inside a line: the last line has no newline
    (cut / "v.txt").write_text("".join(lines[: int(len(lines) * keep)]) + lines[-1][:3])
    with pytest.raises(RtgateError, match="truncated"):
        load_results(cut / "v.txt")


def test_histogram_of_a_clean_short_run_is_not_pass(tmp_path: Path) -> None:
    """A run stopped early (1.5 s of 4 s): its histogram text says nothing about length, and its periods are
    fewer than the thresholds ask: INCONCLUSIVE, as its JSON is."""
    src = (FORMATS_DIR / "ct-t" / "h.txt").read_text().splitlines(keepends=True)
    # keep only the samples below 100 us (no stall) and the footer rebuilt to match: a clean, short run
    rows = [ln for ln in src if ln[:1].isdigit() and int(ln.split()[0]) < 100]
    counts = [int(ln.split()[1]) for ln in rows]
    filled = [int(ln.split()[0]) for ln in rows if int(ln.split()[1])]
    total = sum(counts)
    avg = sum(int(ln.split()[0]) * int(ln.split()[1]) for ln in rows) // total
    text = "# Histogram\n" + "".join(rows)
    text += f"# Total: {total:09d}\n# Min Latencies: {filled[0]:05d}\n# Avg Latencies: {avg:05d}\n"
    text += f"# Max Latencies: {filled[-1]:05d}\n# Histogram Overflows: 00000\n# Histogram Overflow at cycle number:\n"
    text += "# Thread 0:\n"
    d = tmp_path / "short"
    d.mkdir()
    (d / "h.txt").write_text(text)
    got = same_run_verdicts(tmp_path, d, "h.txt")
    assert total < 3800  # fewer periods than 4 s at 1 ms
    assert Status.PASS not in got.values(), got
    assert got["max"] == Status.INCONCLUSIVE, got
