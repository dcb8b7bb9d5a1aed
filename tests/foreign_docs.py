# SPDX-License-Identifier: GPL-2.0-or-later
"""Hand-made rt-tests JSON documents with cyclictest's layout, a threshold file around a sampler: block and the
verdicts by gate that check gives: what the foreign-results tests of both tiers judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rtgate.core.setup import evaluate_measured
from rtgate.core.thresholds import load_thresholds
from rtgate.parsers import load_results


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


def judge(t: Path, r: Path, accept: frozenset[str] = frozenset()) -> dict[str, Any]:
    tf = load_thresholds(t)
    return {f"{v.gate}[{v.thread}]": v for v in evaluate_measured(tf.measurements["m"], load_results(r), accept)}


def thresholds(tmp_path: Path, sampler_block: str, gates: str | None = None) -> Path:
    p = tmp_path / "t.yaml"
    p.write_text(
        f"platform: p\nmeasurements:\n  m:\n    sampler: {sampler_block}\n    gates:\n"
        + (
            gates
            or "      - {name: max, kind: max, limit_us: 100000}\n"
            "      - {name: over, kind: miss_rate, above_us: 500, rate: 1%}\n"
            "      - {name: missed, kind: missed, max_count: 0}\n"
        )
    )
    return p
