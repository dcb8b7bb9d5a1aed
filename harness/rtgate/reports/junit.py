"""JUnit XML as Jenkins and GitLab read it: one testsuite per measurement, one testcase per gate and thread."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from junitparser import Error, Failure, JUnitXml, Properties, Property, Skipped, SystemOut, TestCase, TestSuite

from rtgate.core.gates import Status, Verdict
from rtgate.errors import RtgateError
from rtgate.safe_io import atomic_open


def _prop_value(v: object) -> str:
    return "" if v is None else str(v)


def build_junit(platform: str, verdicts: list[Verdict], summary: str, allow_inconclusive: bool = False,
                durations: dict[str, float] | None = None) -> JUnitXml:
    xml = JUnitXml(name=f"rtgate {platform}")
    suites: dict[str, TestSuite] = {}
    for v in verdicts:
        suite = suites.get(v.measurement)
        if suite is None:
            suite = suites[v.measurement] = TestSuite(f"rtgate.{platform}.{v.measurement}")
            suite.add_property("platform", platform)
        case = TestCase(f"{v.gate}[{v.thread}]", f"rtgate.{platform}.{v.measurement}")
        props = Properties()
        figures = {"status": v.status.value, "kind": v.kind, "value": v.value, "value_text": v.value_text,
                   "limit": v.limit, "bound": v.bound, "samples": v.samples, "critical": v.critical}
        figures.update(v.properties)
        for name, value in figures.items():
            if value is not None and not isinstance(value, (list, dict)):
                props.add_property(Property(name, _prop_value(value)))
        case.append(props)
        if v.status == Status.FAIL:
            case.result = [Failure(v.reason, "latency")]
        elif v.status == Status.ERROR:
            case.result = [Error(v.reason, "measurement")]
        elif v.status == Status.INCONCLUSIVE:
            case.result = [Skipped(f"INCONCLUSIVE: {v.reason}")] if allow_inconclusive \
                else [Failure(f"INCONCLUSIVE: {v.reason}", "inconclusive")]
        case.system_out = v.reason
        suite.append(case)  # add_testcase recounts the suite each time: quadratic
    for name, suite in suites.items():
        if durations and name in durations:
            suite.time = durations[name]
        out = SystemOut(summary)
        suite.append(out)
        suite.update_statistics()
        xml.add_testsuite(suite)
    xml.update_statistics()
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
