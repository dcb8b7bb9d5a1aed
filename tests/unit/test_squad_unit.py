# SPDX-License-Identifier: GPL-2.0-or-later
"""The SQUAD export in-process: nothing unmeasured reads as a pass."""

from __future__ import annotations


def test_nothing_unmeasured_reads_as_a_pass() -> None:
    from rtgate.core.gates import Status, Verdict
    from rtgate.core.model import RunResult
    from rtgate.reports.squad import squad_documents

    def verdict(gate: str, status: Status) -> Verdict:
        return Verdict("m", gate, "max", "cpu0", status, f"{gate} reason", value=None)

    verdicts = [
        verdict("ok", Status.PASS),
        verdict("bad", Status.FAIL),
        verdict("unknown", Status.ERROR),
        verdict("short", Status.INCONCLUSIVE),
    ]
    run = RunResult(source="x", format="rtgate-json", unit="us", threads=[])
    tests, metrics = squad_documents("p", [("m", run, verdicts)])
    assert {k.split("/")[-1]: v["result"] for k, v in tests.items()} == {
        "ok-cpu0": "pass",
        "bad-cpu0": "fail",
        "unknown-cpu0": "fail",
        "short-cpu0": "fail",
    }
    assert tests["rtgate/p/m/short-cpu0"]["log"].startswith("INCONCLUSIVE:")
    allowed, _ = squad_documents("p", [("m", run, verdicts)], allow_inconclusive=True)
    assert allowed["rtgate/p/m/short-cpu0"]["result"] == "skip" and metrics == {}
