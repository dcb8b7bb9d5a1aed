"""Background load during a measurement: start it, let it warm up, watch it, stop and reap its
whole process group, and record what it achieved. A load that died or never reached its level
makes the measurement invalid (its gates ERROR), never a pass.

A load never runs unbounded: it runs under coreutils' timeout (and stress-ng under its own
--timeout) just past the measurement's expected end, and dies with rtgate (PR_SET_PDEATHSIG), so
neither a lost stop nor a killed rtgate leaves it hogging a CPU."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rtgate.errors import RtgateError
from rtgate.measure.stop import STOP, die_with_parent

KINDS = ("none", "cpu", "hackbench", "memory", "io", "network", "timer", "custom")
_CLK_TCK = os.sysconf("SC_CLK_TCK")


@dataclass
class LoadSpec:
    kind: str = "none"
    workers: int | None = None          # default: one per CPU of the placement
    cpus: str | list[int] = "others"    # measured | others | all | [list]
    size: str = "64M"                   # memory and io
    command: list[str] = field(default_factory=list)  # custom
    warmup_seconds: float = 2.0
    min_cpu_percent: float | None = None


def _pgid_cpu_seconds(pgid: int) -> float:
    """CPU time (user + system, with reaped children's) of every live process in a process group."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields after ")": state, ppid, pgrp, ...
            total += sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
    return total / _CLK_TCK


def pgid_processes(pgid: int) -> list[int]:
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[2]) == pgid:
                pids.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return pids


def _cpulist(cpus: list[int]) -> str:
    return ",".join(map(str, cpus))


KILL_AFTER_S = 5  # timeout's SIGKILL follows its SIGTERM after this long


def load_argv(spec: LoadSpec, cpus: list[int], workdir: str, bound_s: int) -> list[str]:
    """The load's command, bounded: it ends by itself after `bound_s` seconds at the latest."""
    bound = ["timeout", "-k", str(KILL_AFTER_S), f"{bound_s + KILL_AFTER_S}s"]
    return bound + _load_command(spec, cpus, workdir, bound_s)


def _load_command(spec: LoadSpec, cpus: list[int], workdir: str, bound_s: int) -> list[str]:
    n = str(spec.workers or len(cpus))
    stress = ["stress-ng", "--taskset", _cpulist(cpus), "--metrics-brief", "--timeout", f"{bound_s}s"]
    if spec.kind == "cpu":
        return stress + ["--cpu", n]
    if spec.kind == "memory":
        return stress + ["--vm", n, "--vm-bytes", spec.size]
    if spec.kind == "io":
        return stress + ["--hdd", n, "--hdd-bytes", spec.size, "--temp-path", workdir]
    if spec.kind == "timer":  # timerfd: stress-ng 0.15's --timer stops after 65536 operations
        return stress + ["--timerfd", n, "--timerfd-freq", "100000"]
    if spec.kind == "network":  # ICMP flood of the loopback address only
        return stress + ["--icmp-flood", n]
    if spec.kind == "hackbench":
        # hackbench ends after its loops: a fixed loop restarts it and prints one line per run.
        # The values travel as arguments ($1, $2), never as shell text.
        loop = 'while taskset -c "$1" hackbench -g "$2" -l 500 >/dev/null; do echo rtgate-hackbench-run; done; exit 1'
        return ["sh", "-c", loop, "rtgate-hackbench", _cpulist(cpus), n]
    if spec.kind == "custom":
        return ["taskset", "-c", _cpulist(cpus), *spec.command]
    raise RtgateError(f"unknown load kind {spec.kind!r}")


class Load:
    """`with Load(spec, cpus):` runs the load around a measurement."""

    def __init__(self, spec: LoadSpec, cpus: list[int], logdir: Path, bound_s: int = 86400) -> None:
        self.spec, self.cpus, self.logdir = spec, cpus, logdir
        self.bound_s = bound_s  # the load ends by itself after this long, whatever happens here
        self.proc: subprocess.Popen[bytes] | None = None  # the process group's leader
        self.pgid: int | None = None
        self.problem: str | None = None
        self.cpu_seconds = 0.0
        self.elapsed = 0.0
        self._workdir = ""  # made when a load starts, removed when it stops
        self._start_cpu = 0.0
        self._start_time = 0.0
        self.argv: list[str] = []
        self._log: Any = None
        self.stopped = False

    # -- lifecycle
    def __enter__(self) -> "Load":
        try:
            self.start()
        except BaseException:
            self.stop()  # __exit__ does not run when __enter__ raises
            raise
        return self

    def start(self) -> None:
        """Start the load and let it warm up. A stop request (SIGINT/SIGTERM/SIGHUP) cuts the warm-up
        short: the caller sees STOP.requested and stops the load."""
        if self.spec.kind == "none":
            return
        if not shutil.which("timeout"):
            raise RtgateError("load: coreutils' timeout not found: a load never runs without a bound")
        tool = "hackbench" if self.spec.kind == "hackbench" else "stress-ng" if self.spec.kind != "custom" \
            else self.spec.command[0]
        if not shutil.which(tool):
            raise RtgateError(f"load {self.spec.kind}: {tool} not found (apt-get install "
                              f"{'rt-tests' if tool == 'hackbench' else tool})")
        self._workdir = tempfile.mkdtemp(prefix="rtgate-load-")
        self.argv = load_argv(self.spec, self.cpus, self._workdir, self.bound_s)
        self.logdir.mkdir(parents=True, exist_ok=True)
        self._log = (self.logdir / "load.log").open("ab")
        self._spawn()
        if not STOP.sleep(self.spec.warmup_seconds):
            return
        if not self.alive():
            self.problem = f"the {self.spec.kind} load died during its warm-up (see {self.logdir / 'load.log'})"
        self._start_cpu = _pgid_cpu_seconds(self.pgid or 0)
        self._start_time = time.monotonic()

    def __exit__(self, *exc: object) -> None:
        if self.spec.kind != "none":
            if not self.elapsed and self._start_time:
                self.finish()
            self.stop()

    def _spawn(self) -> None:
        # Its own session: the whole group is stopped and reaped at the end, whatever happens. Its
        # leader (timeout) gets SIGTERM if rtgate dies, and passes it on to the group, then SIGKILL.
        self.proc = subprocess.Popen(self.argv, stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True, cwd=self._workdir,
                                     preexec_fn=die_with_parent(signal.SIGTERM))
        if self.pgid is None:
            self.pgid = self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and self.problem is None

    def finish(self) -> None:
        """Call when the measurement ends: did the load hold until then, and at what level?"""
        if self.pgid is None:
            return
        self.elapsed = time.monotonic() - self._start_time
        self.cpu_seconds = max(0.0, _pgid_cpu_seconds(self.pgid) - self._start_cpu)
        if self.problem is None and not self.alive():
            rc = self.proc.poll() if self.proc else None
            self.problem = f"the {self.spec.kind} load stopped during the measurement (exit status {rc})"
        floor = self.min_cpu_percent()
        if self.problem is None and floor and self.elapsed > 0 and self.cpu_percent() < floor:
            self.problem = (f"the {self.spec.kind} load reached {self.cpu_percent():.0f} % CPU, "
                            f"below its level of {floor:.0f} %")

    def stop(self) -> None:
        """Stop and reap the whole group (SIGTERM, then SIGKILL, checked gone); remove the temporary
        folder. Safe to call at any point, and more than once."""
        if self.stopped:
            return
        if self.pgid is None:
            if self._log:
                self._log.close()
            if self._workdir:
                shutil.rmtree(self._workdir, ignore_errors=True)
            return
        for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.pgid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and pgid_processes(self.pgid):
                if self.proc:
                    self.proc.poll()
                time.sleep(0.05)
            if not pgid_processes(self.pgid):
                break
        if self.proc:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        if self._log:
            self._log.close()
        shutil.rmtree(self._workdir, ignore_errors=True)
        left = pgid_processes(self.pgid)
        self.stopped = True
        if left:
            raise RtgateError(f"load processes {left} survived SIGKILL")

    # -- what was achieved
    def min_cpu_percent(self) -> float | None:
        if self.spec.min_cpu_percent is not None:
            return self.spec.min_cpu_percent
        if self.spec.kind in ("cpu", "hackbench", "memory"):
            return 25.0 * min(self.spec.workers or len(self.cpus), len(self.cpus))
        return None

    def cpu_percent(self) -> float:
        return 100.0 * self.cpu_seconds / self.elapsed if self.elapsed > 0 else 0.0

    def summary(self) -> dict[str, Any]:
        if self.spec.kind == "none":
            return {"kind": "none"}
        out: dict[str, Any] = {"kind": self.spec.kind, "command": self.argv, "cpus": self.cpus, "pgid": self.pgid,
                               "cpu_seconds": round(self.cpu_seconds, 3), "cpu_percent": round(self.cpu_percent(), 1),
                               "seconds": round(self.elapsed, 3), "problem": self.problem}
        log = self.logdir / "load.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        if self.spec.kind == "hackbench":
            out["hackbench_loops"] = 500 * text.count("rtgate-hackbench-run")
        if text:
            ops = re.findall(r"metrc:.*?\]\s+(\S+)\s+(\d+)", text)
            if ops:
                out["bogo_ops"] = {name: int(n) for name, n in ops}
        return out
