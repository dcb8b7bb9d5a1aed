# SPDX-License-Identifier: GPL-2.0-or-later
"""Hand-made rt-tests JSON documents with cyclictest's layout, for the foreign-results tests of both tiers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def ct_json(
    tmp_path: Path,
    cmdline: str,
    threads: list[dict[str, Any]],
    start: str = "14:00:00",
    end: str = "14:00:10",
    ns: bool = False,
    name: str = "r.json",
) -> Path:
    doc = {
        "file_version": 1,
        "cmdline:": cmdline,
        "rt_test_version:": "2.40",
        "start_time": f"Mon, 23 Nov 2026 {start} +0000",
        "end_time": f"Mon, 23 Nov 2026 {end} +0000",
        "return_code": 0,
        "num_threads": len(threads),
        "resolution_in_ns": int(ns),
        "thread": {
            str(i): {
                "histogram": t.get("histogram", {}),
                "cycles": t["cycles"],
                # consistent with the histogram: rtgate refuses a min below its lowest bucket
                "min": t.get("min", min((int(k) for k in t.get("histogram", {})), default=10)),
                "max": t["max"],
                "avg": t.get("avg", 20.0),
                "cpu": t.get("cpu", -1),
                "node": 0,
            }
            for i, t in enumerate(threads)
        },
    }
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p
