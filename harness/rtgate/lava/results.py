"""LAVA's results back into verdicts: a job's results export (YAML or CSV) or a lava-run log."""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any, Iterable

from rtgate.core.yamlload import LAVA_RESULTS, load_yaml
from rtgate.errors import ResultsError
from rtgate.core.gates import Status, Verdict
from rtgate.core.thresholds import ThresholdFile

_STATUS = {"pass": Status.PASS, "fail": Status.FAIL, "skip": Status.INCONCLUSIVE, "unknown": Status.ERROR}


def _log_line(item: dict[str, Any]) -> dict[str, Any] | None:
    msg = item.get("msg")
    if item.get("lvl") != "results" or not isinstance(msg, dict):
        return None
    return {"suite": msg.get("definition"), "name": msg.get("case"), "result": msg.get("result"),
            "measurement": msg.get("measurement"), "unit": msg.get("units"), "set": msg.get("set")}


def _rows(path: Path) -> Iterable[dict[str, Any]]:
    text = path.read_text(encoding="utf-8", errors="replace")
    if text.lstrip().startswith("{"):  # lava-run's log: one YAML flow mapping per line
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                item, _ = load_yaml(line, str(path), ResultsError, LAVA_RESULTS, "lava-run log line")
            except ResultsError as e:
                raise ResultsError(e.message, path=str(path), line=number) from None
            row = _log_line(item) if isinstance(item, dict) else None
            if row:
                yield row
        return
    if text.lstrip().startswith(("job,", '"job"')):  # the CSV results export
        yield from csv.DictReader(text.splitlines())
        return
    doc, _ = load_yaml(text, str(path), ResultsError, LAVA_RESULTS, "LAVA results")
    if not isinstance(doc, list):
        raise ResultsError("not LAVA results (a list of results or log lines)", path=str(path))
    for item in doc:
        if not isinstance(item, dict):
            continue
        row = _log_line(item)  # the YAML log LAVA's web UI offers
        if row:
            yield row
        elif "suite" in item and "name" in item:  # the YAML results export
            meta = item.get("metadata") or {}
            yield {**item, "set": item.get("set") or (meta.get("set") if isinstance(meta, dict) else None)}


def _split(case: str, gates: dict[str, list[str]], measurement: str | None) -> tuple[str, str]:
    """gate-thread: exact with the threshold file's gate names, else split at the last '-'."""
    names = gates.get(measurement or "", []) or [g for gs in gates.values() for g in gs]
    for gate in sorted(names, key=len, reverse=True):
        if case.startswith(gate + "-"):
            return gate, case[len(gate) + 1:]
    gate, _, thread = case.rpartition("-")
    return (gate, thread) if gate else (case, "")


def lava_verdicts(path: str | Path, tf: ThresholdFile | None = None) -> list[Verdict]:
    p = Path(path)
    if not p.is_file():
        raise ResultsError("no such file", path=str(p))
    gates = {m.name: [g.name for g in m.gates] for m in tf.measurements.values()} if tf else {}
    verdicts = []
    for row in _rows(p):
        suite = str(row.get("suite") or "")
        if suite == "lava" or not re.match(r"^\d+_rtgate", suite):
            continue  # LAVA's own actions, other test definitions
        measurement = str(row.get("set") or re.sub(r"^\d+_rtgate-?", "", suite) or "rtgate")
        case = str(row.get("name") or "")
        result = str(row.get("result") or "unknown")
        status = _STATUS.get(result, Status.ERROR)
        gate, thread = _split(case, gates, measurement)
        value: float | None = None
        try:
            value = float(row["measurement"]) if row.get("measurement") not in (None, "", "None") else None
        except (TypeError, ValueError):
            value = None
        unit = str(row.get("unit") or row.get("units") or "")
        text = f"{value:g} {unit}".strip() if value is not None else ""
        verdicts.append(Verdict(measurement=measurement, gate=gate, kind="lava", thread=thread or "all",
                                status=status, reason=f"LAVA recorded {result}" + (f" ({text})" if text else ""),
                                value=value, value_text=text, properties={"lava_suite": suite, "lava_case": case}))
    if not verdicts:
        raise ResultsError("no rtgate results in this file", path=str(p))
    return verdicts
