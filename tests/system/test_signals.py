# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate run stopped from outside (issue 18, issue 21 item 4): SIGINT, SIGTERM and SIGHUP at a random
moment of each phase stop the load and the sampler, judge what was measured and report; SIGKILL of
rtgate leaves nothing running either. Every process of a run carries the test's tag in its
environment, so other suites' processes on this shared machine never count."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

import rtgate
from conftest import IS_ROOT, ROOT, proc_stat

needs_root = pytest.mark.skipif(not IS_ROOT or (os.cpu_count() or 1) < 2, reason="needs root and two CPUs")
pytestmark = [needs_root, pytest.mark.slow]

SPEC = """\
platform: stop
measurements:
  m:
    sampler: {{interval_us: 1000, duration: {seconds}s, priority: 80, threads: [{{name: a, cpus: [0]}}]}}
    load: {load}
    gates:
      - {{name: max, kind: max, limit_us: 1000000}}
"""


def tagged(tag: str) -> dict[int, str]:
    """pid -> command name of every live process carrying the tag."""
    found = {}
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if f"RTGATE_TEST_TAG={tag}".encode() in environ.read_bytes().split(b"\0"):
                found[int(environ.parent.name)] = (environ.parent / "comm").read_text().strip()
        except OSError:
            continue
    return found


def gone(tag: str, within: float = 20.0) -> dict[int, str]:
    """Wait for the tagged processes to end; what is left after `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        left = tagged(tag)
        if not left:
            return {}
        time.sleep(0.1)
    return tagged(tag)


def _default_signals() -> None:
    """A background job inherits SIGINT ignored (and nohup SIGHUP), which rtgate respects: undo that here."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


class Run:
    def __init__(self, tmp_path: Path, load: str, seconds: int) -> None:
        self.dir = tmp_path
        self.tag = f"stop-{os.getpid()}-{time.monotonic_ns()}"
        (tmp_path / "tmp").mkdir()
        spec = tmp_path / "t.yaml"
        spec.write_text(SPEC.format(seconds=seconds, load=load))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rtgate", "run", str(spec), "--json", "v.json", "--junit", "j.xml"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_default_signals,
            env={**os.environ, "RTGATE_TEST_TAG": self.tag, "TMPDIR": str(tmp_path / "tmp"), "PYTHONUNBUFFERED": "1"},
        )

    def children(self) -> dict[int, str]:
        return {p: c for p, c in tagged(self.tag).items() if p != self.proc.pid}

    def wait_for(self, ready: callable[[dict[int, str]], bool], timeout: float = 180.0) -> None:  # type: ignore[valid-type]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready(self.children()):  # type: ignore[misc]
                return
            assert self.proc.poll() is None, self.proc.communicate()
            time.sleep(0.02)
        pytest.fail(f"phase not reached; running: {self.children()}")

    def finish(self) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=120)
        return self.proc.returncode, out, err

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)

    def verdicts(self) -> list[dict]:
        return json.loads((self.dir / "v.json").read_text())["verdicts"]

    def results(self) -> dict:
        return json.loads((self.dir / "rtgate-results" / "m.json").read_text())

    def check(self) -> tuple[int, list[dict]]:
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "rtgate",
                "check",
                str(self.dir / "t.yaml"),
                str(self.dir / "rtgate-results" / "m.json"),
                "--json",
                "c.json",
            ],
            cwd=self.dir,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return r.returncode, json.loads((self.dir / "c.json").read_text())["verdicts"]


def has_sampler(procs: dict[int, str]) -> bool:
    return "rtgate-sampler" in procs.values()


def _session(pid: int) -> int | None:
    stat = proc_stat(pid)
    return int(stat[1][3]) if stat else None


def load_processes(procs: dict[int, str]) -> int:
    """How many of the processes are the load's: the engine starts each load in a session of its own.
    Not "every process but the sampler": the preflight's --dump-system runs gzip on /proc/config.gz,
    which was taken for the load, and the signal reached rtgate before the engine had started (CI of
    stop 50, 2 signals of 3)."""
    ours = _session(os.getpid())
    return sum(_session(p) not in (None, ours) for p in procs)


def has_load(procs: dict[int, str]) -> bool:
    """The engine (rtgate-sampler) has started the load: one of its processes exists."""
    return load_processes(procs) > 0


def measuring_sampler(procs: dict[int, str]) -> int | None:
    """The engine whose measuring threads run (the warm-up is over): a sampler process with more than one task.
    Not any sampler: the preflight's --check-only is one too, and a run then waits for the measurement lock while
    another run measures (another pytest-xdist worker's)."""
    for pid, comm in procs.items():
        try:
            if comm == "rtgate-sampler" and len(os.listdir(f"/proc/{pid}/task")) > 1:
                return pid
        except OSError:
            continue
    return None


def measuring(procs: dict[int, str]) -> bool:
    return measuring_sampler(procs) is not None


# Loads here run at min_cpu_percent 0: on this shared machine a load may not reach its level, which
# (rightly) makes a run invalid; test_conditions.py tests that, these tests test stopping.
PHASES = ["load-start", "warm-up", "measurement", "load-stop", "reporting"]


def _reach(run: Run, phase: str) -> None:
    """Wait for `phase`, then a random moment inside it."""
    if phase == "load-start":
        run.wait_for(has_load)  # the load's first process exists: send at once
    elif phase == "warm-up":
        run.wait_for(has_load)
        time.sleep(random.uniform(0.2, 2.0))  # the warm-up lasts 3 s
    elif phase == "measurement":
        run.wait_for(measuring)
        time.sleep(random.uniform(0.3, 2.5))  # the measurement lasts 30 s
    elif phase == "load-stop":  # the engine has measured, stopped the load, written and ended: rtgate judges
        run.wait_for(measuring)
        run.wait_for(lambda procs: not has_sampler(procs), timeout=60)
    elif phase == "reporting":
        assert run.proc.stdout is not None
        for line in run.proc.stdout:  # the summary table is printed before JUnit and JSON are written
            if line.startswith("STATUS"):
                break


@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_stop_signal_at_any_moment_stops_everything_and_reports(
    tmp_path: Path, tool: object, sig: signal.Signals, phase: str
) -> None:
    tool("stress-ng", "stress-ng")  # type: ignore[operator]
    seconds = 2 if phase in ("load-stop", "reporting") else 30
    run = Run(tmp_path, "{kind: cpu, cpus: others, warmup_seconds: 3, min_cpu_percent: 0}", seconds)
    try:
        _reach(run, phase)
        run.proc.send_signal(sig)
        rc, out, err = run.finish()
    finally:
        run.kill()
    assert "Traceback" not in err, err
    assert gone(run.tag) == {}, "a process of the run survived"
    assert list((tmp_path / "tmp").iterdir()) == [], "the load's temporary folder is left"
    verdicts = run.verdicts()
    assert (tmp_path / "j.xml").exists()
    assert len(verdicts) == 1
    v = verdicts[0]
    if phase in ("load-start", "warm-up"):
        # Nothing measured: INCONCLUSIVE, never a pass; exit 3. The engine's record says why.
        assert rc == 3, (out, err)
        assert v["status"] == "INCONCLUSIVE" and v["reason"].startswith(f"not measured: stopped by {sig.name}")
        record = run.results()["rtgate_run"]
        assert record["measured"] is False and record["stopped_by"] == sig.name, record
        assert f"stopped by {sig.name}" in err
    elif phase == "measurement":
        # Cut short: the engine, passed the signal, wrote everything; INCONCLUSIVE, exit 3.
        assert rc == 3, (out, err)
        results = run.results()
        assert results["rtgate"]["complete"] and results["rtgate"]["stop_reason"] == "signal"
        assert results["rtgate_run"]["stopped_by"] == sig.name and results["rtgate_run"]["valid"]
        cycles = results["rtgate"]["threads"][0]["cycles"]
        assert 0 < cycles < 30_000 and v["samples"] == cycles
        assert v["status"] == "INCONCLUSIVE" and f"stopped early by {sig.name}" in v["reason"]
        check_rc, check_verdicts = run.check()  # `rtgate check` judges the file alike
        c = check_verdicts[0]
        assert check_rc == 3 and (c["status"], c["reason"], c["value"]) == (v["status"], v["reason"], v["value"])
    else:
        # The measurement had ended: it is judged in full, and the report written.
        assert rc == 0, (out, err)
        assert v["status"] == "PASS" and v["samples"] >= 1
        assert run.results()["rtgate_run"]["valid"] is True
        check_rc, check_verdicts = run.check()
        assert (check_rc, check_verdicts[0]["status"]) == (0, "PASS")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_stop_signal_while_rtgate_exits_keeps_its_exit_code(
    tmp_path: Path, tool: object, sig: signal.Signals
) -> None:
    """The reports are written: the signal, sent again and again until rtgate has ended, finds it
    leaving the interpreter, and the run's exit code 0 stands (it was -15 in 4 of 8 such runs)."""
    tool("stress-ng", "stress-ng")  # type: ignore[operator]
    run = Run(tmp_path, "{kind: cpu, cpus: others, warmup_seconds: 1, min_cpu_percent: 0}", 1)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "v.json").exists():
            assert run.proc.poll() is None and time.monotonic() < deadline, run.proc.communicate()
            time.sleep(0.0005)
        while run.proc.poll() is None:
            try:
                run.proc.send_signal(sig)
            except ProcessLookupError:
                break
            time.sleep(0.0005)
        rc, out, err = run.finish()
    finally:
        run.kill()
    assert rc == 0, (out, err)
    assert run.verdicts()[0]["status"] == "PASS"


@pytest.mark.parametrize("phase", ["warm-up", "measurement", "reporting"])
def test_sigkill_of_rtgate_leaves_nothing_running(tmp_path: Path, tool: object, phase: str) -> None:
    tool("stress-ng", "stress-ng")  # type: ignore[operator]
    run = Run(
        tmp_path, "{kind: cpu, cpus: others, warmup_seconds: 3, min_cpu_percent: 0}", 2 if phase == "reporting" else 30
    )
    try:
        _reach(run, phase)
        run.proc.send_signal(signal.SIGKILL)
        rc, _, _ = run.finish()
    finally:
        run.kill()
    assert rc == -signal.SIGKILL
    assert gone(run.tag) == {}, "a process of the run outlived rtgate"
    # The engine got SIGTERM when rtgate died, stopped the load, and wrote its results and record;
    # what the run did not finish is never a pass.
    results = run.results()
    check_rc, check_verdicts = run.check()
    if phase == "warm-up":
        assert results["rtgate_run"]["measured"] is False and results["rtgate_run"]["stopped_by"] == "SIGTERM"
        assert check_rc == 3 and check_verdicts[0]["status"] == "INCONCLUSIVE", check_verdicts
        return
    assert results["rtgate"]["complete"]
    if phase == "measurement":
        assert results["rtgate"]["stop_reason"] == "signal" and results["rtgate_run"]["stopped_by"] == "SIGTERM"
        assert check_rc == 3 and check_verdicts[0]["status"] == "INCONCLUSIVE", check_verdicts
        assert "stopped early by SIGTERM" in check_verdicts[0]["reason"]
    else:
        assert results["rtgate_run"]["valid"] is True
        assert (check_rc, check_verdicts[0]["status"]) == (0, "PASS")


@pytest.mark.parametrize("phase", ["warm-up", "measurement"])
def test_a_stopped_hackbench_load_leaves_no_process(tmp_path: Path, tool: object, phase: str) -> None:
    tool("hackbench", "rt-tests")  # type: ignore[operator]
    run = Run(tmp_path, "{kind: hackbench, cpus: others, warmup_seconds: 3, min_cpu_percent: 0}", 30)
    try:
        _reach(run, phase)
        # timeout, sh and hackbench's processes: the loop restarts hackbench every 500 loops, so between
        # two runs only timeout and sh exist; stop it while hackbench runs
        run.wait_for(lambda procs: load_processes(procs) >= 3, timeout=30)
        run.proc.send_signal(signal.SIGTERM)
        rc, out, err = run.finish()
    finally:
        run.kill()
    assert rc == 3 and "Traceback" not in err, (out, err)
    assert gone(run.tag) == {}
    assert list((tmp_path / "tmp").iterdir()) == []
    assert run.verdicts()[0]["status"] == "INCONCLUSIVE"


def test_a_second_sigterm_while_the_report_is_written_waits_for_it(tmp_path: Path, tool: object) -> None:
    """A CI runner sends SIGTERM, then again: the verdict's exit status (3, stopped early), never 143."""
    tool("stress-ng", "stress-ng")  # type: ignore[operator]
    run = Run(tmp_path, "{kind: cpu, cpus: others, warmup_seconds: 1, min_cpu_percent: 0}", 30)
    try:
        _reach(run, "measurement")
        run.proc.send_signal(signal.SIGTERM)
        for _ in range(20):  # again and again while it stops the sampler, judges and writes its reports
            time.sleep(0.05)
            if run.proc.poll() is not None:
                break
            run.proc.send_signal(signal.SIGTERM)
        rc, out, err = run.finish()
    finally:
        run.kill()
    assert rc == 3 and "Traceback" not in err, (rc, out, err)
    assert run.verdicts()[0]["status"] == "INCONCLUSIVE" and (tmp_path / "j.xml").exists()


def test_a_killed_sampler_is_named_as_killed(tmp_path: Path) -> None:
    run = Run(tmp_path, "{kind: none}", 30)
    try:
        run.wait_for(measuring)
        sampler = measuring_sampler(run.children())
        assert sampler is not None
        time.sleep(1.5)
        os.kill(sampler, signal.SIGKILL)
        rc, out, err = run.finish()
    finally:
        run.kill()
    v = run.verdicts()[0]
    assert rc == 1 and v["status"] == "ERROR", (rc, out, err)
    assert "the sampler was killed by SIGKILL" in v["reason"], v["reason"]


def test_ctrl_c_while_rtgate_starts_is_one_line() -> None:
    """A Ctrl-C once the console script has started (the commands not yet imported): no traceback."""
    r = subprocess.run(
        [sys.executable, "-c", "import os, signal, rtgate.console; os.kill(os.getpid(), signal.SIGINT)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (r.returncode, r.stderr) == (130, "rtgate: interrupted\n")
    # and while main() imports the commands
    code = (
        "import sys\nfrom unittest import mock\nfrom rtgate import cli\n"
        "with mock.patch.object(cli.importlib, 'import_module', side_effect=KeyboardInterrupt):\n"
        "    sys.exit(cli.main(['check', 'x.yaml', 'r.json']))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stderr) == (130, "rtgate: interrupted\n")


def test_ctrl_c_as_the_command_returns_keeps_its_result() -> None:
    """A Ctrl-C in the instant after the command returned (its guard is gone; console.py has not yet ignored
    SIGINT for the exit): the command's own result and status, no traceback. Known answer: the SIGINT is made to
    arrive there, at console.py's first look at the handler after the command."""
    code = (
        "import signal, sys\nfrom unittest import mock\nfrom rtgate import console\n"
        "real, calls = console._signal.getsignal, []\n"
        "def getsignal(n):\n"
        "    calls.append(n)\n"
        "    if len(calls) == 1:\n"
        "        raise KeyboardInterrupt\n"
        "    return real(n)\n"
        "def command(**kw):\n"
        "    print('done')\n"
        "    return 3\n"
        "with mock.patch.object(console, 'cli_main', command), "
        "mock.patch.object(console._signal, 'getsignal', getsignal):\n"
        "    rc = console.main()\n"
        "assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN\n"
        "sys.exit(rc)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout, r.stderr) == (3, "done\n", "")


PACKAGE = Path(rtgate.__file__).parent
GUARD_LINE = next(
    n for n, line in enumerate((PACKAGE / "console.py").read_text().splitlines(), 1) if "_signal.signal(" in line
)


def _before_guard(frame_file: str, line: int) -> bool:
    """A frame of rtgate that runs before console.py's first statements take SIGINT over."""
    return frame_file == str(PACKAGE / "__init__.py") or (
        frame_file == str(PACKAGE / "console.py") and line <= GUARD_LINE
    )


def test_ctrl_c_at_any_instant_of_the_start_up_is_never_a_traceback(tmp_path: Path) -> None:
    """SIGINT to the installed `rtgate` command 0-200 ms after it was started, at 100 instants: it ends
    silently (killed by SIGINT before Python set its handler), with 'rtgate: interrupted' and 130, or
    not at all (the command was done). The one traceback allowed is from before rtgate's first
    statement took SIGINT over: CPython's start-up (site and its .pth files) and the installer's
    entry-point script (its `import re`), up to console.py's guard."""
    command = Path(sysconfig.get_path("scripts")) / "rtgate"
    assert command.is_file(), command
    outcomes: dict[str, int] = {}
    for i in range(100):
        p = subprocess.Popen(
            [str(command), "validate", str(ROOT / "thresholds" / "default.yaml")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_default_signals,
            cwd=tmp_path,
        )
        time.sleep(i * 0.002)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        if "KeyboardInterrupt" in err:
            # Before the guard: CPython's start-up, the installer's script, rtgate/__init__.py, console.py
            # up to its guard. A frame anywhere else in the package means rtgate's own code was reached.
            frames = re.findall(r'File "([^"]+)", line (\d+)', err)
            ours = [(f, n) for f, n in frames if f.startswith(str(PACKAGE)) and not _before_guard(f, int(n))]
            assert not ours, (i, err)
            kind = "interpreter start-up"
        else:
            assert "Traceback" not in err, (i, err)
            assert (p.returncode, err) in ((-signal.SIGINT, ""), (130, "rtgate: interrupted\n"), (0, "")), (i, err)
            kind = {-signal.SIGINT: "before Python's handler", 130: "interrupted", 0: "done"}[p.returncode]
        outcomes[kind] = outcomes.get(kind, 0) + 1
    assert outcomes.get("interrupted"), outcomes  # the instants covered rtgate's own start-up
