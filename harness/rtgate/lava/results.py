# SPDX-License-Identifier: GPL-2.0-or-later
"""LAVA's results back into verdicts: a job's results export (YAML or CSV) or a lava-run log."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rtgate.core.gates import Status, Verdict
from rtgate.core.thresholds import ThresholdFile
from rtgate.core.yamlload import LAVA_RESULTS, load_yaml
from rtgate.errors import ResultsError
from rtgate.safe_io import read_input

_STATUS = {"pass": Status.PASS, "fail": Status.FAIL, "skip": Status.INCONCLUSIVE, "unknown": Status.ERROR}


# The engine's console line per gate: "rtgate: STATUS measurement/gate[thread]: reason". LAVA keeps
# only pass/fail/skip; this line tells a FAIL from an INCONCLUSIVE or ERROR that LAVA shows as fail.
# Anchored: the engine escapes what it echoes and rtgate.sh prefixes the sampler's stderr, so only
# the engine's own lines start with "rtgate: ".
_CONSOLE = re.compile(r"rtgate: (PASS|FAIL|INCONCLUSIVE|ERROR) ([A-Za-z0-9_.-]+)/(\S+)\[(\S+)\]: (.*)")
# The engine's record of the board's run ("rtgate_run"): one JSON line per measurement.
_ENVIRONMENT = re.compile(r"rtgate: ENVIRONMENT ([A-Za-z0-9_.-]+) (\{.*\})\s*")
MAX_ENVIRONMENT_CHARS = 1 << 16
# Cases rtgate.sh records when the measurement did not run: every gate of it is an ERROR.
_RUN_FAILED = ("sampler", "setup")


def _log_line(item: dict[str, Any]) -> dict[str, Any] | None:
    msg = item.get("msg")
    if item.get("lvl") != "results" or not isinstance(msg, dict):
        return None
    return {
        "suite": msg.get("definition"),
        "name": msg.get("case"),
        "result": msg.get("result"),
        "measurement": msg.get("measurement"),
        "unit": msg.get("units"),
        "set": msg.get("set"),
    }


def console_statuses(items: Iterable[Any]) -> dict[tuple[str, str], tuple[Status, str]]:
    """(measurement, gate-thread) -> rtgate's own status and reason, from the board's console lines."""
    found: dict[tuple[str, str], tuple[Status, str]] = {}
    for item in items:
        if not isinstance(item, dict) or item.get("lvl") != "target" or not isinstance(item.get("msg"), str):
            continue
        m = _CONSOLE.fullmatch(item["msg"].strip())
        if m:
            found[(m.group(2), f"{m.group(3)}-{m.group(4)}")] = (Status(m.group(1)), m.group(5).strip())
    return found


def console_environments(items: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """measurement -> the environment rtgate.sh recorded on the board (as `rtgate run` records it)."""
    import json

    found: dict[str, dict[str, Any]] = {}
    for item in items:
        if not isinstance(item, dict) or item.get("lvl") != "target" or not isinstance(item.get("msg"), str):
            continue
        msg = item["msg"].strip()
        if len(msg) > MAX_ENVIRONMENT_CHARS:
            continue
        m = _ENVIRONMENT.fullmatch(msg)
        if not m:
            continue
        try:
            doc = json.loads(m.group(2))
        except ValueError:
            try:  # lava-server's log escapes each '"' of a console line; rtgate.sh writes none inside strings
                doc = json.loads(m.group(2).replace('\\"', '"'))
            except ValueError:
                continue
        if isinstance(doc, dict) and isinstance(doc.get("system"), dict):
            found[m.group(1)] = doc
    return found


def log_environments(path: str | Path) -> dict[str, dict[str, Any]]:
    """The board's environments from a job log (lava-run's or the server's YAML); {} for a results export."""
    text = _read(Path(path))
    return console_environments(read_log_items(text))


def board_runs(environments: dict[str, dict[str, Any]], source: str) -> list[tuple[str, Any]]:
    """(measurement, RunResult) pairs carrying what the board recorded, for the reports and the history."""
    from rtgate.core.model import RunResult

    return [
        (
            name,
            RunResult(source=source, format="lava", unit="us", threads=[], environment=env, elapsed_s=_elapsed(env)),
        )
        for name, env in environments.items()
    ]


def _elapsed(env: dict[str, Any]) -> float | None:
    """How long the sampler measured, as its record says (None: not recorded)."""
    results = env.get("results")
    value = results.get("elapsed_s") if isinstance(results, dict) else env.get("elapsed_s")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def run_durations(verdicts: Iterable[Verdict], runs: list[tuple[str, Any]]) -> dict[str, float | None]:
    """Per measurement of the verdicts, how long its board measured (JUnit times): None where the board
    recorded no duration (no environment line, an older rtgate.sh, or nothing measured)."""
    elapsed = {name: run.elapsed_s for name, run in runs}
    return {v.measurement: elapsed.get(v.measurement) for v in verdicts}


def read_log_items(text: str) -> list[Any]:
    """A LAVA job log: lava-run's one YAML flow mapping per line, or the server's YAML list."""
    if text.lstrip().startswith("{"):
        items = []
        for line in text.splitlines():
            try:
                items.append(load_yaml(line, "LAVA log", ResultsError, LAVA_RESULTS)[0] if line.strip() else None)
            except ResultsError:
                items.append(None)  # a line cut by the log's end; the rest still counts
        return items
    try:
        doc = load_yaml(text, "LAVA log", ResultsError, LAVA_RESULTS)[0]
    except ResultsError:
        return []
    return doc if isinstance(doc, list) else []


def _read(path: Path) -> str:
    """A results export or job log, bounded as the YAML loader bounds it; a FIFO or device is refused."""
    return read_input(path, LAVA_RESULTS.max_bytes, ResultsError, "LAVA results").decode("utf-8", "replace")


def _rows(path: Path, console: dict[tuple[str, str], tuple[Status, str]]) -> Iterable[dict[str, Any]]:
    text = _read(path)
    if text.lstrip().startswith("{"):  # lava-run's log: one YAML flow mapping per line
        items = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                item, _ = load_yaml(line, str(path), ResultsError, LAVA_RESULTS, "lava-run log line")
            except ResultsError as e:
                raise ResultsError(e.message, path=str(path), line=number) from None
            items.append(item)
        console.update(console_statuses(items))
        for item in items:
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
    console.update(console_statuses(doc))
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
            return gate, case[len(gate) + 1 :]
    gate, _, thread = case.rpartition("-")
    return (gate, thread) if gate else (case, "")


def lava_verdicts(
    path: str | Path,
    tf: ThresholdFile | None = None,
    measurements: list[str] | None = None,
    log: str | Path | None = None,
) -> list[Verdict]:
    """Verdicts from a results file (or lava-run log); `log` is the job's log, for rtgate's own statuses."""
    p = Path(path)
    if not p.exists():
        raise ResultsError("no such file", path=str(p))
    console: dict[tuple[str, str], tuple[Status, str]] = {}
    if log is not None:
        lp = Path(log)
        if not lp.exists():
            raise ResultsError("no such file", path=str(lp))
        console.update(console_statuses(read_log_items(_read(lp))))
    rows = list(_rows(p, console))
    verdicts = verdicts_from_rows(rows, tf, measurements, console)
    if not verdicts:
        raise ResultsError("no rtgate results in this file", path=str(p))
    return verdicts


def verdicts_from_rows(
    rows: Iterable[dict[str, Any]],
    tf: ThresholdFile | None = None,
    measurements: list[str] | None = None,
    console: dict[tuple[str, str], tuple[Status, str]] | None = None,
    missing_reason: str = "LAVA recorded no result for this gate",
) -> list[Verdict]:
    """LAVA's rows (results export or log) as verdicts. With the threshold file, every gate of every
    expected measurement gets a verdict: one LAVA did not record is an ERROR, never missing."""
    console = console or {}
    gates = {m.name: [g.name for g in m.gates] for m in tf.measurements.values()} if tf else {}
    verdicts: list[Verdict] = []
    failed_runs: dict[str, str] = {}  # measurement -> why it did not run
    for row in rows:
        suite = str(row.get("suite") or "")
        if suite == "lava" or not re.match(r"^\d+_rtgate", suite):
            continue  # LAVA's own actions, other test definitions
        measurement = str(row.get("set") or re.sub(r"^\d+_rtgate-?", "", suite) or "rtgate")
        case = str(row.get("name") or "")
        result = str(row.get("result") or "unknown")
        if case in (f"{measurement}-sampler", "rtgate-setup"):
            failed_runs[measurement] = (
                f"the sampler failed on the board (LAVA case {case}: {result})"
                if case.endswith("sampler")
                else f"the test could not start on the board (LAVA case {case}: {result})"
            )
            continue
        status = _STATUS.get(result, Status.ERROR)
        gate, thread = _split(case, gates, measurement)
        value: float | None = None
        try:
            value = float(row["measurement"]) if row.get("measurement") not in (None, "", "None") else None
        except (TypeError, ValueError):
            value = None
        unit = str(row.get("unit") or row.get("units") or "")
        if unit == "None":
            unit = ""
        text = f"{value:g} {unit}".strip() if value is not None else ""
        reason = f"LAVA recorded {result}" + (f" ({text})" if text else "")
        own = console.get((measurement, case))
        if own and status is Status.FAIL and own[0] in (Status.INCONCLUSIVE, Status.ERROR):
            status = own[0]  # LAVA has no inconclusive or error: the board said which
        if own:
            reason += f"; on the board: {own[0].value}: {own[1]}"
        verdicts.append(
            Verdict(
                measurement=measurement,
                gate=gate,
                kind="lava",
                thread=thread or "all",
                status=status,
                reason=reason,
                value=value,
                value_text=text,
                properties={"lava_suite": suite, "lava_case": case},
            )
        )
    for measurement, why in failed_runs.items():
        names = gates.get(measurement) or ["sampler"]
        for gate in names:
            if not any(v.measurement == measurement and v.gate == gate for v in verdicts):
                verdicts.append(
                    Verdict(
                        measurement=measurement, gate=gate, kind="lava", thread="all", status=Status.ERROR, reason=why
                    )
                )
    if tf:
        expected = measurements or list(tf.measurements)
        for measurement in expected:
            for gate in gates.get(measurement, []):
                if not any(v.measurement == measurement and v.gate == gate for v in verdicts):
                    verdicts.append(
                        Verdict(
                            measurement=measurement,
                            gate=gate,
                            kind="lava",
                            thread="all",
                            status=Status.ERROR,
                            reason=missing_reason,
                        )
                    )
    return verdicts
