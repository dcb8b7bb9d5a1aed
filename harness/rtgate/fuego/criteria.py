# SPDX-License-Identifier: GPL-2.0-or-later
"""Fuego's criteria.json, reference.json and chart_config.json from a threshold file.

Layout of Benchmark.rtgate's results (every part Fuego-legal, see names.py):

    <measurement>.<gate>.<thread>           the gate's figure for that thread
    <measurement>.<gate>.<thread>_bound     rate gates: the upper confidence bound of the rate
    <measurement>.<gate>.<thread>_verdict   the gate's own verdict: 0 pass, 1 inconclusive, 2 fail, 3 error
    <measurement>.threads.<cpuN>_max        per thread, from the results JSON (charts)
    <measurement>.threads.<cpuN>_p99_9

One test set per measurement, one test case per gate. Each figure gets the criterion Fuego can
express for it: a latency (max, avg, percentile) `le limit`; a rate `le rate` (the sampler fails
a rate gate exactly when the observed rate is above it) and its bound `le rate` (the gate passes
only when the bound is within it); a missed-period count `le max_count`. The verdict measure gets
`le 0`: it is the decision of the same gates as everywhere, and covers what Fuego cannot express
(too few samples, a run stopped early). Each test case and test set has `max_fail: 0`, so a gate's
test case fails when any of its measures fails, and the run fails when any gate does.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rtgate.core.gate_kinds import KINDS, figure_unit
from rtgate.core.gates import predicted_thread_ids
from rtgate.core.thresholds import GateSpec, Measurement, ThresholdFile
from rtgate.errors import RtgateError
from rtgate.fuego.names import distinct, fuego_name

TEST = "Benchmark.rtgate"
THREADS_CASE = "threads"  # the per-thread figures; no gate may take this name


def _thread_ids(m: Measurement, cpus: int | None) -> dict[str, list[str]]:
    if any(g.cpus == "all" for g in m.sampler.threads):
        if not cpus:
            raise RtgateError(f"measurement {m.name} runs one thread per CPU: give the board's --cpus")
        groups = [replace(g, cpus=list(range(cpus)), count=None) for g in m.sampler.threads]
        m = replace(m, sampler=replace(m.sampler, threads=groups))
    return predicted_thread_ids(m, None)


def _figure_limit(gate: GateSpec) -> float | None:
    """The limit Fuego can compare the gate's figure with (`le`), in the units parser.py reports."""
    unit = figure_unit(gate)
    if unit == "%":
        share_key = KINDS[gate.kind].share_key
        return round(float(getattr(gate, share_key or "")) * 100.0, 12)
    return gate.max_count if unit == "periods" else gate.limit_us


def fuego_files(tf: ThresholdFile, names: list[str], cpus: int | None) -> dict[str, dict[str, Any]]:
    criteria: list[dict[str, Any]] = []
    sets: list[dict[str, Any]] = []
    plots: list[str] = []
    distinct("measurements", str(tf.path), [(n, fuego_name(n)) for n in names])
    for name in names:
        m = tf.measurements[name]
        if m.backend != "sampler":
            raise RtgateError(f"measurement {m.name} uses the {m.backend} backend: Fuego runs rtgate-sampler")
        ids = _thread_ids(m, cpus)
        test_set = fuego_name(m.name)
        distinct(
            "gates",
            f"measurement {m.name}",
            [("(per-thread figures)", THREADS_CASE)] + [(g.name, fuego_name(g.name)) for g in m.gates],
        )
        cases: list[dict[str, Any]] = []
        cpu_ids: list[str] = []
        for gate in m.gates:
            case = fuego_name(gate.name)
            threads = ids[gate.name] if gate.scope == "per_thread" else ["worst"]
            distinct("threads", f"gate {gate.name}", [(t, fuego_name(t)) for t in threads])
            measures: list[dict[str, Any]] = []
            limit = _figure_limit(gate)
            for thread in threads:
                t = fuego_name(thread)
                measures.append({"name": t, "unit": figure_unit(gate)})
                if limit is not None:
                    criteria.append(
                        {"tguid": f"{test_set}.{case}.{t}", "reference": {"value": limit, "operator": "le"}}
                    )
                if figure_unit(gate) == "%":
                    measures.append({"name": f"{t}_bound", "unit": "%"})
                    criteria.append(
                        {"tguid": f"{test_set}.{case}.{t}_bound", "reference": {"value": limit, "operator": "le"}}
                    )
                measures.append({"name": f"{t}_verdict", "unit": "verdict"})
                criteria.append(
                    {"tguid": f"{test_set}.{case}.{t}_verdict", "reference": {"value": 0, "operator": "le"}}
                )
                cpu = thread.rsplit("-", 1)[-1]
                if thread not in ("worst", "all") and cpu not in cpu_ids:
                    cpu_ids.append(cpu)
            criteria.append({"tguid": f"{test_set}.{case}", "max_fail": 0})
            cases.append({"name": case, "measurements": measures})
        stats = []
        for cpu in cpu_ids:
            stats += [{"name": f"{cpu}_max", "unit": "us"}, {"name": f"{cpu}_p99_9", "unit": "us"}]
            plots += [f"{test_set}.{THREADS_CASE}.{cpu}_max", f"{test_set}.{THREADS_CASE}.{cpu}_p99_9"]
        if stats:
            cases.append({"name": THREADS_CASE, "measurements": stats})
        criteria.append({"tguid": test_set, "max_fail": 0})
        sets.append({"name": test_set, "test_cases": cases})
    return {
        "criteria.json": {"schema_version": "1.0", "criteria": criteria},
        "reference.json": {"test_sets": sets},
        "chart_config.json": {"chart_type": "measure_plot", "measures": plots},
    }


def all_tguids(files: dict[str, dict[str, Any]]) -> list[str]:
    """Every measure tguid that reference.json declares (what parser.py may report)."""
    return [
        f"{s['name']}.{c['name']}.{m['name']}"
        for s in files["reference.json"]["test_sets"]
        for c in s["test_cases"]
        for m in c["measurements"]
    ]
