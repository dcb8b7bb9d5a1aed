# SPDX-License-Identifier: GPL-2.0-or-later
"""The verdict matrix: fixtures that cover every status, and readers that take the status of every
gate and thread back out of each place a verdict is shown.

Used by tests/test_verdict_matrix.py (in-process: check's text, its JSON and JUnit, the HTML report,
the KCIDB and SQUAD exports) and tests/test_verdict_matrix_live.py (processes: the pytest plugin with
and without xdist, and a live run). Each reader returns {(measurement, gate, thread): statuses}, the
set of rtgate statuses the shown verdict can stand for: one status where the format says which, more
where a consumer's format has fewer (KCIDB has no INCONCLUSIVE). The matrix asserts that the status
`rtgate check` gives is always in that set, and that PASS and FAIL are never shown for anything else.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from junitparser import Error, Failure, JUnitXml, Skipped

ROOT = Path(__file__).resolve().parent.parent
SAMPLER_RUN = ROOT / "tests" / "fixtures" / "rtgate-sampler" / "rs-t2-h200"  # .json and .hist of one run

STATUSES = ("PASS", "FAIL", "INCONCLUSIVE", "ERROR")
Key = tuple[str, str, str]  # measurement, gate, thread
Shown = dict[Key, frozenset[str]]

# rs-t2-h200 was measured with -t 2 -p 80 -i 500 -l 400: thread 0 max 2746 us, 5 missed, 1 overflow
# of the 200 us histogram; thread 1 max 139 us, none missed.
GATES = """\
    gates:
      - {name: max-big, kind: max, limit_us: 1000000}
      - {name: max-1ms, kind: max, limit_us: 1000}
      - {name: p99-300, kind: percentile, percentile: 99, limit_us: 300}
      - {name: missed-0, kind: missed, max_count: 0}
      - {name: over-1ms, kind: miss_rate, above_us: 1000, rate: "0.1%"}
      - {name: avg-100, kind: avg, limit_us: 100}
"""
AS_MEASURED = "{interval_us: 500, loops: 400, priority: 80, threads: [{name: all, count: 2}]}"


def thresholds(sampler: str = AS_MEASURED) -> str:
    return f"platform: matrix\nmeasurements:\n  m:\n    sampler: {sampler}\n{GATES}"


@dataclass
class Case:
    name: str
    results: str  # file name in the case's folder
    sampler: str = AS_MEASURED
    accept: str = ""
    # what the case is there for: each (status, words of its reason) must occur in `rtgate check`'s verdicts
    covers: list[tuple[str, str]] = field(default_factory=list)

    def make(self, folder: Path) -> tuple[Path, Path]:
        """The threshold file and results of the case, in `folder`."""
        folder.mkdir(parents=True, exist_ok=True)
        spec = folder / "m.yaml"
        spec.write_text(thresholds(self.sampler))
        src = SAMPLER_RUN.with_suffix(".hist" if self.results.endswith(".hist") else ".json")
        text = src.read_text()
        if self.name == "stopped":  # the same data, as a run a signal stopped
            doc = json.loads(text)
            doc["rtgate"]["stop_reason"] = "signal"
            doc["rtgate"]["signal"] = "SIGTERM"
            text = json.dumps(doc)
        (folder / self.results).write_text(text)
        return spec, folder / self.results

    def accept_args(self, option: str = "--accept-setup") -> list[str]:
        return [option, self.accept] if self.accept else []


CASES = [
    Case(
        "measured",
        "results.json",
        covers=[
            ("PASS", "max 139 us"),
            ("FAIL", "max 2746 us > 1000 us"),
            ("FAIL", "5 missed periods"),
            ("INCONCLUSIVE", "the bounds straddle"),
        ],
    ),
    # The text's max (2746 us at -i 500) shows skipped periods the text does not count: bounded, never 0.
    Case(
        "overflow-text",
        "results.hist",
        covers=[("INCONCLUSIVE", "p99 is a missed period"), ("FAIL", "5 missed periods > 0")],
    ),
    Case("stopped", "results.json", covers=[("INCONCLUSIVE", "stopped early")]),
    Case(
        "shorter",
        "results.json",
        sampler=AS_MEASURED.replace("loops: 400", "duration: 10m"),
        covers=[("INCONCLUSIVE", "shorter than asked")],
    ),
    Case(
        "setup-differs",
        "results.json",
        sampler=AS_MEASURED.replace("500", "1000"),
        covers=[("ERROR", "measured differently from what the thresholds ask")],
    ),
    Case(
        "setup-accepted",
        "results.json",
        sampler=AS_MEASURED.replace("500", "1000"),
        accept="interval,duration",
        covers=[("PASS", "max 139 us"), ("FAIL", "max 2746 us")],
    ),
]


def one(status: str) -> frozenset[str]:
    if status not in STATUSES:
        raise AssertionError(f"not an rtgate status: {status!r}")
    return frozenset([status])


# ---------------------------------------------------------------- readers


def from_text(stdout: str) -> Shown:
    """The summary table of run, check and lava results: STATUS MEASUREMENT GATE THREAD ..."""
    out: Shown = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0] in STATUSES:
            out[(parts[1], parts[2], parts[3])] = one(parts[0])
    return out


def from_json(path: Path) -> Shown:
    return {
        (v["measurement"], v["gate"], v["thread"]): one(v["status"]) for v in json.loads(path.read_text())["verdicts"]
    }


def from_junit(path: Path, measurement: str | None = None) -> Shown:
    """rtgate's JUnit: classname rtgate.<platform>.<measurement>, name <gate>[<thread>]; a skip is an
    allowed INCONCLUSIVE, a failure FAIL or INCONCLUSIVE (the message says), an error ERROR."""
    out: Shown = {}
    for suite in JUnitXml.fromfile(str(path)):
        for case in suite:
            gate, thread = re.fullmatch(r"(.*)\[([^\]]*)\]", case.name).groups()  # type: ignore[union-attr]
            name = measurement or case.classname.rsplit(".", 1)[-1]
            results = case.result
            if not results:
                status = frozenset(["PASS"])
            elif isinstance(results[0], Error):
                status = one("ERROR")
            elif isinstance(results[0], Skipped):
                status = one("INCONCLUSIVE")
            elif isinstance(results[0], Failure):
                inconclusive = (results[0].message or "").startswith("INCONCLUSIVE") or results[
                    0
                ].type == "inconclusive"
                status = one("INCONCLUSIVE") if inconclusive else one("FAIL")
            else:
                raise AssertionError(f"unknown JUnit result {results[0]!r}")
            out[(name, gate, thread)] = status
    return out


ROW = re.compile(r'<tr class="(\w+)"><td>\w+</td><td>([^<]*)</td><td>([^<]*)</td>\s*<td>([^<]*)</td>', re.MULTILINE)


def from_html(path: Path) -> Shown:
    return {(m, g, t): one(s) for s, m, g, t in ROW.findall(path.read_text())}


def from_kcidb(doc: dict[str, Any], gates: list[str]) -> Shown:
    """KCIDB tests <...>.rtgate.<measurement>.<gate>.<thread>: no INCONCLUSIVE in KCIDB's statuses, so
    ERROR, SKIP and MISS may each stand for it (PASS and FAIL only for themselves)."""
    out: Shown = {}
    for t in doc["tests"]:
        parts = t["path"].split(".")
        for i in range(len(parts) - 2):
            if parts[i + 1] in gates:
                key = (parts[i], parts[i + 1], ".".join(parts[i + 2 :]))
                status = t["status"]
                out[key] = one(status) if status in ("PASS", "FAIL") else frozenset(["ERROR", "INCONCLUSIVE"])
                break
    return out


def from_squad(tests: dict[str, Any], gates: list[str]) -> Shown:
    """SQUAD tests <...>/<measurement>/<gate>-<thread>: pass, fail or skip; the log names INCONCLUSIVE
    and ERROR where SQUAD's result cannot."""
    out: Shown = {}
    for name, t in tests.items():
        measurement, last = name.split("/")[-2:]
        gate = next((g for g in sorted(gates, key=len, reverse=True) if last.startswith(g + "-")), None)
        if gate is None:
            continue
        result, log = t["result"], t.get("log") or ""
        if result == "pass":
            status = one("PASS")
        elif result == "skip" or log.startswith("INCONCLUSIVE"):
            status = one("INCONCLUSIVE")
        elif log.startswith("ERROR"):
            status = one("ERROR")
        else:
            status = frozenset(["FAIL", "ERROR"])
        out[(measurement, gate, last[len(gate) + 1 :])] = status
    return out


def gate_names() -> list[str]:
    return re.findall(r"name: ([\w.-]+), kind", GATES)


def disagreements(truth: dict[Key, str], shown: Shown) -> list[str]:
    """Every gate and thread whose shown verdict cannot be the true one, or that is missing or extra."""
    out = []
    for key in sorted(set(truth) | set(shown)):
        if key not in shown:
            out.append(f"{key}: {truth[key]} not shown")
        elif key not in truth:
            out.append(f"{key}: shown {sorted(shown[key])} but not a verdict")
        elif truth[key] not in shown[key]:
            out.append(f"{key}: {truth[key]} shown as {sorted(shown[key])}")
    return out
