# SPDX-License-Identifier: GPL-2.0-or-later
"""A short seeded run of tests/fuzz.py over every parser, `rtgate check` and the threshold loader: only results or
one-line errors naming the file, and no damaged input that passes gates its seed fails.

The suite runs a fixed number of seeded inputs per target (a few seconds in all); the long campaign,
`python -m tests.fuzz --count 100000 --target all --jobs 2`, and its figures are in benchmarks/README.md.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from fuzz import EXTREME, Target, m_truncate, run_target, targets
from rtgate.core.gates import Status
from rtgate.errors import ResultsError

INPUTS = 250


@pytest.fixture(scope="module")
def fuzz_targets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Target]]:
    work = tmp_path_factory.mktemp("fuzz")
    return work, targets(work)


@pytest.mark.parametrize("name", ["json", "histogram", "summary", "verbose", "rtla", "auto", "thresholds"])
def test_fuzzed_inputs_end_in_a_result_or_a_clean_error(
    name: str, fuzz_targets: tuple[Path, dict[str, Target]], tmp_path: Path
) -> None:
    work, all_targets = fuzz_targets
    report = run_target(all_targets[name], work, inputs=INPUTS, seed=11, save=tmp_path / "crashes")
    print(report.line())
    assert report.inputs == INPUTS
    assert report.accepted > 0 and report.refused > 0, report.line()  # both paths were taken
    assert not report.crashes, f"{report.line()}: {dict(report.crashes)} (inputs kept in {tmp_path / 'crashes'})"
    assert not report.turned_pass, f"{report.line()} (inputs kept in {tmp_path / 'crashes'})"


def test_the_fuzzer_counts_what_it_must(tmp_path: Path) -> None:
    """A crash, an error that does not name the file, and a FAIL turned PASS are each counted, never 'refused'."""
    seed = b"T: 0 (1) P:80 I:1000 C: 1000 Min: 1 Act: 2 Avg: 3 Max: 40\n" * 4

    def run(path: Path) -> Status:
        data = path.read_bytes()
        if data == seed:
            return Status.FAIL
        outcome = len(data) % 4  # any damage: one of four outcomes, by the damaged length
        if outcome == 0:
            raise ValueError("not rtgate's error")
        if outcome == 1:
            raise ResultsError("no file named")
        if outcome == 2:
            return Status.PASS
        raise ResultsError("refused", path=str(path))

    report = run_target(Target("self", [("s.stdout", seed)], run), tmp_path, inputs=400, seed=3, save=tmp_path / "k")
    assert report.inputs == 400
    assert any(k.startswith("ValueError at ") for k in report.crashes), dict(report.crashes)
    assert any(k.startswith("RtgateError without the file") for k in report.crashes), dict(report.crashes)
    assert report.turned_pass > 0 and report.refused > 0
    assert any((tmp_path / "k" / "self").iterdir())


def test_mutations_include_the_numbers_issue_37_names() -> None:
    assert any(len(x) > 4300 and x.isdigit() for x in EXTREME)
    assert any(not x.isascii() and x.isdigit() for x in EXTREME)
    assert str(2**63 - 1) in EXTREME and "1e309" in EXTREME and "-nan" in EXTREME
    cuts = {len(m_truncate(random.Random(k), b"T: 0 C:  12345 Max: \xc3\xa9\r\n", False)) for k in range(200)}
    assert len(cuts) > 8  # offsets of every class, not one
