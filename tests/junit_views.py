# SPDX-License-Identifier: GPL-2.0-or-later
"""What GitLab and Jenkins show of a JUnit file, read by their published rules (re-implemented, not copied).

GitLab (lib/gitlab/ci/parsers/test/junit.rb): the file goes through Rails' ``Hash.from_xml``, then every
``testcase`` under the root ``testsuites`` (and nested ``testsuite``) becomes a case with the suite's name, its
``classname``, ``name``, ``file`` and ``time``; its status is failed, error or skipped when it has a ``failure``,
``error`` or ``skipped`` child (in that order of precedence), else success; what the page shows as the output is
that child's value *as Rails converted it*: its text when it has text, a hash of its attributes when it has only
attributes, nothing when it has neither. Cases are keyed by "<suite>_<classname>_<name>": two cases with the same
key are one. ``system-out`` is only searched for an attachment tag.

Jenkins (junit plugin): each ``testsuite`` has a name, a duration (its ``time``), its ``properties`` and its
``system-out``; each case its name, class name (the suite's when it has none), duration, the failure's or error's
``message`` as "Error Message" and text as "Stacktrace", a skipped case's message, and its own ``system-out``.
"""

from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# ActiveSupport's XmlMini converts an element by its `type` attribute: these would turn a failure into a number,
# a date or an error (symbol and yaml are refused), never the text.
RAILS_TYPES = {
    "symbol", "date", "datetime", "dateTime", "integer", "float", "decimal", "boolean", "string", "double",
    "base64Binary", "binary", "file", "yaml", "array",
}  # fmt: skip


def _rails_value(elem: ET.Element) -> Any:
    """An element as Hash.from_xml gives it: text, a hash (attributes and children), or None."""
    attrs = dict(elem.attrib)
    children: dict[str, Any] = {}
    for child in elem:
        key = child.tag.replace("-", "_")
        value = _rails_value(child)
        if key in children:
            prior = children[key]
            children[key] = [*prior, value] if isinstance(prior, list) else [prior, value]
        else:
            children[key] = value
    text = (elem.text or "").strip() if len(elem) == 0 else ""
    if attrs.get("type") in RAILS_TYPES:
        raise AssertionError(f"<{elem.tag} type={attrs['type']!r}>: Rails would convert it, not show it")
    if text and not children:
        return elem.text  # text wins over attributes when there is any
    merged = {**attrs, **children}
    return merged or None


@dataclass
class GitLabCase:
    suite: str | None
    classname: str | None
    name: str | None
    file: str | None
    execution_time: float
    status: str
    output: Any  # what the page shows: a string, or a hash dump when it is a dict
    system_out: Any
    key: str


def gitlab_view(path: Path) -> list[GitLabCase]:
    root = ET.parse(path).getroot()
    cases: list[GitLabCase] = []

    def walk(node: ET.Element) -> None:
        for suite in node.findall("testsuite"):
            for tc in suite.findall("testcase"):
                cases.append(_gitlab_case(tc, suite.get("name")))
            walk(suite)

    assert root.tag in ("testsuites", "testsuite"), root.tag
    if root.tag == "testsuites":
        walk(root)
    else:
        for tc in root.findall("testcase"):
            cases.append(_gitlab_case(tc, root.get("name")))
        walk(root)
    return cases


def _gitlab_case(tc: ET.Element, suite: str | None) -> GitLabCase:
    data = _rails_value(tc) or {}
    status, output = "success", None
    for child, name in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
        if child in data:
            status, output = name, data[child]
            break
    classname, name = data.get("classname"), data.get("name")
    time = data.get("time")
    return GitLabCase(
        suite=suite,
        classname=classname,
        name=name,
        file=data.get("file"),
        execution_time=float(time) if isinstance(time, str) and time.strip() else 0.0,
        status=status,
        output=output,
        system_out=data.get("system_out"),
        key=hashlib.sha256(f"{suite}_{classname}_{name}".encode()).hexdigest(),
    )


@dataclass
class JenkinsCase:
    name: str
    classname: str
    duration: float
    status: str  # PASSED, FAILED (failure or error) or SKIPPED
    error_details: str | None  # "Error Message"
    stacktrace: str | None  # "Stacktrace"
    skipped_message: str | None
    stdout: str | None


@dataclass
class JenkinsSuite:
    name: str
    duration: float
    properties: dict[str, str]
    stdout: str | None
    cases: list[JenkinsCase] = field(default_factory=list)


def _time(text: str | None) -> float:
    return float(text.replace(",", "")) if text else 0.0


def jenkins_view(path: Path) -> list[JenkinsSuite]:
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    out = []
    for s in suites:
        props = {p.get("name", ""): p.get("value", "") for p in s.findall("properties/property")}
        suite = JenkinsSuite(s.get("name", ""), _time(s.get("time")), props, s.findtext("system-out"))
        for tc in s.findall("testcase"):
            bad = tc.find("failure")
            if bad is None:
                bad = tc.find("error")
            skipped = tc.find("skipped")
            status = "FAILED" if bad is not None else "SKIPPED" if skipped is not None else "PASSED"
            suite.cases.append(
                JenkinsCase(
                    name=tc.get("name", ""),
                    classname=tc.get("classname") or suite.name,
                    duration=_time(tc.get("time")),
                    status=status,
                    error_details=None if bad is None else bad.get("message"),
                    stacktrace=None if bad is None else bad.text,
                    skipped_message=None if skipped is None else skipped.get("message"),
                    stdout=tc.findtext("system-out"),
                )
            )
        out.append(suite)
    return out
