# SPDX-License-Identifier: GPL-2.0-or-later
"""One measurement from the lines of its sampler: block, the thread-plan tests of both tiers plan from."""

from __future__ import annotations

from pathlib import Path

from rtgate.core.thresholds import Measurement, load_thresholds


def measurement_from(tmp_path: Path, sampler_lines: str, gates: str = "") -> Measurement:
    spec = tmp_path / "t.yaml"
    spec.write_text(
        "platform: p\nmeasurements:\n  m:\n    sampler:\n"
        + "".join(f"      {line}\n" for line in sampler_lines.strip().splitlines())
        + "    gates:\n"
        + (gates or "      - {name: g, kind: max, limit_us: 1000}\n")
    )
    return load_thresholds(spec).measurements["m"]
