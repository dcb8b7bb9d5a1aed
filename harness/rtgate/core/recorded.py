# SPDX-License-Identifier: GPL-2.0-or-later
"""What `rtgate run` recorded about a measurement: the machine, the load and its level, the preflight warnings.

A run just measured carries it in memory (``RunResult.environment``); results read back from a folder get it from
the <measurement>.environment.json written beside them, when that file is about these results, and from the
validity record inside the results. Every report and the history read it through here, so a saved results folder
is described exactly as the live run was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rtgate.core import validity
from rtgate.core.model import RunResult

RTLA_SUFFIX = ".rtla.txt"


def recorded_environment(run: RunResult) -> dict[str, Any]:
    env = dict(run.environment)
    if isinstance(env.get("system"), dict):
        return env
    source = Path(run.source) if run.source else None
    doc: Any = None
    if source is not None:
        path = validity.environment_path(source)
        if source.name.endswith(RTLA_SUFFIX):  # the timerlat backend's <measurement>.rtla.txt
            path = source.with_name(source.name[: -len(RTLA_SUFFIX)] + ".environment.json")
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = None
    if isinstance(doc, dict) and source is not None and doc.get("results") == source.name:
        env = {**doc, **env}
    record = env.get(validity.RECORD)
    if isinstance(record, dict):
        env.setdefault("machine_load", record.get("machine_load"))
        env.setdefault("load", record.get("load"))
    return env
