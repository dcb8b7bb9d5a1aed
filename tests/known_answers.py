# SPDX-License-Identifier: GPL-2.0-or-later
"""Threshold files and verdict helpers for the cyclictest known answers: recorded (tests/unit), live (tests/system)."""

from __future__ import annotations

import json
from pathlib import Path

from rtgate.core.gates import Status
from rtgate.core.setup import evaluate_measured
from rtgate.core.thresholds import load_thresholds
from rtgate.parsers import load_results

CPU = 1


SAME_RUN_THRESHOLDS = """\
platform: known-answers
measurements:
  m:
    sampler: {interval_us: 1000, duration: 4s, priority: 80, threads: [{name: rt, cpus: [1]}]}
    gates:
      - {name: over-1ms, kind: miss_rate, above_us: 1000, rate: 1%}
      - {name: p99, kind: percentile, percentile: 99, limit_us: 500}
      - {name: missed, kind: missed, max_rate: 1%}
      - {name: max, kind: max, limit_us: 1000000}
"""


THRESHOLDS = """\
platform: known-answers
measurements:
  m:
    sampler: {{interval_us: 1000, {length}, priority: 80, threads: [{{name: rt, cpus: [{cpu}]}}]}}
    gates:
      - {{name: over-1ms, kind: miss_rate, above_us: 1000, rate: 1%}}
      - {{name: p99, kind: percentile, percentile: 99, limit_us: 500}}
      - {{name: missed, kind: missed, max_rate: 1%}}
      - {{name: max, kind: max, limit_us: 1000000}}
"""


def assert_no_format_passes_what_json_fails(tmp_path: Path, run_dir: Path) -> None:
    truth = same_run_verdicts(tmp_path, run_dir, "r.json")
    assert truth["over-1ms"] == Status.FAIL and truth["missed"] == Status.FAIL, truth  # 40 ms stalls: ~8 % missed
    for name in sorted(p.name for p in run_dir.glob("[htv].txt")):
        got = same_run_verdicts(tmp_path, run_dir, name)
        for gate, status in truth.items():
            if status == Status.FAIL:
                assert got[gate] != Status.PASS, (run_dir.name, name, gate, got)


def same_run_verdicts(tmp_path: Path, run_dir: Path, name: str) -> dict[str, Status]:
    th = tmp_path / "same.yaml"
    th.write_text(SAME_RUN_THRESHOLDS)
    tf = load_thresholds(th)
    return {v.gate: v.status for v in evaluate_measured(tf.measurements["m"], load_results(run_dir / name))}


def thresholds(tmp_path: Path, length: str, cpu: int = CPU) -> Path:
    p = tmp_path / "known.yaml"
    p.write_text(THRESHOLDS.format(length=length, cpu=cpu))
    return p


def true_skipped(injector_log: Path, since_ns: int, until_ns: int, interval_us: int) -> tuple[int, int]:
    """(windows, fewest periods skipped) by busy windows wholly inside [since, until]: of the deadlines in
    a window of length L at least floor(L / I) - 1 fall inside it, and only the first of them is sampled."""
    doc = json.loads(injector_log.read_text())
    inside = [(a, b) for a, b in doc["windows_ns"] if a >= since_ns and b <= until_ns]
    per = [max(0, (b - a) // (interval_us * 1000) - 2) for a, b in inside]
    return len(inside), sum(per)


def verdicts_by_gate(path: Path, results: Path) -> dict[str, Status]:
    tf = load_thresholds(path)
    run = load_results(results)
    return {v.gate: v.status for v in evaluate_measured(tf.measurements["m"], run)}
