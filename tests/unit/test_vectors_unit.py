# SPDX-License-Identifier: GPL-2.0-or-later
"""The shared gate vectors through the Python gates (the sampler's C gates: tests/system/test_vectors.py)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from conftest import ROOT
from rtgate.core.gates import Status, evaluate
from rtgate.core.model import Histogram, RunResult, ThreadResult
from rtgate.core.thread_plan import plan_for_results
from rtgate.core.thresholds import Measurement, SamplerSettings, ThreadGroup
from rtgate.measure.native_gates import gate_arg, parse_gate_arg

VECTORS = ROOT / "tests" / "vectors" / "gates.txt"


def _fields(line: str) -> dict[str, str]:
    return dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)


def load_vectors() -> list[dict[str, Any]]:
    vectors: list[dict[str, Any]] = []
    v: dict[str, Any] = {}
    for line in VECTORS.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        word = line.split()[0]
        if word == "vector":
            v = {
                "name": line.split()[1],
                "unit": "us",
                "complete": True,
                "reason": "loops",
                "labels": None,
                "threads": [],
                "expect": [],
            }
        elif word == "unit":
            v["unit"] = line.split()[1]
        elif word == "run":
            f = _fields(line)
            v["complete"], v["reason"] = f["complete"] == "1", f["reason"]
        elif word == "labels":
            v["labels"] = line.split()[1].split(",")
        elif word == "thread":
            v["threads"].append(_fields(line))
        elif word == "gate":
            v["gate"] = line.split()[1]
        elif word == "expect":
            parts = line.split()
            v["expect"].append({"thread": parts[1], "status": parts[2], **_fields(line)})
        elif word == "end":
            vectors.append(v)
    return vectors


def as_run(v: dict[str, Any]) -> tuple[RunResult, Measurement]:
    threads = []
    for f in v["threads"]:
        buckets = []
        for b in filter(None, f["buckets"].split(",")):
            lo, hi, c = b.split(":")
            buckets.append((int(lo), None if hi == "-" else int(hi), int(c)))
        cycles = int(f["cycles"])
        threads.append(
            ThreadResult(
                index=int(f["index"]),
                cycles=cycles,
                cpu=int(f["cpu"]),
                priority=int(f["prio"]),
                min=int(f["min"]) if cycles else None,
                max=int(f["max"]) if cycles else None,
                avg=int(f["sum"]) / cycles if cycles else None,
                missed=int(f["missed"]),
                histogram=Histogram(v["unit"], buckets),
            )
        )
    run = RunResult(
        source=v["name"],
        format="rtgate-json",
        unit=v["unit"],
        threads=threads,
        complete=v["complete"],
        stop_reason=v["reason"],
        signal="SIGINT",
    )
    labels = v["labels"] or ["all"] * len(threads)
    groups = []
    for label in labels:
        if groups and groups[-1].name == label:
            groups[-1].count = (groups[-1].count or 1) + 1
        else:
            groups.append(ThreadGroup(name=label, count=1, cpus=None, priority=80, policy="fifo"))
    gate = parse_gate_arg(v["gate"], list(labels))
    m = Measurement(
        name="m", description="", sampler=SamplerSettings(loops=1, threads=groups), gates=[gate], where=("vectors", 0)
    )
    return run, m


def _close(want: str, got: float | None) -> bool:
    if want == "-":
        return got is None
    return got is not None and math.isclose(got, float(want), rel_tol=1e-6, abs_tol=1e-12)


VECTOR_LIST = load_vectors()


def test_there_are_vectors() -> None:
    assert len(VECTOR_LIST) >= 25
    assert {Status(e["status"]) for v in VECTOR_LIST for e in v["expect"]} == set(Status)


@pytest.mark.parametrize("v", VECTOR_LIST, ids=[v["name"] for v in VECTOR_LIST])
def test_python_gates_give_the_vector_verdicts(v: dict[str, Any]) -> None:
    run, m = as_run(v)
    verdicts = evaluate(m, run)
    got = [(x.thread, x.status.value, x.value, x.bound, x.lower, x.samples) for x in verdicts]
    assert len(verdicts) == len(v["expect"]), got
    for x, e in zip(verdicts, v["expect"]):
        assert (x.thread, x.status.value) == (e["thread"], e["status"]), (x.reason, got)
        assert _close(e["value"], x.value), (x.reason, e)
        assert _close(e["bound"], x.bound), (x.reason, e)
        assert _close(e["lower"], x.lower), (x.reason, e)
        assert x.samples == int(e["samples"]), (x.reason, e)


@pytest.mark.parametrize("v", VECTOR_LIST, ids=[v["name"] for v in VECTOR_LIST])
def test_gate_args_round_trip(v: dict[str, Any]) -> None:
    """What rtgate compiles for the sampler is what the vector states."""
    run, m = as_run(v)
    assert gate_arg(m.gates[0], m, plan_for_results(m, len(run.threads))) == v["gate"]


def test_vectors_cover_both_sides_of_each_bound() -> None:
    """Every rate gate has vectors that PASS, FAIL and are INCONCLUSIVE on either side."""
    seen: dict[str, set[str]] = {}
    for v in VECTOR_LIST:
        kind = v["gate"].split("kind=")[1].split(",")[0]
        seen.setdefault(kind, set()).update(e["status"] for e in v["expect"])
    for kind in ("miss_rate", "missed", "percentile"):
        assert {"PASS", "INCONCLUSIVE", "FAIL"} <= seen[kind], kind
    names = [v["name"] for v in VECTOR_LIST]
    for edge in ("pass-edge", "just-over-pass-edge", "just-under-fail-edge", "fail-edge"):
        assert sum(edge in nm for nm in names) >= 5, edge
