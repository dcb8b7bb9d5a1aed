# SPDX-License-Identifier: GPL-2.0-or-later
"""The largest results a real run writes are read; an input with one histogram value more is refused.

The limit (parsers/json_results.py MAX_JSON_HISTOGRAM_VALUES) is derived from the densest file rtgate-sampler
can write within the 64 MiB every result is held to: tests/dense_results.py writes it. Each file here is
50-64 MB and takes seconds to read: the system tier.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import dense_results
from rtgate.core.model import RunResult
from rtgate.errors import ResultsError
from rtgate.parsers import MAX_RESULTS_BYTES, load_results
from rtgate.parsers.json_results import MAX_JSON_HISTOGRAM_VALUES


def _values(run: RunResult) -> int:
    """Histogram values and block maxima, as the parser counts them: 3 a bucket, 1 a block."""
    total = 0
    for t in run.threads:
        assert t.histogram is not None and t.block_maxima is not None
        total += 3 * len(t.histogram.buckets) + len(t.block_maxima.values)
    return total


def test_the_densest_result_the_sampler_writes_in_64_mib_is_read(tmp_path: Path) -> None:
    path = tmp_path / "dense.json"
    values = 14_000_000  # in the sampler's own layout (", "), the most that fit in 64 MiB with its other fields
    size = dense_results.write(path, values)
    assert size <= MAX_RESULTS_BYTES and values <= MAX_JSON_HISTOGRAM_VALUES
    run = load_results(path)
    assert len(run.threads) == 1024 and _values(run) == values
    assert max(len(t.block_maxima.values) for t in run.threads if t.block_maxima) == dense_results.MAX_BLOCKS


def test_the_limit_is_read_and_one_value_more_is_refused_in_one_line(tmp_path: Path) -> None:
    at, over = tmp_path / "at.json", tmp_path / "over.json"
    dense_results.write(at, MAX_JSON_HISTOGRAM_VALUES, sep=",")  # denser than the sampler writes: under 64 MiB
    assert _values(load_results(at)) == MAX_JSON_HISTOGRAM_VALUES
    at.unlink()
    assert dense_results.write(over, MAX_JSON_HISTOGRAM_VALUES + 1, sep=",") <= MAX_RESULTS_BYTES
    with pytest.raises(ResultsError, match=f"more than {MAX_JSON_HISTOGRAM_VALUES} histogram values"):
        load_results(over)
    spec = tmp_path / "t.yaml"
    dense_results.thresholds(spec)
    r = subprocess.run(
        [sys.executable, "-m", "rtgate", "check", str(spec), str(over)], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"rtgate: error: {over}: more than {MAX_JSON_HISTOGRAM_VALUES} histogram values (with block maxima, "
        "overflow cycles and spikes): more than a real run's JSON of 64 MiB holds"
    ]
