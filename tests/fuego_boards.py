# SPDX-License-Identifier: GPL-2.0-or-later
"""A board's own threshold file for the Fuego tests of both tiers (test_fuego.py, test_fuego_unit.py)."""

from __future__ import annotations

from pathlib import Path

# A board's own threshold file: two measurements, the family it extends in a folder beside it.
FAMILY = """\
platform: acme-family
description: the family's idle measurement
measurements:
  idle:
    sampler: {{interval_us: 1000, duration: 2s, priority: 80, threads: [{{name: A, cpus: [0]}}]}}
    gates: [{{name: a-max, kind: max, limit_us: 10000000}}]
"""
ACME = """\
platform: acme-imx8
extends: ../families/acme.yaml
measurements:
  loaded:
    sampler: {{interval_us: 1000, duration: 2s, priority: 80, threads: [{{name: A, cpus: [0]}}]}}
    load: {{kind: custom, command: [md5sum, /dev/zero, {marker}], cpus: others, min_cpu_percent: 10, warmup_seconds: 1}}
    gates: [{{name: a-max, kind: max, limit_us: 10000000}}]
"""


def acme(tmp_path: Path) -> Path:
    """acme-imx8.yaml in <tmp>/src/boards/, extending <tmp>/src/families/acme.yaml."""
    (tmp_path / "src" / "families").mkdir(parents=True)
    (tmp_path / "src" / "boards").mkdir()
    (tmp_path / "src" / "families" / "acme.yaml").write_text(FAMILY.format())
    board = tmp_path / "src" / "boards" / "acme-imx8.yaml"
    board.write_text(ACME.format(marker=tmp_path / "load-marker"))
    return board
