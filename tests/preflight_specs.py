# SPDX-License-Identifier: GPL-2.0-or-later
"""The threshold file of two measurements the preflight tests of both tiers load, and the doctor checks
whose answer moves between two looks."""

from __future__ import annotations

from pathlib import Path

SPEC = """\
platform: p
{top}measurements:
  a:
{strict_a}    sampler: {{duration: 1s, interval_us: 1000, priority: 80, threads: [{{name: t, cpus: [1]}}]}}
    gates: [{{name: g, kind: max, limit_us: 1000000}}]
  b:
{strict_b}    sampler: {{duration: 1s, interval_us: 1000, priority: 80, threads: [{{name: t, cpus: [1]}}]}}
    gates: [{{name: g, kind: max, limit_us: 1000000}}]
"""


VOLATILE = {"busy", "competing_rt", "expected_rt"}


def two_measurements(tmp_path: Path, top: str = "", a: str = "", b: str = "") -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(
        SPEC.format(
            top=f"{top}\n" if top else "",
            strict_a=f"    {a}\n" if a else "",
            strict_b=f"    {b}\n" if b else "",
        )
    )
    return path
