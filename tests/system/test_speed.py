# SPDX-License-Identifier: GPL-2.0-or-later
"""Start-up weight: a light command loads neither the other commands nor a heavy library.

Timing is benchmarks/' job (the machine is shared); what a command imports is not noisy, and it
is what makes `rtgate --version` take 0.03 s of CPU instead of 0.3 s.
The tests of this topic that start no process: tests/unit/test_speed_unit.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, RT_TESTS

# Libraries that cost tens of milliseconds to import, and what needs them.
HEAVY = ("numpy", "matplotlib", "jinja2", "psycopg", "junitparser", "sqlite3", "urllib.request", "http.client")
# What reading a threshold file needs none of: the results model and parsers, and difflib (only for a mistake).
NOT_FOR_VALIDATE = ("rtgate.core.model", "rtgate.parsers", "difflib")
# What checking rtgate-sampler JSON needs none of: the text formats' parsers, and shlex (rt-tests command lines).
NOT_FOR_JSON = (
    *(f"rtgate.parsers.{name}" for name in ("histtext", "rtla", "summary", "verbose")),
    "shlex",
    "difflib",
)

# Run rtgate's main() in a fresh interpreter, then list what it imported.
PROBE = """
import json, sys
from rtgate.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = %r
loaded = sorted(m for m in sys.modules if m in heavy or m.split(".")[0] in heavy or m.startswith("rtgate.commands."))
print("\\n" + json.dumps(loaded))
"""


def loaded_by(*argv: str, watch: tuple[str, ...] = HEAVY) -> set[str]:
    r = subprocess.run(
        [sys.executable, "-c", PROBE % (watch,), *argv], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert r.stderr == "" or "Traceback" not in r.stderr, r.stderr
    return set(json.loads(r.stdout.strip().splitlines()[-1]))


def heavy(modules: set[str]) -> set[str]:
    """The heavy libraries among `modules`, by top-level name."""
    return {m if m in HEAVY else m.split(".")[0] for m in modules if not m.startswith("rtgate.")}


def test_version_and_help_import_no_command() -> None:
    assert loaded_by("--version") == set()
    assert loaded_by("--help") == set()


def test_validate_imports_only_itself() -> None:
    default = str(ROOT / "thresholds" / "default.yaml")
    assert loaded_by("validate", default, watch=(*HEAVY, *NOT_FOR_VALIDATE)) == {"rtgate.commands.validate"}


def test_check_of_sampler_json_imports_no_text_parser(tmp_path: Path) -> None:
    spec = tmp_path / "t.yaml"
    spec.write_text(
        "platform: vm\nmeasurements:\n  smp:\n    sampler: {interval_us: 500, loops: 400,"
        " threads: [{name: all, count: 2}]}\n    gates:\n      - {name: max, kind: max, limit_us: 5000}\n"
    )
    out, res = tmp_path / "v.json", str(FIXTURES / "rtgate-sampler" / "rs-t2-h200.json")
    watch = (*NOT_FOR_JSON, "rtgate.parsers.json_results")
    modules = loaded_by("check", "--json", str(out), str(spec), res, watch=watch)
    assert json.loads(out.read_text())["verdicts"], "no verdict: the command did not read the results"
    assert "rtgate.parsers.json_results" in modules  # the probe sees what check does load
    assert modules & set(NOT_FOR_JSON) == set()


@pytest.mark.parametrize("command", ["check", "show", "run", "doctor", "export", "fuego"])
def test_light_commands_import_no_heavy_library(command: str) -> None:
    modules = loaded_by(command, "--help")
    assert f"rtgate.commands.{command}" in modules
    assert heavy(modules) == set(), f"rtgate {command} imports {sorted(heavy(modules))}"


def test_check_imports_no_heavy_library_even_for_junit(tmp_path: Path) -> None:
    """The JUnit report streams through the standard library's ElementTree: junitparser is the tests' reader."""
    spec = tmp_path / "t.yaml"
    spec.write_text(
        "platform: vm\nmeasurements:\n  smp:\n    sampler: {interval_us: 200, loops: 5000, priority: 80,"
        " threads: [{name: all, cpus: all}]}\n    gates:\n      - {name: max, kind: max, limit_us: 1000}\n"
    )
    res = str(RT_TESTS / "ct-24-S-h300.json")  # a known pass: maxima 894 and 155 us
    junit = tmp_path / "j.xml"
    assert heavy(loaded_by("check", str(spec), res)) == set()
    assert heavy(loaded_by("check", "--junit", str(junit), str(spec), res)) == set()
    assert 'failures="0"' in junit.read_text()


def test_history_trend_loads_no_statistics(tmp_path: Path) -> None:
    """`history trend` reads stored figures: neither numpy (the comparisons' statistics) nor
    matplotlib without --plot; `history add` neither."""
    db = str(tmp_path / "h.db")
    res = f"smp={RT_TESTS / 'ct-24-S-h300.json'}"
    add = ["history", "add", "--db", db, "--platform", "vm", "--kernel-release", "6.1", "--force-label", res]
    assert heavy(loaded_by(*add)) == {"sqlite3"}
    from rtgate.history.store import HistoryDB

    with HistoryDB(db) as store:  # the run landed: trend below has something to read
        assert store.count_runs() == 1
    assert heavy(loaded_by("history", "trend", "--db", db, "--platform", "vm", "--metric", "p99.9")) == {"sqlite3"}


# What `history add` and `compare` need only with --thresholds: the loader (YAML) and the gates.
THRESHOLD_LOADER = ("yaml", "rtgate.core.checker", "rtgate.core.thresholds", "rtgate.core.gates")


def test_history_without_thresholds_loads_no_threshold_loader(tmp_path: Path) -> None:
    """`history add` and `compare` without --thresholds: neither YAML nor the gates; compare
    loads numpy for its statistics, but not numpy.ma (np.median's masked-array check)."""
    db = str(tmp_path / "h.db")
    res = f"smp={RT_TESTS / 'ct-24-S-h300.json'}"
    for release in ("6.1", "6.2"):
        add = ["history", "add", "--db", db, "--platform", "vm", "--kernel-release", release, "--force-label", res]
        assert loaded_by(*add, watch=THRESHOLD_LOADER) == {"rtgate.commands.history"}
    compare = ["history", "compare", "--db", db, "--platform", "vm", "--base", "6.1", "--new", "6.2"]
    assert loaded_by(*compare, watch=(*THRESHOLD_LOADER, "numpy.ma")) == {"rtgate.commands.history"}
    assert "numpy" in heavy(loaded_by(*compare))  # the probe sees what compare does load


# What `rtgate run` without a load needs none of: the load's temporary folder (tempfile, and random with
# it) and the gzip module (/proc/config.gz is read by zlib).
NOT_FOR_RUN = ("tempfile", "random", "gzip")


def test_run_imports_no_load_machinery() -> None:
    """Everything `rtgate run` loads, through the console script: the command, the preflight, the runner,
    the results parser, the gates and the reports."""
    watch = (*HEAVY, *NOT_FOR_RUN, "rtgate.measure.preflight", "rtgate.parsers.json_results")
    code = (
        "import json, sys\nimport rtgate.console\nfrom rtgate.cli import build_parser\nbuild_parser(['run'])\n"
        "import rtgate.measure.orchestrate, rtgate.measure.engine_check, rtgate.measure.runner\n"
        "import rtgate.parsers.json_results, rtgate.core.setup, rtgate.reports.junit, rtgate.reports.text\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m in {watch!r})))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert set(json.loads(r.stdout)) == {"rtgate.measure.preflight", "rtgate.parsers.json_results"}


# Runs the console script's main() and logs, in order, cycle collections and the instants main() starts
# and the command is parsed (cli.main's `started`).
GC_PROBE = """
import gc, json, sys
from rtgate import cli, console
log = []
gc.callbacks.append(lambda phase, info: phase == "start" and log.append("collect"))
real = cli.main
def logged(argv=None, started=None, **options):
    log.append("main")
    return real(argv, started=lambda: (log.append("started"), started()), **options)
console.cli_main = logged
sys.argv = ["rtgate", *sys.argv[1:]]
try:
    code = console.main()
except SystemExit as e:  # --help
    code = e.code
print(json.dumps({"code": code, "log": log, "collecting": gc.isenabled()}))
"""


def test_start_up_collects_no_cycles_until_the_command_is_parsed() -> None:
    """From main() to the command's options parsed (its modules imported: ~100,000 objects that live as
    long as rtgate), no collection; then the collector runs again for the command itself."""
    default = str(ROOT / "thresholds" / "default.yaml")
    for argv in (["validate", default], ["run", "--help"]):
        r = subprocess.run(
            [sys.executable, "-c", GC_PROBE, *argv], capture_output=True, text=True, timeout=120, cwd=ROOT
        )
        out = json.loads(r.stdout.strip().splitlines()[-1])
        log = out["log"]
        if argv[0] == "validate":
            assert out["code"] == 0 and out["collecting"], out
            assert log.count("main") == 1 and log.count("started") == 1, log
            assert "collect" not in log[log.index("main") : log.index("started")], log
        else:  # --help ends in argparse, before the command runs: no collection at all from main() on
            assert out["code"] == 0 and "started" not in log and "collect" not in log[log.index("main") :], log


def test_help_lists_every_command() -> None:
    from rtgate.commands import COMMANDS

    r = subprocess.run([sys.executable, "-m", "rtgate", "--help"], capture_output=True, text=True, timeout=120)
    listed = {line.split()[0] for line in r.stdout.splitlines() if line.startswith("    ") and line.split()}
    assert set(COMMANDS) <= listed
    assert all((ROOT / "harness" / "rtgate" / "commands" / f"{name}.py").is_file() for name in COMMANDS)


# ---------------------------------------------------------------- benchmarks cannot rot

BENCHMARKS = sorted(p for p in (ROOT / "benchmarks").glob("*.py") if p.name != "common.py")
# These measure: real-time priority, mlockall, the machine-wide lock of rtgate run; lab_scale.py
# starts lava-server and lava-run, which need root.
NEEDS_ROOT = {
    "default_platform.py",
    "engine_cost.py",
    "fidelity_matrix.py",
    "footprint.py",
    "lab_scale.py",
    "module_walk.py",
    "run_overhead.py",
    "sampler_vs_cyclictest.py",
}


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.name)
def test_benchmark_smoke_mode_runs(script: Path) -> None:
    """Every script in benchmarks/ has --smoke (seconds), and it still runs to its figures."""
    if script.name in NEEDS_ROOT and os.geteuid() != 0:
        pytest.skip(f"{script.name} measures with real-time priority: run as root")
    r = subprocess.run([sys.executable, str(script), "--smoke"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{script.name} --smoke: {r.stdout[-2000:]}{r.stderr[-2000:]}"
    assert any(ch.isdigit() for ch in r.stdout), r.stdout
