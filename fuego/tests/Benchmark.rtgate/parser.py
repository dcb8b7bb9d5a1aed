#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Fuego parser for Benchmark.rtgate.

Test set = the measurement, test case = the gate, and per thread the measures <thread> (the
gate's figure), <thread>_bound (rate gates: the confidence bound) and <thread>_verdict (the
gate's own verdict: 0 pass, 1 inconclusive, 2 fail, 3 error); test case "threads" has each
thread's <cpuN>_max and <cpuN>_p99_9 from the results JSON. Names are made Fuego-legal as
`rtgate fuego criteria` makes them: every character outside [A-Za-z0-9_] becomes '_'.

The gate lines come only from rtgate.out, the sampler's stdout that test_run (or test_cleanup,
after stopping the job: the sampler then reports what it measured, INCONCLUSIVE) fetched from the
board: nothing else on the board's console can pass for a verdict. The sampler judges everything a
measurement does on the board: a run it could not make (a requirement not met, a load that could
not run, a parameter that contradicts the file, a stop in the warm-up) has one line per gate for
thread "all", which becomes that verdict for each thread reference.json declares for the gate; a run
measured but invalid (a load below its level, a competing real-time task) has its ERROR per thread.
"""

import json
import os
import re
import sys

sys.path.insert(0, os.environ["FUEGO_CORE"] + "/scripts/parser")
import common as plib

VERDICT = {"PASS": 0, "INCONCLUSIVE": 1, "FAIL": 2, "ERROR": 3}
# The sampler's gate line, in its expected form only: a number is a number, a status one of four.
NUMBER = r"(-|[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)"
LINE = (
    r"^RTGATE-GATE ([A-Za-z0-9_.+-]+) ([A-Za-z0-9_.+-]+) (PASS|FAIL|INCONCLUSIVE|ERROR) "
    + NUMBER
    + r" (\S+) "
    + NUMBER
    + r" (\S+) ([A-Za-z%]+) (.*)$"
)
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
    try:
        with open(os.path.join(os.environ["LOGDIR"], "rtgate.out")) as f:
            return re.findall(LINE, f.read(), re.MULTILINE)
    except (IOError, OSError):
        return []


def declared_verdicts(test_set):
    """Every <thread>_verdict measure reference.json declares for this test set, by test case."""
    try:
        with open(os.path.join(os.environ["TEST_HOME"], "reference.json")) as f:
            sets = json.load(f)["test_sets"]
    except (IOError, OSError, ValueError, KeyError):
        return {}
    out = {}
    for s in sets:
        if s.get("name") != test_set:
            continue
        for c in s.get("test_cases", []):
            names = [m["name"] for m in c.get("measurements", []) if m.get("name", "").endswith("_verdict")]
            if names:
                out[c["name"]] = names
    return out


measurement = os.environ.get("BENCHMARK_RTGATE_MEASUREMENT", "latency")
test_set = fuego_name(measurement)
measurements = {}
unmeasured = {}  # test case -> the verdict of every declared thread (a run not made)
origin = {}  # Fuego name -> rtgate name: two rtgate names must not meet in one Fuego name
for gate, thread, status, value, _limit, bound, _samples, _units, reason in gate_lines():
    case, t = fuego_name(gate), fuego_name(thread)
    if thread == "all":
        print("rtgate parser: %s: %s" % (gate, reason))
        unmeasured[case] = VERDICT.get(status, 3)
        continue
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

if unmeasured:  # nothing measured: each declared gate that verdict
    for case, names in declared_verdicts(test_set).items():
        measurements[test_set + "." + case] = [{"name": n, "measure": unmeasured.get(case, 3)} for n in names]
    if not measurements:
        print("rtgate parser: reference.json declares no gates for %s: run rtgate fuego criteria" % test_set)
        sys.exit(1)

if not measurements:
    print("rtgate parser: no RTGATE-GATE lines in the log or rtgate.out: the sampler did not run")
    sys.exit(1)

try:
    with open(os.path.join(os.environ["LOGDIR"], measurement + ".json")) as f:
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
    print("rtgate parser: no usable %s.json (%s): gate figures and verdicts only" % (measurement, e))

sys.exit(plib.process(measurements))
