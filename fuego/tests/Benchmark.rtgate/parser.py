#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Fuego parser for Benchmark.rtgate.

Test set = the measurement, test case = the gate, and per thread the measures <thread> (the
gate's figure), <thread>_bound (rate gates: the confidence bound) and <thread>_verdict (the
gate's own verdict: 0 pass, 1 inconclusive, 2 fail, 3 error); test case "threads" has each
thread's <cpuN>_max and <cpuN>_p99_9 from the results JSON. Names are made Fuego-legal as
`rtgate fuego criteria` makes them: every character outside [A-Za-z0-9_] becomes '_'.

The gate lines come from the test log, or, when Fuego stopped the job before the log got them,
from rtgate.out, which test_cleanup fetched from the board after stopping the sampler with
SIGTERM (the sampler then reports what it measured, its verdicts INCONCLUSIVE: stopped early).
"""

import json
import os
import re
import sys

sys.path.insert(0, os.environ["FUEGO_CORE"] + "/scripts/parser")
import common as plib

VERDICT = {"PASS": 0, "INCONCLUSIVE": 1, "FAIL": 2, "ERROR": 3}
LINE = r"^RTGATE-GATE (\S+) (\S+) (\S+) (\S+) (\S+) (\S+) (\S+) (\S+) (.*)$"
THREADS_CASE = "threads"


def fuego_name(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def p999(histogram, cycles, top):
    """Conservative 99.9th percentile of an rtgate full-range histogram ([low, high, count])."""
    rank = max(1, -(-999 * cycles // 1000))
    seen = 0
    for _low, high, count in histogram:
        seen += count
        if seen >= rank:
            return min(top, high - 1 if high is not None else top)
    return top


def gate_lines():
    lines = plib.parse_log(LINE)
    if lines:
        return lines
    try:
        with open(os.path.join(os.environ["LOGDIR"], "rtgate.out")) as f:
            return re.findall(LINE, f.read(), re.MULTILINE)
    except (IOError, OSError):
        return []


test_set = fuego_name(os.environ.get("BENCHMARK_RTGATE_MEASUREMENT", "latency"))
measurements = {}
origin = {}  # Fuego name -> rtgate name: two rtgate names must not meet in one Fuego name
for gate, thread, status, value, _limit, bound, _samples, _units, _reason in gate_lines():
    case, t = fuego_name(gate), fuego_name(thread)
    for legal, original in ((case, gate), (case + "." + t, gate + " " + thread)):
        if origin.setdefault(legal, original) != original:
            print("rtgate parser: %r and %r both become %r in Fuego: rename one" % (origin[legal], original, legal))
            sys.exit(2)
    measures = measurements.setdefault(test_set + "." + case, [])
    if value != "-":
        measures.append({"name": t, "measure": float(value)})
    if bound != "-":
        measures.append({"name": t + "_bound", "measure": float(bound)})
    measures.append({"name": t + "_verdict", "measure": VERDICT.get(status, 3)})

if not measurements:
    print("rtgate parser: no RTGATE-GATE lines in the log or rtgate.out: the sampler did not run")
    sys.exit(1)

try:
    with open(os.path.join(os.environ["LOGDIR"], "rtgate.json")) as f:
        results = json.load(f)["rtgate"]
    scale = 1000.0 if results.get("unit") == "ns" else 1.0
    stats = []
    for th in results["threads"]:
        tid = "cpu%d" % th["cpu"] if th["cpu"] >= 0 else "t%d" % th["index"]
        if th["cycles"]:
            stats.append({"name": tid + "_max", "measure": th["max"] / scale})
            stats.append({"name": tid + "_p99_9", "measure": p999(th["histogram"], th["cycles"], th["max"]) / scale})
    if stats:
        measurements[test_set + "." + THREADS_CASE] = stats
except (IOError, OSError, KeyError, ValueError) as e:
    print("rtgate parser: no usable rtgate.json (%s): gate figures and verdicts only" % e)

sys.exit(plib.process(measurements))
