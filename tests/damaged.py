# SPDX-License-Identifier: GPL-2.0-or-later
"""Damaged-results helpers: the gates file, the in-process check and the hypothesis settings both tiers use."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from conftest import FIXTURES, RT_TESTS
from rtgate.cli import main as rtgate_main

INJECT = RT_TESTS / "inject-formats"


SAMPLER_FIX = FIXTURES / "rtgate-sampler"


SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def check(gates: Path, results: Path, capsys: pytest.CaptureFixture[str], fmt: str = "auto") -> tuple[int, str]:
    code = rtgate_main(["check", str(gates), str(results), "--format", fmt])
    out = capsys.readouterr()
    return code, out.err


def gates_file(directory: Path, max_us: float) -> Path:
    """One measurement with a max gate; max_us below the data's max makes the undamaged data FAIL."""
    path = directory / "gates.yaml"
    path.write_text(f"""platform: damage
measurements:
  m:
    sampler: {{interval_us: 1000, loops: 10}}
    gates:
      - {{name: max, kind: max, limit_us: {max_us}}}
      - {{name: p50, kind: percentile, percentile: 50, limit_us: {max_us}, min_samples: 1}}
      - {{name: rate, kind: miss_rate, above_us: {max_us}, rate: 5%}}
""")
    return path
