# SPDX-License-Identifier: GPL-2.0-or-later
"""One verdict for one event: what the engine (rtgate-sampler running a compiled plan, as on a board)
says of each gate, `rtgate check` says of the results JSON it wrote, to the gate id, status, value and
reason; and `rtgate run` of the same file gives the same gate ids and statuses.

Known answers, one event each (doc/conditions.rst's table): a run that passes one gate and fails
another; a requirement no machine meets (4096 CPUs); a load tool that is not installed; a load held to
a level one sleeping process cannot reach (invalid, its figures kept per thread); a stop signal in the
load's warm-up (INCONCLUSIVE, nothing measured); a stop signal mid-run (judged on what was measured,
a PASS becomes INCONCLUSIVE). Each waits for the event it means (the load started, the threads
running), never for a time a quiet machine takes."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import IS_ROOT

pytestmark = [
    pytest.mark.skipif(not IS_ROOT, reason="the engine measures at SCHED_FIFO"),
    pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the load goes on another CPU than the sampler's"),
]

GATES = "[{name: max, kind: max, limit_us: 1.0e+7}, {name: zero, kind: max, limit_us: 0}]"
SAMPLER = "{{duration: {d}, threads: [{{name: a, cpus: [0], priority: 80}}]}}"
CASES: dict[str, tuple[str, str, dict[str, str]]] = {
    # case: (duration, the measurement's extra keys, the statuses of (gate, thread) that must come)
    "judged": ("2s", "", {"max-cpu0": "PASS", "zero-cpu0": "FAIL"}),
    "unmet": ("2s", "require: {cpu_count: 4096}", {"max-all": "ERROR", "zero-all": "ERROR"}),
    "no-tool": (
        "2s",
        "load: {kind: custom, command: [rtgate-no-such-load-tool], warmup_seconds: 0.2}",
        {"max-all": "ERROR", "zero-all": "ERROR"},
    ),
    "below-level": (
        "2s",
        "load: {kind: custom, command: [sleep, '60'], min_cpu_percent: 50, warmup_seconds: 0.2}",
        {"max-cpu0": "ERROR", "zero-cpu0": "ERROR"},
    ),
    "stop-in-warm-up": (
        "20s",
        "load: {kind: custom, command: [sleep, '600'], warmup_seconds: 60}",
        {"max-all": "INCONCLUSIVE", "zero-all": "INCONCLUSIVE"},
    ),
    "stop-mid-run": ("60s", "", {"max-cpu0": "INCONCLUSIVE", "zero-cpu0": "FAIL"}),
}
WAIT_S = 60  # for an event the test waits for; a machine that takes longer has hung


def spec_text(case: str) -> str:
    duration, extra, _ = CASES[case]
    lines = [f"platform: events\nmeasurements:\n  m:\n    sampler: {SAMPLER.format(d=duration)}\n"]
    if extra:
        lines.append(f"    {extra}\n")
    lines.append(f"    gates: {GATES}\n")
    return "".join(lines)


def rtgate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rtgate", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def wait_for(event: str, ready: Any) -> None:
    deadline = time.monotonic() + WAIT_S
    while not ready():
        assert time.monotonic() < deadline, f"{event} did not happen within {WAIT_S} s"
        time.sleep(0.05)


def threads_of(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def stop_when_ready(proc: subprocess.Popen[str], case: str, out: Path) -> None:
    """SIGTERM once the event the case is about is under way."""
    if case == "stop-in-warm-up":  # the load's process is running: the engine is in its warm-up
        wait_for("the load's start", lambda: "sleep 600" in _children_cmdlines(proc.pid))
    else:  # the measuring threads are running
        wait_for("the sampler's threads", lambda: threads_of(proc.pid) >= 2)
        time.sleep(0.5)  # a few hundred periods measured, so that there are figures to judge
    proc.send_signal(signal.SIGTERM)


def _children_cmdlines(pid: int) -> str:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
            if ppid == pid:
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except (OSError, ValueError):
            continue
    return "\n".join(found)


def engine_verdicts(sampler: str, spec: Path, case: str, out: Path) -> dict[str, tuple[str, str, str]]:
    """(gate-thread) -> (status, value, reason) from the engine's RTGATE-GATE lines, run as rtgate.sh runs it."""
    plan = rtgate("lava", "args", str(spec), cwd=spec.parent)
    assert plan.returncode == 0, plan.stderr
    out.mkdir()  # as rtgate.sh makes OUTPUT_DIR
    argv = [sampler, *plan.stdout.split(), f"--output-dir={out}"]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        if case.startswith("stop-"):
            stop_when_ready(proc, case, out)
        stdout, stderr = proc.communicate(timeout=120)
    found = {}
    for line in stdout.splitlines():
        m = re.match(r"RTGATE-GATE (\S+) (\S+) (\S+) (\S+) \S+ \S+ \d+ \S+ (.*)$", line)
        if m:
            found[f"{m.group(1)}-{m.group(2)}"] = (m.group(3), m.group(4), m.group(5))
    assert found, stdout + stderr
    return found


def shown_value(v: dict[str, Any]) -> str:
    if v["value"] is None:
        return "-"
    return f"{v['value'] * (100 if v['unit'] == '%' else 1):.6g}"


def check_verdicts(spec: Path, results: Path) -> dict[str, tuple[str, str, str]]:
    verdicts = spec.parent / f"{results.stem}-verdicts.json"
    r = rtgate("check", str(spec), str(results), "--json", str(verdicts), cwd=spec.parent)
    assert r.returncode in (1, 3), r.stdout + r.stderr
    doc = json.loads(verdicts.read_text())
    return {f"{v['gate']}-{v['thread']}": (v["status"], shown_value(v), judged(v["reason"])) for v in doc["verdicts"]}


def judged(reason: str) -> str:
    """The verdict's reason without the likely cause rtgate adds from the record (a real-time task seen
    on the CPU while measuring, e.g. another test's sampler on this shared machine): an explanation the
    engine leaves to the reader, which changes no status."""
    return reason.split("; likely cause: ")[0]


@pytest.mark.parametrize("case", list(CASES))
def test_the_engine_and_check_of_its_results_say_the_same(sampler: str, tmp_path: Path, case: str) -> None:
    spec = tmp_path / "events.yaml"
    spec.write_text(spec_text(case))
    out = tmp_path / "board"
    engine = engine_verdicts(sampler, spec, case, out)
    assert {k: s for k, (s, _, _) in engine.items()} == CASES[case][2], engine
    assert check_verdicts(spec, out / "m.json") == engine
    if case == "below-level":  # invalid: the figure measured is kept, in the value and the reason
        assert all(r.startswith("invalid: ") and f"(measured {v} us)" in r for _, v, r in engine.values()), engine
    if case in ("unmet", "no-tool", "stop-in-warm-up"):
        assert all(r.startswith("not measured: ") for _, _, r in engine.values()), engine


@pytest.mark.parametrize("case", ["judged", "unmet", "no-tool", "below-level"])
def test_rtgate_run_gives_the_engines_gate_ids_and_statuses(tmp_path: Path, case: str) -> None:
    spec = tmp_path / "events.yaml"
    spec.write_text(spec_text(case))
    r = rtgate("run", str(spec), "--json", "v.json", cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    doc = json.loads((tmp_path / "v.json").read_text())
    assert {f"{v['gate']}-{v['thread']}": v["status"] for v in doc["verdicts"]} == CASES[case][2], doc
