# SPDX-License-Identifier: GPL-2.0-or-later
"""A short run of tests/fuzz.py over every parser and the threshold loader: only results or clean errors.

The suite runs each target for a few seconds; `python -m tests.fuzz --inputs 200000 --target all` is the long run
(its figures are in the commit that added it and in doc/gates-and-statistics.rst, "What no format can reveal").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzz import run_target, targets

SECONDS = {"json": 12, "histogram": 10, "summary": 8, "verbose": 8, "rtla": 10, "auto": 10, "thresholds": 15}


@pytest.fixture(scope="module")
def fuzz_targets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:  # type: ignore[type-arg]
    work = tmp_path_factory.mktemp("fuzz")
    return work, targets(work)


@pytest.mark.parametrize("name", list(SECONDS))
def test_fuzzed_inputs_end_in_a_result_or_a_clean_error(
    name: str,
    fuzz_targets: tuple[Path, dict],  # type: ignore[type-arg]
    tmp_path: Path,
) -> None:
    work, all_targets = fuzz_targets
    report = run_target(all_targets[name], work, seconds=SECONDS[name], seed=11, save=tmp_path / "crashes")
    print(report.line())
    assert report.inputs > 20, report.line()  # something ran, however slow the machine
    assert not report.crashes, f"{report.line()}: {dict(report.crashes)} (inputs kept in {tmp_path / 'crashes'})"
