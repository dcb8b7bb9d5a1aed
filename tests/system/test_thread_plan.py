# SPDX-License-Identifier: GPL-2.0-or-later
"""The thread plan: known answers, and the real sampler runs the threads the plan says it will."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import IS_ROOT
from rtgate.core.gates import evaluate
from rtgate.core.setup import reconcile
from rtgate.core.thread_plan import local_cpus, plan_anywhere, plan_for_results, plan_on
from rtgate.core.thresholds import Measurement, load_thresholds
from rtgate.measure.native_gates import native_args
from rtgate.measure.sampler_args import expected_seconds, sampler_args
from rtgate.parsers import load_results


def _measurement(tmp_path: Path, sampler: str, gates: str = "") -> Measurement:
    spec = tmp_path / "t.yaml"
    spec.write_text(
        "platform: p\nmeasurements:\n  m:\n    sampler:\n"
        + "".join(f"      {line}\n" for line in sampler.strip().splitlines())
        + "    gates:\n"
        + (gates or "      - {name: g, kind: max, limit_us: 1000}\n")
    )
    return load_thresholds(spec).measurements["m"]


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
    m = _measurement(tmp_path, TWO_GROUPS)
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
    m = _measurement(tmp_path, TWO_GROUPS, "      - {name: g, kind: max, limit_us: 1000, threads: [B]}\n")
    args = sampler_args(m, None)
    assert "--thread-cpus=0,1,0,1,*" in args and "--thread-priorities=80,70,70,70,60" in args
    assert native_args(m) == ["--thread-labels=A,B,B,B,C", "--gate=name=g,kind=max,limit=1000,threads=1+2+3"]


def test_one_per_cpu(tmp_path: Path) -> None:
    m = _measurement(tmp_path, "loops: 10\npriority: 90\nthreads: [{name: all, cpus: all}]")
    here = plan_on(m, [2, 5])
    assert [(t.cpu, t.priority, t.one_per_cpu) for t in here.threads] == [(2, 90, True), (5, 90, True)]
    assert here.measured_cpus == [2, 5] and here.priorities == {2: 90, 5: 90}
    assert here.fixed_count is None and plan_anywhere(m).threads == ()
    results = plan_for_results(m, 3)  # a run of 3 threads on a machine not known here: thread i on CPU i
    assert [(t.cpu, t.one_per_cpu) for t in results.threads] == [(0, True), (1, True), (2, True)]
    assert plan_on(m, local_cpus()).count == len(local_cpus())


def test_pinned_count_below_its_cpus_measures_only_the_cpus_it_runs_on(tmp_path: Path) -> None:
    m = _measurement(tmp_path, "loops: 10\nthreads: [{name: a, count: 1, cpus: [1, 0]}]")
    plan = plan_on(m, [0, 1])
    assert plan.measured_cpus == [1] and plan.priorities == {1: 80}


def test_non_rt_policy_is_priority_zero_to_other_tasks(tmp_path: Path) -> None:
    m = _measurement(tmp_path, "loops: 10\npolicy: other\nthreads: [{name: a, cpus: [0]}]")
    (t,) = plan_on(m, [0]).threads
    assert (t.policy, t.priority, t.rt_priority) == ("other", 0, 0)


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


@pytest.mark.skipif(not IS_ROOT or len(local_cpus()) < 2, reason="needs root (SCHED_FIFO) and two CPUs")
def test_the_sampler_runs_the_planned_threads(tmp_path: Path, sampler: str) -> None:
    """What the plan says is what rtgate-sampler does: thread count, CPU, priority, interval, periods;
    and the gates and the set-up check read its results through the same plan."""
    m = _measurement(
        tmp_path,
        """
interval_us: 500
distance_us: 50
loops: 40
threads:
  - {name: A, cpus: [1], priority: 81}
  - {name: B, count: 2, cpus: [0, 1], priority: 79}
""",
        "      - {name: g, kind: max, limit_us: 100000, threads: [B]}\n",
    )
    plan = plan_on(m, local_cpus())
    out = tmp_path / "r.json"
    r = subprocess.run(
        [sampler, *sampler_args(m, str(out), native_gates=True)], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    run = load_results(out)
    # every period of each thread's loops, sampled or missed (a busy machine can miss many)
    got = [(t.index, t.cpu, t.priority, t.interval_us, t.cycles + (t.missed or 0)) for t in run.threads]
    want = [(t.index, t.cpu, t.priority, t.interval_us, t.expected_periods) for t in plan.threads]
    assert got == want
    assert reconcile(m, run).differences == {}
    verdicts = evaluate(m, run)
    assert sorted(v.thread for v in verdicts) == ["B-cpu0", "B-cpu1"], [v.reason for v in verdicts]
    native = [line.split()[2] for line in r.stdout.splitlines() if line.startswith("RTGATE-GATE")]
    assert native == ["B-cpu0", "B-cpu1"]  # the sampler's own gates picked the same threads
