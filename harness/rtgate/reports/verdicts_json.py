# SPDX-License-Identifier: GPL-2.0-or-later
"""Verdicts as JSON, for scripts and dashboards."""

from __future__ import annotations

import json
from typing import Any

from rtgate import __version__
from rtgate.core.gates import Verdict, exit_code
from rtgate.safe_io import write_text


def verdicts_document(
    platform: str,
    threshold_files: list[str],
    verdicts: list[Verdict],
    allow_inconclusive: bool,
    extra: dict[str, Any] | None = None,
    environment: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`environment`: the machine and each measurement's load and preflight (reports/described.py)."""
    doc: dict[str, Any] = {
        "rtgate_version": __version__,
        "platform": platform,
        "threshold_files": threshold_files,
        "exit_code": exit_code(verdicts, allow_inconclusive),
        "verdicts": [v.as_dict() for v in verdicts],
    }
    if environment is not None:
        doc["environment"] = environment
    if extra:
        doc.update(extra)
    return doc


def write_json(path: str, doc: dict[str, Any]) -> None:
    write_text(path, json.dumps(doc, indent=2, sort_keys=False, allow_nan=False) + "\n")
