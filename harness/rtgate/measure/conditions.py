# SPDX-License-Identifier: GPL-2.0-or-later
"""Whether a system is fit to measure on: a threshold file's `require:` and `rtgate doctor`'s checks."""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from typing import Any

# Every check's id, as the results record it ("preflight") and doc/conditions.rst lists it.
CHECK_IDS = (
    "privilege",
    "preempt_rt",
    "rt_throttling",
    "isolcpus",
    "governor",
    "hypervisor",
    "busy",
    "idle_states",
    "pm_qos",
    "smt",
    "irqbalance",
    "timer_migration",
    "thp",
    "clocksource",
    "nohz_full",
    "competing_rt",
    "expected_rt",
)


@dataclass
class Check:
    """One of doctor's checks of this machine, as printed and as the results keep it."""

    status: str  # ok, warn, fail
    what: str
    fix: str = ""
    check: str = ""  # a short id (preempt_rt, governor, smt, ...): what the results record it by

    def as_dict(self) -> dict[str, str]:
        """As the validity record and run.environment["preflight"] keep it."""
        return {"status": self.status, "check": self.check, "what": self.what, "fix": self.fix}


JUDGE = "cannot be judged here:"  # a requirement this machine cannot answer is never met
RT_RUNTIME = "/proc/sys/kernel/sched_rt_runtime_us"


def doctor(env: dict[str, Any], require: dict[str, Any], measured: list[int] | None, live: bool = True) -> list[Check]:
    checks = []
    if live:
        rtprio = resource.getrlimit(resource.RLIMIT_RTPRIO)[0]
        if os.geteuid() == 0:
            checks.append(Check("ok", "running as root: SCHED_FIFO and mlockall are allowed", check="privilege"))
        elif rtprio == resource.RLIM_INFINITY or rtprio >= 80:
            checks.append(Check("ok", f"RLIMIT_RTPRIO {rtprio} allows real-time priorities", check="privilege"))
        else:
            checks.append(
                Check(
                    "fail",
                    f"not root and RLIMIT_RTPRIO is {rtprio}: no real-time policy allowed",
                    "run as root, or grant CAP_SYS_NICE / raise rtprio in /etc/security/limits.conf",
                    check="privilege",
                )
            )
    model = env.get("preemption")
    fix_rt = "boot a PREEMPT_RT kernel (CONFIG_PREEMPT_RT=y, e.g. Debian's linux-image-rt-amd64)"
    if model == "PREEMPT_RT":
        checks.append(Check("ok", f"kernel {env.get('kernel_release')} is PREEMPT_RT", check="preempt_rt"))
    else:
        checks.append(
            Check(
                "fail" if require.get("preempt_rt") else "warn",
                f"kernel {env.get('kernel_release')} is {model} ({env.get('preemption_source')}), "
                "not PREEMPT_RT: latencies will be far from real-time budgets",
                fix_rt,
                check="preempt_rt",
            )
        )
    runtime = env.get("sched_rt_runtime_us")
    if runtime is None:
        checks.append(
            Check(
                "fail" if require.get("rt_throttling_off") else "warn",
                f"RT throttling {JUDGE} {RT_RUNTIME} is unreadable",
                f"mount /proc, or check {RT_RUNTIME} by hand (-1: off)",
                check="rt_throttling",
            )
        )
    elif runtime != -1:
        checks.append(
            Check(
                "fail" if require.get("rt_throttling_off") else "warn",
                f"RT throttling is active (sched_rt_runtime_us={runtime} of "
                f"{env.get('sched_rt_period_us')}): RT tasks are stopped for the rest of each period",
                "echo -1 > /proc/sys/kernel/sched_rt_runtime_us",
                check="rt_throttling",
            )
        )
    else:
        checks.append(Check("ok", "RT throttling is off", check="rt_throttling"))
    isolated = set(env.get("isolation", {}).get("isolcpus", {}).get("cpus", []))
    if measured is not None and not set(measured) <= isolated:
        checks.append(
            Check(
                "fail" if require.get("isolated_cpus") else "warn",
                f"measured cpu {','.join(map(str, measured))} not isolated (isolcpus: "
                f"{','.join(map(str, sorted(isolated))) or 'none'})",
                "boot with isolcpus=<cpus> nohz_full=<cpus> rcu_nocbs=<cpus> and measure there",
                check="isolcpus",
            )
        )
    elif measured is not None:
        checks.append(Check("ok", f"measured cpu {','.join(map(str, measured))} isolated", check="isolcpus"))
    govs = env.get("governors", {})
    slow = {c: g for c, g in govs.items() if g != "performance"}
    if not govs and require.get("governor"):
        checks.append(
            Check(
                "fail",
                f"requires governor {require['governor']}; {JUDGE} no cpufreq governor on this machine",
                "drop require: governor for a machine without cpufreq, or measure where cpufreq is",
                check="governor",
            )
        )
    elif not govs:
        checks.append(Check("ok", "no CPU frequency scaling (no cpufreq governor)", check="governor"))
    elif slow:
        checks.append(
            Check(
                "fail" if require.get("governor") else "warn",
                "governor not performance on " + ", ".join(f"cpu{c} ({g})" for c, g in sorted(slow.items())),
                "cpupower frequency-set -g performance",
                check="governor",
            )
        )
    else:
        checks.append(Check("ok", "every CPU uses the performance governor", check="governor"))
    if env.get("virtualisation"):
        checks.append(
            Check(
                "fail" if require.get("bare_metal") else "warn",
                f"running under {env['virtualisation']}: the host's scheduling adds latency",
                "measure on the board itself, not in a VM",
                check="hypervisor",
            )
        )
    else:
        checks.append(Check("ok", "no hypervisor detected", check="hypervisor"))
    load = env.get("loadavg") or []
    ncpu = env.get("cpu_count") or 1
    if live and load and load[0] > 0.5 * ncpu:
        checks.append(
            Check(
                "warn",
                f"the machine is busy (load average {load[0]:.2f} on {ncpu} CPUs): other work "
                "competes with the measurement and its latencies",
                "measure on a quiet machine, or declare the load you want in the threshold file (load:)",
                check="busy",
            )
        )
    elif live and load:
        checks.append(Check("ok", f"the machine is quiet (load average {load[0]:.2f} on {ncpu} CPUs)", check="busy"))
    checks += machine_checks(env.get("machine") or {}, measured, env.get("isolation") or {})
    return checks


def _cpus(cpus: list[int]) -> str:
    return ",".join(map(str, cpus))


def machine_checks(machine: dict[str, Any], measured: list[int] | None, isolation: dict[str, Any]) -> list[Check]:
    """What rteval's report would show that spoils a latency figure: idle states, SMT, IRQ placement, ..."""
    checks: list[Check] = []
    cpus = (machine.get("topology") or {}).get("cpus") or {}
    targets = measured if measured is not None else sorted(int(c) for c in cpus)
    deep = {}
    for cpu in targets:
        states = (cpus.get(cpu) or cpus.get(str(cpu)) or {}).get("idle_states") or []
        slow = [st for st in states if not st.get("disabled") and (st.get("exit_latency_us") or 0) > 10]
        if slow:
            deep[cpu] = max(st.get("exit_latency_us") or 0 for st in slow)
    qos = machine.get("pm_qos_latency_us")
    if deep and (qos is None or qos > 10):
        worst = max(deep.values())
        checks.append(
            Check(
                "warn",
                f"idle states with exit latency up to {worst} us are enabled on cpu "
                f"{_cpus(sorted(deep))} and no PM QoS request holds them off",
                "keep --latency 0 (the sampler's default), or disable deep states: "
                "echo 1 > /sys/devices/system/cpu/cpuN/cpuidle/stateK/disable",
                check="idle_states",
            )
        )
    elif cpus:
        checks.append(Check("ok", "no deep idle state can delay a wake-up on the measured CPUs", check="idle_states"))
    holders = [h for h in machine.get("pm_qos_holders") or [] if h.get("comm") != "rtgate-sampler"]
    if holders:
        checks.append(
            Check(
                "warn",
                "other processes hold /dev/cpu_dma_latency: "
                + ", ".join(f"{h['comm']} ({h['pid']})" for h in holders)
                + "; their request shapes idle states during the run",
                "stop them, or accept that the run measures under their PM QoS setting",
                check="pm_qos",
            )
        )
    topology = machine.get("topology") or {}
    if topology.get("smt_active"):
        shared = sorted(
            {
                c
                for cpu in targets
                for c in ((cpus.get(cpu) or cpus.get(str(cpu)) or {}).get("siblings") or [])
                if c != cpu
            }
        )
        checks.append(
            Check(
                "warn",
                "SMT is active" + (f": cpu {_cpus(shared)} share cores with measured CPUs" if shared else ""),
                "echo off > /sys/devices/system/cpu/smt/control (or nosmt on the kernel command line)",
                check="smt",
            )
        )
    if machine.get("irqbalance_running"):
        checks.append(
            Check(
                "warn",
                "irqbalance is running: it moves interrupts onto measured CPUs during the run",
                "stop irqbalance, or set IRQBALANCE_BANNED_CPULIST to the measured CPUs",
                check="irqbalance",
            )
        )
    if machine.get("timer_migration") == "1":
        checks.append(
            Check(
                "warn",
                "timer_migration is on: timers of other CPUs can migrate onto measured CPUs",
                "echo 0 > /proc/sys/kernel/timer_migration",
                check="timer_migration",
            )
        )
    if machine.get("transparent_hugepage") == "always":
        checks.append(
            Check(
                "warn",
                "transparent hugepages are 'always': khugepaged compaction adds latency spikes",
                "echo never > /sys/kernel/mm/transparent_hugepage/enabled",
                check="thp",
            )
        )
    source = machine.get("clocksource")
    if source and source not in ("tsc", "arch_sys_counter", "riscv_clocksource", "timebase"):
        checks.append(
            Check(
                "warn",
                f"clocksource is {source}: reading the clock is slow and adds to every sample",
                "use the CPU's own counter if it is stable (tsc on x86: clocksource=tsc)",
                check="clocksource",
            )
        )
    isolated = set(isolation.get("isolcpus", {}).get("cpus", []) or machine.get("isolated_cpus") or [])
    if measured is not None and isolated and set(measured) <= isolated:
        nohz = set(isolation.get("nohz_full", {}).get("cpus", []))
        nocbs = set(isolation.get("rcu_nocbs", {}).get("cpus", []))
        missing = [name for name, got in (("nohz_full", nohz), ("rcu_nocbs", nocbs)) if not set(measured) <= got]
        if missing:
            checks.append(
                Check(
                    "warn",
                    f"measured cpu {_cpus(measured)} isolated but not in "
                    + " or ".join(missing)
                    + ": the tick and RCU callbacks still run there",
                    f"add {'='.join([missing[0], _cpus(measured)])} to the kernel command line",
                    check="nohz_full",
                )
            )
    return checks


def rt_task_checks(tasks: list[Any], require: dict[str, Any], priorities: dict[int, int]) -> list[Check]:
    """Doctor's view of the real-time tasks that may preempt the sampler, as the engine found them."""
    from rtgate.core.validity import describe_task

    where = ",".join(map(str, sorted(priorities)))
    lowest = min(priorities.values(), default=0)
    found = [t.as_dict() for t in tasks]
    competing = [t for t in found if not t["expected"]]
    expected = [t for t in found if t["expected"]]
    checks = []
    if competing:
        checks.append(
            Check(
                "fail" if require.get("no_competing_rt") else "warn",
                f"real-time task(s) that can preempt the sampler (priority {lowest}+) on cpu {where}: "
                + ", ".join(map(describe_task, competing)),
                "stop them, lower their priority (chrt -p) or move them off the measured CPUs "
                "(taskset -p); a latency measured beside them is theirs",
                check="competing_rt",
            )
        )
    else:
        checks.append(
            Check(
                "ok",
                f"no other real-time task can preempt the sampler (priority {lowest}+) on cpu {where}",
                check="competing_rt",
            )
        )
    if expected:
        names = sorted({t["comm"] for t in expected})
        checks.append(
            Check(
                "ok",
                f"expected kernel threads at or above the sampler's priority: {', '.join(names)} "
                "(per-CPU housekeeping: part of the kernel's latency)",
                check="expected_rt",
            )
        )
    return checks
