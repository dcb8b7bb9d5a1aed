# SPDX-License-Identifier: GPL-2.0-or-later
"""The JUnit report is written as a stream, and its bytes are those of the whole tree written at once.

The reference below is the writer as it was up to issue 32: junitparser's element tree of the whole document,
indented by ElementTree and written by it. The stream must give the same bytes for any text a verdict, a
measurement's conditions or the summary can hold: control characters, characters XML cannot carry (written as
ElementTree writes them), both quotes, tabs and newlines in attributes, texts past the 200-character message,
every status with and without --allow-inconclusive, known, unknown and missing durations, no verdict at all.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from pathlib import Path

import junitparser.junitparser
from hypothesis import given, settings
from hypothesis import strategies as st
from junitparser import Error, Failure, JUnitXml, Skipped, SystemOut, TestCase, TestSuite

from rtgate.core.gates import Status, Verdict
from rtgate.reports.described import Described, junit_properties
from rtgate.reports.junit import UNKNOWN_DURATION, build_junit, figures, junit_xml, write_junit

SPECIAL = ["\x00", "\x01", "\x0b", "\x1b", "\x7f", "\x85", "\r", "\n", "\r\n", "\t", '"', "'", "&", "<", ">", "]]>"]
SPECIAL += ["\ud800", "\udc80", "\ufffe", "\uffff", "\u2028", "µ", "\u2026", "\U0001f600", "&amp;", "&#10;"]
PIECE = st.one_of(st.text(max_size=6), st.sampled_from(SPECIAL))
TEXT = st.lists(PIECE, max_size=5).map("".join)
LONG = st.one_of(
    TEXT,
    st.tuples(TEXT, st.text(min_size=150, max_size=260), TEXT).map("".join),
    st.text(st.sampled_from(["a", " ", "\n", "\t", "\u2026"]), min_size=190, max_size=215),  # about the cut
    st.sampled_from(["", " \n\t ", "max 1547 us > 80 us on thread 0"]),
)
MEASUREMENTS = ["app", "a&b \"c\" 'd'", "x\ty\nz", "\x01\udc80"]
FLOATS = st.one_of(st.none(), st.floats(), st.integers(-(10**20), 10**20).map(float))
VALUE_TEXTS = st.one_of(TEXT, st.sampled_from(["15..4878 us", ">= 300 us", "<= 894 us", "0.12..0.1333 %", "1547 us"]))
PROPERTY = st.one_of(st.none(), st.integers(), st.floats(), st.booleans(), TEXT, st.just([1]), st.just({"a": 1}))

VERDICTS = st.builds(
    Verdict,
    measurement=st.sampled_from(MEASUREMENTS),
    gate=TEXT,
    kind=TEXT,
    thread=TEXT,
    status=st.sampled_from(list(Status)),
    reason=LONG,
    value=FLOATS,
    value_text=VALUE_TEXTS,
    limit=FLOATS,
    unit=st.sampled_from(["us", "%", "periods", ""]),
    bound=FLOATS,
    lower=FLOATS,
    samples=st.integers(0, 2**64),
    critical=st.booleans(),
    properties=st.dictionaries(TEXT, PROPERTY, max_size=6),
)
PREFLIGHT_KEYS = ["check", "status", "what", "fix"]
DESCRIBED = st.builds(
    Described,
    machine=st.dictionaries(TEXT, TEXT, max_size=3),
    measurement=st.dictionaries(TEXT, TEXT, max_size=3),
    preflight=st.one_of(st.none(), st.lists(st.dictionaries(st.sampled_from(PREFLIGHT_KEYS), TEXT), max_size=3)),
)
DURATIONS = st.one_of(
    st.none(),
    st.dictionaries(st.sampled_from(MEASUREMENTS), st.one_of(st.none(), st.floats(0, 1e7), st.integers(0, 10**6))),
)


def tree_junit(
    platform: str,
    verdicts: list[Verdict],
    summary: str,
    allow_inconclusive: bool = False,
    durations: dict[str, float | None] | None = None,
    described: dict[str, Described] | None = None,
) -> bytes:
    """The JUnit file as rtgate wrote it before it streamed (reports/junit.py at 57c5e91), ERROR named first."""

    def text(v: object) -> str:
        return "" if v is None else str(v)

    def result(v: Verdict) -> list[junitparser.junitparser.FinalResult]:
        reason = v.reason or f"{v.gate} on {v.thread}: {v.status.value}"
        if v.status in (Status.ERROR, Status.INCONCLUSIVE):
            reason = f"{v.status.value}: {reason}"
        message = " ".join(reason.split())
        if len(message) > 200:
            message = message[:199] + "\u2026"
        if v.status == Status.FAIL:
            out: junitparser.junitparser.FinalResult = Failure(message, "latency")
        elif v.status == Status.ERROR:
            out = Error(message, "measurement")
        elif v.status == Status.INCONCLUSIVE:
            out = Skipped(message) if allow_inconclusive else Failure(message, "inconclusive")
        else:
            return []
        out.text = f"{reason}\n" + "".join(f"{k}: {text(val)}\n" for k, val in figures(v).items() if val != "")
        return [out]

    xml = JUnitXml(name=f"rtgate {platform}")
    by_measurement: dict[str, list[Verdict]] = {}
    for v in verdicts:
        by_measurement.setdefault(v.measurement, []).append(v)
    for measurement, group in by_measurement.items():
        classname = f"rtgate.{platform}.{measurement}"
        suite = TestSuite(classname)
        suite.add_property("platform", platform)
        if described is not None and measurement in described:
            for prop, value in junit_properties(described[measurement]):
                suite.add_property(prop, value)
        known = (durations or {}).get(measurement)
        if durations is not None and measurement in durations and known is None:
            suite.add_property("duration", UNKNOWN_DURATION)
        millis, extra = divmod(round(float(known or 0.0) * 1000), len(group))
        for index, v in enumerate(group):
            case = TestCase(f"{v.gate}[{v.thread}]", classname)
            case._elem.set("time", f"{(millis + (index < extra)) / 1000:.3f}")
            for name, value in figures(v).items():
                suite.add_property(f"{case.name}::{name}", text(value))
            case.result = result(v)
            line = "figures: " + " ".join(f"{k}={text(val)}" for k, val in figures(v).items())
            case.system_out = f"{v.reason}\n{line}\n" if v.reason else f"{line}\n"
            suite.append(case)
        suite.append(SystemOut(summary))
        suite.update_statistics()
        xml.add_testsuite(suite)
    xml.update_statistics()
    total = 0
    for suite in xml:
        suite_millis = sum(round(float(c._elem.get("time", 0)) * 1000) for c in suite)
        suite._elem.set("time", f"{suite_millis / 1000:.3f}")
        total += suite_millis
    xml._elem.set("time", f"{total / 1000:.3f}")
    xml._elem.attrib.pop("skipped", None)
    ET.indent(xml._elem)
    out = io.BytesIO()
    xml.write(out)
    return out.getvalue()


def streamed(
    platform: str,
    verdicts: list[Verdict],
    summary: str,
    allow_inconclusive: bool = False,
    durations: dict[str, float | None] | None = None,
    described: dict[str, Described] | None = None,
) -> bytes:
    """The stream's pieces, encoded as write_junit encodes them."""
    report = build_junit(platform, verdicts, summary, allow_inconclusive, durations, described)
    return b"".join(piece.encode("utf-8", "xmlcharrefreplace") for piece in junit_xml(report))


def test_the_reference_is_elementtree() -> None:
    assert junitparser.junitparser.etree is ET  # with lxml, junitparser writes another layout


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    platform=TEXT,
    verdicts=st.lists(VERDICTS, max_size=8),
    summary=LONG,
    allow=st.booleans(),
    durations=DURATIONS,
    described=st.one_of(st.none(), st.dictionaries(st.sampled_from(MEASUREMENTS), DESCRIBED, max_size=2)),
)
def test_the_stream_is_the_tree_byte_for_byte(
    platform: str,
    verdicts: list[Verdict],
    summary: str,
    allow: bool,
    durations: dict[str, float | None] | None,
    described: dict[str, Described] | None,
) -> None:
    expected = tree_junit(platform, verdicts, summary, allow, durations, described)
    assert streamed(platform, verdicts, summary, allow, durations, described) == expected


def test_every_status_both_ways_and_no_verdict_written_to_a_file(tmp_path: Path) -> None:
    reasons = {
        Status.PASS: "max 10 us <= 80 us",
        Status.FAIL: "max 1547 us > 80 us on thread 0 " + "x" * 300,
        Status.ERROR: "",
        Status.INCONCLUSIVE: "over-100: 3 of 3000 above 100 us\x1b[0m\tcannot tell",
    }
    verdicts = [
        Verdict(m, "g\"'&<", "max", f"cpu{i}\n", status, reason, value=1547.0, value_text="15..1547 us", unit="us")
        for m in ("a", "b")
        for i, (status, reason) in enumerate(reasons.items())
    ]
    durations: dict[str, float | None] = {"a": 1.5017, "b": None}
    for allow in (False, True):
        path = tmp_path / f"j{allow}.xml"
        path.write_text("an older report")
        write_junit(str(path), build_junit("p\x01", verdicts, "sum\x00mary", allow, durations))
        assert path.read_bytes() == tree_junit("p\x01", verdicts, "sum\x00mary", allow, durations)
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted({"jFalse.xml", path.name})  # no temporary left
        text = path.read_text()
        assert text.count("<skipped") == (2 if allow else 0)
        assert text.count('type="inconclusive"') == (0 if allow else 2)
    empty = tmp_path / "empty.xml"
    write_junit(str(empty), build_junit("p", [], "nothing"))
    assert empty.read_bytes() == tree_junit("p", [], "nothing")
    assert empty.read_bytes().endswith(b'<testsuites name="rtgate p" tests="0" failures="0" errors="0" time="0.000" />')
