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
board: nothing else on the board's console can pass for a verdict.

rtgate.environment.json is rtgate.sh's record of the board. When it says the measurement did not
run as the threshold file asks (a requirement not met, a load that could not run or did not hold
its level, a named parameter that contradicts the file), every gate's verdict is 3 (error): the
gates reference.json declares for this test set, when nothing was measured.
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


def board_problems():
    """Why the board did not measure as asked (rtgate.sh's record), or []."""
    try:
        with open(os.path.join(os.environ["LOGDIR"], "rtgate.environment.json")) as f:
            env = json.load(f)
    except (IOError, OSError, ValueError):
        return []
    problems = [c.get("what", "") for c in env.get("preflight") or [] if isinstance(c, dict)]
    load = env.get("load") or {}
    if isinstance(load, dict) and load.get("problem"):
        problems.append(load["problem"])
    return [str(p) for p in problems if p]


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


test_set = fuego_name(os.environ.get("BENCHMARK_RTGATE_MEASUREMENT", "latency"))
problems = board_problems()
if problems:
    print("rtgate parser: every gate is an error: " + "; ".join(problems))
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
    measures.append({"name": t + "_verdict", "measure": 3 if problems else VERDICT.get(status, 3)})

if problems and not measurements:  # nothing measured: each declared gate an error
    for case, names in declared_verdicts(test_set).items():
        measurements[test_set + "." + case] = [{"name": n, "measure": 3} for n in names]
    if not measurements:
        print("rtgate parser: reference.json declares no gates for %s: run rtgate fuego criteria" % test_set)
        sys.exit(1)

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
