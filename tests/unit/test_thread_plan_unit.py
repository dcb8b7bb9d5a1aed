# SPDX-License-Identifier: GPL-2.0-or-later
"""The thread plan in-process: timerlat contexts share one run."""

from __future__ import annotations

from pathlib import Path

from plan_specs import measurement_from
from rtgate.core.thread_plan import local_cpus, plan_anywhere, plan_for_results, plan_on
from rtgate.core.thresholds import load_thresholds
from rtgate.measure.native_gates import native_args
from rtgate.measure.sampler_args import expected_seconds, sampler_args


def test_timerlat_contexts_share_a_run(tmp_path: Path) -> None:
    spec = tmp_path / "t.yaml"
    spec.write_text(
        "platform: p\nmeasurements:\n  m:\n    backend: timerlat\n    timerlat: {cpus: [0, 1], duration: 1s}\n"
        "    gates: [{name: g, kind: max, limit_us: 100}]\n"
    )
    m = load_thresholds(spec).measurements["m"]
    assert [(t.label, t.cpu) for t in plan_on(m, [0, 1, 2]).threads] == [
        ("irq", 0),
        ("irq", 1),
        ("thread", 0),
        ("thread", 1),
    ]
    assert plan_for_results(m, 4).labels() == ["irq", "irq", "thread", "thread"]


TWO_GROUPS = """
interval_us: 1000
distance_us: 100
loops: 50
threads:
  - {name: A, cpus: [0], priority: 80}
  - {name: B, count: 3, cpus: [1, 0], priority: 70}
  - {name: C, priority: 60}
"""


def test_groups_known_answers(tmp_path: Path) -> None:
    m = measurement_from(tmp_path, TWO_GROUPS)
    plan = plan_on(m, [0, 1, 2, 3])
    got = [(t.index, t.label, t.cpu, t.priority, t.interval_us, t.expected_periods) for t in plan.threads]
    assert got == [
        (0, "A", 0, 80, 1000, 50),
        (1, "B", 1, 70, 1100, 50),
        (2, "B", 0, 70, 1200, 50),
        (3, "B", 1, 70, 1300, 50),
        (4, "C", None, 60, 1400, 50),
    ]
    assert plan.fixed_count == 5
    assert plan.measured_cpus is None  # C is not pinned
    # C may run anywhere: it is the lowest sampler priority on every CPU
    assert plan.priorities == {0: 60, 1: 60, 2: 60, 3: 60}
    assert plan.expected_seconds == 50 * 1400 / 1e6
    assert expected_seconds(m) == 50 * 1400 / 1e6
    assert plan_on(m, [0, 1], duration_s=7).expected_seconds == 7.0
    assert [t.expected_periods for t in plan_on(m, [0, 1], duration_s=7).threads] == [7000, 6363, 5833, 5384, 5000]
    # the same threads wherever the plan is made: no `cpus: all`
    assert plan_anywhere(m).threads == plan.threads
    assert plan_for_results(m, 5).labels() == ["A", "B", "B", "B", "C"]
    assert plan_for_results(m, 7).labels(7) == ["A", "B", "B", "B", "C", None, None]
    assert plan_for_results(m, 2).labels(2) == ["A", "B"]


def test_sampler_arguments_and_native_gates_follow_the_plan(tmp_path: Path) -> None:
    m = measurement_from(tmp_path, TWO_GROUPS, "      - {name: g, kind: max, limit_us: 1000, threads: [B]}\n")
    args = sampler_args(m, None)
    assert "--thread-cpus=0,1,0,1,*" in args and "--thread-priorities=80,70,70,70,60" in args
    assert native_args(m) == ["--thread-labels=A,B,B,B,C", "--gate=name=g,kind=max,limit=1000,threads=1+2+3"]


def test_one_per_cpu(tmp_path: Path) -> None:
    m = measurement_from(tmp_path, "loops: 10\npriority: 90\nthreads: [{name: all, cpus: all}]")
    here = plan_on(m, [2, 5])
    assert [(t.cpu, t.priority, t.one_per_cpu) for t in here.threads] == [(2, 90, True), (5, 90, True)]
    assert here.measured_cpus == [2, 5] and here.priorities == {2: 90, 5: 90}
    assert here.fixed_count is None and plan_anywhere(m).threads == ()
    results = plan_for_results(m, 3)  # a run of 3 threads on a machine not known here: thread i on CPU i
    assert [(t.cpu, t.one_per_cpu) for t in results.threads] == [(0, True), (1, True), (2, True)]
    assert plan_on(m, local_cpus()).count == len(local_cpus())


def test_pinned_count_below_its_cpus_measures_only_the_cpus_it_runs_on(tmp_path: Path) -> None:
    m = measurement_from(tmp_path, "loops: 10\nthreads: [{name: a, count: 1, cpus: [1, 0]}]")
    plan = plan_on(m, [0, 1])
    assert plan.measured_cpus == [1] and plan.priorities == {1: 80}


def test_non_rt_policy_is_priority_zero_to_other_tasks(tmp_path: Path) -> None:
    m = measurement_from(tmp_path, "loops: 10\npolicy: other\nthreads: [{name: a, cpus: [0]}]")
    (t,) = plan_on(m, [0]).threads
    assert (t.policy, t.priority, t.rt_priority) == ("other", 0, 0)
