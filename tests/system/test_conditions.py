# SPDX-License-Identifier: GPL-2.0-or-later
"""Measurement conditions: environment capture, `rtgate doctor`, require:, and real load profiles.
The tests of this topic that start no process: tests/unit/test_conditions_unit.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import IS_ROOT, pgid_processes


def _sigint_default() -> None:
    """A background job inherits SIGINT ignored; Ctrl-C in a terminal is what this test plays."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


needs_root = pytest.mark.skipif(not IS_ROOT or (os.cpu_count() or 1) < 2, reason="needs root and two CPUs")


def rtgate(*args: str, cwd: Path | None = None, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rtgate", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


# ---------------------------------------------------------------- load profiles, for real

LOADED = """\
platform: load
measurements:
  m:
    sampler: {{interval_us: 1000, duration: {seconds}s, priority: 80, threads: [{{name: a, cpus: [0]}}]}}
    load: {load}
    gates:
      - {{name: max, kind: max, limit_us: {limit}}}
"""


def run_with_load(
    tmp_path: Path,
    load: str,
    seconds: int = 2,
    limit: int = 1_000_000,
    sampler: str | None = None,
    env: dict[str, str] | None = None,
) -> tuple[subprocess.CompletedProcess[str], dict, dict]:
    spec = tmp_path / "t.yaml"
    spec.write_text(LOADED.format(load=load, seconds=seconds, limit=limit))
    args = ["run", str(spec), "--json", "v.json"] + (["--sampler", sampler] if sampler else [])
    r = subprocess.run(
        [sys.executable, "-m", "rtgate", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=180,
        env={**os.environ, **(env or {})},
    )
    env_file = tmp_path / "rtgate-results" / "m.environment.json"
    env = json.loads(env_file.read_text()) if env_file.exists() else {}
    verdicts = json.loads((tmp_path / "v.json").read_text()) if (tmp_path / "v.json").exists() else {}
    return r, env, verdicts


# The levels asked of loads in these tests are set low on purpose: this machine is shared, so a
# load's share of it is not the test's to know. What is checked is that the load ran and that what
# rtgate records is what the tool itself reported; the level -> ERROR path is tested with a level
# no machine reaches.
# hackbench is mostly blocked on its sockets and, on a crowded machine, can go a whole 2 s measurement
# without one 10 ms clock tick of CPU: its level is 0 here, and its own loop count shows it ran.
LOW_LEVEL = {
    "cpu": "min_cpu_percent: 0.1",
    "hackbench": "min_cpu_percent: 0",
    "memory": "min_cpu_percent: 0.1",
    "kcompile": "min_cpu_percent: 0.1",
    "io": "min_ops_per_second: 0.001",
    "network": "min_ops_per_second: 0.001",
    "timer": "min_ops_per_second: 0.001",
}


def _stress_ng_own_figures(outdir: Path) -> tuple[dict[str, dict], dict[str, int]]:
    """stress-ng's two outputs of one run: its YAML metrics, and the bogo-ops of its metrc log lines."""
    doc = yaml.safe_load((outdir / "m.load" / "stress-ng.yaml").read_text())
    yaml_metrics = {m["stressor"]: m for m in doc["metrics"]}
    log_ops = {}
    for line in (outdir / "m.load" / "load.log").read_text().splitlines():
        words = line.split()
        if "metrc:" in words and len(words) > 4 and words[3] in yaml_metrics and words[4].isdigit():
            log_ops[words[3]] = int(words[4])
    return yaml_metrics, log_ops


@needs_root
@pytest.mark.parametrize("kind", ["cpu", "hackbench", "memory", "io", "network", "timer", "kcompile"])
def test_each_load_runs_during_the_measurement_and_is_gone_after(tmp_path: Path, kind: str, tool: object) -> None:
    tool("stress-ng", "stress-ng")  # type: ignore[operator]
    tool("hackbench", "rt-tests")  # type: ignore[operator]
    r, env, verdicts = run_with_load(tmp_path, f"{{kind: {kind}, cpus: others, warmup_seconds: 1, {LOW_LEVEL[kind]}}}")
    assert r.returncode == 0, r.stdout + r.stderr
    load = env["load"]
    assert load["kind"] == kind and load["problem"] is None and load["cpus"] == [1]
    assert load["seconds"] >= 2  # it was there during the whole measurement, and working:
    if kind == "hackbench":
        assert load["hackbench_loops"] > 0
    else:
        assert load["cpu_seconds"] > 0
    if kind == "hackbench":
        pass
    elif kind == "kcompile":
        # sh -c SCRIPT rtgate-kcompile WORKERS PROJECT: make -j WORKERS, then make clean, in a loop
        assert load["command"][-3:-1] == ["rtgate-kcompile", "1"] and "make -s" in load["command"][-4]
        assert load["level"] == {"unit": "% CPU", "min": 0.1, "reached": load["cpu_percent"]}
        assert isinstance(load["builds"], int) and load["tree"] == "bundled C project"
    else:
        # what rtgate recorded is what stress-ng itself wrote, in both of its outputs
        yaml_metrics, log_ops = _stress_ng_own_figures(tmp_path / "rtgate-results")
        assert load["stress_ng"] == list(yaml_metrics.values())
        assert load["bogo_ops"] == {name: m["bogo-ops"] for name, m in yaml_metrics.items()} == log_ops
        assert sum(load["bogo_ops"].values()) > 0
        if kind in ("io", "network", "timer"):
            rate = sum(m["bogo-ops-per-second-real-time"] for m in yaml_metrics.values())
            assert load["level"]["reached"] == round(rate, 3) and load["level"]["min"] == 0.001
    assert pgid_processes(load["pgid"]) == []  # and nothing of it is left
    assert env["system"]["kernel_release"] == os.uname().release
    assert verdicts["verdicts"][0]["status"] == "PASS"


# A stand-in for a kernel tree with the kernel's build interface: defconfig and out-of-tree builds with O=.
KERNEL_LIKE_MAKEFILE = """\
O ?= .
SRCS := $(wildcard $(CURDIR)/*.c)
all: $(patsubst $(CURDIR)/%.c,$(O)/%.o,$(SRCS))
$(O)/%.o: $(CURDIR)/%.c $(O)/.config
\t$(CC) -O2 -c -o $@ $<
defconfig:
\tmkdir -p $(O) && echo CONFIG_RTGATE_TEST=y > $(O)/.config
clean:
\trm -f $(O)/*.o
"""


@needs_root
def test_kcompile_builds_a_kernel_tree_out_of_tree(tmp_path: Path, tool: object) -> None:
    tool("make", "make")  # type: ignore[operator]
    tree = tmp_path / "linux"
    tree.mkdir()
    (tree / "Makefile").write_text(KERNEL_LIKE_MAKEFILE)
    for i in range(4):
        (tree / f"u{i}.c").write_text(f"int u{i}(int x) {{ for (int j = 0; j < 99; j++) x = x * 3 + j; return x; }}\n")
    before = sorted(p.name for p in tree.iterdir())
    r, env, verdicts = run_with_load(
        tmp_path, f"{{kind: kcompile, tree: {tree}, cpus: others, warmup_seconds: 1, min_cpu_percent: 0.1}}"
    )
    assert r.returncode == 0, r.stdout + r.stderr
    load = env["load"]
    assert load["problem"] is None and load["tree"] == str(tree) and str(tree) in load["command"]
    log = (tmp_path / "rtgate-results" / "m.load" / "load.log").read_text()
    assert load["builds"] == log.count("rtgate-kcompile-run") and load["builds"] > 0
    assert load["level"] == {"unit": "% CPU", "min": 0.1, "reached": load["cpu_percent"]}
    assert sorted(p.name for p in tree.iterdir()) == before  # built in the load's own folder, never in the tree
    assert verdicts["verdicts"][0]["status"] == "PASS"


@needs_root
def test_kcompile_refuses_a_folder_that_is_no_kernel_tree(tmp_path: Path) -> None:
    """Not measured, as the engine says on a board: every gate ERROR with the reason, the reports written."""
    r, _env, verdicts = run_with_load(tmp_path, f"{{kind: kcompile, tree: {tmp_path}, cpus: others}}")
    assert r.returncode == 1, r.stderr
    why = f"not measured: load kcompile: {tmp_path} is not a kernel source tree (no Makefile)"
    assert [(v["thread"], v["status"], v["reason"]) for v in verdicts["verdicts"]] == [("all", "ERROR", why)]


@needs_root
@pytest.mark.parametrize("kind", ["cpu", "hackbench"])
def test_a_repeated_run_keeps_its_own_load_log(tmp_path: Path, kind: str, tool: object) -> None:
    tool("stress-ng", "stress-ng")  # type: ignore[operator]
    tool("hackbench", "rt-tests")  # type: ignore[operator]
    for _ in range(2):
        r, env, _ = run_with_load(tmp_path, f"{{kind: {kind}, cpus: others, warmup_seconds: 0.5, {LOW_LEVEL[kind]}}}")
        assert r.returncode == 0, r.stdout + r.stderr
    log = (tmp_path / "rtgate-results" / "m.load" / "load.log").read_text()
    if kind == "hackbench":
        assert env["load"]["hackbench_loops"] == 500 * log.count("rtgate-hackbench-run")
    else:
        assert log.count("successful run completed") == 1  # the second run's only
        _yaml_metrics, log_ops = _stress_ng_own_figures(tmp_path / "rtgate-results")
        assert env["load"]["bogo_ops"] == log_ops


@needs_root
@pytest.mark.parametrize("kind", ["timer", "io"])
def test_an_operation_rate_below_its_level_makes_the_measurement_invalid(
    tmp_path: Path, kind: str, tool: object
) -> None:
    tool("stress-ng", "stress-ng")  # type: ignore[operator]
    r, env, verdicts = run_with_load(
        tmp_path, f"{{kind: {kind}, cpus: others, warmup_seconds: 0.5, min_ops_per_second: 1.0e+11}}"
    )  # no machine reaches it
    assert r.returncode == 1, r.stdout + r.stderr
    yaml_metrics, _ = _stress_ng_own_figures(tmp_path / "rtgate-results")
    rate = sum(m["bogo-ops-per-second-real-time"] for m in yaml_metrics.values())
    assert "below its level of 1e+11" in env["load"]["problem"] and f"{rate:g}" in env["load"]["problem"]
    assert_invalid_keeps_figures(verdicts, "below its level of 1e+11")


@needs_root
def test_a_load_that_dies_makes_the_measurement_invalid(tmp_path: Path) -> None:
    r, env, verdicts = run_with_load(
        tmp_path, "{kind: custom, command: [sleep, '2'], cpus: others, warmup_seconds: 0.5}", seconds=3
    )
    assert r.returncode == 1
    assert "stopped during the measurement" in env["load"]["problem"]
    assert_invalid_keeps_figures(verdicts, "the custom load stopped")


def assert_invalid_keeps_figures(verdicts: dict[str, Any], why: str) -> None:
    """An invalid run, as the engine reports one on a board: every gate ERROR per thread, the figure
    measured kept and said ("invalid: REASON (measured VALUE UNIT)"), never one value-less [all]."""
    assert verdicts["verdicts"], verdicts
    for v in verdicts["verdicts"]:
        assert v["status"] == "ERROR" and v["thread"] != "all", v
        assert v["reason"].startswith("invalid: ") and why in v["reason"], v
        assert v["value"] is not None and f"(measured {v['value']:.6g} us)" in v["reason"], v


@needs_root
def test_a_load_below_its_level_makes_the_measurement_invalid(tmp_path: Path) -> None:
    r, env, _verdicts = run_with_load(
        tmp_path, "{kind: custom, command: [sleep, '60'], cpus: others, warmup_seconds: 0.2, min_cpu_percent: 50}"
    )
    assert r.returncode == 1 and "below its level of 50 %" in env["load"]["problem"]
    assert pgid_processes(env["load"]["pgid"]) == []
    # a custom load has a level too: a sleeping "load" is no load
    r, env, _verdicts = run_with_load(
        tmp_path, "{kind: custom, command: [sleep, '60'], cpus: others, warmup_seconds: 0.2}"
    )
    assert r.returncode == 1 and "reached 0 % CPU, below its level of 1 %" in env["load"]["problem"]


def _tagged(tag: str) -> set[int]:
    """Processes that inherited this test's tag: other suites' loads on the machine do not count."""
    pids = set()
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if f"RTGATE_TEST_TAG={tag}".encode() in environ.read_bytes().split(b"\0"):
                pids.add(int(environ.parent.name))
        except OSError:
            continue
    return pids


@needs_root
def test_several_loads_run_together_each_at_its_level(tmp_path: Path, tool: object) -> None:
    """load: [cpu, memory]: both run through the whole measurement, each judged, both gone after."""
    tool("stress-ng", "stress-ng")  # type: ignore[operator]
    r, env, verdicts = run_with_load(
        tmp_path,
        "[{kind: cpu, cpus: others, warmup_seconds: 1, min_cpu_percent: 0.1},"
        " {kind: memory, cpus: others, warmup_seconds: 0.5, size: 16M, min_cpu_percent: 0.1}]",
    )
    assert r.returncode == 0, r.stdout + r.stderr
    load = env["load"]
    assert load["kind"] == "cpu+memory" and load["problem"] is None and load["cpus"] == [1]
    assert [x["kind"] for x in load["loads"]] == ["cpu", "memory"]
    for x in load["loads"]:
        assert x["seconds"] >= 2 and x["cpu_seconds"] > 0 and x["level"]["min"] == 0.1
        assert pgid_processes(x["pgid"]) == []
    assert (tmp_path / "rtgate-results" / "m.load-0-cpu" / "load.log").exists()
    assert (tmp_path / "rtgate-results" / "m.load-1-memory" / "stress-ng.yaml").exists()
    assert verdicts["verdicts"][0]["status"] == "PASS"
    # One of them below its level makes the measurement invalid, and says which.
    r, env, verdicts = run_with_load(
        tmp_path,
        "[{kind: cpu, cpus: others, warmup_seconds: 0.2, min_cpu_percent: 0.1},"
        " {kind: custom, command: [sleep, '60'], cpus: others, warmup_seconds: 0.2}]",
    )
    assert r.returncode == 1 and "the custom load reached 0 % CPU" in env["load"]["problem"]
    assert verdicts["verdicts"][0]["status"] == "ERROR"
    assert all(pgid_processes(x["pgid"]) == [] for x in env["load"]["loads"])


@needs_root
def test_ctrl_c_stops_the_load(tmp_path: Path, tool: object) -> None:
    tool("stress-ng", "stress-ng")  # type: ignore[operator]
    tag = f"ctrl-c-{os.getpid()}-{time.monotonic_ns()}"
    spec = tmp_path / "t.yaml"
    spec.write_text(
        LOADED.format(
            load="{kind: cpu, cpus: others, warmup_seconds: 0.5, min_cpu_percent: 0.1}", seconds=60, limit=10**6
        )
    )
    p = subprocess.Popen(
        [sys.executable, "-m", "rtgate", "run", str(spec), "--json", "v.json"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_sigint_default,
        env={**os.environ, "RTGATE_TEST_TAG": tag},
    )
    # Wait for the sampler to be measuring (its results folder's .stderr appears when it starts), however
    # long this shared machine takes to start Python, the load and its warm-up.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (tmp_path / "rtgate-results" / "m.stderr").exists():
        time.sleep(0.1)
    time.sleep(0.5)
    assert len(_tagged(tag) - {p.pid}) >= 2, "the load was not running"  # the sampler and stress-ng's
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=60)
    assert _tagged(tag) == set()
    env = json.loads((tmp_path / "rtgate-results" / "m.environment.json").read_text())
    assert pgid_processes(env["load"]["pgid"]) == []
    assert json.loads((tmp_path / "v.json").read_text())["verdicts"][0]["status"] == "INCONCLUSIVE"


@needs_root
def test_a_failing_sampler_still_stops_the_load(tmp_path: Path, tool: object) -> None:
    tool("stress-ng", "stress-ng")  # type: ignore[operator]
    tag = f"broken-{os.getpid()}-{time.monotonic_ns()}"
    failing = tmp_path / "broken-sampler"
    failing.write_text("#!/bin/sh\necho 'rtgate-sampler: cannot lock memory' >&2\nexit 1\n")
    failing.chmod(0o755)
    r, _, _ = run_with_load(
        tmp_path, "{kind: cpu, cpus: others, warmup_seconds: 0.5}", sampler=str(failing), env={"RTGATE_TEST_TAG": tag}
    )
    # its gates ERROR with the reason, in the reports (not exit 2 and no report)
    assert r.returncode == 1 and "not measured:" in r.stdout and "cannot lock memory" in r.stdout, r.stdout + r.stderr
    assert _tagged(tag) == set()


@needs_root
def test_a_higher_priority_load_on_the_measured_cpu_fails_the_gate(tmp_path: Path) -> None:
    """A known injected latency: a SCHED_FIFO 99 loop spinning 100 ms every 300 ms on CPU 0."""
    spin = (
        "import time\nwhile True:\n t = time.monotonic()\n while time.monotonic() - t < 0.1:\n  pass\n"
        " time.sleep(0.2)\n"
    )
    burst = (
        f"{{kind: custom, command: [chrt, '-f', '99', {json.dumps(sys.executable)}, '-c', {json.dumps(spin)}], "
        "cpus: measured, warmup_seconds: 0.5}"
    )
    r, _env, verdicts = run_with_load(
        tmp_path / "loaded" if (tmp_path / "loaded").mkdir() is None else tmp_path, burst, seconds=3, limit=40_000
    )
    v = verdicts["verdicts"][0]
    assert v["status"] == "FAIL" and v["value"] >= 80_000, (v, r.stderr)  # the 100 ms burst shows
    r, _env, verdicts = run_with_load(
        tmp_path / "idle" if (tmp_path / "idle").mkdir() is None else tmp_path, "{kind: none}", seconds=3, limit=40_000
    )
    v = verdicts["verdicts"][0]
    assert v["status"] == "PASS" and v["value"] < 40_000, v
