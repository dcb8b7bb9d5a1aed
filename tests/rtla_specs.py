# SPDX-License-Identifier: GPL-2.0-or-later
"""timerlat threshold files and their verdicts on recorded rtla outputs, for the timerlat tests of both tiers."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES
from rtgate.core.gates import evaluate
from rtgate.core.thresholds import load_thresholds
from rtgate.parsers import load_results

RTLA = FIXTURES / "rtla"


def spec(tmp_path: Path, gates: str, timerlat: str = "{duration: 5s, cpus: [0, 1]}", name: str = "t.yaml") -> Path:
    p = tmp_path / name
    p.write_text(
        f"platform: qemu-rt\nmeasurements:\n  kernel:\n    backend: timerlat\n"
        f"    timerlat: {timerlat}\n    gates:\n" + "".join(f"      - {g}\n" for g in gates.split(";"))
    )
    return p


def verdicts(tmp_path: Path, gates: str, fixture: str, timerlat: str = "{duration: 5s, cpus: [0, 1]}"):
    tf = load_thresholds(spec(tmp_path, gates, timerlat))
    return {v.thread: v for v in evaluate(tf.measurements["kernel"], load_results(RTLA / fixture))}
