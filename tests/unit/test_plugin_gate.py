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


def test_rt_latency_arguments_are_a_threshold_files_keys() -> None:
    """rt_latency's keywords become the measurement a threshold file would declare: its load, its gates
    (named after their kind unless named), its one thread group."""
    from rtgate.pytest_plugin.window import measurement_for_test

    m = measurement_for_test(
        {
            "duration": "3s",
            "interval_us": 500,
            "priority": 90,
            "threads": 2,
            "cpus": [1],
            "load": ["cpu", "memory"],
            "gates": [
                {"kind": "max", "limit_us": 100},
                {"name": "tail", "kind": "miss_rate", "above_us": 50, "rate": "1%"},
            ],
        },
        "test_x",
    )
    assert (m.name, m.sampler.duration_s, m.sampler.interval_us) == ("test_x", 3, 500)
    (group,) = m.sampler.threads
    assert (group.count, group.cpus, group.priority) == (2, [1], 90)
    assert [ld.kind for ld in m.loads] == ["cpu", "memory"]
    assert [(g.name, g.kind, g.limit_us, g.rate) for g in m.gates] == [
        ("max", "max", 100.0, None),
        ("tail", "miss_rate", None, 0.01),
    ]
    bare = measurement_for_test({}, "test_y")  # the defaults: 5 s, one unpinned thread, no gates
    assert (bare.sampler.duration_s, [g.count for g in bare.sampler.threads], bare.gates, bare.loads) == (
        5,
        [1],
        [],
        [],
    )


@pytest.mark.parametrize(
    "settings,message",
    [
        (
            {"loads": "cpu"},
            "rt_latency: unknown argument 'loads'; did you mean 'load'? (it takes name, duration, interval_us, "
            "priority, policy, mlockall, threads, cpus, load, gates; see doc/pytest.rst)",
        ),
        ({"cpus": "x"}, "rt_latency: cpus: bad CPU list 'x'"),
        ({"threads": 0}, "rt_latency: threads: must be a whole number from 1 to 1024, not 0"),
        ({"duration": "1.5s"}, "rt_latency: duration: must be a whole duration"),
        ({"load": "cpux"}, "rt_latency: load.kind: unknown load 'cpux'; did you mean 'cpu'?"),
        ({"gates": [{"kind": "maxx", "limit_us": 1}]}, "rt_latency: gates[0].kind: unknown gate kind 'maxx'"),
        ({"gates": {"kind": "max"}}, "rt_latency: gates: must be a list of gates"),
    ],
)
def test_a_wrong_rt_latency_argument_is_one_line_naming_it(settings: dict[str, object], message: str) -> None:
    from rtgate.errors import RtgateError
    from rtgate.pytest_plugin.window import measurement_for_test

    with pytest.raises(RtgateError) as e:
        measurement_for_test(settings, "test_x")
    assert str(e.value).startswith(message), str(e.value)
    assert "\n" not in str(e.value)
