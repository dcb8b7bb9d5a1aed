"""Run the sampler for one measurement: start, show progress on a terminal, stop cleanly, parse."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path
from typing import IO

from rtgate.measure.conditions import measured_cpus, unmet
from rtgate.measure.environment import capture
from rtgate.errors import RtgateError, SamplerError
from rtgate.measure.load import Load, LoadSpec
from rtgate.core.model import RunResult
from rtgate.parsers import load_results
from rtgate.measure.sampler_args import expected_seconds, sampler_args
from rtgate.core.thresholds import Measurement


class RequirementsNotMet(RtgateError):
    """The system does not meet the threshold file's require: the measurement is not run."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons


def load_cpus(spec: LoadSpec, m: Measurement) -> list[int]:
    """Where a load runs: on the measured CPUs, on the others, on all, or on a list."""
    allowed = sorted(os.sched_getaffinity(0))
    measured = measured_cpus(m) or allowed
    if spec.cpus == "measured":
        return measured
    if spec.cpus == "all":
        return allowed
    if spec.cpus == "others":
        others = [c for c in allowed if c not in measured]
        if not others:
            raise RtgateError(f"measurement {m.name}: the load goes on the other CPUs, but the measurement "
                              "uses every CPU (set load cpus: measured or all)")
        return others
    return list(spec.cpus)

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
    raise SamplerError(f"{SAMPLER} not found: install rtgate with 'pip install .', "
                       "or pass --sampler PATH / set RTGATE_SAMPLER")


class _Progress:
    """On a terminal: elapsed, cycles and current max once a second. Silent in CI logs."""

    def __init__(self, proc: subprocess.Popen[str], name: str, total_s: float | None, out: IO[str]) -> None:
        self.proc, self.name, self.total_s, self.out = proc, name, total_s, out
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

    def _tick(self) -> None:
        while not self.stop.wait(1.0):
            if self.proc.poll() is not None:
                return
            try:
                self.proc.send_signal(signal.SIGUSR1)
            except ProcessLookupError:
                return
            elapsed = time.monotonic() - self.start
            total = f"/{self.total_s:.0f}" if self.total_s else ""
            self.out.write(f"\r[{self.name}] {elapsed:.0f}{total} s  cycles {self.cycles}  max {self.max}   ")
            self.out.flush()

    def finish(self) -> None:
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join()
            self.out.write("\n")


def run_measurement(sampler: str, m: Measurement, outdir: Path, duration_s: int | None = None,
                    progress: bool | None = None) -> tuple[RunResult, bool]:
    """Returns the results and whether the user interrupted the run (results are still complete).

    The system's conditions are recorded with the results; a load runs around the sampler.
    Raises RequirementsNotMet without measuring when the threshold file's require: fails."""
    system = capture()
    reasons = unmet(m.require, system, measured_cpus(m))
    if reasons:
        raise RequirementsNotMet(reasons)
    load = Load(m.load, load_cpus(m.load, m) if m.load.kind != "none" else [], outdir / f"{m.name}.load")
    with load:
        run, interrupted = _run_sampler(sampler, m, outdir, duration_s, progress, load)
    run.environment["system"] = system
    run.environment["loadavg_after"] = capture().get("loadavg")
    run.environment["load"] = load.summary()
    if load.problem:
        run.environment.setdefault("invalid", []).append(load.problem)
    return run, interrupted


def _run_sampler(sampler: str, m: Measurement, outdir: Path, duration_s: int | None, progress: bool | None,
                 load: Load) -> tuple[RunResult, bool]:
    outdir.mkdir(parents=True, exist_ok=True)
    json_path = outdir / f"{m.name}.json"
    if json_path.exists():
        json_path.unlink()
    argv = [sampler] + sampler_args(m, str(json_path), duration_s=duration_s)
    (outdir / f"{m.name}.cmdline").write_text(" ".join(argv) + "\n", encoding="utf-8")
    if progress is None:
        progress = sys.stderr.isatty()
    stdout_path = outdir / f"{m.name}.stdout"
    errors: list[str] = []
    interrupted = False
    with stdout_path.open("w", encoding="utf-8") as stdout:
        try:
            proc = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.PIPE, text=True,
                                    start_new_session=False)
        except OSError as e:
            raise SamplerError(f"cannot start {sampler}: {e.strerror}") from e
        bar = _Progress(proc, m.name, expected_seconds(m, duration_s), sys.stderr)
        if progress:
            bar.thread.start()

        def read_stderr() -> None:
            assert proc.stderr is not None
            for line in proc.stderr:
                if line.startswith("T:"):
                    bar.status_line(line)
                elif not line.startswith("#"):
                    errors.append(line.rstrip())
        reader = threading.Thread(target=read_stderr, daemon=True)
        reader.start()
        try:
            rc = proc.wait()
        except KeyboardInterrupt:
            interrupted = True
            proc.send_signal(signal.SIGINT)  # the sampler stops, joins and writes everything
            rc = proc.wait()
        finally:
            bar.finish()
            reader.join(timeout=5)
    (outdir / f"{m.name}.stderr").write_text("\n".join(errors) + ("\n" if errors else ""), encoding="utf-8")
    if rc == 2:
        raise SamplerError(f"{sampler} rejected the options for measurement {m.name!r}: "
                           + ("; ".join(errors) or f"exit status {rc}"))
    if not json_path.exists():
        detail = "; ".join(errors) or f"exit status {rc}"
        raise SamplerError(f"measurement {m.name!r}: the sampler measured nothing: {detail}")
    load.finish()  # did the load hold until the sampler stopped?
    return load_results(json_path), interrupted
