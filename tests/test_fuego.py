"""Benchmark.rtgate through a Fuego test double: the real fuego_test.sh phases with the real
sampler, then the real parser.py, judged by criteria generated from the threshold file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import IS_ROOT, ROOT

TEST_HOME = ROOT / "fuego" / "tests" / "Benchmark.rtgate"
DOUBLE = ROOT / "tests" / "fuego"

SPEC = """\
platform: fuego-board
measurements:
  app:
    sampler:
      interval_us: 1000
      duration: 10m
      priority: 80
      threads: [{{name: A, cpus: [0]}}, {{name: B, cpus: [1]}}]
    gates:
      - {{name: a-max, kind: max, threads: [A], limit_us: {a_limit}}}
      - {{name: b-over, kind: miss_rate, threads: [B], above_us: 1000000, rate: 50%}}
"""


def rtgate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rtgate", *args], capture_output=True, text=True)


def test_criteria_generated_from_the_two_thread_example() -> None:
    shipped = json.loads((TEST_HOME / "criteria.json").read_text())
    assert shipped["schema_version"] == "1.0"
    got = {c["tguid"]: c.get("reference", {}).get("operator", f"max_fail={c.get('max_fail')}")
           for c in shipped["criteria"]}
    assert got == {"default.app.a-max-A-cpu0-verdict": "le", "default.app.a-max-A-cpu0": "le",
                   "default.app.b-over-100us-B-cpu1-verdict": "le", "default.app": "max_fail=0",
                   "default": "max_fail=0"}
    limits = {c["tguid"]: c["reference"]["value"] for c in shipped["criteria"] if "reference" in c}
    assert limits["default.app.a-max-A-cpu0"] == 80 and limits["default.app.a-max-A-cpu0-verdict"] == 0
    # the shipped files are exactly what `rtgate fuego criteria` writes today
    out = Path(os.environ.get("TMPDIR", "/tmp")) / f"fuego-crit-{os.getpid()}"
    r = rtgate("fuego", "criteria", "two-thread-example.yaml", "-o", str(out))
    assert r.returncode == 0, r.stderr
    for name in ("criteria.json", "reference.json", "chart_config.json"):
        assert json.loads((out / name).read_text()) == json.loads((TEST_HOME / name).read_text()), name
    shutil.rmtree(out)


def test_spec_has_the_documented_specs() -> None:
    spec = json.loads((TEST_HOME / "spec.json").read_text())
    assert spec["testName"] == "Benchmark.rtgate"
    assert {"default", "quick", "long"} <= set(spec["specs"])
    assert all("THRESHOLDS" in s and "MEASUREMENT" in s for s in spec["specs"].values())


def fuego_run(tmp_path: Path, spec_vars: dict[str, str], criteria_for: Path | None) -> tuple[int, Path, str]:
    """Run the test's phases and its parser as Fuego would. Returns (parser status, logdir, output)."""
    rw, board, logdir, build = (tmp_path / d for d in ("fuego-rw", "board", "log", "build"))
    for d in (rw / "boards", board, logdir, build):
        d.mkdir(parents=True, exist_ok=True)
    for item in ("meson.build", "meson_options.txt", "sampler"):  # what Fuego's git clone gives
        src = ROOT / item
        (shutil.copytree if src.is_dir() else shutil.copy)(src, build / item)
    if criteria_for is not None:
        r = rtgate("fuego", "criteria", str(criteria_for), "--board", "testboard", "-o", str(rw / "boards"))
        assert r.returncode == 0, r.stderr
    env = {**os.environ, "FUEGO_CORE": str(DOUBLE), "FUEGO_RW": str(rw), "TEST_HOME": str(TEST_HOME),
           "TESTDIR": "Benchmark.rtgate", "NODE_NAME": "testboard", "BOARD_TESTDIR": str(board),
           "LOGDIR": str(logdir), "CC": "gcc", "AR": "ar", "ARCHITECTURE": "x86_64",
           "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", **spec_vars}
    phases = ("source {double}/fuego_functions.sh && source {test}/fuego_test.sh && test_pre_check && "
              "test_build >/dev/null && test_deploy && test_run && test_processing")
    r = subprocess.run(["bash", "-c", phases.format(double=DOUBLE, test=TEST_HOME)], cwd=build, env=env,
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        return -r.returncode or -1, logdir, r.stdout + r.stderr
    p = subprocess.run([sys.executable, str(TEST_HOME / "parser.py")], env=env, capture_output=True, text=True)
    return p.returncode, logdir, r.stdout + p.stdout + p.stderr


@pytest.mark.skipif(not IS_ROOT or (os.cpu_count() or 1) < 2, reason="needs root and two CPUs")
@pytest.mark.parametrize("variant, a_limit", [("lenient", 10_000_000), ("impossible", 0)])
def test_local_fuego_run(tmp_path: Path, variant: str, a_limit: int, tool: object) -> None:
    tool("meson", "meson")  # type: ignore[operator]
    spec = tmp_path / "board.yaml"
    spec.write_text(SPEC.format(a_limit=a_limit))
    status, logdir, out = fuego_run(tmp_path, {"BENCHMARK_RTGATE_THRESHOLDS": str(spec),
                                               "BENCHMARK_RTGATE_MEASUREMENT": "app",
                                               "BENCHMARK_RTGATE_DURATION": "3s"}, spec)
    run = json.loads((logdir / "run.json").read_text())
    measures = run["test_sets"]["default"]["app"]
    assert (logdir / "rtgate.json").is_file()  # fetched back from the board
    assert "# Histogram" not in (logdir / "testlog.txt").read_text()
    failed = {name for name, m in measures.items() if m["status"] == "FAIL"}
    if variant == "lenient":
        assert status == 0 and run["status"] == "PASS" and not failed, out
    else:
        assert status == 1 and run["status"] == "FAIL", out
        assert failed == {"a-max-A-cpu0", "a-max-A-cpu0-verdict"}  # exactly the impossible gate
    assert measures["b-over-B-cpu1-verdict"]["measure"] == 0
    assert measures["max-cpu0"]["measure"] > 0 and "p99.9-cpu1" in measures


@pytest.mark.parametrize("field, value", [
    ("BENCHMARK_RTGATE_MEASUREMENT", "app;touch {canary}"),
    ("BENCHMARK_RTGATE_DURATION", "$(touch {canary})"),
    ("BENCHMARK_RTGATE_THRESHOLDS", "$(touch {canary}).yaml"),
])
def test_hostile_spec_values_are_never_executed(tmp_path: Path, field: str, value: str) -> None:
    canary = tmp_path / "canary"
    spec_vars = {"BENCHMARK_RTGATE_THRESHOLDS": "two-thread-example.yaml", "BENCHMARK_RTGATE_MEASUREMENT": "app"}
    spec_vars[field] = value.format(canary=canary)
    status, _, out = fuego_run(tmp_path, spec_vars, None)
    assert status < 0, out  # pre_check aborts the job
    assert not canary.exists()
    assert "ABORTED" in out
