# SPDX-License-Identifier: GPL-2.0-or-later
"""README's tutorial, run as written: a fresh copy of this tree, README's first command alone
(`sh scripts/bootstrap`, not --test), then every command of the tutorial in its order, read from
README.rst itself, with outputs compared to what README shows where it shows them. Only the
durations are shortened, with the tutorial's own options (--duration, --rtgate-duration); the one
command not run is the LAVA submission, which needs a lab (tests/system/test_lava_server.py submits
jobs to a real LAVA server)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from conftest import IS_ROOT, ROOT

README = ROOT / "README.rst"
SHORT = "2s"  # every measurement of the tutorial, instead of its 10 s
STATUSES = ("PASS", "FAIL", "INCONCLUSIVE", "ERROR")
NOT_RUN = ("lavacli",)  # needs a LAVA lab and an identity for it


@dataclass
class Step:
    """One command of the tutorial, and the output README shows under it (empty: none shown)."""

    argv: list[str]
    shown: list[str] = field(default_factory=list)


def tutorial() -> tuple[dict[str, str], list[Step]]:
    """README's tutorial: the files it saves (name -> text) and its commands, in order."""
    text = README.read_text()
    section = text.split("\nTen-minute tutorial\n", 1)[1].split("\nExit status\n", 1)[0]
    files = {
        name: re.sub(r"^    ", "", body, flags=re.M)
        for name, body in re.findall(
            r"Save (?:it )?as ``([^`]+)``:\n\n\.\. code-block:: yaml\n\n((?:    .*\n|\n)+)", section
        )
    }
    steps: list[Step] = []
    for block in re.findall(r"::\n\n((?:    .*\n|\n)+)", section):
        lines = [ln[4:] for ln in block.rstrip("\n").split("\n")]
        joined: list[str] = []
        for line in lines:  # a command continued with a backslash is one command
            if joined and joined[-1].endswith("\\"):
                joined[-1] = joined[-1][:-1].rstrip() + " " + line.strip()
            else:
                joined.append(line)
        if not any(ln.startswith("$ ") for ln in joined):
            steps += [Step(shlex.split(ln)) for ln in joined if ln.strip()]
            continue
        for line in joined:
            if line.startswith("$ "):
                steps.append(Step(shlex.split(line[2:])))
            elif line.strip():
                steps[-1].shown.append(line)
    return files, steps


def shortened(argv: list[str]) -> list[str]:
    out = list(argv)
    for option in ("--duration", "--rtgate-duration"):
        if option in out:
            out[out.index(option) + 1] = SHORT
    return out


def test_the_tutorial_is_read_whole() -> None:
    """What the test below runs is the whole tutorial: both files, the eight steps' commands."""
    files, steps = tutorial()
    assert sorted(files) == ["my-board.yaml", "my-laptop.yaml"]
    firsts = [" ".join(s.argv[:2]) for s in steps]
    assert firsts == [
        ".venv/bin/rtgate validate",
        ".venv/bin/rtgate doctor",
        ".venv/bin/rtgate run",
        ".venv/bin/rtgate report",
        ".venv/bin/rtgate plot",
        ".venv/bin/python -m",
        ".venv/bin/rtgate lava",
        "lavacli -i",
    ]
    assert [s.argv[0] for s in steps if s.argv[0] in NOT_RUN] == ["lavacli"]
    assert "--duration" in steps[2].argv and "--rtgate-duration" in steps[5].argv


# ------------------------------------------------------------------ the run


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh copy of this tree (what `git clone` gives, with uncommitted work too), bootstrapped by
    README's first command alone."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout to copy")
    dest = tmp_path_factory.mktemp("checkout")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    for name in filter(None, listed.decode().split("\0")):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    r = subprocess.run(["sh", "scripts/bootstrap"], cwd=dest, capture_output=True, text=True, timeout=900, env=_env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.rstrip().endswith("bootstrap: ready: .venv/bin/rtgate and .venv/bin/rtgate-sampler")
    return dest


def _env(**extra: str) -> dict[str, str]:
    """A new user's shell: no virtual environment of the suite's on PATH, no rtgate settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RTGATE_", "PYTEST_", "VIRTUAL_ENV", "PYTHON"))}
    env["PATH"] = ":".join(p for p in env.get("PATH", "").split(":") if ".venv" not in p)
    env.pop("MANPATH", None)
    env.update(extra)
    return env


def _run(argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600, env=_env(**env))


@pytest.mark.slow
@pytest.mark.skipif(not IS_ROOT, reason="the tutorial runs as root (SCHED_FIFO, bootstrap's apt-get)")
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the tutorial measures on CPU 1")
def test_the_tutorial_runs_as_written(checkout: Path) -> None:
    files, steps = tutorial()
    for name, text in files.items():
        (checkout / name).write_text(text)
    checks = iter([_validate, _doctor, _run_step, _report, _plot, _pytest, _lava_job])
    for step in steps:
        if step.argv[0] in NOT_RUN:
            continue
        r = _run(shortened(step.argv), checkout)
        next(checks)(step, r, checkout)
    _man_pages(checkout)


def _validate(step: Step, r: subprocess.CompletedProcess[str], cwd: Path) -> None:
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == step.shown  # every word of it: nothing here depends on the machine


def _doctor(step: Step, r: subprocess.CompletedProcess[str], cwd: Path) -> None:
    assert r.returncode == 0, r.stdout + r.stderr  # my-laptop.yaml removed the requirements: none can fail
    out = r.stdout.splitlines()
    # the machine in one line, then each finding once, as README shows them: a status, the measurements
    # it concerns, what; a fix under it
    head = re.compile(r"rtgate doctor: kernel \S+, \S+, \d+ CPUs, .")
    assert head.match(out[0]) and head.match(step.shown[0]), out[0]
    for line in out[1:]:
        assert re.match(r"(OK|WARN|FAIL) +\[idle(, loaded)?\] \S|(OK|WARN|FAIL) +\[loaded\] \S| {5}fix: \S", line), line
    assert step.shown[1] in out  # "OK   [idle, loaded] running as root: ..."
    shown_warn = next(ln for ln in step.shown if ln.startswith("WARN"))
    assert re.sub(r"\(isolcpus: .*\)", "", shown_warn) in [re.sub(r"\(isolcpus: .*\)", "", ln) for ln in out] or (
        "isolcpus=" in Path("/proc/cmdline").read_text()
    )


def _table(lines: list[str]) -> tuple[list[str], list[list[str]]]:
    head = next(i for i, ln in enumerate(lines) if ln.startswith("STATUS "))
    rows = []
    for ln in lines[head + 1 :]:
        if not ln.startswith(STATUSES):
            break
        rows.append(ln.split())
    return lines[head].split(), rows


def _run_step(step: Step, r: subprocess.CompletedProcess[str], cwd: Path) -> None:
    out = r.stdout.splitlines()
    assert out[0] == step.shown[0] == "rtgate: measuring idle ..."
    header, rows = _table(out)
    shown_header, shown_rows = _table(step.shown)
    assert header == shown_header
    # measurement, gate, thread; a measurement that could not be judged at all is one ERROR per gate,
    # on thread "all" (this machine's load may not reach its level, or another job may stall the run)
    assert [row[1:3] for row in rows] == [row[1:3] for row in shown_rows]
    assert all(row[3] == "cpu1" or (row[0], row[3]) == ("ERROR", "all") for row in rows), rows
    assert all(row[0] in STATUSES for row in rows)
    # the load line as README shows it, up to what this machine's load reached
    load = next(ln for ln in out if ln.startswith("rtgate: load: "))
    shown_load = next(ln for ln in step.shown if ln.startswith("rtgate: load: "))
    assert load.startswith(shown_load.split(" reached")[0]), load
    note = next(ln for ln in step.shown if ln.startswith("note: idle: duration shortened"))
    assert note.replace("--duration 10 s", f"--duration {SHORT[:-1]} s") in out
    # one line per gate that did not pass, its reason in full, then the summary line and its exit status
    for row in rows:
        if row[0] != "PASS":
            assert any(ln.startswith(f"{row[0]}: ") and f"{row[1]}::{row[2]}[{row[3]}]" in ln for ln in out), row
    counts = {s: sum(row[0] == s for row in rows) for s in STATUSES}
    verdict = "FAIL" if counts["FAIL"] + counts["ERROR"] else "INCONCLUSIVE" if counts["INCONCLUSIVE"] else "PASS"
    summary = (
        f"rtgate: {verdict}: {counts['PASS']} passed, {counts['FAIL']} failed, "
        f"{counts['INCONCLUSIVE']} inconclusive, {counts['ERROR']} errors"
    )
    shown_summary = next(i for i, ln in enumerate(step.shown) if ln.startswith("rtgate: FAIL: "))
    assert re.fullmatch(
        r"rtgate: FAIL: \d+ passed, \d+ failed, \d+ inconclusive, \d+ errors", step.shown[shown_summary]
    )
    # then the machine's load around each measurement, as README shows the first
    machine = re.compile(r"rtgate: idle: load average [\d.]+ before, [\d.]+ after \(\d+ CPUs\); CPU steal [\d.]+ % ")
    assert machine.match(step.shown[shown_summary + 1])
    at = out.index(summary)
    assert machine.match(out[at + 1]) or out[at + 1].startswith("rtgate: idle:"), out[at:]
    assert r.returncode == {"PASS": 0, "FAIL": 1, "INCONCLUSIVE": 3}[verdict], r.stderr
    # and the files it was asked for
    cases = ET.parse(cwd / "rtgate-junit.xml").getroot().iter("testcase")
    assert len(list(cases)) == len(rows)
    assert (cwd / "verdicts.json").is_file()
    for name in ("idle", "loaded"):
        assert (cwd / "rtgate-results" / f"{name}.json").is_file()


def _report(step: Step, r: subprocess.CompletedProcess[str], cwd: Path) -> None:
    assert r.returncode == 0, r.stderr
    html = (cwd / "report.html").read_text()
    assert "Measurement idle" in html and "Measurement loaded" in html


def _plot(step: Step, r: subprocess.CompletedProcess[str], cwd: Path) -> None:
    assert r.returncode == 0, r.stderr
    written = [ln.split()[1] for ln in r.stdout.splitlines()]
    assert written == [f"plots/{m}-{k}.png" for m in ("idle", "loaded") for k in ("histogram", "timeline")]
    assert all((cwd / p).stat().st_size > 10_000 for p in written)


def _pytest(step: Step, r: subprocess.CompletedProcess[str], cwd: Path) -> None:
    assert r.returncode in (0, 1), r.stdout + r.stderr  # every gate passed, or one failed: no usage error
    section = re.split(r"^=+ rtgate =+$", r.stdout, flags=re.M)[1].split("\n=")[0]  # up to pytest's next section
    lines = [ln for ln in section.splitlines() if ln.startswith(STATUSES)]
    assert len(lines) == 4, r.stdout
    # a measurement that could not be judged (its load below its level on a busy machine) is ERROR on "all"
    test_id = r"my-laptop\.yaml::(idle|loaded)::[\w.-]+"
    shape = re.compile(rf"((PASS|FAIL|INCONCLUSIVE|ERROR) +{test_id}\[cpu1\]|ERROR +{test_id}\[all\])  \S")
    assert all(shape.match(ln) for ln in lines + step.shown[:1]), lines
    shown = re.sub(r"\d+ us \(limit", "N us (limit", step.shown[0].split(None, 1)[1])
    idle_max = next(ln for ln in lines if "::idle::max[" in ln)
    assert re.sub(r"\d+ us \(limit", "N us (limit", idle_max.split(None, 1)[1]) == shown or "ERROR" in idle_max
    tests = list(ET.parse(cwd / "latency.xml").getroot().iter("testcase"))
    assert len(tests) == 4


def _lava_job(step: Step, r: subprocess.CompletedProcess[str], cwd: Path) -> None:
    assert r.returncode == 0, r.stderr
    job = yaml.safe_load((cwd / "job.yaml").read_text())
    assert job["device_type"] == "imx8mp-evk" and job["job_name"] == "rtgate my-board idle"
    assert "https://lab.example/rtgate-sampler" in str(job["actions"])


def _man_pages(cwd: Path) -> None:
    """`man rtgate` as README says: with .venv/bin on PATH (activated), or MANPATH naming .venv/man."""
    if shutil.which("man") is None:
        pytest.fail("bootstrap installs man-db: man is missing")
    activated = f"{cwd / '.venv' / 'bin'}:{_env()['PATH']}"
    for page in ("rtgate", "rtgate-sampler", "rtgate-thresholds"):
        r = _run(["man", "-w", page], cwd, PATH=activated)
        assert r.returncode == 0 and r.stdout.strip().startswith(str(cwd / ".venv")), r.stdout + r.stderr
    r = _run(["man", "-P", "cat", "rtgate"], cwd, MANPATH=".venv/man:", MANWIDTH="200")
    assert r.returncode == 0, r.stderr
    assert "EXIT STATUS" in r.stdout and re.search(r"^\s+130\s+Ctrl-C", r.stdout, flags=re.M), r.stdout[-2000:]
