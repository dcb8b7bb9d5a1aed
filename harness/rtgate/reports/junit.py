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

The file is written as a stream, a testcase at a time, never as one tree: a 24 h x 64-thread check has 320
testcases and 8,400 properties (885 KB of XML), whose tree cost more memory than the check itself. ElementTree
serialises each piece (escaping included), laid out as ``ET.indent`` lays out the whole document: the bytes are
those of the tree written at once (tests/unit/test_junit_unit.py compares them).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

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


def _figures_line(figs: Mapping[str, object]) -> str:
    return "figures: " + " ".join(f"{k}={_text(val)}" for k, val in figs.items())


def _figures_text(figs: Mapping[str, object]) -> str:
    return "".join(f"{k}: {_text(val)}\n" for k, val in figs.items() if val != "")


def _outcome(v: Verdict, allow_inconclusive: bool) -> tuple[str, str | None] | None:
    """The element a verdict's testcase holds beside its output, and its `type`; None for a pass.
    The `type` values are none of the names (integer, boolean, yaml...) Rails' XML reader would convert."""
    if v.status == Status.FAIL:
        return "failure", "latency"
    if v.status == Status.ERROR:
        return "error", "measurement"
    if v.status == Status.INCONCLUSIVE:
        return ("skipped", None) if allow_inconclusive else ("failure", "inconclusive")
    return None


UNKNOWN_DURATION = "unknown: what the results carry does not say how long the measurement ran (time 0)"


def _seconds(t: float) -> str:
    """A time as the xunit schema takes it: at most three decimals."""
    return f"{t:.3f}"


@dataclass
class _Suite:
    """One measurement's testsuite: its own properties, its verdicts, and what its attributes say."""

    name: str
    properties: list[tuple[str, str | None]]
    verdicts: list[Verdict]
    times: list[str]  # each testcase's time, whole milliseconds shared out
    counts: dict[str, int] = field(default_factory=lambda: {"failure": 0, "error": 0, "skipped": 0})

    @property
    def millis(self) -> int:
        return sum(round(float(t) * 1000) for t in self.times)


@dataclass
class JUnitReport:
    """What write_junit writes: every figure and count, the XML not yet made."""

    name: str
    suites: list[_Suite]
    summary: str
    allow_inconclusive: bool


def build_junit(
    platform: str,
    verdicts: list[Verdict],
    summary: str,
    allow_inconclusive: bool = False,
    durations: Mapping[str, float | None] | None = None,
    described: dict[str, Described] | None = None,
) -> JUnitReport:
    """`durations`: how long each measurement measured, in seconds; None where what the results carry does
    not say (its time is then 0 and a `duration` property says it is unknown); a measurement not in it was
    not measured (time 0). `described`: each measurement's conditions, as its testsuite's environment:: and
    preflight:: properties."""
    by_measurement: dict[str, list[Verdict]] = {}
    for v in verdicts:
        by_measurement.setdefault(v.measurement, []).append(v)
    suites = []
    for measurement, group in by_measurement.items():
        props: list[tuple[str, str | None]] = [("platform", platform)]
        if described is not None and measurement in described:  # text, as every attribute (None: none)
            props += [(k, None if v is None else str(v)) for k, v in junit_properties(described[measurement])]
        known = (durations or {}).get(measurement)
        if durations is not None and measurement in durations and known is None:
            props.append(("duration", UNKNOWN_DURATION))
        millis, extra = divmod(round(float(known or 0.0) * 1000), len(group))
        times = [_seconds((millis + (index < extra)) / 1000) for index in range(len(group))]
        suite = _Suite(f"rtgate.{platform}.{measurement}", props, group, times)
        for v in group:
            outcome = _outcome(v, allow_inconclusive)
            if outcome is not None:
                suite.counts[outcome[0]] += 1
        suites.append(suite)
    return JUnitReport(f"rtgate {platform}", suites, summary, allow_inconclusive)


def _attrib(**values: object) -> dict[str, str]:
    """Attributes as the report states them: text, and absent where there is no value."""
    return {k: str(val) for k, val in values.items() if val is not None}


def _start(elem: ET.Element, declaration: bool = False) -> str:
    """`elem`'s start tag and text, as ElementTree writes them (its children and end tag follow)."""
    whole = ET.tostring(elem, encoding="unicode", xml_declaration=declaration, short_empty_elements=False)
    return whole.removesuffix(f"</{elem.tag}>")


def _indent(level: int) -> str:
    """What ET.indent puts before an element at `level` (the root at 0)."""
    return "\n" + "  " * level


def _properties(pairs: Sequence[tuple[str, str | None]], last: bool) -> str:
    """Properties at level 3 in one ElementTree call (a holder's tags cut off); after the last, the dedent."""
    holder = ET.Element("_")
    tail = _indent(3)
    for name, value in pairs:
        attrib = {"name": name, "value": value} if value is not None else {"name": name}
        ET.SubElement(holder, "property", attrib).tail = tail
    if last:
        holder[-1].tail = _indent(2)
    return ET.tostring(holder, encoding="unicode")[len("<_>") : -len("</_>")]


def _testcase(v: Verdict, classname: str, time: str, allow_inconclusive: bool) -> ET.Element:
    figs = figures(v)
    case = ET.Element("testcase", _attrib(name=f"{v.gate}[{v.thread}]", classname=classname, time=time))
    outcome = _outcome(v, allow_inconclusive)
    if outcome is not None:
        reason = v.reason or f"{v.gate} on {v.thread}: {v.status.value}"  # never empty
        if v.status in (Status.ERROR, Status.INCONCLUSIVE):  # the word first: GitLab shows both as failed
            reason = f"{v.status.value}: {reason}"
        summary = " ".join(reason.split())
        if len(summary) > 200:
            summary = summary[:199] + "\u2026"
        tag, kind = outcome
        result = ET.SubElement(case, tag, _attrib(message=summary or None, type=kind))
        result.text = f"{reason}\n{_figures_text(figs)}"
    out = ET.SubElement(case, "system-out")
    out.text = f"{v.reason}\n{_figures_line(figs)}\n" if v.reason else f"{_figures_line(figs)}\n"
    ET.indent(case, level=2)
    case.tail = _indent(2)
    return case


def _suite(suite: _Suite, report: JUnitReport, last: bool) -> Iterator[str]:
    c = suite.counts
    attrib = _attrib(
        name=suite.name,
        tests=len(suite.verdicts),
        errors=c["error"],
        failures=c["failure"],
        skipped=c["skipped"],
        time=_seconds(suite.millis / 1000),
    )
    head = ET.Element("testsuite", attrib)
    head.text = _indent(2)
    yield _start(head)
    yield f"<properties>{_indent(3)}"
    yield _properties(suite.properties, last=False)
    for index, v in enumerate(suite.verdicts):
        name = f"{v.gate}[{v.thread}]"
        pairs = [(f"{name}::{k}", _text(val)) for k, val in figures(v).items()]
        yield _properties(pairs, last=index == len(suite.verdicts) - 1)
    yield f"</properties>{_indent(2)}"
    for v, time in zip(suite.verdicts, suite.times):
        yield ET.tostring(_testcase(v, suite.name, time, report.allow_inconclusive), encoding="unicode")
    out = ET.Element("system-out")
    out.text = report.summary
    out.tail = _indent(1)
    yield ET.tostring(out, encoding="unicode")
    yield f"</testsuite>{_indent(0 if last else 1)}"


def junit_xml(report: JUnitReport) -> Iterator[str]:
    """The document, piece by piece: what ElementTree writes of the whole tree, indented, with its declaration.
    The xunit schema allows no `skipped` on <testsuites> (it does on <testsuite>)."""
    root = ET.Element(
        "testsuites",
        _attrib(
            name=report.name,
            tests=sum(len(s.verdicts) for s in report.suites),
            failures=sum(s.counts["failure"] for s in report.suites),
            errors=sum(s.counts["error"] for s in report.suites),
            time=_seconds(sum(s.millis for s in report.suites) / 1000),
        ),
    )
    if not report.suites:  # nothing inside: an empty element, not indented
        yield ET.tostring(root, encoding="unicode", xml_declaration=True)
        return
    root.text = _indent(1)
    yield _start(root, declaration=True)
    for index, suite in enumerate(report.suites):
        yield from _suite(suite, report, last=index == len(report.suites) - 1)
    yield "</testsuites>"


def write_junit(path: str, report: JUnitReport) -> None:
    try:
        with atomic_open(path, binary=True) as f:
            for piece in junit_xml(report):
                # as ElementTree writes a file: UTF-8, a character reference for what it cannot encode
                f.write(piece.encode("utf-8", "xmlcharrefreplace"))
    except OSError as e:
        raise RtgateError(f"cannot write: {e.strerror}", path=str(path)) from None
