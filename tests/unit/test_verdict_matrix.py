# SPDX-License-Identifier: GPL-2.0-or-later
"""The verdict matrix, in-process: for every fixture of tests/verdict_matrix.py, `rtgate check`'s
text, JSON and JUnit, the HTML report and the KCIDB and SQUAD exports show the same status per gate
and thread. No process is started (unit tier); the pytest plugin and live runs are in
test_verdict_matrix_live.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rtgate.cli import main
from verdict_matrix import (
    CASES,
    Case,
    disagreements,
    from_html,
    from_json,
    from_junit,
    from_kcidb,
    from_squad,
    from_text,
    gate_names,
)


def rtgate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code in (0, 1, 3), err
    return code, out


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_report_shows_checks_verdict(tmp_path: Path, case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    spec, results = case.make(tmp_path)
    s, r = str(spec), str(results)
    accept = case.accept_args()
    _, text = rtgate(
        capsys, "check", s, r, "--json", str(tmp_path / "v.json"), "--junit", str(tmp_path / "v.xml"), *accept
    )
    doc = json.loads((tmp_path / "v.json").read_text())
    truth = {(v["measurement"], v["gate"], v["thread"]): v["status"] for v in doc["verdicts"]}
    for status, words in case.covers:  # the fixture still shows what it is in the matrix for
        assert any(v["status"] == status and words in v["reason"] for v in doc["verdicts"]), (status, words, doc)

    shown = {"check text": from_text(text), "check JSON": from_json(tmp_path / "v.json")}
    shown["check JUnit"] = from_junit(tmp_path / "v.xml")
    rtgate(capsys, "report", s, r, "-o", str(tmp_path / "r.html"), *accept)
    shown["HTML report"] = from_html(tmp_path / "r.html")
    _, kcidb = rtgate(capsys, "export", "kcidb", s, r, "--build-id", "rtgate:1", *accept)
    shown["KCIDB"] = from_kcidb(json.loads(kcidb), gate_names())
    _, squad = rtgate(capsys, "export", "squad", s, r, *accept)
    shown["SQUAD"] = from_squad(json.loads(squad)["tests"], gate_names())
    wrong = {path: d for path, got in shown.items() if (d := disagreements(truth, got))}
    assert not wrong, json.dumps(wrong, indent=1)


def test_the_matrix_covers_every_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seen = set()
    for case in CASES:
        spec, results = case.make(tmp_path / case.name)
        _, text = rtgate(capsys, "check", str(spec), str(results), *case.accept_args())
        seen |= {s for statuses in from_text(text).values() for s in statuses}
    assert seen == {"PASS", "FAIL", "INCONCLUSIVE", "ERROR"}
