# SPDX-License-Identifier: GPL-2.0-or-later
"""Threshold-file gates as rtgate-sampler --gate arguments, for boards without Python.

The sampler evaluates them itself (sampler/gate.c) and prints one RTGATE-GATE line per verdict;
tests/vectors/gates.txt holds both evaluators to the same answers.
"""

from __future__ import annotations

from rtgate.core.gate_kinds import KINDS
from rtgate.core.thread_plan import ThreadPlan, plan_anywhere
from rtgate.core.thresholds import GateSpec, Measurement
from rtgate.errors import RtgateError

# RTGATE-GATE NAME THREAD STATUS VALUE LIMIT BOUND SAMPLES UNITS REASON...  (values: us, or % for rates)
GATE_LINE_FIELDS = ("gate", "thread", "status", "value", "limit", "bound", "samples", "units", "reason")


def _num(x: float) -> str:
    return format(x, ".15g")


def gate_arg(gate: GateSpec, m: Measurement, plan: ThreadPlan) -> str:
    """One --gate value. plan: the measurement's threads (plan_anywhere: on any machine)."""
    kind = KINDS[gate.kind]
    parts = [f"name={gate.name}", f"kind={gate.kind}"]
    for key, attr, typ in kind.native:
        value = getattr(gate, attr)
        if value is not None:
            parts.append(f"{key}={value}" if typ is int else f"{key}={_num(value)}")
    if "confidence" in kind.takes and gate.confidence != 0.95:
        parts.append(f"confidence={_num(gate.confidence)}")
    if gate.min_samples:
        parts.append(f"min_samples={gate.min_samples}")
    if gate.threads:
        groups = {g.name for g in m.sampler.threads}
        if set(gate.threads) != groups:
            if not plan.threads:  # one per CPU: how many is known only on the board
                raise RtgateError(f"gate {gate.name}: thread groups need a fixed thread count")
            parts.append("threads=" + "+".join(str(t.index) for t in plan.threads if t.label in gate.threads))
    if gate.cpus:
        parts.append("cpus=" + "+".join(map(str, gate.cpus)))
    if gate.scope == "worst":
        parts.append("scope=worst")
    return ",".join(parts)


def native_args(m: Measurement) -> list[str]:
    """--thread-labels and one --gate per gate of the measurement (worked out where the job is made,
    not on the board: the plan must not depend on this machine)."""
    plan = plan_anywhere(m)
    args = []
    if len(m.sampler.threads) > 1 and plan.fixed_count is not None:
        args.append("--thread-labels=" + ",".join(t.label for t in plan.threads))
    args += [f"--gate={gate_arg(g, m, plan)}" for g in m.gates]
    return args


def parse_gate_arg(arg: str, labels: list[str | None]) -> GateSpec:
    """The reverse of gate_arg; thread indices become the groups they belong to."""
    kv = dict(part.split("=", 1) for part in arg.split(","))
    g = GateSpec(name=kv["name"], kind=kv["kind"], where=("--gate", 0))
    for key, attr, typ in (*KINDS[g.kind].native, ("confidence", "confidence", float)):
        if key in kv:
            setattr(g, attr, typ(kv[key]))
    if "min_samples" in kv:
        g.min_samples = int(kv["min_samples"])
    if "threads" in kv:
        g.threads = sorted({labels[int(i)] or "" for i in kv["threads"].split("+")})
    if "cpus" in kv:
        g.cpus = [int(c) for c in kv["cpus"].split("+")]
    g.scope = kv.get("scope", "per_thread")
    return g


def parse_gate_line(line: str) -> dict[str, str] | None:
    """An RTGATE-GATE line as printed by the sampler, or None for any other line."""
    parts = line.rstrip("\n").split(" ", len(GATE_LINE_FIELDS))
    if len(parts) != len(GATE_LINE_FIELDS) + 1 or parts[0] != "RTGATE-GATE":
        return None
    return dict(zip(GATE_LINE_FIELDS, parts[1:]))
