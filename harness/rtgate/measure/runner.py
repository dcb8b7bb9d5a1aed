# SPDX-License-Identifier: GPL-2.0-or-later
"""Run one measurement: the engine (rtgate-sampler with the measurement's compiled plan, as on a
board) checks the requirements, runs and holds the loads, watches for competing real-time tasks,
records the machine and writes its record; rtgate shows progress on a terminal, passes a stop
signal on (SIGINT, SIGTERM, SIGHUP) and adds to the record what only it knows. Either backend runs
inside the engine: its own threads, or rtla (timerlat)."""

from __future__ import annotations

import json
import os
import select
import shlex
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path
from typing import IO, Any

from rtgate.core import validity
from rtgate.core.model import RunResult
from rtgate.core.thread_plan import ThreadPlan
from rtgate.core.thresholds import Measurement
from rtgate.errors import RtgateError, SamplerError
from rtgate.measure import busy, timerlat
from rtgate.measure.lock import StoppedWhileWaiting, measurement_lock
from rtgate.measure.preflight import Preflight
from rtgate.measure.stop import STOP, die_with_parent
from rtgate.parsers import load_results
from rtgate.safe_io import Folder

SAMPLER_STOP_GRACE_S = 30.0  # after SIGTERM, the sampler joins its threads and writes; then SIGKILL
STOP_POLL_S = 0.1  # how soon a stop request reaches the sampler while rtgate waits for it
STDERR_READ_MAX = 1 << 20  # of the sampler's stderr, what its error lines are looked for in


def output_names(m: Measurement) -> list[str]:
    """Every name a measurement writes in the output folder (a report named as one of them is refused)."""
    suffixes = (
        "json",
        "environment.json",
        "cmdline",
        "stdout",
        "stderr",
        "hist",
        "load/",
        "rtla.txt",
        "rtla.stderr",
        "trace.txt",
    )
    return [f"{m.name}.{s}" for s in suffixes]  # a folder's name ends with "/"


class StoppedBeforeMeasuring(RtgateError):
    """A stop signal arrived before the sampler started (e.g. during the load's warm-up): nothing measured."""

    def __init__(self, signal_name: str, phase: str) -> None:
        super().__init__(f"stopped by {signal_name} {phase}")
        self.signal = signal_name


SAMPLER = "rtgate-sampler"


def find_sampler(explicit: str | None = None) -> str:
    """--sampler, $RTGATE_SAMPLER, the one installed beside this package, then PATH."""
    for candidate in (explicit, os.environ.get("RTGATE_SAMPLER")):
        if candidate:
            if not (os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
                raise SamplerError(f"sampler {candidate!r} is not an executable file")
            return candidate
    scripts = sysconfig.get_path("scripts")
    beside = os.path.join(scripts, SAMPLER) if scripts else ""
    if beside and os.access(beside, os.X_OK):
        return beside
    found = shutil.which(SAMPLER)
    if found:
        return found
    raise SamplerError(
        f"{SAMPLER} not found: install rtgate with 'pip install .', or pass --sampler PATH / set RTGATE_SAMPLER"
    )


class _Progress:
    """On a terminal: elapsed, cycles and current max once a second. Silent in CI logs.

    The sampler prints its status to stderr on SIGUSR1; stderr is a file (a pipe would kill the
    sampler with SIGPIPE if rtgate died first), read here as it grows."""

    def __init__(
        self, proc: subprocess.Popen[str], name: str, total_s: float | None, out: IO[str], stderr_fd: int
    ) -> None:
        self.proc, self.name, self.total_s, self.out = proc, name, total_s, out
        self.stderr_fd = stderr_fd
        self.offset = 0
        self.start = time.monotonic()
        self.stop = threading.Event()
        self.cycles = 0
        self.max = 0
        self.thread = threading.Thread(target=self._tick, daemon=True)

    def status_line(self, line: str) -> None:
        parts = line.split()
        try:
            self.cycles = max(self.cycles, int(parts[parts.index("C:") + 1]))
            self.max = max(self.max, int(parts[parts.index("Max:") + 1]))
        except (ValueError, IndexError):
            pass

    def _read_status(self) -> None:
        try:
            data = os.pread(self.stderr_fd, STDERR_READ_MAX, self.offset)
        except OSError:
            return
        complete = data[: data.rfind(b"\n") + 1]
        self.offset += len(complete)
        for line in complete.decode("utf-8", errors="replace").splitlines():
            if line.startswith("T:"):
                self.status_line(line)

    def _tick(self) -> None:
        while not self.stop.wait(1.0):
            if self.proc.poll() is not None:
                return
            try:
                self.proc.send_signal(signal.SIGUSR1)
            except ProcessLookupError:
                return
            self._read_status()
            elapsed = time.monotonic() - self.start
            total = f"/{self.total_s:.0f}" if self.total_s else ""
            self.out.write(f"\r[{self.name}] {elapsed:.0f}{total} s  cycles {self.cycles}  max {self.max}   ")
            self.out.flush()

    def finish(self) -> None:
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join()
            self.out.write("\n")


def run_measurement(
    sampler: str,
    m: Measurement,
    outdir: Path,
    progress: bool | None = None,
    *,
    plan: ThreadPlan,
    words: list[str],
    checked: Preflight,
    request: dict[str, Any] | None = None,
) -> tuple[RunResult, str | None]:
    """Returns the results and the signal that stopped the run early (None: it ran to its end).

    plan: the measurement's threads on this machine (plan_here); words: the measurement compiled for
    the engine (sampler_args.engine_args), as its preflight asked the engine about it; checked: that
    preflight, whose unmet requirements and strict warnings the caller (measure/orchestrate.py, the one
    caller) has already refused to measure under. Raises StoppedBeforeMeasuring when a stop signal came
    before the engine started. Whatever happens, no load or sampler process outlives this call."""
    with STOP.handling():
        quiet_before = busy.snapshot()  # before rtgate's own load and sampler add to it
        if STOP.requested:
            raise StoppedBeforeMeasuring(STOP.signal or "a signal", "before the measurement started")
        with Folder(outdir, create=True) as out:
            return _measure(sampler, m, out, words, plan, progress, checked, quiet_before, request or {})


def _measure(
    sampler: str,
    m: Measurement,
    out: Folder,
    words: list[str],
    plan: ThreadPlan,
    progress: bool | None,
    checked: Preflight,
    quiet_before: dict[str, Any],
    request: dict[str, Any],
) -> tuple[RunResult, str | None]:
    """The engine measures, as on a board: rtgate-sampler runs the measurement's compiled plan, checks
    its requirements, runs the loads and holds each to its level, measures with its threads or runs
    rtla (the timerlat backend), watches for competing real-time tasks off the measured CPUs, records
    the machine and writes its record ("rtgate_run", format 2) into the results. rtgate adds to that
    record only what the engine cannot know: what rtgate was told (request), doctor's warnings
    (preflight) and how busy the machine was around the run (machine_load)."""
    outdir = out.path
    json_path = outdir / f"{m.name}.json"
    env_path = validity.environment_path(json_path)
    for stale in (json_path, env_path):
        out.unlink(stale.name)
    # Written first: results beside it without a validity record are then known to be cut short.
    state = {"results": json_path.name, "system": checked.system, "preflight": checked.record()}
    out.replace(env_path.name, _dumps({**state, "state": "measuring"}), sync=False)
    argv = [sampler, *words, f"--output-dir={outdir}"]
    # The command line is written before the lock: inside it, only the engine runs.
    out.replace(f"{m.name}.cmdline", shlex.join(argv) + "\n")
    try:
        # One measurement at a time on this machine, its load included: a second sampler or load
        # at once would be measured by this one.
        with measurement_lock(m.name):
            killed = _run_sampler(argv, m, out, plan, progress if m.backend == "sampler" else False)
            busy_after = busy.snapshot()
    except StoppedWhileWaiting as e:
        out.replace(env_path.name, _dumps({**state, "state": "not measured", "stopped_by": STOP.signal}))
        raise StoppedBeforeMeasuring(STOP.signal or "a signal", "while waiting for another measurement") from e
    extra = {
        "request": request,  # what rtgate was told on purpose: every reader judges as run did
        "machine_load": busy.machine_load(quiet_before, busy_after),
        "environment": env_path.name,
        "preflight": checked.record(),
    }
    if not killed:  # a killed engine left its last checkpoint, which has no record: it stays without one
        add_to_record(out, json_path.name, extra, sync=False)  # the environment's replace below syncs
    # Judged from the files, exactly as `rtgate check` will judge them: with the timerlat backend the
    # figures are rtla's histogram, beside the engine's record.
    run = timerlat.read(m, out, json_path.name) if m.backend == "timerlat" else load_results(json_path)
    results_name = f"{m.name}.rtla.txt" if run.format == "rtla-timerlat-hist" else json_path.name
    if killed:  # said with its checkpoint's verdicts (and in the environment file)
        run.environment["invalid"] = [killed]
    record = run.environment.get(validity.RECORD)
    recorded = record if isinstance(record, dict) else {}
    run.environment["system"] = recorded.get("system") or checked.system
    run.environment["loadavg_after"] = busy_after["loadavg"]
    run.environment["load"] = recorded.get("load") or {"kind": "none"}
    run.environment["machine_load"] = extra["machine_load"]
    run.environment["preflight"] = extra["preflight"]
    out.replace(env_path.name, _dumps({"results": results_name, "state": "done", **run.environment}))
    return run, STOP.signal


def _dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, default=str) + "\n"


def add_to_record(out: Folder, name: str, extra: dict[str, Any], sync: bool = True) -> None:
    """Add rtgate's own keys to the engine's record, the last object of its results JSON, keeping the
    engine's bytes as they are (its compact histogram rows stay compact) and rewriting the file
    atomically; results without a record (a checkpoint: cut short) are left as they are."""
    text = out.read_bytes(name).decode("utf-8")
    doc = json.loads(text)
    if not isinstance(doc, dict):
        raise SamplerError(f"{out.path / name}: the results are not a JSON object")
    if not isinstance(doc.get(validity.RECORD), dict):
        return
    body = text.rstrip()[:-1].rstrip()  # the document's closing brace off: the record's is last
    added = "".join(f',\n    "{k}": ' + json.dumps(v, default=str) for k, v in extra.items())
    new = f"{body[:-1].rstrip()}{added}\n  }}\n}}\n"
    try:
        spliced = json.loads(new)
    except ValueError:
        spliced = None
    if not isinstance(spliced, dict) or spliced.get(validity.RECORD) != {**doc[validity.RECORD], **extra}:
        doc[validity.RECORD].update(extra)  # not laid out as the engine writes it: write it whole
        new = json.dumps(doc, indent=2) + "\n"
    out.replace(name, new, sync=sync)


def _wait(proc: subprocess.Popen[str]) -> int:
    """Wait for the engine; on a stop request, pass the signal on (it stops its loads, joins its threads
    and writes every output, naming the signal in its record), and SIGKILL it only if it does not end
    in time.

    rtgate sleeps on the engine's pidfd: it wakes the instant the engine ends (polling with
    Popen.wait(timeout) woke ~140 times a second on the measured CPUs and noticed the end up to
    50 ms late), and every STOP_POLL_S to see a stop request."""
    asked = None
    with _Exited(proc) as exited:
        while True:
            if exited.wait(STOP_POLL_S):
                return proc.wait()
            if STOP.requested and asked is None:
                proc.send_signal(getattr(signal, STOP.signal or "SIGTERM", signal.SIGTERM))
                asked = time.monotonic()
            elif asked is not None and time.monotonic() - asked > SAMPLER_STOP_GRACE_S:
                proc.kill()


class _Exited:
    """Whether a child has ended, waited for on its pidfd (Linux 5.3); without one, Popen.wait polls."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.poller: select.poll | None = None
        try:
            self.fd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):  # an older kernel: the poll below
            self.fd = -1
        else:
            self.poller = select.poll()
            self.poller.register(self.fd, select.POLLIN)

    def __enter__(self) -> _Exited:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            os.close(self.fd)

    def wait(self, seconds: float) -> bool:
        """True once the child has ended (not yet reaped), else False after `seconds`."""
        if self.poller is None:
            try:
                self.proc.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                return False
            return True
        return bool(self.poller.poll(int(seconds * 1000)))


def _run_sampler(
    argv: list[str],
    m: Measurement,
    out: Folder,
    plan: ThreadPlan,
    progress: bool | None,
) -> str | None:
    """Run the sampler command `argv`. Returns, when a signal killed the sampler before it could write
    its final results, what killed it."""
    sampler = argv[0]
    json_path = out.path / f"{m.name}.json"
    if progress is None:
        progress = sys.stderr.isatty()
    with out.create(f"{m.name}.stdout") as stdout, out.create(f"{m.name}.stderr") as stderr:
        try:
            # Same process group as rtgate: a terminal's Ctrl-C reaches it directly. It gets SIGTERM
            # if rtgate dies, and then still writes its results.
            proc = subprocess.Popen(
                argv,
                stdout=stdout,
                stderr=stderr,
                stdin=subprocess.DEVNULL,
                text=True,
                preexec_fn=die_with_parent(signal.SIGTERM),
            )
        except OSError as e:
            raise SamplerError(f"cannot start {sampler}: {e.strerror}") from e
        warmup = max((ld.warmup_seconds for ld in m.loads if ld.kind != "none"), default=0.0)  # the engine's, first
        total = plan.expected_seconds + warmup if plan.expected_seconds else None
        bar = _Progress(proc, m.name, total, sys.stderr, stderr.fileno())
        if progress:
            bar.thread.start()

        try:
            rc = _wait(proc)
        finally:
            bar.finish()
        text = os.pread(stderr.fileno(), STDERR_READ_MAX, 0).decode("utf-8", errors="replace")
    errors = [line for line in text.splitlines() if line.strip() and not line.startswith(("T:", "#"))]
    if rc == 2:
        raise SamplerError(
            f"{sampler} rejected the options for measurement {m.name!r}: " + ("; ".join(errors) or f"exit status {rc}")
        )
    killed = None
    if rc < 0:  # SIGKILL (the OOM killer, an operator) or a crash: its results are the last checkpoint
        name = signal.Signals(-rc).name if -rc in signal.valid_signals() else f"signal {-rc}"
        killed = f"the sampler was killed by {name}: its results file is its last checkpoint, not the run's end"
    if not out.exists(json_path.name):
        detail = "; ".join(errors) or (killed or f"exit status {rc}")
        raise SamplerError(f"measurement {m.name!r}: the sampler measured nothing: {detail}")
    return killed
