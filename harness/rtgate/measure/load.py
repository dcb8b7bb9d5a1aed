# SPDX-License-Identifier: GPL-2.0-or-later
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
import time
from pathlib import Path
from typing import Any

from rtgate.core.load_spec import KINDS as KINDS  # re-exported: the kinds a load can be
from rtgate.core.load_spec import LoadSpec as LoadSpec
from rtgate.errors import RtgateError, SamplerError
from rtgate.measure.stop import STOP, die_with_parent
from rtgate.safe_io import Folder

STRESS_NG_KINDS = ("cpu", "memory", "io", "network", "timer")
# The level each kind must hold during the measurement, in its own unit. CPU-bound loads are held to
# CPU use (rtgate's own accounting of the load's process group); stress-ng's I/O, timer and network
# stressors to their operation rate as stress-ng itself reports it (its YAML, real time): hdd
# operations, timerfd expirations, ICMP packets sent. The defaults only catch a dead or stalled
# load; a team that qualifies under a given load sets its own.
CPU_LEVEL_KINDS = ("cpu", "hackbench", "memory", "kcompile", "custom")
DEFAULT_CPU_PERCENT_PER_WORKER = 25.0
DEFAULT_CUSTOM_CPU_PERCENT = 1.0
DEFAULT_OPS_PER_SECOND = 1.0
YAML_MAX_BYTES = 1 << 20
LOG_READ_MAX = 64 << 20  # of load.log, what the runs are counted in
_CLK_TCK = os.sysconf("SC_CLK_TCK")


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


def _group_alive(pgid: int) -> bool:
    """Whether any process (a zombie included, as pgid_processes counts it) is left in the group: one
    system call, where pgid_processes reads every /proc/<pid>/stat."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _cpulist(cpus: list[int]) -> str:
    return ",".join(map(str, cpus))


KILL_AFTER_S = 5  # timeout's SIGKILL follows its SIGTERM after this long


def load_argv(spec: LoadSpec, cpus: list[int], workdir: str, bound_s: int, logdir: str = ".") -> list[str]:
    """The load's command, bounded: it ends by itself after `bound_s` seconds at the latest."""
    bound = ["timeout", "-k", str(KILL_AFTER_S), f"{bound_s + KILL_AFTER_S}s"]
    return bound + _load_command(spec, cpus, workdir, bound_s, logdir)


YAML_NAME = "stress-ng.yaml"  # beside load.log: stress-ng's own figures, written when it ends


def _load_command(spec: LoadSpec, cpus: list[int], workdir: str, bound_s: int, logdir: str = ".") -> list[str]:
    n = str(spec.workers or len(cpus))
    stress = [
        "stress-ng",
        "--taskset",
        _cpulist(cpus),
        "--metrics-brief",
        "--timeout",
        f"{bound_s}s",
        "--yaml",
        os.path.join(logdir, YAML_NAME),
    ]
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
    if spec.kind == "kcompile":
        # rteval's kcompile: build, clean, build again, with make -j N, until stopped. A kernel tree
        # is built out of tree (O=, in the load's temporary folder; defconfig first), never in place.
        if spec.tree:
            loop = (
                'make -s -C "$3" O="$4" defconfig >/dev/null || exit 1; '
                'while taskset -c "$1" make -s -C "$3" O="$4" -j "$2" >/dev/null; do '
                'echo rtgate-kcompile-run; make -s -C "$3" O="$4" clean >/dev/null; done; exit 1'
            )
            return ["sh", "-c", loop, "rtgate-kcompile", _cpulist(cpus), n, spec.tree, os.path.join(workdir, "build")]
        loop = (
            'while taskset -c "$1" make -s -C "$3" -j "$2" >/dev/null; do '
            'echo rtgate-kcompile-run; make -s -C "$3" clean >/dev/null; done; exit 1'
        )
        return ["sh", "-c", loop, "rtgate-kcompile", _cpulist(cpus), n, os.path.join(workdir, "project")]
    if spec.kind == "custom":
        return ["taskset", "-c", _cpulist(cpus), *spec.command]
    raise RtgateError(f"unknown load kind {spec.kind!r}")


def read_stress_ng_yaml(folder: Folder, name: str = YAML_NAME) -> list[dict[str, Any]] | None:
    """The `metrics:` list of stress-ng's --yaml output: one mapping per stressor, as stress-ng wrote
    it (bogo-ops, bogo-ops-per-second-real-time, wall-clock-time, cpu-usage-per-instance, ...)."""
    import yaml

    try:
        raw = folder.read_bytes(name, YAML_MAX_BYTES + 1)
    except (OSError, RtgateError):
        return None
    if len(raw) > YAML_MAX_BYTES:
        return None
    try:
        doc = yaml.safe_load(raw.decode("utf-8", errors="replace"))
    except yaml.YAMLError:
        return None
    metrics = doc.get("metrics") if isinstance(doc, dict) else None
    if not isinstance(metrics, list):
        return None
    return [m for m in metrics if isinstance(m, dict) and "stressor" in m]


_BUNDLED_SOURCES = 48


def write_bundled_project(folder: Path) -> None:
    """A small C project for the kcompile load: enough translation units for make -j to keep every
    worker compiling (each unit is plain C with loops the optimiser works on), and a link step."""
    folder.mkdir(parents=True)
    objs = []
    for i in range(_BUNDLED_SOURCES):
        body = "\n".join(
            f"static unsigned f{i}_{k}(unsigned x) {{ unsigned s = {k}u; for (unsigned j = 0; j < x; j++) "
            f"{{ s = s * 2654435761u + (j ^ {k}u); if (s & 1u) s ^= s >> 7; }} return s; }}"
            for k in range(40)
        )
        calls = " + ".join(f"f{i}_{k}(x)" for k in range(40))
        (folder / f"unit{i}.c").write_text(f"{body}\nunsigned unit{i}(unsigned x) {{ return {calls}; }}\n")
        objs.append(f"unit{i}.o")
    decls = "".join(f"unsigned unit{i}(unsigned);\n" for i in range(_BUNDLED_SOURCES))
    total = " + ".join(f"unit{i}(n)" for i in range(_BUNDLED_SOURCES))
    (folder / "main.c").write_text(
        f"{decls}int main(int argc, char **argv) {{ unsigned n = (unsigned)argc; "
        f"(void)argv; return (int)(({total}) & 1u); }}\n"
    )
    objs.append("main.o")
    (folder / "Makefile").write_text(
        "CFLAGS = -O2 -Wall\n"
        f"OBJS = {' '.join(objs)}\n"
        "kcompile-project: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n"
        "%.o: %.c\n\t$(CC) $(CFLAGS) -c -o $@ $<\n"
        "clean:\n\trm -f $(OBJS) kcompile-project\n"
    )


WORKDIR_PREFIX = "rtgate-load-"  # then the owner's pid: $TMPDIR/rtgate-load-<pid>-<random>


def reclaim_workdirs(tmp: str | None = None) -> list[str]:
    """Remove the load folders a SIGKILLed rtgate left in $TMPDIR: only ours (same user, a real
    folder, not a link) whose owner process is gone. Returns what was removed."""
    import tempfile  # here: a measurement without a load need not import it (and random, ~1 ms)

    tmp = tmp or tempfile.gettempdir()
    removed: list[str] = []
    try:
        entries = list(os.scandir(tmp))
    except OSError:
        return removed
    for entry in entries:
        m = re.fullmatch(re.escape(WORKDIR_PREFIX) + r"([0-9]{1,10})-[A-Za-z0-9_]+", entry.name)
        if not m or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            if entry.stat(follow_symlinks=False).st_uid != os.geteuid():
                continue
            os.kill(int(m.group(1)), 0)
            continue  # its owner lives (or the pid is in use again): left alone
        except ProcessLookupError:
            pass
        except (OSError, OverflowError):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(entry.path)
    return removed


class Load:
    """`with Load(spec, cpus):` runs the load around a measurement."""

    def __init__(self, spec: LoadSpec, cpus: list[int], logdir: Path, bound_s: int = 86400) -> None:
        """`logdir`: the load's own folder (made in its parent, never through a link there)."""
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
        self._finished = False  # finish() ran: the measurement ended with the load in place
        self.metrics: list[dict[str, Any]] | None = None  # stress-ng's own figures (its YAML)

    # -- lifecycle
    def __enter__(self) -> Load:
        try:
            self.start()
        except BaseException:
            self.stop()  # __exit__ does not run when __enter__ raises
            raise
        return self

    def start(self) -> None:
        """Start the load and let it warm up. A stop request (SIGINT/SIGTERM/SIGHUP) cuts the warm-up
        short: the caller sees STOP.requested and stops the load."""
        self.launch()
        if self.pgid is not None and STOP.sleep(self.spec.warmup_seconds):
            self.settle()

    def launch(self) -> None:
        """Start the load, without its warm-up (Loads warms several up together). A load that cannot
        start is a SamplerError: the measurement is not made and its gates are ERROR, as the engine's."""
        if self.spec.kind == "none":
            return
        if not shutil.which("timeout"):
            raise SamplerError("load: coreutils' timeout not found: a load never runs without a bound")
        tools = {"hackbench": ["hackbench"], "kcompile": ["make", "cc"], "custom": self.spec.command[:1]}
        for tool in tools.get(self.spec.kind, ["stress-ng"]):
            if not shutil.which(tool):
                package = {"hackbench": "rt-tests", "make": "make", "cc": "gcc"}.get(tool, tool)
                raise SamplerError(f"load {self.spec.kind}: {tool} not found (apt-get install {package})")
        if self.spec.kind == "kcompile" and self.spec.tree and not (Path(self.spec.tree) / "Makefile").is_file():
            raise SamplerError(f"load kcompile: {self.spec.tree} is not a kernel source tree (no Makefile)")
        reclaim_workdirs()
        import tempfile  # loaded by reclaim_workdirs already

        self._workdir = tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-")
        if self.spec.kind == "kcompile" and not self.spec.tree:
            write_bundled_project(Path(self._workdir) / "project")
        # stress-ng writes its figures in the private temporary folder (it would follow a link planted
        # in the output folder); they are copied beside load.log when the load stops.
        self.argv = load_argv(self.spec, self.cpus, self._workdir, self.bound_s, self._workdir)
        with self._folder() as folder:
            # Each run its own log and figures: a repeated run into the same folder starts afresh.
            folder.unlink(YAML_NAME)
            self._log = folder.create("load.log")
        self._spawn()

    def settle(self) -> None:
        """After the warm-up: did the load survive it? Its CPU use is counted from here."""
        if not self.alive():
            self.problem = f"the {self.spec.kind} load died during its warm-up (see {self.logdir / 'load.log'})"
        self._start_cpu = _pgid_cpu_seconds(self.pgid or 0)
        self._start_time = time.monotonic()

    def _folder(self, create: bool = True) -> Folder:
        with Folder(self.logdir.parent, create=create) as parent:
            return parent.sub(self.logdir.name, create=create)

    def __exit__(self, *exc: object) -> None:
        if self.spec.kind != "none":
            if not self.elapsed and self._start_time:
                self.finish()
            self.stop()

    def _spawn(self) -> None:
        # Its own session: the whole group is stopped and reaped at the end, whatever happens. Its
        # leader (timeout) gets SIGTERM if rtgate dies, and passes it on to the group, then SIGKILL.
        self.proc = subprocess.Popen(
            self.argv,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=self._workdir,
            preexec_fn=die_with_parent(signal.SIGTERM),
        )
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
            self.problem = (
                f"the {self.spec.kind} load reached {self.cpu_percent():.0f} % CPU, below its level of {floor:g} %"
            )
        self._finished = True

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
        self._end_group(self.pgid)
        if self._log:
            self._log.close()
        if self.spec.kind in STRESS_NG_KINDS:
            self._keep_yaml()
        shutil.rmtree(self._workdir, ignore_errors=True)
        left = pgid_processes(self.pgid)
        self.stopped = True
        if self.spec.kind in STRESS_NG_KINDS:
            self._check_ops_level()
        if left:
            raise RtgateError(f"load processes {left} survived SIGKILL")

    def _end_group(self, pgid: int) -> None:
        """SIGTERM the group, then SIGKILL what is left, each given 5 s to go; reap the leader."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + 5.0
            while time.monotonic() < deadline and _group_alive(pgid):
                if self.proc:
                    self.proc.poll()
                time.sleep(0.01)  # after the sampler: every 10 ms here is rtgate's overhead
            if not _group_alive(pgid):
                break
        if self.proc:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass

    def _keep_yaml(self) -> None:
        """stress-ng's figures, read from the private folder and kept beside load.log."""
        try:
            with Folder(self._workdir) as work:
                self.metrics = read_stress_ng_yaml(work)
                data = work.read_bytes(YAML_NAME, YAML_MAX_BYTES + 1)
            with self._folder() as folder:
                folder.replace(YAML_NAME, data)
        except (OSError, RtgateError):
            return  # no figures: the level is then not judged as reached

    # -- what was achieved
    def min_cpu_percent(self) -> float | None:
        if self.spec.min_cpu_percent is not None:
            return self.spec.min_cpu_percent
        if self.spec.kind == "custom":
            return DEFAULT_CUSTOM_CPU_PERCENT
        if self.spec.kind in ("cpu", "hackbench", "memory", "kcompile"):
            return DEFAULT_CPU_PERCENT_PER_WORKER * min(self.spec.workers or len(self.cpus), len(self.cpus))
        return None

    def min_ops_per_second(self) -> float | None:
        if self.spec.kind not in ("io", "network", "timer"):
            return None
        return DEFAULT_OPS_PER_SECOND if self.spec.min_ops_per_second is None else self.spec.min_ops_per_second

    def ops_per_second(self) -> float | None:
        """stress-ng's own rate (bogo-ops per second of real time, over its stressors), or None."""
        if not self.metrics:
            return None
        rates = [m.get("bogo-ops-per-second-real-time") for m in self.metrics]
        if any(not isinstance(r, (int, float)) for r in rates):
            return None
        return float(sum(rates))  # type: ignore[arg-type]

    def _check_ops_level(self) -> None:
        floor = self.min_ops_per_second()
        if floor is None or self.problem is not None or not self._finished:
            return
        rate = self.ops_per_second()
        if rate is None:
            self.problem = (
                f"the {self.spec.kind} load's level cannot be judged: stress-ng wrote no metrics "
                f"({self.logdir / YAML_NAME})"
            )
        elif rate < floor:
            self.problem = f"the {self.spec.kind} load reached {rate:g} {self.unit()}, below its level of {floor:g}"

    def unit(self) -> str:
        return {"io": "hdd operations/s", "network": "ICMP packets/s", "timer": "timer expirations/s"}.get(
            self.spec.kind, "% CPU"
        )

    def cpu_percent(self) -> float:
        return 100.0 * self.cpu_seconds / self.elapsed if self.elapsed > 0 else 0.0

    def summary(self) -> dict[str, Any]:
        if self.spec.kind == "none":
            return {"kind": "none"}
        out: dict[str, Any] = {
            "kind": self.spec.kind,
            "command": self.argv,
            "cpus": self.cpus,
            "pgid": self.pgid,
            "cpu_seconds": round(self.cpu_seconds, 3),
            "cpu_percent": round(self.cpu_percent(), 1),
            "seconds": round(self.elapsed, 3),
            "problem": self.problem,
        }
        try:
            with self._folder(create=False) as folder:
                text = folder.read_text("load.log", LOG_READ_MAX)
        except (OSError, RtgateError):
            text = ""
        if self.spec.kind == "hackbench":
            out["hackbench_loops"] = 500 * text.count("rtgate-hackbench-run")
        if self.spec.kind == "kcompile":
            out["builds"] = text.count("rtgate-kcompile-run")
            out["tree"] = self.spec.tree or "bundled C project"
        if self.spec.kind in CPU_LEVEL_KINDS:
            out["level"] = {"unit": "% CPU", "min": self.min_cpu_percent(), "reached": out["cpu_percent"]}
        if self.metrics is not None:
            out["stress_ng"] = self.metrics
            out["bogo_ops"] = {str(m.get("stressor")): m.get("bogo-ops") for m in self.metrics}
        if self.min_ops_per_second() is not None:
            rate = self.ops_per_second()
            out["level"] = {
                "unit": self.unit(),
                "min": self.min_ops_per_second(),
                "reached": None if rate is None else round(rate, 3),
            }
        return out


class Loads:
    """Several loads in one measurement (`load: [cpu, memory]`): started together, warmed up
    together (the longest warm-up), judged each against its own level, stopped together."""

    def __init__(self, loads: list[Load]) -> None:
        self.loads = loads

    def start(self) -> None:
        for load in self.loads:
            load.launch()
        warmup = max((ld.spec.warmup_seconds for ld in self.loads), default=0.0)
        if self.loads and STOP.sleep(warmup):
            for load in self.loads:
                load.settle()

    def finish(self) -> None:
        for load in self.loads:
            load.finish()

    def stop(self) -> None:
        """Stop every load, even when one of them leaves survivors; then say so."""
        errors = []
        for load in self.loads:
            try:
                load.stop()
            except RtgateError as e:
                errors.append(str(e))
        if errors:
            raise RtgateError("; ".join(errors))

    @property
    def problem(self) -> str | None:
        problems = [ld.problem for ld in self.loads if ld.problem]
        return "; ".join(problems) if problems else None

    def summary(self) -> dict[str, Any]:
        """One load's summary as it always was; several: each, under a combined kind and CPU list."""
        if not self.loads:
            return {"kind": "none"}
        if len(self.loads) == 1:
            return self.loads[0].summary()
        each = [ld.summary() for ld in self.loads]
        return {
            "kind": "+".join(str(x["kind"]) for x in each),
            "cpus": sorted({c for x in each for c in x.get("cpus") or []}),
            "problem": self.problem,
            "loads": each,
        }
