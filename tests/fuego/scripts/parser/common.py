"""Test double of Fuego's parser library (scripts/parser/common.py): parse_log and process."""

import json
import operator
import os
import re

_OPS = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
        "eq": operator.eq, "ne": operator.ne}


def parse_log(regex_string):
    with open(os.path.join(os.environ["LOGDIR"], "testlog.txt")) as f:
        return re.findall(regex_string, f.read(), re.MULTILINE)


def _criteria():
    board_file = os.path.join(os.environ["FUEGO_RW"], "boards",
                              "%s-%s-criteria.json" % (os.environ["NODE_NAME"], os.environ["TESTDIR"]))
    path = board_file if os.path.exists(board_file) else os.path.join(os.environ["TEST_HOME"], "criteria.json")
    with open(path) as f:
        return {c["tguid"]: c for c in json.load(f)["criteria"]}


def _status(children, criterion):
    failed = [name for name, status in children.items() if status == "FAIL"]
    must = (criterion or {}).get("must_pass_list", [])
    if any(children.get(name) != "PASS" for name in must):
        return "FAIL"
    return "FAIL" if len(failed) > (criterion or {}).get("max_fail", 0) else "PASS"


def process(measurements):
    criteria = _criteria()
    results = {"test_sets": {}}
    sets = {}
    for key, measures in measurements.items():
        test_set, test_case = key.split(".", 1)
        statuses = {}
        for m in measures:
            tguid = "%s.%s" % (key, m["name"])
            ref = criteria.get(tguid, {}).get("reference")
            ok = ref is None or _OPS[ref["operator"]](float(m["measure"]), float(ref["value"]))
            statuses[m["name"]] = "PASS" if ok else "FAIL"
            results["test_sets"].setdefault(test_set, {}).setdefault(test_case, {})[m["name"]] = {
                "measure": m["measure"], "status": statuses[m["name"]]}
        sets.setdefault(test_set, {})[test_case] = _status(statuses, criteria.get(key))
    overall = {s: _status(cases, criteria.get(s)) for s, cases in sets.items()}
    results["status"] = "PASS" if all(v == "PASS" for v in overall.values()) else "FAIL"
    with open(os.path.join(os.environ["LOGDIR"], "run.json"), "w") as f:
        json.dump(results, f, indent=2)
    print("Fuego result: %s" % results["status"])
    return 0 if results["status"] == "PASS" else 1
