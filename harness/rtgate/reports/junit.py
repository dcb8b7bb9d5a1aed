# SPDX-License-Identifier: GPL-2.0-or-later
"""JUnit XML as Jenkins and GitLab read it: one testsuite per measurement, one testcase per gate and thread.

The file validates against the schema Jenkins' xunit plugin checks every input with (junit-10.xsd): that plugin
drops a file that does not validate, so nothing may stand where the schema has no place for it. Each reader finds
the figures where it looks:

- Jenkins (JUnit and xunit plugins): testsuite ``<properties>``, named ``<testcase name>::<figure>``; the schema
  has no properties inside a testcase.
- GitLab (reads name, classname, file, time, failure/error/skipped and system-out only): GitLab shows the
  *text* of ``<failure>``/``<error>``/``<skipped>`` (an element with attributes and no text reaches its page as a
  hash dump), so the reason and the figures are that text; the ``message`` attribute is a one-line summary
  (Jenkins' "Error Message", the text its "Stacktrace"). Each testcase's ``<system-out>`` has the figures too.

Times are real and in milliseconds (the schema allows three decimals): a testsuite's time is its measurement's
duration, shared by its testcases in whole milliseconds (the gates of a measurement judge the same samples), so a
suite's time and the sum of its cases' times are the same duration.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping

from junitparser import Error, Failure, JUnitXml, Skipped, SystemOut, TestCase, TestSuite
from junitparser.junitparser import FinalResult

from rtgate.core.gates import Status, Verdict
from rtgate.errors import RtgateError
from rtgate.reports.described import Described, junit_properties
from rtgate.reports.verdicts_json import value_range
from rtgate.safe_io import atomic_open


def _text(v: object) -> str:
    return "" if v is None else str(v)


def figures(v: Verdict) -> dict[str, object]:
    """A verdict's figures, flat and printable: what Jenkins keeps as properties and GitLab sees in system-out."""
    out: dict[str, object] = {
        "status": v.status.value,
        "kind": v.kind,
        "value": v.value,
        "value_text": v.value_text,
        "limit": v.limit,
        "limit_text": v.limit_text() or None,  # "80 us" beside value_text "183 us"
        "unit": v.unit or None,
        "bound": v.bound,
        "samples": v.samples,
        "critical": v.critical,
    }
    span = value_range(v)
    if span is not None:  # a range stays a range: its two ends, no point value to misread
        del out["value"]
        out["value_low"], out["value_high"] = span
    out.update(v.properties)
    return {k: val for k, val in out.items() if val is not None and not isinstance(val, (list, dict))}


def _figures_line(v: Verdict) -> str:
    return "figures: " + " ".join(f"{k}={_text(val)}" for k, val in figures(v).items())


def _figures_text(v: Verdict) -> str:
    return "".join(f"{k}: {_text(val)}\n" for k, val in figures(v).items() if val != "")


def _result(v: Verdict, allow_inconclusive: bool) -> list[FinalResult]:
    reason = v.reason or f"{v.gate} on {v.thread}: {v.status.value}"  # never empty
    if v.status == Status.INCONCLUSIVE:
        reason = f"INCONCLUSIVE: {reason}"
    summary = " ".join(reason.split())
    if len(summary) > 200:
        summary = summary[:199] + "\u2026"
    # The `type` values are none of the names (integer, boolean, yaml...) Rails' XML reader would convert.
    if v.status == Status.FAIL:
        result: FinalResult = Failure(summary, "latency")
    elif v.status == Status.ERROR:
        result = Error(summary, "measurement")
    elif v.status == Status.INCONCLUSIVE:
        result = Skipped(summary) if allow_inconclusive else Failure(summary, "inconclusive")
    else:
        return []
    result.text = f"{reason}\n{_figures_text(v)}"
    return [result]


UNKNOWN_DURATION = "unknown: what the results carry does not say how long the measurement ran (time 0)"


def _seconds(t: float) -> str:
    """A time as the xunit schema takes it: at most three decimals."""
    return f"{t:.3f}"


def build_junit(
    platform: str,
    verdicts: list[Verdict],
    summary: str,
    allow_inconclusive: bool = False,
    durations: Mapping[str, float | None] | None = None,
    described: dict[str, Described] | None = None,
) -> JUnitXml:
    """`durations`: how long each measurement measured, in seconds; None where what the results carry does
    not say (its time is then 0 and a `duration` property says it is unknown); a measurement not in it was
    not measured (time 0). `described`: each measurement's conditions, as its testsuite's environment:: and
    preflight:: properties."""
    xml = JUnitXml(name=f"rtgate {platform}")
    by_measurement: dict[str, list[Verdict]] = {}
    for v in verdicts:
        by_measurement.setdefault(v.measurement, []).append(v)
    for measurement, group in by_measurement.items():
        classname = f"rtgate.{platform}.{measurement}"
        suite = TestSuite(classname)
        suite.add_property("platform", platform)
        if described is not None and measurement in described:
            for prop, text in junit_properties(described[measurement]):
                suite.add_property(prop, text)
        known = (durations or {}).get(measurement)
        if durations is not None and measurement in durations and known is None:
            suite.add_property("duration", UNKNOWN_DURATION)
        duration = float(known or 0.0)
        millis, extra = divmod(round(duration * 1000), len(group))
        for index, v in enumerate(group):
            case = TestCase(f"{v.gate}[{v.thread}]", classname)
            case._elem.set("time", _seconds((millis + (index < extra)) / 1000))
            for name, value in figures(v).items():
                suite.add_property(f"{case.name}::{name}", _text(value))
            case.result = _result(v, allow_inconclusive)
            case.system_out = f"{v.reason}\n{_figures_line(v)}\n" if v.reason else f"{_figures_line(v)}\n"
            suite.append(case)  # add_testcase recounts the suite each time: quadratic
        suite.append(SystemOut(summary))
        suite.update_statistics()
        xml.add_testsuite(suite)
    xml.update_statistics()
    # after update_statistics, which rewrites them with more decimals than the schema allows
    millis = 0
    for suite in xml:
        suite_millis = sum(round(float(c._elem.get("time", 0)) * 1000) for c in suite)
        suite._elem.set("time", _seconds(suite_millis / 1000))
        millis += suite_millis
    xml._elem.set("time", _seconds(millis / 1000))
    # The xunit schema allows no `skipped` on <testsuites> (it does on <testsuite>).
    xml._elem.attrib.pop("skipped", None)
    return xml


def write_junit(path: str, xml: JUnitXml) -> None:
    # Indent the tree in place: junitparser's pretty printer goes through minidom, slowly.
    elem = getattr(xml, "_elem", None)
    if isinstance(elem, ET.Element):
        ET.indent(elem)
    try:
        with atomic_open(path, binary=True) as f:
            xml.write(f)
    except OSError as e:
        raise RtgateError(f"cannot write: {e.strerror}", path=str(path)) from None
