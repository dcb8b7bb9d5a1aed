# SPDX-License-Identifier: GPL-2.0-or-later
"""JUnit XML as Jenkins and GitLab read it: one testsuite per measurement, one testcase per gate and thread.

The file validates against the schema Jenkins' xunit plugin checks every input with (junit-10.xsd): that plugin
drops a file that does not validate, so nothing may stand where the schema has no place for it. Each reader finds
the figures where it looks:

- Jenkins (JUnit and xunit plugins): testsuite ``<properties>``, named ``<testcase name>::<figure>``; the schema
  has no properties inside a testcase.
- GitLab (reads name, classname, file, time, failure/error/skipped and system-out only): the reason in the
  ``message`` of ``<failure>``/``<error>``/``<skipped>``, and one ``figures:`` line in each testcase's
  ``<system-out>``.

Times are real: a testsuite's time is its measurement's duration, shared evenly by its testcases (the gates of a
measurement judge the same samples), so both a suite's time and the sum of its cases' times give the duration.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from junitparser import Error, Failure, JUnitXml, Skipped, SystemOut, TestCase, TestSuite
from junitparser.junitparser import FinalResult

from rtgate.core.gates import Status, Verdict
from rtgate.errors import RtgateError
from rtgate.reports.described import Described, junit_properties
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
    out.update(v.properties)
    return {k: val for k, val in out.items() if val is not None and not isinstance(val, (list, dict))}


def _figures_line(v: Verdict) -> str:
    return "figures: " + " ".join(f"{k}={_text(val)}" for k, val in figures(v).items())


def _result(v: Verdict, allow_inconclusive: bool) -> list[FinalResult]:
    message = v.reason or f"{v.gate} on {v.thread}: {v.status.value}"  # never an empty message
    if v.status == Status.FAIL:
        return [Failure(message, "latency")]
    if v.status == Status.ERROR:
        return [Error(message, "measurement")]
    if v.status == Status.INCONCLUSIVE:
        text = f"INCONCLUSIVE: {message}"
        return [Skipped(text)] if allow_inconclusive else [Failure(text, "inconclusive")]
    return []


def build_junit(
    platform: str,
    verdicts: list[Verdict],
    summary: str,
    allow_inconclusive: bool = False,
    durations: dict[str, float] | None = None,
    described: dict[str, Described] | None = None,
) -> JUnitXml:
    """`described`: each measurement's conditions, as its testsuite's environment:: and preflight:: properties."""
    xml = JUnitXml(name=f"rtgate {platform}")
    by_measurement: dict[str, list[Verdict]] = {}
    for v in verdicts:
        by_measurement.setdefault(v.measurement, []).append(v)
    total_time = 0.0
    for measurement, group in by_measurement.items():
        classname = f"rtgate.{platform}.{measurement}"
        suite = TestSuite(classname)
        suite.add_property("platform", platform)
        if described is not None and measurement in described:
            for prop, text in junit_properties(described[measurement]):
                suite.add_property(prop, text)
        duration = float((durations or {}).get(measurement) or 0.0)
        share = duration / len(group)
        for v in group:
            case = TestCase(f"{v.gate}[{v.thread}]", classname, share)
            for name, value in figures(v).items():
                suite.add_property(f"{case.name}::{name}", _text(value))
            case.result = _result(v, allow_inconclusive)
            case.system_out = f"{v.reason}\n{_figures_line(v)}\n" if v.reason else f"{_figures_line(v)}\n"
            suite.append(case)  # add_testcase recounts the suite each time: quadratic
        suite.append(SystemOut(summary))
        suite.update_statistics()
        suite.time = duration  # after update_statistics, which would reset it
        total_time += duration
        xml.add_testsuite(suite)
    xml.update_statistics()
    xml.time = total_time
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
