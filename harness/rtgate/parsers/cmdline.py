# SPDX-License-Identifier: GPL-2.0-or-later
"""A cyclictest (or rtgate-sampler) command line as recorded in rt-tests JSON -> how it measured.

cyclictest records argv joined by spaces (no quoting) and parses it with getopt_long: short options
may be grouped (-mq), take their value attached (-i200) or as the next word, -t and -a take an
optional value (attached, or the next word when it is a number), long options take `=value` or the
next word. Semantics follow cyclictest's source: -i default 1000 us; -d default 500 us, dropped when
-h/-H is given (by rtgate-sampler too); -D is whole seconds with an optional m/h/d suffix; -l counts
cycles per thread but all threads stop when the first has them; --priospread gives thread N priority PRIO-N; a priority
without a real-time policy means SCHED_FIFO, a real-time policy without priority means threads+1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rtgate.core.model import MeasuredSetup, RunResult, ThreadResult
from rtgate.core.periods import derive_missed
from rtgate.errors import ResultsError

# Which options take a value: the sampler's (tests/system/test_sampler_contract.py holds these tables to
# rtgate-sampler --dump-contract), which are cyclictest's.
_SHORT_VALUE = set("bcdDhHilopF")  # short options that take a value
_SHORT_OPTIONAL = set("atA")  # optional value: attached, or a following number
_LONG_VALUE = {
    "priority",
    "interval",
    "distance",
    "duration",
    "loops",
    "policy",
    "histogram",
    "histofall",
    "histfile",
    "json",
    "breaktrace",
    "clock",
    "latency",
    "mainaffinity",
    "spike",
    "spike-nodes",
    "oscope",
    "fifo",
    "thread-cpus",
    "thread-priorities",
    "thread-labels",
    "checkpoint",
    "block",
    "gate",
    "load",
    "load-arg",
    "load-dir",
    "sysroot",
    "measurement",
    "require",
    "plan",
    "param",
    "output-dir",
    "timerlat",
}
_LONG_OPTIONAL = {"threads", "affinity", "aligned", "secaligned"}
_SHORT_TO_LONG = {
    "p": "priority",
    "i": "interval",
    "d": "distance",
    "D": "duration",
    "l": "loops",
    "h": "histogram",
    "H": "histofall",
    "b": "breaktrace",
    "c": "clock",
    "o": "oscope",
    "t": "threads",
    "a": "affinity",
    "A": "aligned",
    "S": "smp",
    "N": "nsecs",
    "r": "relative",
    "x": "posix_timers",
    "m": "mlockall",
    "q": "quiet",
    "v": "verbose",
    "F": "fifo",
    "M": "refresh_on_max",
    "n": "nanosleep",
    "R": "resolution",
    "s": "system",
    "u": "unbuffered",
}


@dataclass
class Options:
    """A command line's options: long name -> value, and what could not be read."""

    program: str = ""
    values: dict[str, str | None] = field(default_factory=dict)  # long name -> value (None: flag)
    problems: list[str] = field(default_factory=list)


def _words(cmdline: str) -> list[str]:
    """rtgate writes NAME.cmdline shell-quoted (a path may hold a blank); a plain line (rt-tests', the
    sampler's) splits at blanks alike, without importing shlex."""
    if not any(c in cmdline for c in "'\"\\"):
        return cmdline.split()
    import shlex

    try:
        return shlex.split(cmdline)
    except ValueError:  # an unbalanced quote in a tool's own line: its words as written
        return cmdline.split()


def split_options(cmdline: str) -> Options:
    words = _words(cmdline)
    opts = Options(program=words[0].rsplit("/", 1)[-1] if words else "")
    i = 1
    while i < len(words):
        w = words[i]
        i += 1
        if w.startswith("--") and len(w) > 2:
            name, eq, value = w[2:].partition("=")
            if eq:
                opts.values[name] = value
            elif name in _LONG_VALUE and i < len(words):
                opts.values[name] = words[i]
                i += 1
            elif name in _LONG_OPTIONAL and i < len(words) and re.fullmatch(r"!?\d[\d,\-]*", words[i]):
                opts.values[name] = words[i]
                i += 1
            else:
                opts.values[name] = None
        elif w.startswith("-") and len(w) > 1:
            j = 1
            while j < len(w):
                c = w[j]
                long = _SHORT_TO_LONG.get(c, c)
                rest = w[j + 1 :]
                if c in _SHORT_VALUE:
                    if rest:
                        opts.values[long] = rest
                    elif i < len(words):
                        opts.values[long] = words[i]
                        i += 1
                    else:
                        opts.problems.append(f"-{c} without a value")
                    break
                if c in _SHORT_OPTIONAL:
                    if rest:
                        opts.values[long] = rest
                    elif i < len(words) and re.fullmatch(r"!?\d[\d,\-]*", words[i]):
                        opts.values[long] = words[i]
                        i += 1
                    else:
                        opts.values[long] = None
                    break
                opts.values[long] = None
                j += 1
        else:
            opts.problems.append(f"stray argument {w!r}")
    return opts


def _int(value: str | None) -> int | None:
    """C atoi: leading digits, else None."""
    if value is None:
        return None
    m = re.match(r"\s*([+-]?[0-9]+)", value)  # ASCII digits: atoi reads no other script's
    return int(m.group(1)) if m else None


def parse_duration(value: str | None) -> int | None:
    """cyclictest's parse_time_string: leading integer, then an optional m/h/d (anything else: seconds)."""
    if value is None:
        return None
    m = re.match(r"\s*([0-9]+)(.?)", value)
    if not m:
        return None
    return int(m.group(1)) * {"m": 60, "M": 60, "h": 3600, "H": 3600, "d": 86400, "D": 86400}.get(m.group(2), 1)


@dataclass
class CommandSetup:
    """What a cyclictest command line asked for; None = not given on the command line."""

    program: str
    interval_us: int
    distance_us: int
    duration_s: int | None
    loops: int | None
    priority: int | None  # None: not given (depends on the policy and thread count)
    policy: str | None
    priospread: bool
    threads: int | None  # None: one per CPU (-S, -t without a number)
    nsecs: bool
    relative: bool
    histogram: int | None
    breaktrace: int | None
    thread_priorities: list[int] | None = None  # rtgate-sampler's --thread-priorities
    pinned: bool = False  # -a, -S, --numa or --thread-cpus: the threads' CPUs were asked for
    problems: list[str] = field(default_factory=list)

    def priorities(self, nthreads: int) -> list[int | None]:
        """Each thread's priority as cyclictest sets it (rt-tests 2.x rules)."""
        if self.thread_priorities:
            padded: list[int | None] = [*self.thread_priorities, *([None] * nthreads)]
            return padded[:nthreads]
        prio = self.priority or 0
        rt_policy = self.policy in ("fifo", "rr")
        if prio == 0 and (self.priospread or rt_policy):
            prio = nthreads + 1
        if prio == 0:
            return [0] * nthreads
        return [prio - i if self.priospread else prio for i in range(nthreads)]

    def effective_policy(self) -> str:
        if self.policy in ("fifo", "rr"):
            return self.policy
        if self.priority or self.priospread or self.thread_priorities:
            return "fifo"  # cyclictest: "policy and priority don't match: setting policy to SCHED_FIFO"
        return self.policy or "other"

    def intervals(self, nthreads: int) -> list[int]:
        return [self.interval_us + i * self.distance_us for i in range(nthreads)]


def parse_cmdline(cmdline: str) -> CommandSetup:
    o = split_options(cmdline)
    v = o.values
    hist = _int(v.get("histogram")) or _int(v.get("histofall"))
    distance = _int(v.get("distance"))
    if hist:  # cyclictest: "distance is ignored and set to 0, if histogram enabled"; rtgate-sampler too
        distance = 0
    elif distance is None:
        distance = 500
    threads: int | None = 1
    if "smp" in v:
        threads = None
    elif "threads" in v:
        threads = _int(v["threads"]) or None
    thread_cpus, thread_prios = v.get("thread-cpus"), v.get("thread-priorities")
    if thread_cpus:
        threads = len(thread_cpus.split(","))
    prios = None
    if thread_prios:
        prios = [p for p in (_int(x) for x in thread_prios.split(",")) if p is not None]
    return CommandSetup(
        program=o.program,
        interval_us=_int(v.get("interval")) or 1000,
        distance_us=max(0, distance),
        duration_s=parse_duration(v.get("duration")) or None,
        loops=_int(v.get("loops")) or None,
        priority=_int(v.get("priority")),
        policy=v.get("policy"),
        priospread="priospread" in v,
        threads=threads,
        nsecs="nsecs" in v,
        relative="relative" in v,
        histogram=hist,
        breaktrace=_int(v.get("breaktrace")),
        thread_priorities=prios,
        pinned=bool({"affinity", "smp", "numa"} & set(v)) or bool(thread_cpus),
        problems=o.problems,
    )


def command_setup(
    command: CommandSetup, threads: list[ThreadResult], unit: str, source: str, elapsed: tuple[float, float] | None
) -> MeasuredSetup:
    """How results were measured, from the command line that made them (recorded, or told: apply_command)."""
    return MeasuredSetup(
        source=source,
        tool=command.program,
        interval_us=command.interval_us,
        distance_us=command.distance_us,
        duration_s=command.duration_s,
        loops=command.loops,
        policy=command.effective_policy(),
        priority=threads[0].priority if threads else None,
        priospread=command.priospread,
        threads=len(threads),
        nsecs=unit == "ns",
        relative=command.relative,
        breaktrace=command.breaktrace,
        elapsed_s=elapsed,
        pinned=command.pinned,
        notes=list(command.problems),
    )


# Results that do not record the command line that made them, as derive_missed names them.
TOLD_FORMATS = {
    "histogram-text": "histogram text",
    "summary-text": "T: lines",
    "verbose-text": "-v samples",
    "rt-tests-json": "rt-tests JSON",
}


def apply_command(run: RunResult, cmdline: str, source: str) -> None:
    """Results that do not say how they were made (text formats, rt-tests JSON without its "cmdline:"),
    told by the command line that made them (check's --cmdline, or the NAME.cmdline file beside them):
    each thread's interval, priority and policy, the run's -D or -l, and the missed periods derived from
    them. What the results do state must agree with it: a contradiction is refused, never overridden."""
    if run.format not in TOLD_FORMATS or run.cmdline:
        raise ResultsError(
            f"records how it was made; the command line from {source} is for results that do not", path=run.source
        )
    command = parse_cmdline(cmdline)

    def refuse(message: str) -> ResultsError:
        return ResultsError(
            f"the command line from {source} ({' '.join(cmdline.split())[:120]}) {message}", path=run.source
        )

    if not command.program or command.problems:
        raise refuse(f"cannot be read: {'; '.join(command.problems) or 'it is empty'}")
    if command.nsecs != (run.unit == "ns"):
        raise refuse(
            f"{'has' if command.nsecs else 'has no'} -N, but the results are read in {run.unit}"
            f" (--unit {'ns' if command.nsecs else 'us'})"
        )
    n = len(run.threads)
    if command.threads is not None and command.threads != n:
        raise refuse(f"runs {command.threads} threads, but the results have {n}")
    intervals, priorities = command.intervals(n), command.priorities(n)
    announced = run.measured_setup.announced_intervals if run.measured_setup else {}
    for t, interval, priority in zip(run.threads, intervals, priorities):
        if t.interval_us is not None and t.interval_us != interval:
            raise refuse(f"gives thread {t.index} -i {interval}, but the results say {t.interval_us}")
        # cyclictest's -v header prints the interval after adding -d (not with -h): parsers/verbose.py
        x = announced.get(t.index)
        if x is not None and x != interval + (0 if command.histogram else command.distance_us):
            raise refuse(
                f"gives thread {t.index} -i {interval} -d {command.distance_us}, but its -v header says 'Interval: {x}'"
            )
        if t.priority is not None and priority is not None and t.priority != priority:
            raise refuse(f"gives thread {t.index} priority {priority}, but the results say {t.priority}")
        t.interval_us, t.priority = interval, t.priority if t.priority is not None else priority
        t.policy = t.policy or command.effective_policy()
    run.cmdline = cmdline
    run.measured_setup = command_setup(command, run.threads, run.unit, f"command line ({source})", None)
    run.measured_setup.announced_intervals = dict(announced)
    derive_missed(run, run.measured_setup, TOLD_FORMATS[run.format])
