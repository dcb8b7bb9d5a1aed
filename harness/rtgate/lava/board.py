# SPDX-License-Identifier: GPL-2.0-or-later
"""What a board needs of a measurement, as the parameters lava-defs/rtgate.sh reads (LAVA and Fuego).

rtgate.sh runs on the board without Python: it gets the sampler's arguments with their gates
(RTGATE_ARGS), the load (RTGATE_LOAD), the requirements (RTGATE_REQUIRE) and the CPUs the
threads are pinned to (RTGATE_MEASURED_CPUS), and carries out all of it as `rtgate run` does.
Whatever part of a threshold file the board cannot carry out is refused here, with the
measurement and the key named: a job never drops part of a file silently.

RTGATE_LOAD and RTGATE_REQUIRE are ';'-separated key=value fields; a load command is its words
separated by spaces. Several loads (`load: [cpu, memory]`) follow one another in RTGATE_LOAD, each
starting at its kind= field: one load's fields are the format of old jobs, unchanged. LAVA writes
parameters into its run.sh as NAME='value' without escaping, so no value holds a quote or a newline,
and none of these a ';' or a word with a space in it.
"""

from __future__ import annotations

from rtgate.core.load_spec import LoadSpec
from rtgate.core.thread_plan import RT_POLICIES
from rtgate.core.thresholds import Measurement
from rtgate.errors import RtgateError
from rtgate.measure.conditions import CHECK_IDS
from rtgate.measure.load import DEFAULT_CPU_PERCENT_PER_WORKER, DEFAULT_CUSTOM_CPU_PERCENT, DEFAULT_OPS_PER_SECOND
from rtgate.measure.sampler_args import sampler_args

# The requirements rtgate.sh checks on the board (measure/conditions.py's unmet() is the reference).
BOARD_REQUIREMENTS = (
    "preempt_rt",
    "isolated_cpus",
    "governor",
    "bare_metal",
    "rt_throttling_off",
    "architecture",
    "compatible",
    "dmi_product",
    "cpu_count",
    "no_competing_rt",
)
# What strict: true refuses on (rtgate doctor's checks; expected_rt is never a warning).
STRICT_CHECKS = tuple(c for c in CHECK_IDS if c != "expected_rt")
# The knobs Linaro's cyclictest test definition names, as the sampler's arguments fix them.
NAMED = ("PRIORITY", "INTERVAL", "THREADS", "AFFINITY", "HISTOGRAM")
_UNSAFE = set("'\"\\\n\r\t;`$")


def _word(m: Measurement, what: str, value: str) -> str:
    if not value or any(c in _UNSAFE or c.isspace() or not c.isprintable() for c in value):
        raise RtgateError(f"measurement {m.name}: {what} {value!r} cannot travel to a board (no spaces, quotes or ';')")
    return value


def _field(m: Measurement, what: str, value: str) -> str:
    """A value that may hold spaces (a DMI product name) but no quote, ';' or control character."""
    if any(c in _UNSAFE - {" "} or not c.isprintable() for c in value):
        raise RtgateError(f"measurement {m.name}: {what} {value!r} cannot travel to a board (no quotes or ';')")
    return value


def compiled_args(m: Measurement, duration_s: int | None, rt_priority: int | None = None) -> str:
    """RTGATE_ARGS: the sampler options and gates of a measurement, one word each."""
    args = sampler_args(m, None, duration_s=duration_s, native_gates=True)
    if rt_priority is not None:
        if "-p" not in args or len(m.sampler.threads) != 1:
            raise RtgateError(
                f"measurement {m.name}: --rt-priority needs one real-time thread group (set priorities in the file)"
            )
        args[args.index("-p") + 1] = str(rt_priority)
    for a in args:
        if any(c.isspace() or c in "'\"\\" for c in a):
            raise RtgateError(f"measurement {m.name}: sampler argument {a!r} cannot travel in a LAVA parameter")
    return " ".join(args)


def named_values(args: str) -> dict[str, str]:
    """PRIORITY, INTERVAL, THREADS, AFFINITY, HISTOGRAM as RTGATE_ARGS fixes them (rtgate.sh derives
    them the same way; a named parameter that differs is a contradiction, every gate ERROR)."""
    out = dict.fromkeys(NAMED, "")
    words = args.split()
    for i, w in enumerate(words):
        following = words[i + 1] if i + 1 < len(words) else ""
        if w == "-S":
            out["THREADS"] = out["AFFINITY"] = "all"
        elif w in ("-p", "-i", "-t", "-a", "-h"):
            out[{"-p": "PRIORITY", "-i": "INTERVAL", "-t": "THREADS", "-a": "AFFINITY", "-h": "HISTOGRAM"}[w]] = (
                following
            )
        elif w.startswith("--thread-cpus="):
            out["AFFINITY"] = w.split("=", 1)[1]
            out["THREADS"] = str(out["AFFINITY"].count(",") + 1)
        elif w.startswith("--thread-priorities="):
            out["PRIORITY"] = w.split("=", 1)[1]
    return out


def load_param(m: Measurement) -> str:
    """RTGATE_LOAD: the loads as rtgate.sh runs them ('' for none), each starting at its kind= field;
    a later load's is kind=+<kind>: an rtgate.sh older than several loads refuses that kind (every gate
    ERROR) where it would have run only the last load."""
    loads = [_one_load(m, spec) for spec in m.loads if spec.kind != "none"]
    return ";".join(load if i == 0 else load.replace("kind=", "kind=+", 1) for i, load in enumerate(loads))


def _one_load(m: Measurement, spec: LoadSpec) -> str:
    if spec.kind == "kcompile" and not spec.tree:
        raise RtgateError(
            f"measurement {m.name}: a kcompile load on a board needs tree: (a kernel source tree on the board)"
        )
    cpus = spec.cpus if isinstance(spec.cpus, str) else ",".join(map(str, spec.cpus))
    fields = [f"kind={spec.kind}", f"cpus={cpus}", f"warmup={spec.warmup_seconds:g}"]
    if spec.workers:
        fields.append(f"workers={spec.workers}")
    if spec.kind in ("memory", "io"):
        fields.append(f"size={_word(m, 'load size', spec.size)}")
    if spec.kind in ("io", "timer", "network"):
        floor = DEFAULT_OPS_PER_SECOND if spec.min_ops_per_second is None else spec.min_ops_per_second
        fields.append(f"min_ops={floor:g}")
    elif spec.min_cpu_percent is not None:
        fields.append(f"min_cpu={spec.min_cpu_percent:g}")
    elif spec.kind == "custom":
        fields.append(f"min_cpu={DEFAULT_CUSTOM_CPU_PERCENT:g}")
    else:
        fields.append(f"per_worker={DEFAULT_CPU_PERCENT_PER_WORKER:g}")
    if spec.tree:
        fields.append(f"tree={_word(m, 'load tree', spec.tree)}")
    if spec.kind == "custom":
        fields.append("command=" + " ".join(_word(m, "load command word", w) for w in spec.command))
    return ";".join(fields)


def sampler_priorities(m: Measurement, rt_priority: int | None = None) -> str:
    """no_competing_rt's value: per CPU a thread may run on, the thread's real-time priority as other
    real-time tasks see it (0 for a non-real-time policy), as "cpu:priority" joined by ','; "all"
    for a thread that may run on any CPU (`cpus: all`, or not pinned). rtgate.sh keeps each CPU's
    lowest, as ThreadPlan.priorities does: a task at or above it there can preempt the sampler.
    `rt_priority` (`--rt-priority`, one real-time group: compiled_args refuses others) replaces the file's."""
    pairs: list[str] = []
    for g in m.sampler.threads:
        prio = g.priority if g.policy in RT_POLICIES else 0
        if rt_priority is not None:
            prio = rt_priority
        if isinstance(g.cpus, list) and g.cpus:  # its threads go round its CPUs (thread_plan._build)
            where: list[int | str] = list(g.cpus[: g.count if g.count is not None else len(g.cpus)])
        else:
            where = ["all"]
        pairs += [f"{c}:{prio}" for c in where if f"{c}:{prio}" not in pairs]
    return ",".join(pairs)


def require_param(m: Measurement, rt_priority: int | None = None) -> str:
    """RTGATE_REQUIRE: each requirement as key=value ('' for none); `rt_priority` as compiled_args takes it."""
    fields = []
    for key, value in m.require.items():
        if key not in BOARD_REQUIREMENTS:
            raise RtgateError(
                f"measurement {m.name}: require {key} cannot be checked on a board by rtgate.sh; "
                "drop it from the board's file or measure with rtgate run"
            )
        if key == "no_competing_rt":
            if value:
                fields.append(f"{key}={sampler_priorities(m, rt_priority)}")
        elif isinstance(value, bool):
            if value:
                fields.append(f"{key}=true")
        else:
            fields.append(f"{key}={_field(m, f'require {key}', str(value))}")
    return ";".join(fields)


def measured_cpus_param(m: Measurement) -> str:
    """RTGATE_MEASURED_CPUS: the CPUs the threads are pinned to; 'all' for one per CPU; '' unpinned."""
    groups = m.sampler.threads
    if any(g.cpus == "all" for g in groups):
        return "all"
    cpus: list[int] = []
    for g in groups:
        if not isinstance(g.cpus, list) or not g.cpus:
            return ""
        cpus += [c for c in g.cpus if c not in cpus]
    return ",".join(map(str, cpus))


def board_params(m: Measurement, duration_s: int | None, rt_priority: int | None = None) -> dict[str, str]:
    """Every parameter rtgate.sh needs for one measurement, named as rtgate.yaml names them."""
    if m.strict:  # any warning of doctor's checks refuses the measurement: a board missing one would pass
        raise RtgateError(
            f"measurement {m.name}: strict: true refuses to measure on any warning of rtgate doctor's checks "
            f"({', '.join(STRICT_CHECKS)}), which rtgate.sh does not make; on a board, replace strict with the "
            f"require: keys it checks ({', '.join(BOARD_REQUIREMENTS)}), or run rtgate doctor --strict / "
            "rtgate run on the board"
        )
    args = compiled_args(m, duration_s, rt_priority)
    params = {
        "RTGATE_ARGS": args,
        "RTGATE_MEASUREMENT": m.name,
        "RTGATE_LOAD": load_param(m),
        "RTGATE_REQUIRE": require_param(m, rt_priority),
        "RTGATE_MEASURED_CPUS": measured_cpus_param(m),
    }
    params.update(named_values(args))
    return params


def args_text(m: Measurement, duration_s: int | None, every: bool) -> str:
    """`rtgate lava args` / `rtgate fuego args`: RTGATE_ARGS alone, or (every) each board parameter as
    NAME='value' lines. RTGATE_ARGS alone is refused for a measurement with a load or requirements:
    a board given only the sampler's arguments would measure without them."""
    params = board_params(m, duration_s)
    if every:
        return "".join(f"{k}='{v}'\n" for k, v in params.items())
    dropped = [k for k in ("load", "require") if params["RTGATE_" + k.upper()]]
    if dropped:
        raise RtgateError(
            f"measurement {m.name} has {' and '.join(k + ':' for k in dropped)} that RTGATE_ARGS does not carry: "
            "use --all to print every board parameter (RTGATE_LOAD, RTGATE_REQUIRE, ...)"
        )
    return params["RTGATE_ARGS"] + "\n"
