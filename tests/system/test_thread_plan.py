# SPDX-License-Identifier: GPL-2.0-or-later
"""The thread plan: known answers, and the real sampler runs the threads the plan says it will.
The tests of this topic that start no process: tests/unit/test_thread_plan_unit.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import IS_ROOT
from plan_specs import measurement_from
from rtgate.core.gates import evaluate
from rtgate.core.setup import reconcile
from rtgate.core.thread_plan import local_cpus, plan_on
from rtgate.measure.sampler_args import sampler_args
from rtgate.parsers import load_results


@pytest.mark.skipif(not IS_ROOT or len(local_cpus()) < 2, reason="needs root (SCHED_FIFO) and two CPUs")
def test_the_sampler_runs_the_planned_threads(tmp_path: Path, sampler: str) -> None:
    """What the plan says is what rtgate-sampler does: thread count, CPU, priority, interval, periods;
    and the gates and the set-up check read its results through the same plan."""
    m = measurement_from(
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
