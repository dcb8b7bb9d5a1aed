# SPDX-License-Identifier: GPL-2.0-or-later
"""require: judged by the measurement engine (rtgate-sampler --check-only), on this machine or on a
recorded tree (--sysroot): the one implementation doctor, `rtgate run` and a board use."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from rtgate.core.thresholds import load_thresholds
from rtgate.measure import engine_check
from rtgate.measure.runner import find_sampler


def engine_unmet(require: dict[str, Any], root: Path = Path("/"), measured: list[int] | None = None) -> list[str]:
    """The reasons of every requirement in `require` not met, with the threads pinned to `measured`
    (None: not pinned)."""
    cpus = f", cpus: {json.dumps(measured)}" if measured is not None else ""
    with tempfile.TemporaryDirectory() as folder:
        spec = Path(folder) / "t.yaml"
        spec.write_text(
            f"platform: p\nrequire: {json.dumps(require)}\nmeasurements:\n  m:\n"
            f"    sampler: {{duration: 1s, threads: [{{name: a{cpus}}}]}}\n"
            "    gates: [{name: g, kind: max, limit_us: 100}]\n"
        )
        m = load_thresholds(spec).measurements["m"]
    return [reason for _, reason in engine_check.ask(find_sampler(), m, str(root)).unmet]
