"""Fuego's criteria.json, reference.json and chart_config.json from a threshold file.

Per gate and thread, parser.py reports the measured figure and the gate's own verdict
(0 pass, 1 inconclusive, 2 fail, 3 error). Every verdict gets a `le 0` criterion: it is the
decision, computed by the same gates as everywhere. Figures Fuego can compare itself (max, avg,
percentile) also get a `le limit` criterion; miss rates with a confidence bound and missed-period
rates cannot be expressed in Fuego's criteria, so their verdict alone decides.
"""

from __future__ import annotations

from typing import Any

from rtgate.errors import RtgateError
from rtgate.measure.session import predicted_thread_ids
from rtgate.core.thresholds import Measurement, ThresholdFile

TEST = "Benchmark.rtgate"


def _thread_ids(m: Measurement, cpus: int | None) -> dict[str, list[str]]:
    if any(g.cpus == "all" for g in m.sampler.threads):
        if not cpus:
            raise RtgateError(f"measurement {m.name} runs one thread per CPU: give the board's --cpus")
        from dataclasses import replace
        groups = [replace(g, cpus=list(range(cpus)), count=None) for g in m.sampler.threads]
        m = replace(m, sampler=replace(m.sampler, threads=groups))
    return predicted_thread_ids(m, None)


def fuego_files(tf: ThresholdFile, names: list[str], cpus: int | None) -> dict[str, dict[str, Any]]:
    criteria: list[dict[str, Any]] = []
    cases = []
    plots: list[str] = []
    for name in names:
        m = tf.measurements[name]
        ids = _thread_ids(m, cpus)
        measures = []
        threads: list[str] = []
        for gate in m.gates:
            for thread in ids[gate.name] if gate.scope == "per_thread" else ["worst"]:
                case = f"default.{m.name}.{gate.name}-{thread}"
                criteria.append({"tguid": f"{case}-verdict", "reference": {"value": 0, "operator": "le"}})
                measures.append({"name": f"{gate.name}-{thread}-verdict", "unit": "verdict"})
                unit = {"miss_rate": "%", "missed": "%" if gate.max_rate is not None else "periods"}.get(gate.kind, "us")
                measures.append({"name": f"{gate.name}-{thread}", "unit": unit})
                if gate.kind in ("max", "avg", "percentile"):
                    criteria.append({"tguid": case, "reference": {"value": gate.limit_us, "operator": "le"}})
                if thread not in threads and thread not in ("worst", "all"):
                    threads.append(thread)
        for thread in threads:
            tid = thread.rsplit("-", 1)[-1]
            measures += [{"name": f"max-{tid}", "unit": "us"}, {"name": f"p99.9-{tid}", "unit": "us"}]
            plots += [f"default.{m.name}.max-{tid}", f"default.{m.name}.p99.9-{tid}"]
        criteria.append({"tguid": f"default.{m.name}", "max_fail": 0})
        cases.append({"name": m.name, "measurements": measures})
    criteria.append({"tguid": "default", "max_fail": 0})
    return {
        "criteria.json": {"schema_version": "1.0", "criteria": criteria},
        "reference.json": {"test_sets": [{"name": "default", "test_cases": cases}]},
        "chart_config.json": {"chart_type": "measure_plot", "measures": plots},
    }
