# SPDX-License-Identifier: GPL-2.0-or-later
"""Test double of Fuego's parser library (fuego-core scripts/parser/common.py): parse_log() and
process(), modelled on Fuego's documentation (see ../../README.md), not on its code.

process(measurements) takes {"<test_set>.<test_case>": [{"name", "measure"}, ...]}, judges each
measure by criteria.json (or the board's <board>-<test>-criteria.json), gives units from
reference.json, and writes: LOGDIR/run.json (test_sets as lists), one line per measure appended
to FUEGO_RW/logs/<test>/flat_plot_data.txt, and FUEGO_RW/logs/<test>/flot_chart_data.json with
the measure_plot charts chart_config.json asks for. Returns 0 when the run passes, else 1.
"""

import json
import operator
import os
import re
import time

_OPS = {
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "eq": operator.eq,
    "ne": operator.ne,
}
_LEGAL = re.compile(r"[A-Za-z0-9_]+")
FLAT_COLUMNS = "test_name spec board kernel timestamp build_number tguid value ref_operator ref_value status"


def parse_log(regex_string):
    with open(os.path.join(os.environ["LOGDIR"], "testlog.txt")) as f:
        return re.findall(regex_string, f.read(), re.MULTILINE)


def split_tguid(tguid):
    """Fuego naming rules: the last part is the measure, the one before it the test case, the
    rest (which may hold periods) the test set."""
    parts = tguid.split(".")
    if len(parts) < 3:
        raise ValueError("%r is not test_set.test_case.measure" % tguid)
    return ".".join(parts[:-2]), parts[-2], parts[-1]


def _load(path, default):
    if not os.path.exists(path):
        return default
    with open(path) as f:
        return json.load(f)


def _criteria():
    board_file = os.path.join(
        os.environ["FUEGO_RW"], "boards", "%s-%s-criteria.json" % (os.environ["NODE_NAME"], os.environ["TESTDIR"])
    )
    path = board_file if os.path.exists(board_file) else os.path.join(os.environ["TEST_HOME"], "criteria.json")
    return {c["tguid"]: c for c in _load(path, {"criteria": []})["criteria"]}


def _units():
    ref = _load(os.path.join(os.environ["TEST_HOME"], "reference.json"), {"test_sets": []})
    return {
        "%s.%s.%s" % (s["name"], c["name"], m["name"]): m.get("unit")
        for s in ref["test_sets"]
        for c in s["test_cases"]
        for m in c["measurements"]
    }


def _status(children, criterion):
    """PASS unless more children FAIL than max_fail allows (default 0) or one of must_pass_list does not pass."""
    criterion = criterion or {}
    if any(children.get(name) != "PASS" for name in criterion.get("must_pass_list", [])):
        return "FAIL"
    failed = [n for n, s in children.items() if s == "FAIL" and n not in criterion.get("fail_ok_list", [])]
    return "FAIL" if len(failed) > criterion.get("max_fail", 0) else "PASS"


def _check_name(kind, name):
    if not _LEGAL.fullmatch(name):
        raise ValueError("Fuego %s name %r: letters, digits and '_' only" % (kind, name))


def process(measurements):
    criteria, units = _criteria(), _units()
    sets = []
    for key, measures in measurements.items():
        test_set, test_case, _ = split_tguid(key + ".x")
        _check_name("test case", test_case)
        tset = next((s for s in sets if s["name"] == test_set), None)
        if tset is None:
            tset = {"name": test_set, "test_cases": []}
            sets.append(tset)
        results = []
        for m in measures:
            _check_name("measure", m["name"])
            tguid = "%s.%s" % (key, m["name"])
            ref = criteria.get(tguid, {}).get("reference")
            ok = ref is None or _OPS[ref["operator"]](float(m["measure"]), float(ref["value"]))
            entry = {"name": m["name"], "measure": m["measure"], "status": "PASS" if ok else "FAIL"}
            if units.get(tguid):
                entry["unit"] = units[tguid]
            if ref is not None:
                entry["ref_value"], entry["ref_operator"] = ref["value"], ref["operator"]
            results.append(entry)
        status = _status({r["name"]: r["status"] for r in results}, criteria.get(key))
        tset["test_cases"].append({"name": test_case, "status": status, "measurements": results})
    for tset in sets:
        tset["status"] = _status({c["name"]: c["status"] for c in tset["test_cases"]}, criteria.get(tset["name"]))
    status = "PASS" if sets and all(s["status"] == "PASS" for s in sets) else "FAIL"
    start = float(os.environ.get("FUEGO_START_TIME", "0") or 0) / 1000.0
    run = {
        "schema_version": "1.0",
        "name": os.environ["TESTDIR"],
        "metadata": {
            "board": os.environ["NODE_NAME"],
            "test_name": os.environ["TESTDIR"],
            "test_spec": os.environ.get("TESTSPEC", "default"),
            "build_number": os.environ.get("BUILD_NUMBER", "1"),
            "job_name": os.environ.get("JOB_NAME", ""),
            "kernel_version": os.environ.get("FWVER", ""),
            "start_time": int(start * 1000),
        },
        "duration_ms": int((time.time() - start) * 1000) if start else 0,
        "status": status,
        "test_sets": sets,
    }
    with open(os.path.join(os.environ["LOGDIR"], "run.json"), "w") as f:
        json.dump(run, f, indent=2)
    _charts(run)
    print("Fuego result: %s" % status)
    return 0 if status == "PASS" else 1


def _charts(run):
    """Append this run to flat_plot_data.txt and rebuild the measure_plot charts from all runs."""
    md = run["metadata"]
    logs = os.path.join(os.environ["FUEGO_RW"], "logs", run["name"])
    if not os.path.isdir(logs):
        os.makedirs(logs)
    flat = os.path.join(logs, "flat_plot_data.txt")
    stamp = time.strftime("%Y-%m-%d_%H:%M:%S", time.localtime(md["start_time"] / 1000.0))
    new = not os.path.exists(flat)
    with open(flat, "a") as f:
        if new:
            f.write("# " + FLAT_COLUMNS + "\n")
        for s in run["test_sets"]:
            for c in s["test_cases"]:
                for m in c["measurements"]:
                    f.write(
                        " ".join(
                            str(x)
                            for x in (
                                run["name"],
                                md["test_spec"],
                                md["board"],
                                md["kernel_version"] or "-",
                                stamp,
                                md["build_number"],
                                "%s.%s.%s" % (s["name"], c["name"], m["name"]),
                                m["measure"],
                                m.get("ref_operator", "-"),
                                m.get("ref_value", "-"),
                                m["status"],
                            )
                        )
                        + "\n"
                    )
    rows = []
    with open(flat) as f:
        for line in f:
            if not line.startswith("#"):
                rows.append(dict(zip(FLAT_COLUMNS.split(), line.split())))
    config = _load(os.path.join(os.environ["TEST_HOME"], "chart_config.json"), {"chart_type": "measure_plot"})
    charts = []
    for tguid in config.get("measures", []):
        mine = [r for r in rows if r["tguid"] == tguid]
        label = "%s-%s-%s-%s-%s" % (md["board"], md["test_spec"], run["name"], md["kernel_version"] or "-", tguid)
        data = [
            {"label": label, "data": [[r["build_number"], r["value"]] for r in mine], "points": {"symbol": "circle"}}
        ]
        refs = [[r["build_number"], r["ref_value"]] for r in mine if r["ref_value"] != "-"]
        if refs:
            data.append({"label": label + "-ref", "data": refs, "points": {"symbol": "cross"}})
        set_name = split_tguid(tguid)[0]
        charts.append(
            {
                "title": "%s-%s" % (run["name"], set_name),
                "chart": {"chart_type": config.get("chart_type", "measure_plot"), "data": data},
            }
        )
    with open(os.path.join(logs, "flot_chart_data.json"), "w") as f:
        json.dump({"chart_config": config, "charts": charts}, f, indent=2)
