# SPDX-License-Identifier: GPL-2.0-or-later
"""Golden files: what rtgate writes for the suite's fixtures and shipped threshold files, byte for byte.

A change that alters an output shows up here as a diff. When the change is intended (a fixed bug, a new field),
regenerate with ``RTGATE_UPDATE_GOLDEN=1 python -m pytest tests/system/test_golden.py`` and say in the commit which
outputs changed and why.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, RT_TESTS

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
UPDATE = os.environ.get("RTGATE_UPDATE_GOLDEN") == "1"

CT_NEW_JSON = str(RT_TESTS / "ct-new-S-h300.json")
CT_NEW_T2 = str(RT_TESTS / "ct-new-t2-H200.json")
CT_24_HIST = str(RT_TESTS / "ct-24-S-h300.hist")
CT_24_STDOUT = str(RT_TESTS / "ct-24-S-h300.stdout")
CT_LIVE = str(RT_TESTS / "ct-new-live.stdout")
DEFAULT = "thresholds/default.yaml"
TWO = "thresholds/two-thread-example.yaml"
BOARD = "thresholds/boards/imx8mp-evk.yaml"
REPORTS = ["--json", "{out}/verdicts.json", "--junit", "{out}/junit.xml"]

# name -> rtgate arguments; "{out}" is the case's output directory.
CASES: dict[str, list[str]] = {
    "check-default-rt-tests-json": ["check", DEFAULT, CT_NEW_JSON, *REPORTS],
    "check-default-histogram": ["check", DEFAULT, CT_24_HIST, *REPORTS],
    "check-default-summary": ["check", DEFAULT, CT_LIVE, *REPORTS],
    "check-header-only-stdout": ["check", DEFAULT, CT_24_STDOUT],
    "check-two-thread": ["check", TWO, CT_NEW_T2, *REPORTS],
    "show-rt-tests-json": ["show", CT_NEW_JSON],
    "show-histogram": ["show", CT_24_HIST],
    "lava-args-two-thread": ["lava", "args", TWO],
    "lava-job-qemu-inline": [
        "lava",
        "job",
        TWO,
        "--inline",
        "--kernel",
        "file:///k",
        "--ramdisk",
        "file:///r",
        "--sampler-url",
        "file:///s",
        "-o",
        "{out}/job.yaml",
    ],
    "lava-job-imx8mp": [
        "lava",
        "job",
        BOARD,
        "--device-type",
        "imx8mp-evk",
        "--kernel",
        "https://example.org/Image",
        "--dtb",
        "https://example.org/b.dtb",
        "--rootfs",
        "https://example.org/rootfs.tar.xz",
        "--testdef-repo",
        "https://example.org/rtgate.git",
        "-o",
        "{out}/job.yaml",
    ],
    "fuego-args-two-thread": ["fuego", "args", TWO, "--measurement", "app"],
    "fuego-args-all-two-thread": ["fuego", "args", TWO, "--measurement", "app", "--all"],
    "lava-args-all-board": ["lava", "args", BOARD, "--all"],
    "fuego-criteria-two-thread": ["fuego", "criteria", TWO, "-o", "{out}"],
    "fuego-criteria-board": ["fuego", "criteria", BOARD, "--cpus", "4", "--board", "imx8mp_evk", "-o", "{out}"],
    "export-kcidb": ["export", "kcidb", DEFAULT, CT_NEW_JSON, "--build-id", "ci:1", "-o", "{out}/kcidb.json"],
}

# What legitimately differs between runs and machines.
VOLATILE = [
    (re.compile(r'"(start_time|end_time|timestamp|start|end)": "[^"]*"'), r'"\1": "<time>"'),
    (re.compile(r'timestamp="[^"]*"'), 'timestamp="<time>"'),
    (re.compile(r'hostname="[^"]*"'), 'hostname="<host>"'),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d|Z)?"), "<time>"),
]


def normalise(text: str, out: Path) -> str:
    text = text.replace(str(out), "<out>").replace(str(ROOT) + "/", "")
    for pattern, replacement in VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def run_case(args: list[str], out: Path) -> dict[str, str]:
    argv = [a.replace("{out}", str(out)) for a in args]
    proc = subprocess.run(
        [sys.executable, "-m", "rtgate", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "120", "NO_COLOR": "1"},
    )
    produced = {"exit-status": f"{proc.returncode}\n", "stdout": proc.stdout, "stderr": proc.stderr}
    for path in sorted(out.rglob("*")):
        if path.is_file():
            produced[str(path.relative_to(out))] = path.read_text()
    return {name: normalise(text, out) for name, text in produced.items()}


@pytest.mark.parametrize("case", sorted(CASES))
def test_output_matches_golden(case: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    produced = run_case(CASES[case], out)
    expected_dir = GOLDEN / case
    if UPDATE:
        if expected_dir.exists():
            for old in expected_dir.rglob("*"):
                if old.is_file():
                    old.unlink()
        for name, text in produced.items():
            (expected_dir / name).parent.mkdir(parents=True, exist_ok=True)
            (expected_dir / name).write_text(text)
        return
    assert expected_dir.is_dir(), f"no golden files for {case}: run with RTGATE_UPDATE_GOLDEN=1"
    expected = {str(p.relative_to(expected_dir)): p.read_text() for p in expected_dir.rglob("*") if p.is_file()}
    assert sorted(produced) == sorted(expected), f"{case}: files written differ"
    for name in expected:
        assert produced[name] == expected[name], f"{case}: {name} differs from tests/golden/{case}/{name}"
