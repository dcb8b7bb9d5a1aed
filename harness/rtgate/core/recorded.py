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
from rtgate.errors import RtgateError
from rtgate.safe_io import open_input

# rtgate's verdicts JSON of a large run: a few MB; beyond this the file is not one (load_results judges it).
MAX_OWN_FILE_BYTES = 64 << 20

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
        doc = validity.read_environment(path)
    if isinstance(doc, dict) and source is not None and doc.get("results") == source.name:
        env = {**doc, **env}
    record = env.get(validity.RECORD)
    if isinstance(record, dict):
        # The engine's record holds the machine (key for key as tests/reference_machine.py captures it): a
        # board's results describe the board without an environment file beside them.
        if record.get("format") == validity.ENGINE_FORMAT and isinstance(record.get("system"), dict):
            env.setdefault("system", record["system"])
        for key in ("machine_load", "load", "preflight"):
            env.setdefault(key, record.get(key))
    return env


def refuse_own_files(path: Path) -> None:
    """rtgate's own verdicts JSON and environment files are not results: say which results they came from."""
    try:  # a FIFO, socket or device is refused before it is read from
        with open_input(path) as f:
            head = f.read(4096)
            if not head.lstrip().startswith(b"{") or (b'"rtgate_version"' not in head and b'"results"' not in head):
                return
            doc = json.loads(head + f.read(MAX_OWN_FILE_BYTES))
    except (OSError, RtgateError, ValueError):
        return  # load_results says why it cannot be read
    if not isinstance(doc, dict):
        return
    if "rtgate_version" in doc and isinstance(doc.get("verdicts"), list):
        where = doc.get("results_dir")
        came = f" (its results are in {where}/<measurement>.json)" if where else ""
        raise RtgateError(
            f"this is rtgate's verdicts JSON (--json of run or check), not results: give the results it judged{came}",
            path=str(path),
        )
    results = doc.get("results")
    if isinstance(results, str) and "system" in doc and path.name.endswith(".environment.json"):
        raise RtgateError(
            f"this is rtgate run's environment file, not results: give the results it describes, "
            f"{path.with_name(results)}",
            path=str(path),
        )
