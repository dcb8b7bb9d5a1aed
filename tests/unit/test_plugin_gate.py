# SPDX-License-Identifier: GPL-2.0-or-later
"""result.gate(...) in users' own tests: every keyword reaches the gate it builds."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from rtgate.core.thresholds import Measurement, SamplerSettings, ThreadGroup
from rtgate.parsers import load_results
from rtgate.pytest_plugin.session import LatencyResult


@pytest.fixture(scope="module")
def result() -> LatencyResult:
    run = load_results(FIXTURES / "rtgate-sampler" / "rs-t2-h200.json")
    # as recorded: -t 2 -p 80 -i 500 -l 400 (fixtures/rtgate-sampler/README.md)
    group = ThreadGroup(name="all", count=2, cpus=None, priority=80, policy="fifo")
    sampler = SamplerSettings(interval_us=500, loops=400, threads=[group])
    m = Measurement(name="m", description="", sampler=sampler, gates=[], where=("<test>", 0))
    return LatencyResult(run, m)


@pytest.mark.parametrize(
    "form",
    [
        {"percentile": 50.0, "limit_us": 1.0},
        {"above_us": 1.0, "rate": "1%"},
    ],
    ids=["percentile", "miss_rate"],
)
def test_confidence_reaches_every_kind_that_takes_it(result: LatencyResult, form: dict[str, object]) -> None:
    """gate(percentile=..., confidence=0.99) was judged at 95 %: the keyword reached miss_rate gates only."""
    for confidence in (0.9, 0.99):
        for v in result.gate(**form, confidence=confidence).verdicts:  # type: ignore[arg-type]
            assert f"{confidence * 100:g} % bounds" in v.reason, v.reason
