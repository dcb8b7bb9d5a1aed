#!/usr/bin/python3
"""Fuego parser for Benchmark.rtgate: per gate and thread, the measured figure and the gate's own
verdict (0 pass, 1 inconclusive, 2 fail, 3 error), plus per-thread max and p99.9 from the JSON."""

import json
import os
import sys

sys.path.insert(0, os.environ["FUEGO_CORE"] + "/scripts/parser")
import common as plib  # noqa: E402

VERDICT = {"PASS": 0, "INCONCLUSIVE": 1, "FAIL": 2, "ERROR": 3}
LINE = r"^RTGATE-GATE (\S+) (\S+) (\S+) (\S+) (\S+) (\S+) (\S+) (\S+) (.*)$"


def p999(histogram, cycles, top):
    """Conservative 99.9th percentile of an rtgate full-range histogram ([low, high, count])."""
    rank = max(1, -(-999 * cycles // 1000))
    seen = 0
    for low, high, count in histogram:
        seen += count
        if seen >= rank:
            return min(top, high - 1 if high is not None else top)
    return top


measure_set = "default." + os.environ.get("BENCHMARK_RTGATE_MEASUREMENT", "latency")
measures = []
for gate, thread, status, value, _limit, _bound, _samples, _units, _reason in plib.parse_log(LINE):
    name = "%s-%s" % (gate, thread)
    if value != "-":
        measures.append({"name": name, "measure": float(value)})
    measures.append({"name": name + "-verdict", "measure": VERDICT.get(status, 3)})

try:
    with open(os.path.join(os.environ["LOGDIR"], "rtgate.json")) as f:
        results = json.load(f)["rtgate"]
    scale = 1000.0 if results.get("unit") == "ns" else 1.0
    for t in results["threads"]:
        tid = "cpu%d" % t["cpu"] if t["cpu"] >= 0 else "t%d" % t["index"]
        if t["cycles"]:
            measures.append({"name": "max-" + tid, "measure": t["max"] / scale})
            measures.append({"name": "p99.9-" + tid, "measure": p999(t["histogram"], t["cycles"], t["max"]) / scale})
except (OSError, KeyError, ValueError) as e:
    print("rtgate parser: no usable rtgate.json (%s): gate verdicts only" % e)

if measures:
    sys.exit(plib.process({measure_set: measures}))
print("rtgate parser: no RTGATE-GATE lines in the log: the sampler did not run")
sys.exit(1)
