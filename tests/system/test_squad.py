# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate export squad against a real SQUAD server (the ``squad`` package from PyPI, on SQLite).

``scripts/bootstrap --test`` installs SQUAD into its own virtual environment, ``.venv-squad`` (its Django and Celery
pins are not ours). The fixture migrates a fresh SQLite database, makes a user, a token, a group and a project,
serves SQUAD with gunicorn on a free loopback port, and stops it by PID.

SQUAD's web frontend fetches JavaScript libraries from CDNs when it is first imported; this machine has no such
network, and the API needs none of them, so the fixture marks them as present (empty) in the frontend's download
list first. Nothing else of SQUAD is changed.
The tests of this topic that start no process: tests/unit/test_squad_unit.py.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT, RT_TESTS

SQUAD_VENV = ROOT / ".venv-squad"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _mark_frontend_assets_present(python: Path) -> None:
    code = "import importlib.util as u; print(u.find_spec('squad').submodule_search_locations[0])"
    package = Path(subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.strip())
    static = package / "frontend" / "static"
    status_lines = []
    for line in (static / "download.conf").read_text().splitlines():
        fields = line.split()
        if len(fields) < 2 or fields[0].startswith("#"):
            continue
        destination = static / fields[0]
        if not destination.exists():
            if destination.suffix in (".js", ".css"):
                destination.parent.mkdir(parents=True, exist_ok=True)
                destination.write_text("")
            else:
                destination.mkdir(parents=True)
        status_lines.append(" ".join(fields[:3]))
    (static / "download.status").write_text("\n".join(status_lines) + "\n")


class Squad:
    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.token = token

    def get(self, path: str) -> dict:  # type: ignore[type-arg]
        request = urllib.request.Request(self.url + path, headers={"Auth-Token": self.token})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())  # type: ignore[no-any-return]

    def all(self, path: str) -> list[dict]:  # type: ignore[type-arg]
        items, page = [], self.get(path)
        while True:
            items += page["results"]
            if not page.get("next"):
                return items
            page = self.get(page["next"][len(self.url) :])


@pytest.fixture(scope="module")
def squad(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Squad]:
    python = SQUAD_VENV / "bin" / "python"
    if not python.exists():
        if os.environ.get("CI"):
            pytest.fail("SQUAD is required in CI: scripts/bootstrap --test installs it into .venv-squad")
        pytest.skip("SQUAD not installed (sh scripts/bootstrap --test installs it into .venv-squad)")
    _mark_frontend_assets_present(python)
    work = tmp_path_factory.mktemp("squad")
    env = {
        **os.environ,
        "ENV": "production",
        "SECRET_KEY": "rtgate-tests",
        "DATABASE": f"ENGINE=django.db.backends.sqlite3:NAME={work}/db.sqlite3",
        "SQUAD_STATIC_DIR": str(work / "static"),
    }
    admin = [str(SQUAD_VENV / "bin" / "squad-admin")]
    subprocess.run([*admin, "migrate", "-v", "0"], env=env, check=True, capture_output=True, timeout=600)
    setup = (
        "from django.contrib.auth.models import User\n"
        "from rest_framework.authtoken.models import Token\n"
        "from squad.core.models import Group\n"
        "user = User.objects.create_superuser('ci', 'ci@localhost', 'unused')\n"
        "group = Group.objects.create(slug='lab')\n"
        "group.projects.create(slug='rt')\n"
        "print(Token.objects.create(user=user).key)\n"
    )
    token = (
        subprocess.run([*admin, "shell", "-c", setup], env=env, check=True, capture_output=True, text=True, timeout=300)
        .stdout.strip()
        .splitlines()[-1]
    )
    port = _free_port()
    log = (work / "gunicorn.log").open("w")
    server = subprocess.Popen(
        [
            str(python),
            "-m",
            "gunicorn.app.wsgiapp",
            "squad.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
            "--timeout",
            "120",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=work,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(url + "/api/", timeout=5).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("SQUAD did not start:\n" + (work / "gunicorn.log").read_text()[-3000:])
                time.sleep(0.5)
        yield Squad(url, token)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


THRESHOLDS = """\
platform: squad-lab
measurements:
  app:
    sampler: {interval_us: 500, duration: 1s, priority: 80, threads: [{name: all, count: 2}]}
    gates:
      - {name: max, kind: max, limit_us: 1000}
      - {name: over-150, kind: miss_rate, above_us: 150, rate: 1%}
      - {name: missed, kind: missed, max_count: 0}
"""


def test_squad_takes_the_export(squad: Squad, tmp_path: Path) -> None:
    spec = tmp_path / "t.yaml"
    spec.write_text(THRESHOLDS)
    results = RT_TESTS / "ct-new-t2-H200.json"  # t0: max 1547 us; t1: max 145 us; no missed-period counts
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "rtgate",
            "export",
            "squad",
            str(spec),
            str(results),
            "-o",
            str(tmp_path / "out"),
            "--metadata",
            "board=qemu-x86",
            "--submit",
            squad.url,
            "--group",
            "lab",
            "--project",
            "rt",
            "--build",
            "6.1.0-rt",
            "--environment",
            "qemu",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "SQUAD_TOKEN": squad.token},
    )
    assert r.returncode == 0, r.stderr
    written = json.loads((tmp_path / "out" / "tests.json").read_text())
    testrun = r.stdout.split("test run ")[1].split(":")[0]

    tests = {f"{t['short_name']}": t for t in squad.all(f"/api/testruns/{testrun}/tests/")}
    assert len(tests) == len(written) == 6
    assert tests["max-t0"]["status"] == "fail" and tests["max-t1"]["status"] == "pass"
    # t0's 1547 us wake-up at a 500 us period skipped periods cyclictest never counted: derived, and it fails
    assert tests["missed-t0"]["status"] == "fail" and tests["missed-t1"]["status"] == "pass"
    assert "missed periods" in tests["missed-t0"]["log"]

    metrics = {m["short_name"]: m for m in squad.all(f"/api/testruns/{testrun}/metrics/")}
    assert metrics["max-t0"]["result"] == 1547.0 and metrics["max-t0"]["unit"] == "us"
    assert metrics["t1-max"]["result"] == 145.0
    assert metrics["over-150-t0"]["unit"] == "%"

    metadata = squad.get(f"/api/testruns/{testrun}/metadata_file/")
    assert metadata["board"] == "qemu-x86" and metadata["platform"] == "squad-lab"


def test_squad_shows_a_range_in_its_log_not_as_a_metric(squad: Squad, tmp_path: Path) -> None:
    """cyclictest -h 15: p99 lies between 15 us and the 721 us max. SQUAD gets no p99 metric (a metric is a
    number) and its test run log and the gate's test log say the range."""
    spec = tmp_path / "t.yaml"
    spec.write_text(
        "platform: r\nmeasurements:\n  app:\n"
        "    sampler: {interval_us: 1000, duration: 4s, priority: 99, threads: [{name: all, count: 1}]}\n"
        "    gates:\n      - {name: p99, kind: percentile, percentile: 99, limit_us: 1000}\n"
    )
    where = ["--group", "lab", "--project", "rt", "--build", "range", "--environment", "qemu"]
    r = subprocess.run(
        [sys.executable, "-m", "rtgate", "export", "squad", str(spec), str(RT_TESTS / "ct-24-t1-h15.json"), *where],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "SQUAD_TOKEN": squad.token, "SQUAD_HOST": squad.url},  # the server from $SQUAD_HOST
    )
    assert r.returncode == 0, r.stderr
    testrun = r.stdout.split("test run ")[1].split(":")[0]
    metrics = {m["short_name"]: m["result"] for m in squad.all(f"/api/testruns/{testrun}/metrics/")}
    # an unpinned cyclictest thread is t0, as its histogram text names it
    assert metrics["t0-max"] == 721.0 and not [name for name in metrics if "p99" in name]
    request = urllib.request.Request(
        f"{squad.url}/api/testruns/{testrun}/log_file/", headers={"Auth-Token": squad.token}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        log = response.read().decode()
    assert "p99-t0: 15..721 us: only a range is known" in log and "t0-p99: 15..721 us" in log
    (test,) = squad.all(f"/api/testruns/{testrun}/tests/")
    assert "15..721 us" in test["log"]


def test_offline_export_ignores_squad_host(tmp_path: Path) -> None:
    """$SQUAD_HOST alone (no SQUAD group, project, build, environment) never turns -o or stdout into a submission."""
    spec = tmp_path / "t.yaml"
    spec.write_text(THRESHOLDS)
    args = [sys.executable, "-m", "rtgate", "export", "squad", str(spec), str(RT_TESTS / "ct-new-t2-H200.json")]
    env = {**os.environ, "SQUAD_HOST": "http://127.0.0.1:9", "SQUAD_TOKEN": ""}
    r = subprocess.run([*args, "-o", str(tmp_path / "out")], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert set(json.loads((tmp_path / "out" / "tests.json").read_text())) >= {"rtgate/squad-lab/app/max-t0"}
    r = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert "rtgate/squad-lab/app/max-t0" in json.loads(r.stdout)["tests"]


def test_exports_accept_the_setup_as_check_does(tmp_path: Path) -> None:
    """two-thread-example asks -i 1000 on pinned CPUs; ct-new-t2-H200 was measured -i 500 unpinned: every gate is
    ERROR unless the difference is accepted, and then check, KCIDB and SQUAD give the gates' own verdicts."""
    spec = str(ROOT / "thresholds" / "two-thread-example.yaml")
    results = str(RT_TESTS / "ct-new-t2-H200.json")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "rtgate", *args], capture_output=True, text=True, cwd=tmp_path)

    statuses = {}
    for accept in ([], ["--accept-setup", "all"]):
        run("check", spec, results, "--json", "v.json", *accept)
        verdicts = json.loads((tmp_path / "v.json").read_text())["verdicts"]
        check = {f"{v['gate']}-{v['thread']}": v["status"] for v in verdicts}
        r = run("export", "kcidb", spec, results, "--build-id", "rtgate:b", *accept)
        assert r.returncode == 0, r.stderr
        gates = [t for t in json.loads(r.stdout)["tests"] if t["status"] != "DONE"]
        kcidb = {"-".join(t["path"].split(".")[-2:]): t["status"] for t in gates}
        r = run("export", "squad", spec, results, *accept)
        assert r.returncode == 0, r.stderr
        squad = {name.split("/")[-1]: t["result"] for name, t in json.loads(r.stdout)["tests"].items()}
        assert kcidb == {
            k: "ERROR" if s == "INCONCLUSIVE" else s for k, s in check.items()
        }  # KCIDB has no INCONCLUSIVE
        assert squad == {k: "pass" if s == "PASS" else "fail" for k, s in check.items()}
        statuses[bool(accept)] = check
    assert set(statuses[False].values()) == {"ERROR"}
    assert statuses[True]["a-max-A-t0"] == "FAIL"  # its max of 1547 us is over 80 us


def test_squad_refusal_is_a_clean_error(squad: Squad, tmp_path: Path) -> None:
    spec = tmp_path / "t.yaml"
    spec.write_text(THRESHOLDS)
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "rtgate",
            "export",
            "squad",
            str(spec),
            str(RT_TESTS / "ct-new-t2-H200.json"),
            "--submit",
            squad.url,
            "--group",
            "lab",
            "--project",
            "no-such-project",
            "--build",
            "b",
            "--environment",
            "e",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "SQUAD_TOKEN": squad.token},
    )
    assert r.returncode == 2
    assert r.stderr.startswith("rtgate: error:") and "SQUAD" in r.stderr and "Traceback" not in r.stderr
