# SPDX-License-Identifier: GPL-2.0-or-later
"""The conditions a measurement ran under, as every report shows them: the machine (kernel, preemption model,
architecture, CPUs, board, clocksource, SMT, isolation, idle states, ...), the load that ran and the level it held,
and the preflight warnings.

Read from what `rtgate run` recorded (core/recorded.py), never from the machine the report is written on. Each item
is text; an item that could not be read says "unknown (why)", never a guess. The text summary shows a compact
header of one or two lines; JSON, JUnit and HTML show every item."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rtgate.core.model import RunResult
from rtgate.core.recorded import recorded_environment
from rtgate.measure import busy

NOT_RECORDED = "not recorded: these results were not measured by rtgate run"

# key -> label, in the order reports list them. The keys are stable: JSON keys and JUnit property names.
MACHINE_ITEMS: tuple[tuple[str, str], ...] = (
    ("kernel", "kernel"),
    ("preemption", "preemption"),
    ("architecture", "architecture"),
    ("cpu_model", "CPU model"),
    ("cpu_count", "CPU count"),
    ("board", "board"),
    ("virtualisation", "virtualisation"),
    ("clocksource", "clocksource"),
    ("smt", "SMT"),
    ("online_cpus", "online CPUs"),
    ("isolated_cpus", "isolated CPUs (kernel)"),
    ("nohz_full_cpus", "nohz_full CPUs (kernel)"),
    ("isolation_cmdline", "isolation (command line)"),
    ("cpuidle", "cpuidle"),
    ("pm_qos", "PM QoS (/dev/cpu_dma_latency)"),
    ("irqbalance", "irqbalance"),
    ("timer_migration", "timer_migration"),
    ("transparent_hugepage", "transparent hugepages"),
    ("memory", "memory"),
    ("cpu_governors", "cpufreq governors"),
    ("rt_throttling", "RT throttling"),
    ("tuning_services", "tuning services"),
    ("rt_kernel_threads", "real-time kernel threads"),
    ("modules", "kernel modules"),
)
MEASUREMENT_ITEMS: tuple[tuple[str, str], ...] = (
    ("load", "load"),
    ("load_level", "load level"),
    ("machine_load", "machine load"),
)
LABELS = dict(MACHINE_ITEMS + MEASUREMENT_ITEMS)


@dataclass
class Described:
    """One measurement's conditions: machine items and measurement items as text, and the preflight list."""

    machine: dict[str, str]
    measurement: dict[str, str]
    preflight: list[dict[str, Any]] | None = None  # None: no preflight was recorded
    load_record: dict[str, Any] | None = None
    busy: list[str] = field(default_factory=list)
    recorded: bool = True  # rtgate run recorded the machine (False: only what the results file says)


def _unknown(why: str) -> str:
    return f"unknown ({why})"


def _cpus(cpus: Any) -> str:
    if not isinstance(cpus, list):
        return str(cpus)
    return ",".join(map(str, cpus)) if cpus else "none"


def _board(board: dict[str, Any]) -> str | None:
    parts = []
    if board.get("dt_model"):
        parts.append(str(board["dt_model"]))
    if board.get("dt_compatible"):
        parts.append("compatible " + ", ".join(map(str, board["dt_compatible"])))
    dmi = " ".join(str(board[k]) for k in ("dmi_sys_vendor", "dmi_product_name") if board.get(k))
    if dmi:
        parts.append(f"DMI {dmi}" + (f" (board {board['dmi_board_name']})" if board.get("dmi_board_name") else ""))
    return "; ".join(parts) or None


def _item(value: Any, why: str | None, explained_by: tuple[str, ...], unknown: dict[str, str]) -> str:
    """An item's text: its value, else "unknown (why)", the why the recorder gave under one of
    `explained_by` first."""
    if value is not None and value != "":
        return str(value)
    for k in explained_by:
        if k in unknown:
            return _unknown(unknown[k])
    return _unknown(why or "not recorded")


def _sysinfo_items(sysinfo: dict[str, Any], unknown: dict[str, str]) -> dict[str, str]:
    """Results not measured by rtgate run: what rt-tests' sysinfo says, the rest not recorded."""
    release = sysinfo.get("release")
    realtime = sysinfo.get("realtime") if sysinfo.get("realtime") in (0, 1) else None
    # rt-tests writes realtime 1 when /sys/kernel/realtime reads 1: PREEMPT_RT, or not; nothing finer.
    preemption = None
    if realtime is not None:
        preemption = {
            1: "PREEMPT_RT (rt-tests sysinfo)",
            0: "not PREEMPT_RT (rt-tests sysinfo; which model not recorded)",
        }[realtime]
    arch = f"{sysinfo['machine']} (rt-tests sysinfo)" if sysinfo.get("machine") else None
    items = {
        "kernel": _item(f"{release} (rt-tests sysinfo)" if release else None, NOT_RECORDED, ("kernel",), unknown),
        "preemption": _item(preemption, NOT_RECORDED, ("preemption",), unknown),
        "architecture": _item(arch, NOT_RECORDED, ("architecture",), unknown),
    }
    for key, _label in MACHINE_ITEMS[3:]:
        items[key] = _unknown(NOT_RECORDED)
    return items


def _preemption(system: dict[str, Any], machine: dict[str, Any]) -> str | None:
    model = system.get("preemption")
    return f"{model} ({system.get('preemption_source')})" if model and model != "unknown" else None


def _clocksource(system: dict[str, Any], machine: dict[str, Any]) -> str | None:
    available, clocksource = machine.get("clocksources_available"), machine.get("clocksource")
    return f"{clocksource} (available: {', '.join(available)})" if clocksource and available else clocksource


def _smt(system: dict[str, Any], machine: dict[str, Any]) -> str | None:
    topology = machine.get("topology") or {}
    smt_active, control = topology.get("smt_active"), topology.get("smt_control")
    if smt_active is None:
        return None
    return ("on" if smt_active else "off") + (f" (control {control})" if control else " (from thread siblings)")


def _cpu_list(key: str) -> Any:
    """The value of machine[key], a CPU list, as text."""
    return lambda system, machine: None if machine.get(key) is None else _cpus(machine[key])


def _online(system: dict[str, Any], machine: dict[str, Any]) -> str | None:
    topology = machine.get("topology") or {}
    return None if topology.get("online") is None else _cpus(topology.get("online"))


def _isolation(system: dict[str, Any], machine: dict[str, Any]) -> str | None:
    isolation = system.get("isolation")
    if not isinstance(isolation, dict):
        return None
    return " ".join(f"{k}={v.get('value')}" for k, v in isolation.items() if isinstance(v, dict)) or "none"


def _cpuidle(system: dict[str, Any], machine: dict[str, Any]) -> str | None:
    driver, governor = machine.get("cpuidle_driver"), machine.get("cpuidle_governor")
    return f"{driver}" + (f" (governor {governor})" if governor else "") if driver else None


def _pm_qos(system: dict[str, Any], machine: dict[str, Any]) -> str | None:
    qos, holders = machine.get("pm_qos_latency_us"), machine.get("pm_qos_holders")
    if qos is None and holders is None:
        return None
    held = ", held by " + ", ".join(f"{h.get('comm')}[{h.get('pid')}]" for h in holders) if holders else ""
    return (f"{qos} us" if qos is not None else "value unknown") + (
        held or (", no holder" if holders is not None else "")
    )


def _irqbalance(system: dict[str, Any], machine: dict[str, Any]) -> str | None:
    running = machine.get("irqbalance_running")
    return None if running is None else ("running" if running else "not running")


def _thp(system: dict[str, Any], machine: dict[str, Any]) -> str | None:
    thp, defrag = machine.get("transparent_hugepage"), machine.get("transparent_hugepage_defrag")
    return f"{thp}" + (f" (defrag {defrag})" if defrag else "") if thp else None


def _memory(system: dict[str, Any], machine: dict[str, Any]) -> str | None:
    memory = machine.get("memory") or {}
    total, nodes = memory.get("total_kib"), memory.get("numa_nodes")
    if total is None:
        return None
    return f"{total / 1024:.0f} MiB" + (f", NUMA nodes {_cpus(nodes)}" if nodes else ", NUMA nodes unknown")


def _governors(system: dict[str, Any], machine: dict[str, Any]) -> str | None:
    governors = system.get("governors")
    if not isinstance(governors, dict):
        return None
    return ", ".join(sorted({str(g) for g in governors.values()})) or "none (no cpufreq)"


def _rt_throttling(system: dict[str, Any], machine: dict[str, Any]) -> str | None:
    runtime, period = system.get("sched_rt_runtime_us"), system.get("sched_rt_period_us")
    if runtime is None:
        return None
    return "off (sched_rt_runtime_us -1)" if runtime == -1 else f"{runtime} us of every {period} us"


def _services(system: dict[str, Any], machine: dict[str, Any]) -> str | None:
    services, tuned = machine.get("services"), machine.get("tuned_profile")
    if services is None:
        return None
    return (", ".join(services) or "none running") + (f"; tuned profile {tuned}" if tuned else "")


def _rt_threads(system: dict[str, Any], machine: dict[str, Any]) -> str | None:
    threads = machine.get("rt_kernel_threads")
    if threads is None:
        return None
    listed = ": " + ", ".join(f"{t.get('comm')} {t.get('policy')} {t.get('priority')}" for t in threads)
    return f"{len(threads)}" + (listed if threads else "")


def _modules(system: dict[str, Any], machine: dict[str, Any]) -> str | None:
    modules = machine.get("modules")
    return None if modules is None else f"{len(modules)}" + (f": {', '.join(modules)}" if modules else "")


def _system(key: str) -> Any:
    return lambda system, machine: system.get(key)


def _machine(key: str) -> Any:
    return lambda system, machine: machine.get(key)


# Per item of what rtgate run recorded: its value from (system, machine), why it is unknown when
# it is missing, and the keys of the recorder's own "unknown" reasons that explain it (default:
# the item's key). In MACHINE_ITEMS' order.
_RECORDED: tuple[tuple[str, Any, str | None, tuple[str, ...]], ...] = (
    ("kernel", _system("kernel_release"), "/proc/sys/kernel/osrelease unreadable", ()),
    (
        "preemption",
        _preemption,
        "neither /sys/kernel/realtime, the kernel config, the version string nor sched/preempt says it",
        (),
    ),
    ("architecture", _machine("architecture"), "recorded from a copy of another system's /proc and /sys", ()),
    ("cpu_model", _system("cpu_model"), "/proc/cpuinfo names no model", ()),
    ("cpu_count", _system("cpu_count"), "/proc/cpuinfo lists no processor", ()),
    ("board", lambda system, machine: _board(machine.get("board") or {}), None, ("board",)),
    ("virtualisation", lambda system, machine: system.get("virtualisation") or "none detected", None, ()),
    ("clocksource", _clocksource, None, ()),
    ("smt", _smt, "neither /sys/devices/system/cpu/smt nor thread siblings recorded", ("smt", "topology")),
    ("online_cpus", _online, None, ("online_cpus",)),
    ("isolated_cpus", _cpu_list("isolated_cpus"), None, ()),
    ("nohz_full_cpus", _cpu_list("nohz_full_cpus"), None, ()),
    ("isolation_cmdline", _isolation, None, ()),
    ("cpuidle", _cpuidle, None, ("cpuidle_driver",)),
    ("pm_qos", _pm_qos, "read only on the live machine, as root", ("pm_qos_value", "pm_qos_holders")),
    ("irqbalance", _irqbalance, "no process list", ()),
    ("timer_migration", _machine("timer_migration"), None, ()),
    ("transparent_hugepage", _thp, None, ("thp",)),
    ("memory", _memory, None, ()),
    ("cpu_governors", _governors, None, ()),
    ("rt_throttling", _rt_throttling, "/proc/sys/kernel/sched_rt_runtime_us unreadable", ()),
    ("tuning_services", _services, None, ()),
    ("rt_kernel_threads", _rt_threads, None, ()),
    ("modules", _modules, None, ()),
)


def _machine_items(system: dict[str, Any], sysinfo: dict[str, Any]) -> dict[str, str]:
    found = system.get("machine")
    machine: dict[str, Any] = found if isinstance(found, dict) else {}
    unknown: dict[str, str] = machine.get("unknown") or {}
    if not system:
        return _sysinfo_items(sysinfo, unknown)
    return {key: _item(value(system, machine), why, keys or (key,), unknown) for key, value, why, keys in _RECORDED}


def _one_load(load: dict[str, Any]) -> tuple[str, str]:
    """A load's kind and placement, and the level it reached."""
    kind = str(load.get("kind"))
    where = kind if kind == "none" else f"{kind} on CPUs {_cpus(load.get('cpus'))}"
    level = load.get("level")
    if kind == "none":
        text = "none asked"
    elif isinstance(level, dict):
        reached = level.get("reached")
        text = (
            f"reached {reached:g} {level.get('unit')}"
            if isinstance(reached, (int, float))
            else _unknown("the tool reported no figure")
        )
        floor = level.get("min")
        text = (
            f"{text} (level {floor:g} {level.get('unit')})"
            if isinstance(floor, (int, float))
            else f"{text} (no level set)"
        )
    else:
        text = _unknown("no level recorded for this load")
    if load.get("problem"):
        text += f"; {load['problem']}"
    return where, text


def _load_items(env: dict[str, Any], recorded: bool) -> tuple[dict[str, str], dict[str, Any] | None, list[str]]:
    load = env.get("load")
    items: dict[str, str] = {}
    if not isinstance(load, dict) or not load.get("kind"):
        why = "not recorded" if recorded else NOT_RECORDED
        items["load"] = _unknown(why)
        items["load_level"] = _unknown(why)
        record = None
    else:
        each = [x for x in load.get("loads") or [load] if isinstance(x, dict)]  # several loads: each its own
        texts = [_one_load(x) for x in each]
        items["load"] = " + ".join(t[0] for t in texts)
        # several loads: each level named by its load ("cpu reached 36 % CPU (level 25 % CPU), memory ...")
        items["load_level"] = (
            texts[0][1] if len(texts) == 1 else ", ".join(f"{x.get('kind')} {t[1]}" for x, t in zip(each, texts))
        )
        record = {k: load.get(k) for k in ("kind", "cpus", "level", "problem") if k in load}
    machine_load = env.get("machine_load")
    busy_lines: list[str] = []
    if isinstance(machine_load, dict):
        items["machine_load"] = busy.describe(machine_load)
        busy_lines = [str(b) for b in machine_load.get("busy") or []]
    else:
        items["machine_load"] = _unknown("not recorded" if recorded else NOT_RECORDED)
    return items, record, busy_lines


def describe_run(run: RunResult) -> Described:
    env = recorded_environment(run)
    system = env.get("system") if isinstance(env.get("system"), dict) else {}
    sysinfo = env.get("sysinfo") if isinstance(env.get("sysinfo"), dict) else {}
    measurement, record, busy_lines = _load_items(env, bool(system))
    preflight = env.get("preflight")
    checks = [p for p in preflight if isinstance(p, dict)] if isinstance(preflight, list) else None
    machine = _machine_items(system or {}, sysinfo or {})
    return Described(machine, measurement, checks, record, busy_lines, recorded=bool(system))


def describe_unmeasured(system: dict[str, Any], preflight: list[dict[str, Any]] | None = None) -> Described:
    """A measurement that did not run (its requirements unmet, a warning under --strict, or stopped before it
    started): the machine as rtgate run found it, which is what a refused board file is compared with."""
    not_measured = {key: "none: not measured" for key, _label in MEASUREMENT_ITEMS}
    return Described(_machine_items(system, {}), not_measured, preflight)


def describe_runs(
    runs: list[tuple[str, RunResult]],
    unmeasured: Mapping[str, list[dict[str, Any]] | None] | None = None,
    system: dict[str, Any] | None = None,
) -> dict[str, Described]:
    """Each measured measurement's conditions (a measurement given twice: its first results); with `system`,
    the `unmeasured` ones (name -> preflight warnings, None: not recorded) are described by the machine alone."""
    out: dict[str, Described] = {}
    for name, run in runs:
        out.setdefault(name, describe_run(run))
    if system is not None:
        for name, checks in (unmeasured or {}).items():
            out.setdefault(name, describe_unmeasured(system, checks))
    return out


def _preflight_text(checks: list[dict[str, Any]] | None) -> str:
    if checks is None:
        return "preflight not recorded"
    if not checks:
        return "preflight clean"
    counts = {s: sum(1 for c in checks if c.get("status") == s) for s in ("fail", "warn")}
    head = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    return f"preflight {head}: " + ", ".join(f"{c.get('check')}" for c in checks)


def header_lines(described: dict[str, Described]) -> list[str]:
    """The text summary's header: the machine on one line (one per distinct machine), the loads and preflight on
    another."""
    if not described:
        return ["rtgate: machine: unknown (no measurement ran)"]
    groups: dict[str, list[str]] = {}
    for name, d in described.items():
        m = d.machine
        if not d.recorded:
            known = [f"{k} {m[k]}" for k in ("kernel", "preemption", "architecture") if not m[k].startswith("unknown")]
            text = ", ".join(known + ["the rest unknown" if known else "unknown"]) + f" ({NOT_RECORDED})"
        else:
            read = {k: not v.startswith("unknown") for k, v in m.items()}
            text = ", ".join(
                [
                    f"kernel {m['kernel']}",
                    f"preemption {m['preemption']}",
                    m["architecture"] if read["architecture"] else f"architecture {m['architecture']}",
                    f"{m['cpu_count']} CPUs" + (f" {m['cpu_model']}" if read["cpu_model"] else ""),
                    f"board {m['board']}",
                    f"clocksource {m['clocksource']}",
                    f"SMT {m['smt']}",
                    f"isolated CPUs {m['isolated_cpus']}",
                ]
            )
        groups.setdefault(text, []).append(name)
    lines = [
        f"rtgate: machine{'' if len(groups) == 1 else ' (' + ', '.join(names) + ')'}: {text}"
        for text, names in groups.items()
    ]
    if not any(d.recorded for d in described.values()):
        lines.append(f"rtgate: load: {_unknown(NOT_RECORDED)}")
        return lines
    loads = "; ".join(
        f"{name} {d.measurement['load']}"
        + ("" if d.measurement["load"].startswith("none") else f", {d.measurement['load_level']}")
        for name, d in described.items()
    )
    preflights = {_preflight_text(d.preflight) for d in described.values()}
    lines.append(f"rtgate: load: {loads}; " + "; ".join(sorted(preflights)))
    return lines


def environment_document(described: dict[str, Described]) -> dict[str, Any]:
    """The verdicts JSON's "environment": the machine (every item), and each measurement's load, level and
    preflight. A measurement measured on another machine than the first carries its own "machine"."""
    if not described:
        return {"machine": None, "why": "no measurement ran", "measurements": {}}
    first = next(iter(described.values()))
    measurements: dict[str, Any] = {}
    for name, d in described.items():
        entry: dict[str, Any] = dict(d.measurement)
        entry["load_record"] = d.load_record
        entry["preflight"] = d.preflight  # null: not recorded
        if d.machine != first.machine:
            entry["machine"] = d.machine
        measurements[name] = entry
    return {"machine": first.machine, "measurements": measurements}


def labelled(described: dict[str, Described]) -> list[tuple[str, str]]:
    """Every item with a human label, for the HTML table: the machine once, then each measurement's own."""
    rows: list[tuple[str, str]] = []
    shown: list[dict[str, str]] = []
    for name, d in described.items():
        if d.machine not in shown:
            prefix = "" if not shown else f"{name} "
            rows.extend((prefix + LABELS[k], v) for k, v in d.machine.items())
            shown.append(d.machine)
        rows.extend((f"{name} {LABELS[k]}", v) for k, v in d.measurement.items())
        if d.busy:
            rows.append((f"{name} busy machine", "; ".join(d.busy)))
        if d.preflight is None:
            rows.append((f"{name} preflight", "not recorded"))
        for c in d.preflight or []:
            rows.append(
                (
                    f"{name} preflight {c.get('check')}",
                    f"{str(c.get('status')).upper()}: {c.get('what')} (fix: {c.get('fix')})",
                )
            )
    return rows


def junit_properties(d: Described) -> list[tuple[str, str]]:
    """One measurement's conditions as JUnit testsuite properties: environment::<item>, preflight::<check>."""
    props = [(f"environment::{k}", v) for k, v in {**d.machine, **d.measurement}.items()]
    props.extend(
        (f"preflight::{c.get('check')}", f"{c.get('status')}: {c.get('what')} (fix: {c.get('fix')})")
        for c in d.preflight or []
    )
    return props
