# SPDX-License-Identifier: GPL-2.0-or-later
"""The LAVA adapter: definitions and jobs validated by LAVA's own lava-common, the run script
with LAVA's own test-shell helpers, hostile parameters, results back, and a real lava-run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from junitparser import JUnitXml

from conftest import ROOT, RT_OPTS

LAVA_SHELL = Path("/usr/lib/python3/dist-packages/lava_dispatcher/lava_test_shell")
SCRIPT = ROOT / "lava-defs" / "rtgate.sh"
SHIPPED = sorted((ROOT / "thresholds").rglob("*.yaml"))


def lava_python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run code with Debian's python3, which has lava-common (the venv does not)."""
    return subprocess.run(["/usr/bin/python3", "-c", code, *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def lava_common(tool: object) -> None:
    r = lava_python("import lava_common.schemas")
    if r.returncode != 0:
        if os.environ.get("CI"):
            pytest.fail("lava-common is required in CI: .ci/run installs Debian's lava-common")
        pytest.skip("Debian's lava-common is not installed")


def rtgate(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rtgate", *args], capture_output=True, text=True, cwd=cwd)


VALIDATE_JOB = """
import sys, yaml
from lava_common.schemas import validate
validate(yaml.safe_load(open(sys.argv[1])), strict=True)
"""

# lava-server's own submission check (what POST api/v0.2/jobs/ runs), from Debian's lava-server:
# stricter than lava-common's on inline definitions. It reads Django settings, no database.
VALIDATE_SUBMISSION = """
import os, sys, yaml
os.environ.update(DJANGO_SETTINGS_MODULE="lava_server.settings.prod", SECRET_KEY="test",
                  DATABASE_URL="sqlite:///:memory:")
import django
django.setup()
from lava_scheduler_app.schema import validate_submission
validate_submission(yaml.safe_load(open(sys.argv[1])))
"""


@pytest.fixture(scope="module")
def lava_server_schema(tool: object) -> None:
    r = lava_python("import lava_scheduler_app")
    if r.returncode != 0:
        if os.environ.get("CI"):
            pytest.fail("lava-server is required in CI: .ci/run installs Debian's lava-server")
        pytest.skip("Debian's lava-server is not installed")


def test_test_definition_validates_with_lava_common(lava_common: None) -> None:
    r = lava_python(
        "import sys, yaml\nfrom lava_common.schemas.test.testdef import validate\n"
        "validate(yaml.safe_load(open(sys.argv[1])))",
        str(ROOT / "lava-defs" / "rtgate.yaml"),
    )
    assert r.returncode == 0, r.stderr
    text = (ROOT / "lava-defs" / "rtgate.yaml").read_text()
    # Linaro's cyclictest definition names its knobs (RT_PRIORITY since PRIORITY met the job's own), INTERVAL, ...
    assert all(f"\n  {k}:" in text for k in ("RT_PRIORITY", "INTERVAL", "THREADS", "AFFINITY", "DURATION", "HISTOGRAM"))


# The images each template uses: one more is refused, one fewer an error (without --placeholder).
IMAGES = {
    "qemu": ["--kernel", "http://lab/k", "--ramdisk", "http://lab/r.gz"],
    "bcm2711-rpi-4-b": ["--kernel", "http://lab/k", "--ramdisk", "http://lab/r.gz", "--dtb", "http://lab/d.dtb"],
    "imx8mp-evk": ["--kernel", "http://lab/k", "--dtb", "http://lab/d.dtb", "--rootfs", "http://lab/root.tar.xz"],
}


@pytest.mark.parametrize("device", ["qemu", "bcm2711-rpi-4-b", "imx8mp-evk"])
@pytest.mark.parametrize("spec", SHIPPED, ids=lambda p: p.name)
def test_every_job_validates_with_lava_common(lava_common: None, tmp_path: Path, device: str, spec: Path) -> None:
    job = tmp_path / "job.yaml"
    r = rtgate(
        "lava",
        "job",
        str(spec),
        "--device-type",
        device,
        "--testdef-repo",
        "https://git.example/rtgate.git",
        *IMAGES[device],
        "-o",
        str(job),
    )
    assert r.returncode == 0, r.stderr
    v = lava_python(VALIDATE_JOB, str(job))
    assert v.returncode == 0, v.stderr[-2000:]


@pytest.mark.parametrize("inline", [False, True], ids=["git", "inline"])
@pytest.mark.parametrize("device", ["qemu", "bcm2711-rpi-4-b", "imx8mp-evk"])
def test_jobs_pass_lava_servers_submission_schema(
    lava_common: None, lava_server_schema: None, tmp_path: Path, device: str, inline: bool
) -> None:
    job = tmp_path / "job.yaml"
    r = rtgate(
        "lava",
        "job",
        str(ROOT / "thresholds" / "two-thread-example.yaml"),
        "--device-type",
        device,
        *(["--inline"] if inline else ["--testdef-repo", "https://git.example/rtgate.git"]),
        "--placeholder",
        "--tag",
        "rack-3",
        "-o",
        str(job),
    )
    assert r.returncode == 0, r.stderr
    for check in (VALIDATE_SUBMISSION, VALIDATE_JOB):
        v = lava_python(check, str(job))
        assert v.returncode == 0, v.stderr[-2000:]


def test_the_server_schema_check_can_fail(lava_server_schema: None, tmp_path: Path) -> None:
    """The shape main shipped (params inside an inline definition) is what lava-server rejected."""
    import yaml

    job = tmp_path / "job.yaml"
    assert (
        rtgate(
            "lava", "job", str(ROOT / "thresholds" / "default.yaml"), "--inline", "--placeholder", "-o", str(job)
        ).returncode
        == 0
    )
    doc = yaml.safe_load(job.read_text())
    doc["actions"][2]["test"]["definitions"][0]["repository"]["params"] = {"RTGATE_ARGS": "-q"}
    job.write_text(yaml.safe_dump(doc))
    v = lava_python(VALIDATE_SUBMISSION, str(job))
    assert v.returncode != 0 and "extra keys not allowed" in v.stderr


def _shell_variables(text: str) -> set[str]:
    """Every variable a shell script reads or sets: $NAME, ${NAME...}, NAME=, export/unset NAME."""
    import re

    names = set(re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", text))
    names |= set(re.findall(r"(?:^|[\s;(])([A-Za-z_][A-Za-z0-9_]*)=", text, re.M))
    for words in re.findall(r"\b(?:export|unset|read(?: -r)?)\s+([A-Za-z0-9_ ]+)", text):
        names |= set(words.split())
    return names


def test_no_parameter_is_named_like_a_variable_of_lavas_helpers(lava_helpers: None) -> None:
    """LAVA runs its lava-test-* helpers inside our test with our parameters exported: a parameter
    named like a variable a helper reads changes what LAVA records (MEASUREMENT did)."""
    import yaml

    helpers: dict[str, set[str]] = {}
    for script in sorted(p for p in LAVA_SHELL.rglob("*") if p.is_file()):
        helpers[str(script.relative_to(LAVA_SHELL))] = _shell_variables(script.read_text(errors="replace"))
    # LAVA's generated run.sh sets its own variables around our steps.
    testdef_py = LAVA_SHELL.parent / "actions" / "deploy" / "testdef.py"
    helpers["run.sh (testdef.py)"] = _shell_variables(
        "\n".join(__import__("re").findall(r'runsh\.write\(\s*["\'](.*?)\\n', testdef_py.read_text()))
    )
    assert "MEASUREMENT" in helpers["lava-test-case"] and "TESTRUN_ID" in helpers["run.sh (testdef.py)"]
    ours = set(yaml.safe_load((ROOT / "lava-defs" / "rtgate.yaml").read_text())["params"])
    assert "RTGATE_PLAN" in ours and "RT_PRIORITY" in ours and "PRIORITY" not in ours
    clashes = {f"{name} ({helper})" for helper, names in helpers.items() for name in ours & names}
    assert not clashes, clashes
    # The job's parameters are the same names.
    from rtgate.core.thresholds import load_thresholds
    from rtgate.lava.job import JobOptions, render_job

    doc = yaml.safe_load(
        render_job(
            load_thresholds(str(ROOT / "thresholds" / "default.yaml")),
            JobOptions(testdef_repository="https://git.example/r.git", placeholder=True),
        )
    )
    assert set(doc["actions"][2]["test"]["definitions"][0]["parameters"]) <= ours


@pytest.mark.parametrize("spec,cpus", [("default.yaml", 2), ("two-thread-example.yaml", 2)])
def test_qemu_jobs_ask_the_stock_device_type_for_the_measurements_cpus(spec: str, cpus: int, tmp_path: Path) -> None:
    import yaml

    doc = yaml.safe_load(rtgate("lava", "job", str(ROOT / "thresholds" / spec), "--inline", "--placeholder").stdout)
    assert doc["context"]["extra_options"] == [f"-smp {cpus}"]
    pinned = tmp_path / "pinned.yaml"
    pinned.write_text(
        "platform: p\nmeasurements:\n  m:\n    sampler: {duration: 5s, threads: "
        "[{name: a, cpus: [3]}]}\n    gates: [{name: max, kind: max, limit_us: 10}]\n"
    )
    doc = yaml.safe_load(rtgate("lava", "job", str(pinned), "--inline", "--placeholder").stdout)
    assert doc["context"]["extra_options"] == ["-smp 4"]
    doc = yaml.safe_load(rtgate("lava", "job", str(pinned), "--inline", "--placeholder", "--cpus", "8").stdout)
    assert doc["context"]["extra_options"] == ["-smp 8"]


def test_inline_job_validates_and_carries_the_script(lava_common: None, tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    assert (
        rtgate(
            "lava", "job", str(ROOT / "thresholds" / "default.yaml"), "--inline", "--placeholder", "-o", str(job)
        ).returncode
        == 0
    )
    assert lava_python(VALIDATE_JOB, str(job)).returncode == 0
    import yaml

    doc = yaml.safe_load(job.read_text())
    definition = doc["actions"][2]["test"]["definitions"][0]
    steps = definition["repository"]["run"]["steps"]
    assert "params" not in definition["repository"] and "parameters" not in definition
    assert steps[0].startswith("RTGATE_PLAN='-S -p 80") and "--measurement=smp" in steps[0]
    assert "lava-test-case" in steps[-1]
    # Readable (a literal block, one line of the job per line of the script) and byte for byte the script.
    assert steps[-1] == "(\n" + SCRIPT.read_text() + ")"
    assert "\n            - |-\n              (\n              #!/bin/sh\n" in job.read_text()


def test_job_timeouts_follow_the_duration(tmp_path: Path) -> None:
    import yaml

    spec = ROOT / "thresholds" / "families" / "arm64-cortex-a53-rt.yaml"  # 1 hour
    doc = yaml.safe_load(rtgate("lava", "job", str(spec), "--inline", "--placeholder").stdout)
    assert doc["timeouts"]["job"]["minutes"] == doc["actions"][2]["test"]["timeout"]["minutes"] + 15
    assert doc["actions"][2]["test"]["timeout"]["minutes"] >= 72  # 60 min * 1.2
    short = yaml.safe_load(rtgate("lava", "job", str(spec), "--inline", "--placeholder", "--duration", "1m").stdout)
    assert short["actions"][2]["test"]["timeout"]["minutes"] < 10


@pytest.mark.parametrize("hostile", ["x'; reboot #", "a\nreboot"])
def test_a_value_that_would_be_code_in_lavas_run_sh_is_refused(hostile: str) -> None:
    r = rtgate(
        "lava", "job", str(ROOT / "thresholds" / "default.yaml"), "--inline", "--placeholder", "--sampler", hostile
    )
    assert r.returncode == 2 and "LAVA parameter SAMPLER" in r.stderr


def run_script(tmp_path: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], Path]:
    """rtgate.sh with LAVA's own lava-test-case and lava-test-set from lava-dispatcher."""
    results = tmp_path / "lava-results"
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    for helper in ("lava-test-case", "lava-test-set", "lava-common-functions"):
        target = bindir / helper
        shutil.copy(LAVA_SHELL / helper, target)
        target.write_text("#!/bin/sh\n" + target.read_text())  # LAVA writes the interpreter line itself
        target.chmod(0o755)
    full_env = {
        "PATH": f"{bindir}:/usr/bin:/bin",
        "LAVA_RESULT_DIR": str(results),
        "OUTPUT_DIR": str(tmp_path / "out"),
        **env,
    }
    r = subprocess.run(["sh", str(SCRIPT)], capture_output=True, text=True, env=full_env, cwd=tmp_path, timeout=120)
    return r, results / "results"


@pytest.fixture
def lava_helpers() -> None:
    if not (LAVA_SHELL / "lava-test-case").is_file():
        if os.environ.get("CI"):
            pytest.fail("lava-dispatcher is required in CI")
        pytest.skip("Debian's lava-dispatcher is not installed")


def _pinned_ids(n: int) -> list[str]:
    """Native gate thread names of `-t n`: threads are pinned round-robin over the CPUs we may
    use (as cyclictest); named by CPU, or all by index when two share one."""
    cpus = sorted(os.sched_getaffinity(0))
    on = [cpus[i % len(cpus)] for i in range(n)]
    return [f"cpu{c}" for c in on] if len(set(on)) == n else [f"t{i}" for i in range(n)]


def test_script_reports_every_gate_with_lavas_helpers(lava_helpers: None, sampler: str, tmp_path: Path) -> None:
    args = " ".join(
        [
            *RT_OPTS,
            "-t",
            "2",
            "-i",
            "1000",
            "-l",
            "300",
            "--gate=name=max,kind=max,limit=1000000",
            "--gate=name=never,kind=max,limit=0",
            "--gate=name=few,kind=percentile,percentile=99.9,limit=10000",
            "--measurement=smp",
            "-q",  # as every compiled plan: one summary line per thread
        ]
    )
    r, results = run_script(tmp_path, {"RTGATE_PLAN": args, "SAMPLER": sampler})
    assert r.returncode == 0, r.stdout + r.stderr
    got = {d.name: (d / "result").read_text().strip() for d in results.iterdir()}
    a, b = _pinned_ids(2)
    assert got == {
        f"max-{a}": "pass",
        f"max-{b}": "pass",
        f"never-{a}": "fail",
        f"never-{b}": "fail",
        f"few-{a}": "fail",
        f"few-{b}": "fail",
    }  # 300 samples cannot show a p99.9: INCONCLUSIVE -> fail
    assert float((results / f"max-{a}" / "measurement").read_text()) > 0
    assert (results / f"max-{a}" / "units").read_text().strip() == "us"
    assert "<LAVA_SIGNAL_TESTSET START smp>" in r.stdout and "<LAVA_SIGNAL_TESTSET STOP>" in r.stdout
    assert "# Histogram" not in r.stdout and len(r.stdout.splitlines()) < 40  # nothing large on the console
    assert (tmp_path / "out" / "smp.json").is_file()
    r, results = run_script(
        tmp_path / "allow" if (tmp_path / "allow").mkdir() is None else tmp_path,
        {"RTGATE_PLAN": args, "SAMPLER": sampler, "ALLOW_INCONCLUSIVE": "true"},
    )
    assert (results / f"few-{a}" / "result").read_text().strip() == "skip"


@pytest.mark.parametrize(
    "field",
    ["RTGATE_PLAN", "SAMPLER", "DURATION", "RT_PRIORITY", "PRIORITY", "INTERVAL", "OUTPUT_DIR"],
)
def test_hostile_values_are_inert(lava_helpers: None, sampler: str, tmp_path: Path, field: str) -> None:
    canary = tmp_path / "pwned"
    env = {"RTGATE_PLAN": "-t 1 -l 10 --gate=name=max,kind=max,limit=1000000 --measurement=m", "SAMPLER": sampler}
    env[field] = f"$(touch {canary}); touch {canary}; `touch {canary}` '; touch {canary} #"
    r, results = run_script(tmp_path, env)
    assert not canary.exists(), r.stdout + r.stderr
    assert r.returncode == 0
    if field != "OUTPUT_DIR":
        statuses = {(d / "result").read_text().strip() for d in results.iterdir()} if results.exists() else set()
        assert statuses == {"fail"}, r.stdout  # the run is refused, reported, never passed


LOG = [
    {"dt": "x", "lvl": "results", "msg": {"case": "job", "definition": "lava", "result": "pass"}},
    {
        "dt": "x",
        "lvl": "results",
        "msg": {
            "case": "a-max-A-cpu0",
            "definition": "1_rtgate-app",
            "result": "fail",
            "measurement": 112.0,
            "units": "us",
            "set": "app",
        },
    },
    {
        "dt": "x",
        "lvl": "results",
        "msg": {
            "case": "b-over-100us-B-cpu1",
            "definition": "1_rtgate-app",
            "result": "pass",
            "measurement": 0.01,
            "units": "%",
            "set": "app",
        },
    },
]


def test_results_from_a_lava_run_log_become_junit(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text("".join(json.dumps(x) + "\n" for x in LOG))
    junit = tmp_path / "j.xml"
    r = rtgate(
        "lava",
        "results",
        str(log),
        "--thresholds",
        str(ROOT / "thresholds" / "two-thread-example.yaml"),
        "--junit",
        str(junit),
    )
    assert r.returncode == 1, r.stdout + r.stderr
    cases = {c.name: c for s in JUnitXml.fromfile(str(junit)) for c in s}
    assert set(cases) == {"a-max[A-cpu0]", "b-over-100us[B-cpu1]"}
    assert not cases["a-max[A-cpu0]"].is_passed and cases["b-over-100us[B-cpu1]"].is_passed


def test_results_export_yaml_and_csv(tmp_path: Path) -> None:
    export = [
        {
            "job": "7",
            "suite": "1_rtgate-smp",
            "name": "max-cpu0",
            "result": "pass",
            "measurement": "88.0",
            "unit": "us",
            "metadata": {"set": "smp"},
        },
        {"job": "7", "suite": "lava", "name": "job", "result": "pass"},
    ]
    import yaml

    (tmp_path / "r.yaml").write_text(yaml.safe_dump(export))
    r = rtgate("lava", "results", str(tmp_path / "r.yaml"), "--json", str(tmp_path / "v.json"))
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "v.json").read_text())
    assert [(v["gate"], v["thread"], v["status"], v["value"]) for v in doc["verdicts"]] == [
        ("max", "cpu0", "PASS", 88.0)
    ]
    (tmp_path / "r.csv").write_text("job,suite,name,result,measurement,unit\n7,1_rtgate-smp,max-cpu0,fail,120,us\n")
    assert rtgate("lava", "results", str(tmp_path / "r.csv")).returncode == 1
    (tmp_path / "bad.log").write_text('{"lvl": "results"\n')
    r = rtgate("lava", "results", str(tmp_path / "bad.log"))
    assert r.returncode == 2 and "bad.log:1" in r.stderr


def _log_lines(*items: dict[str, object]) -> str:
    return "".join(json.dumps({"dt": "x", **i}) + "\n" for i in items)


SMP_SPEC = """\
platform: p
measurements:
  smp:
    sampler: {duration: 5s, threads: [{name: all, count: 2}]}
    gates:
      - {name: max, kind: max, limit_us: 1000}
      - {name: p9999, kind: percentile, percentile: 99.99, limit_us: 1000}
      - {name: lost, kind: max, limit_us: 1000}
  other:
    sampler: {duration: 5s, threads: [{name: all, count: 1}]}
    gates:
      - {name: max, kind: max, limit_us: 1000}
"""


def test_every_gate_lava_did_not_record_is_an_error(tmp_path: Path) -> None:
    """Issue 13: a gate missing from LAVA's results never reads as green, or as absent."""
    spec = tmp_path / "t.yaml"
    spec.write_text(SMP_SPEC)
    log = tmp_path / "run.log"
    log.write_text(
        _log_lines(
            {"lvl": "target", "msg": "rtgate: PASS smp/max[t0]: max 20 us <= 1000 us"},
            {
                "lvl": "target",
                "msg": "rtgate: INCONCLUSIVE smp/p9999[t0]: only 5000 samples, the percentile gate needs 10000",
            },
            {
                "lvl": "results",
                "msg": {
                    "case": "max-t0",
                    "definition": "1_rtgate-smp",
                    "result": "pass",
                    "measurement": 20.0,
                    "units": "us",
                    "set": "smp",
                },
            },
            {
                "lvl": "results",
                "msg": {"case": "p9999-t0", "definition": "1_rtgate-smp", "result": "fail", "set": "smp"},
            },
            {"lvl": "results", "msg": {"case": "other-sampler", "definition": "2_rtgate-other", "result": "fail"}},
            {"lvl": "results", "msg": {"case": "job", "definition": "lava", "result": "pass"}},
        )
    )
    out = tmp_path / "v.json"
    r = rtgate("lava", "results", str(log), "--thresholds", str(spec), "--json", str(out))
    assert r.returncode == 1, r.stdout + r.stderr
    got = {
        (v["measurement"], v["gate"], v["thread"]): (v["status"], v["reason"])
        for v in json.loads(out.read_text())["verdicts"]
    }
    assert got[("smp", "max", "t0")][0] == "PASS"
    assert got[("smp", "p9999", "t0")][0] == "INCONCLUSIVE"  # LAVA says fail; the board said which
    assert got[("smp", "lost", "all")] == ("ERROR", "LAVA recorded no result for this gate")
    assert got[("other", "max", "all")][0] == "ERROR" and "sampler failed" in got[("other", "max", "all")][1]
    assert len(got) == 4
    # Only the measurements the job ran are expected.
    r = rtgate("lava", "results", str(log), "--thresholds", str(spec), "--measurement", "smp", "--json", str(out))
    assert {v["measurement"] for v in json.loads(out.read_text())["verdicts"]} == {"smp", "other"}
    assert rtgate("lava", "results", str(log), "--measurement", "smp").returncode == 2  # needs --thresholds
    # Without the console lines (a results export and no --log), a LAVA fail stays FAIL: never better.
    export = [{"suite": "1_rtgate-smp", "name": "p9999-t0", "result": "fail", "measurement": "None", "unit": ""}]
    import yaml

    (tmp_path / "r.yaml").write_text(yaml.safe_dump(export))
    r = rtgate("lava", "results", str(tmp_path / "r.yaml"), "--json", str(out))
    assert [v["status"] for v in json.loads(out.read_text())["verdicts"]] == ["FAIL"]
    r = rtgate("lava", "results", str(tmp_path / "r.yaml"), "--log", str(log), "--json", str(out))
    assert [v["status"] for v in json.loads(out.read_text())["verdicts"]] == ["INCONCLUSIVE"]


def test_script_stopped_by_a_signal_stops_the_sampler_and_reports(
    lava_helpers: None, sampler: str, tmp_path: Path
) -> None:
    """Issue 18: LAVA (or a lost session) stops the test; the sampler stops with it and what it
    measured is reported, each gate INCONCLUSIVE: stopped early."""
    import signal
    import time

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        where = tmp_path / sig.name
        where.mkdir()
        results = where / "lava-results"
        bindir = where / "bin"
        bindir.mkdir()
        for helper in ("lava-test-case", "lava-test-set", "lava-common-functions"):
            (bindir / helper).write_text("#!/bin/sh\n" + (LAVA_SHELL / helper).read_text())
            (bindir / helper).chmod(0o755)
        tag = f"rtgate-stop-test-{os.getpid()}-{sig.name}"  # find the sampler by its output path
        env = {
            "PATH": f"{bindir}:/usr/bin:/bin",
            "LAVA_RESULT_DIR": str(results),
            "OUTPUT_DIR": str(where / tag),
            "RTGATE_PLAN": "-t 1 -i 1000 -D 60 --gate=name=max,kind=max,limit=1000000 --measurement=m",
            "SAMPLER": sampler,
        }
        proc = subprocess.Popen(
            ["sh", str(SCRIPT)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=where
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (where / tag / "rtgate.out").exists():
            time.sleep(0.1)
        time.sleep(1.5)  # the sampler is measuring
        started = time.monotonic()
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=30)
        assert time.monotonic() - started < 20, out  # not the 60 s duration
        assert proc.returncode == 0, out
        left = subprocess.run(["pgrep", "-f", tag], capture_output=True, text=True).stdout.split()
        assert not left, (sig.name, left)  # the sampler did not outlive the script
        assert f"stopped by SIG{sig.name.removeprefix('SIG')}" in out, out
        (t0,) = _pinned_ids(1)
        assert (results / "results" / f"max-{t0}" / "result").read_text().strip() == "fail", out
        assert f"rtgate: INCONCLUSIVE m/max[{t0}]" in out and "stopped early" in out, out
        assert float((results / "results" / f"max-{t0}" / "measurement").read_text()) > 0


def test_several_loads_reach_the_job_each_from_its_kind(tmp_path: Path) -> None:
    """Several loads travel in the plan, one --load each: none is dropped."""
    spec = tmp_path / "t.yaml"
    spec.write_text(
        "platform: p\nmeasurements:\n  loaded:\n    sampler: {duration: 5s, threads: [{name: a, cpus: [0]}]}\n"
        "    load: [cpu, memory]\n    gates: [{name: max, kind: max, limit_us: 100}]\n"
    )
    r = subprocess.run(
        [sys.executable, "-m", "rtgate", "lava", "job", str(spec), "--kernel", "http://x/k", "--ramdisk", "http://x/r",
         "--inline", "-o", "j.yaml"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    job = (tmp_path / "j.yaml").read_text()
    assert "--load=kind=cpu,cpus=others,warmup=2 --load=kind=memory,cpus=others,warmup=2,size=64M" in job


# --- doc/lava.rst, A new device type: its steps as written -------------------------------------


def _doc_blocks(section: str) -> list[str]:
    """The literal blocks (after ``::``) of a section of doc/lava.rst, without their indentation."""
    import re
    import textwrap

    text = (ROOT / "doc" / "lava.rst").read_text()
    body = re.split(rf"\n{re.escape(section)}\n-+\n", text, maxsplit=1)[1]
    body = re.split(r"\n[^\n]+\n-{4,}\n", body, maxsplit=1)[0]
    return [textwrap.dedent(b) for b in re.findall(r"::\n\n((?:    [^\n]*\n|\n)+)", body)]


def test_a_new_device_type_as_doc_lava_rst_walks_it(
    lava_common: None, lava_server_schema: None, tmp_path: Path
) -> None:
    """The board file and the commands of "A new device type", run as written: a copy of a shipped
    template for a device type rtgate ships none for, and a job lava-server's schemas accept."""
    import shlex

    import yaml

    blocks = _doc_blocks("A new device type")
    board = next(b for b in blocks if b.startswith("platform: acme-imx8"))
    steps = next(b for b in blocks if b.startswith("cp lava-defs/templates/"))
    (tmp_path / "acme-imx8.yaml").write_text(board)
    ran = []
    for line in filter(None, steps.replace("\\\n", " ").splitlines()):
        words = shlex.split(line)
        if words[0] == "cp":  # from the checkout, into the board's folder
            shutil.copy(ROOT / words[1], tmp_path / words[2])
        elif words[0] == "rtgate":
            r = rtgate(*words[1:], cwd=tmp_path)
            assert r.returncode == 0, r.stderr
        else:
            assert words[:2] == ["lavacli", "-i"]  # submitting: the server's own checks instead
            for check in (VALIDATE_SUBMISSION, VALIDATE_JOB):
                v = lava_python(check, str(tmp_path / words[-1]))
                assert v.returncode == 0, v.stderr[-2000:]
        ran.append(words[0])
    assert ran == ["cp", "rtgate", "lavacli"]
    doc = yaml.safe_load((tmp_path / "job.yaml").read_text())
    assert doc["device_type"] == "acme-imx8"
    assert doc["context"] == {"extra_kernel_args": "isolcpus=3 nohz_full=3 rcu_nocbs=3"}
    boot = doc["actions"][1]["boot"]
    assert boot["method"] == "u-boot" and boot["auto_login"]["username"] == "root"
    assert boot["prompts"] == ["root@[^:]*:~#"]
    names = [d["name"] for d in doc["actions"][2]["test"]["definitions"]]
    assert names == ["rtgate-idle", "rtgate-loaded"]


def test_the_documented_cross_build_makes_a_static_aarch64_sampler(tool: object, tmp_path: Path) -> None:
    """doc/lava.rst's one command for --sampler-url's binary, run as written in a copy of the
    sources the sampler builds from (what rtgate fuego package ships), then run under qemu."""
    tool("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu")  # type: ignore[operator]
    tool("meson", "meson")  # type: ignore[operator]
    qemu = tool("qemu-aarch64-static", "qemu-user-static")  # type: ignore[operator]
    from rtgate.fuego.package import SAMPLER_FILES

    for item in SAMPLER_FILES:
        (tmp_path / item).parent.mkdir(parents=True, exist_ok=True)
        copy = shutil.copytree if (ROOT / item).is_dir() else shutil.copy
        copy(ROOT / item, tmp_path / item)
    command = next(b for b in _doc_blocks("A new device type") if b.startswith("meson setup")).strip()
    assert "\n" not in command
    r = subprocess.run(["sh", "-c", command], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    binary = tmp_path / "build-aarch64" / "sampler" / "rtgate-sampler"
    elf = binary.read_bytes()
    assert elf[:4] == b"\x7fELF" and int.from_bytes(elf[18:20], "little") == 183  # EM_AARCH64
    phoff, phentsize, phnum = (int.from_bytes(elf[a:b], "little") for a, b in ((32, 40), (54, 56), (56, 58)))
    types = [int.from_bytes(elf[phoff + i * phentsize : phoff + i * phentsize + 4], "little") for i in range(phnum)]
    assert types and 3 not in types  # static: no PT_INTERP, no program interpreter to find on the board
    v = subprocess.run([qemu, str(binary), "--version"], capture_output=True, text=True)
    assert v.returncode == 0 and v.stdout.startswith("rtgate-sampler ")


# LAVA's own rendering of a device's configuration (lava_scheduler_app.environment.devices(): a
# sandboxed Jinja2 environment over the device dictionaries and lava-server's device types, the
# job's context as the render's variables): where a U-Boot job's extra_kernel_args end up.
RENDER_DEVICE = """
import sys, yaml
from jinja2 import FileSystemLoader
from jinja2.sandbox import SandboxedEnvironment
folder, dictionary, job = sys.argv[1:]
env = SandboxedEnvironment(loader=FileSystemLoader([folder, "/usr/share/lava-server/device-types"]),
                           autoescape=False, trim_blocks=True)
context = yaml.safe_load(open(job)).get("context", {})
config = yaml.safe_load(env.get_template(dictionary).render(**context))
for method in config["actions"]["boot"]["methods"]["u-boot"].values():
    for command in method.get("commands", []) if isinstance(method, dict) else []:
        if "bootargs" in command:
            print(command)
"""


@pytest.mark.parametrize("device", ["imx8mp-evk", "bcm2711-rpi-4-b"])
def test_isolated_cpus_reach_u_boots_bootargs_through_lavas_device_type(
    lava_server_schema: None, tmp_path: Path, device: str
) -> None:
    """The job context's extra_kernel_args, rendered by lava-server's own device-type template for
    a device dictionary that leaves it alone, is in every bootargs U-Boot sets; a dictionary that
    sets it unconditionally wins (as doc/lava.rst says)."""
    board = tmp_path / "acme-imx8.yaml"
    board.write_text(
        "platform: acme-imx8\nrequire: {isolated_cpus: true}\nmeasurements:\n  idle:\n"
        "    sampler: {duration: 10s, threads: [{name: rt, cpus: [3]}]}\n"
        "    gates: [{name: max, kind: max, limit_us: 100}]\n"
    )
    job = tmp_path / "job.yaml"
    r = rtgate("lava", "job", str(board), "--device-type", device, "--placeholder", "--inline", "-o", str(job))
    assert r.returncode == 0, r.stderr
    (tmp_path / "board-01.jinja2").write_text(f"{{% extends '{device}.jinja2' %}}\n")
    (tmp_path / "board-02.jinja2").write_text(
        f"{{% extends '{device}.jinja2' %}}\n{{% set extra_kernel_args = 'x' %}}\n"
    )
    for dictionary, isolated in (("board-01.jinja2", True), ("board-02.jinja2", False)):
        out = lava_python(RENDER_DEVICE, str(tmp_path), dictionary, str(job))
        assert out.returncode == 0, out.stderr[-2000:]
        bootargs = out.stdout.splitlines()
        assert bootargs and all(("isolcpus=3 nohz_full=3 rcu_nocbs=3" in b) is isolated for b in bootargs), bootargs
