# SPDX-License-Identifier: GPL-2.0-or-later
"""The threshold file (how ct-24-S-h300 was measured) the rtgate command tests of both tiers check results with."""

from __future__ import annotations

from pathlib import Path

SMP = """\
platform: vm
measurements:
  smp:
    sampler:                           # how ct-24-S-h300 was measured
      interval_us: 200
      loops: 5000
      priority: 80
      threads: [{{name: all, cpus: all}}]
    gates:
      - {{name: max, kind: max, limit_us: {max}}}
      - {{name: over-100, kind: miss_rate, above_us: 100, rate: {rate}}}
"""


def write(tmp_path: Path, text: str, name: str = "t.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p
