# SPDX-License-Identifier: GPL-2.0-or-later
"""In-process tests of tests/system/test_fuego.py (same names): rtgate fuego package for a board's
own threshold file, its spec.json by Fuego's documented format and naming rules."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from fuego_boards import FAMILY, acme
from in_process import rtgate
from rtgate.core.thresholds import load_thresholds

TEST_HOME = ROOT / "fuego" / "tests" / "Benchmark.rtgate"
LEGAL = re.compile(r"[A-Za-z0-9_]+")


def test_package_puts_a_board_file_beside_the_test_with_a_spec_per_measurement(tmp_path: Path) -> None:
    board = acme(tmp_path)
    home = tmp_path / "Benchmark.rtgate"
    shutil.copytree(TEST_HOME, home)
    r = rtgate("fuego", "package", "--no-wheel", "--source", str(ROOT), "--thresholds", str(board), "-o", str(home))
    assert r.returncode == 0, r.stderr
    spec = json.loads((home / "spec.json").read_text())
    # Fuego's spec.json: one object, testName and the named specs; spec names letters, digits and '_',
    # a 'default' among them; each spec's variables become BENCHMARK_RTGATE_<NAME>.
    assert set(spec) == {"testName", "specs"} and spec["testName"] == "Benchmark.rtgate"
    assert list(spec["specs"]) == ["default", "idle", "loaded"]
    assert all(LEGAL.fullmatch(name) for name in spec["specs"])
    where = "thresholds/boards/acme-imx8.yaml"
    assert spec["specs"]["default"] == {"THRESHOLDS": where, "MEASUREMENT": "idle"}
    assert spec["specs"]["loaded"] == {"THRESHOLDS": where, "MEASUREMENT": "loaded"}
    copied = load_thresholds(home / where)  # the family came along, where extends: finds it
    assert list(copied.measurements) == ["idle", "loaded"] and copied.platform == "acme-imx8"
    assert (home / "thresholds" / "families" / "acme.yaml").read_text() == FAMILY.format()
    criteria = json.loads((home / "criteria.json").read_text())
    assert {c["tguid"] for c in criteria["criteria"]} >= {"idle", "loaded"}
    # The phases find it from the spec's value, resolved against the test's directory.
    assert '"$TEST_HOME/$thresholds"' in (home / "fuego_test.sh").read_text()
    # Fuego packages a test from its data_files: the board's files travel with it, the shipped ones stay.
    data_files = yaml.safe_load((home / "test.yaml").read_text())["data_files"]
    shipped = yaml.safe_load((TEST_HOME / "test.yaml").read_text())["data_files"]
    assert data_files == [*shipped, "thresholds/families/acme.yaml", where]


@pytest.mark.parametrize(
    "names,message",
    [(("a-b", "a_b"), "both become 'a_b'"), (("idle", "default"), "would be Fuego's 'default'")],
)
def test_board_files_whose_specs_would_meet_are_refused(tmp_path: Path, names: tuple[str, str], message: str) -> None:
    text = "platform: p\nmeasurements:\n" + "".join(
        f"  {n}:\n    sampler: {{duration: 2s, threads: [{{name: A, cpus: [0]}}]}}\n"
        "    gates: [{name: m, kind: max, limit_us: 100}]\n"
        for n in names
    )
    (tmp_path / "p.yaml").write_text(text)
    r = rtgate(
        "fuego",
        "package",
        "--no-wheel",
        "--source",
        str(ROOT),
        "--thresholds",
        str(tmp_path / "p.yaml"),
        "-o",
        str(tmp_path / "out"),
    )
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and message in r.stderr, r.stderr
    r = rtgate("fuego", "package", "--no-wheel", "--cpus", "4", "-o", str(tmp_path / "out"))
    assert r.returncode == 2 and "--cpus needs --thresholds" in r.stderr
