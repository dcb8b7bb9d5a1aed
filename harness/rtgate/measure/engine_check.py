# SPDX-License-Identifier: GPL-2.0-or-later
"""What the measurement engine finds on a machine before it measures: `rtgate-sampler --check-only`
with the measurement's plan. It prints the system record, each requirement judged, and the
real-time tasks already there, and measures nothing.

`rtgate doctor` and every measurement's preflight ask it, so that doctor, `rtgate run` and a board,
which all run the same engine, cannot find a machine different (issue 44)."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, fields
from typing import Any

from rtgate.core.thresholds import Measurement
from rtgate.errors import SamplerError
from rtgate.measure.rt_tasks import RtTask
from rtgate.measure.sampler_args import engine_args

DEFAULT_PRIORITY = 80  # the sampler's priority when no threshold file says
TIMEOUT_S = 60  # it reads /proc and /sys once: seconds only on a machine that is barely running
_TASK_FIELDS = {f.name for f in fields(RtTask)}


@dataclass
class Findings:
    system: dict[str, Any]  # the system record, as the engine writes it into every results file
    unmet: list[tuple[str, str]]  # (require: key, reason) of each requirement not met; "board" for the machine keys
    rt_tasks: list[RtTask]  # real-time tasks that can preempt the measuring threads


def machine(sampler: str) -> dict[str, Any]:
    """The system record alone (`rtgate-sampler --dump-system`): this machine as the engine finds it,
    which describes a measurement that never got as far as asking the engine about its plan."""
    try:
        r = subprocess.run(
            [sampler, "--dump-system"], capture_output=True, text=True, errors="replace", timeout=TIMEOUT_S
        )
        found = json.loads(r.stdout) if r.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError) as e:
        raise SamplerError(f"{sampler} --dump-system: {e}") from e
    if not isinstance(found, dict):
        raise SamplerError(f"{sampler} --dump-system: " + (r.stderr.strip() or f"exit status {r.returncode}"))
    return found


def ask(
    sampler: str,
    m: Measurement | None,
    root: str = "/",
    duration_s: int | None = None,
    priority: int = DEFAULT_PRIORITY,
    words: list[str] | None = None,
) -> Findings:
    """The engine's findings for measurement `m` (None: no threshold file, a thread on every CPU at
    `priority`) on this machine, or on the copy of another machine's /proc, /sys and /boot under `root`.
    `words`: `m`'s plan as already compiled (sampler_args.engine_args), which is then what is asked."""
    argv = [sampler, "--check-only"]
    if root != "/":
        argv.append(f"--sysroot={root}")
    if m is None:
        argv += ["-S", f"-p{priority}"]
    else:
        argv += words if words is not None else engine_args(m, duration_s)
    try:
        r = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=TIMEOUT_S)
    except OSError as e:
        raise SamplerError(f"cannot start {sampler}: {e.strerror}") from e
    except subprocess.TimeoutExpired as e:
        raise SamplerError(f"{sampler} --check-only did not answer within {TIMEOUT_S} s") from e
    said = "; ".join(line.strip() for line in r.stderr.splitlines() if line.strip())
    if r.returncode not in (0, 1):
        what = f"for measurement {m.name!r}" if m is not None else "for this machine"
        raise SamplerError(f"{sampler} --check-only {what}: " + (said or f"exit status {r.returncode}"))
    try:
        found = json.loads(r.stdout)
        return Findings(
            system=found["system"],
            unmet=[(str(q["key"]), str(q["reason"])) for q in found["require"] if not q["met"]],
            rt_tasks=[RtTask(**{k: v for k, v in t.items() if k in _TASK_FIELDS}) for t in found["rt_tasks"]],
        )
    except (ValueError, KeyError, TypeError) as e:  # what it said on stderr first: that is the why
        raise SamplerError(f"{sampler} --check-only: " + (said or f"printed what this rtgate cannot read ({e})")) from e


def free_cpu(sampler: str, priority: int = DEFAULT_PRIORITY) -> int:
    """The last CPU this process may use that no other real-time task competes for at `priority`, as the
    engine finds them, else the last one: where a measurement with a known answer can run on a machine
    whose other real-time jobs hold CPUs of their own. CPU 0, which takes most housekeeping, comes last."""
    held = {c for t in ask(sampler, None, priority=priority).rt_tasks if not t.expected for c in t.on_cpus}
    order = sorted(os.sched_getaffinity(0), reverse=True)
    return next((c for c in order if c not in held), order[0])
