# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared fixtures: the real sampler, the real cyclictest, and the recorded rt-tests outputs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
RT_TESTS = FIXTURES / "rt-tests"
IS_ROOT = os.geteuid() == 0
# Real-time priority and locked memory where we may have them (CI runs as root).
RT_OPTS = ["-p", "80", "-m"] if IS_ROOT else []
# The devices of the suite's LAVA instance (lava_server below): QEMU boards, and boards that are shells on the worker.
LAVA_QEMU_DEVICES = ["rtgate-qemu-01", "rtgate-qemu-02", "rtgate-qemu-03"]
# A qemu device that boots arm64 jobs as QEMU's virt machine (TCG, 1 GiB): a job pins it by its tag, its own name.
# The job's context `arch` picks the QEMU binary and, here, the machine: an x86 job that lands on it (nothing keeps
# untagged jobs off a tagged device) boots as on the others.
LAVA_ARM64_DEVICE = "rtgate-arm64-01"
LAVA_ARM64_DICT = """{% extends 'qemu.jinja2' %}
{% set arch = arch | default('arm64') %}
{% set no_kvm = True %}
{% set netdevice = 'user' %}
{% if arch in ['arm64', 'aarch64'] %}
{% set machine = 'virt' %}
{% set cpu = 'cortex-a57' %}
{% endif %}
{% set memory = 1024 %}
"""
LAVA_SHELL_BOARDS = 6


# The files whose tests use the suite's one LAVA instance (lava_server below). Under pytest-xdist they are one work
# unit, run by one worker, so that one server is started; pytest_collection_modifyitems keeps this list honest.
LAVA_SERVER_FILES = (
    "test_lava.py",
    "test_lava_arm64.py",
    "test_lava_hostile.py",
    "test_lava_lab.py",
    "test_lava_lab_scale.py",
    "test_lava_server.py",
    "test_tutorial.py",
)
# The files that make real-time trouble on the host on purpose (an injector, a FIFO busy loop, a competing FIFO
# task) or whose known answer needs a CPU free of it, as one unit: one worker runs them one after the other, so
# no two overlap. Each holds the machine's measurement lock while it makes trouble (tests/machine_lock.py), which
# keeps every `rtgate run` of the other worker out too.
RT_TROUBLE_FILES = (
    "test_bisect_live.py",
    "test_cyclictest_known_answers.py",
    "test_engine_require.py",
    "test_history_live.py",
    "test_lava_board.py",
    "test_pytest_plugin.py",
    "test_sampler.py",
    "test_sampler_footprint.py",
    "test_stall.py",
)
# Work units started first, longest first, so that no worker is left with a long one at the end (figures: a busy
# run's --durations, seconds per unit); every other file keeps the collection order.
FIRST_UNITS = ("lava-server", "rt-trouble", "test_timerlat_qemu.py", "test_fuego.py", "test_signals.py")


def work_unit(nodeid: str) -> str:
    """A test's pytest-xdist work unit: its file (module fixtures, a booted guest or a built tree, are made once),
    "lava-server" for the files that share the LAVA instance, or "rt-trouble" (RT_TROUBLE_FILES)."""
    name = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    if name in LAVA_SERVER_FILES:
        return "lava-server"
    return "rt-trouble" if name in RT_TROUBLE_FILES else name


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "lava_server" in getattr(item, "fixturenames", ()) and work_unit(item.nodeid) != "lava-server":
            raise pytest.UsageError(f"{item.nodeid} uses lava_server: add its file to conftest's LAVA_SERVER_FILES")
        injects = any(hasattr(getattr(item, "module", None), name) for name in ("inject", "injected_latency"))
        if injects and work_unit(item.nodeid) != "rt-trouble":
            raise pytest.UsageError(f"{item.nodeid} injects latency: add its file to conftest's RT_TROUBLE_FILES")
    rank = {unit: i for i, unit in enumerate(FIRST_UNITS)}
    items.sort(key=lambda item: rank.get(work_unit(item.nodeid), len(rank)))  # stable: file order kept within


@pytest.hookimpl(tryfirst=True)  # before rtgate's own plugin, which schedules threshold files' gates
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """The suite's `-n 2`: whole work units to a worker, in collection order (FIRST_UNITS first). Another --dist
    asked for on the command line is left to pytest-xdist."""
    if config.getvalue("dist") != "load":
        return None
    config.option.loadscopereorder = False  # LoadScopeScheduling would order units by their number of tests
    from xdist.scheduler import LoadScopeScheduling

    class ByWorkUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return ByWorkUnit(config, log)


def _required(tool: str, package: str) -> str:
    path = shutil.which(tool)
    if path:
        return path
    if os.environ.get("CI"):
        pytest.fail(f"{tool} is required in CI: .ci/run installs Debian's {package}")
    pytest.skip(f"{tool} not installed (apt-get install {package})")


@pytest.fixture(scope="session")
def sampler() -> str:
    from rtgate.measure.runner import find_sampler

    return find_sampler()


@pytest.fixture(scope="session")
def cyclictest() -> str:
    return _required("cyclictest", "rt-tests")


@pytest.fixture(scope="session")
def tool() -> Any:
    return _required


def run_tool(argv: list[str], timeout: float = 120, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)


def proc_stat(pid: int) -> tuple[str, list[str]] | None:
    """A process's command name and the fields of /proc/PID/stat after it ([0] its state, then ppid,
    pgrp, session, ...), or None once it has gone. A name may hold blanks and parentheses: it ends at
    the last ')'."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    comm, _, rest = text.partition("(")[2].rpartition(")")
    return comm, rest.split()


def processes() -> Iterator[tuple[int, str, list[str]]]:
    """pid, command name and stat fields (as proc_stat) of every process alive while it is read."""
    for entry in Path("/proc").glob("[0-9]*"):
        stat = proc_stat(int(entry.name))
        if stat is not None:
            yield int(entry.name), *stat


def pgid_processes(pgid: int) -> list[int]:
    """The processes of a process group (zombies included): what a load left behind."""
    return [pid for pid, _, fields in processes() if int(fields[2]) == pgid]


def load_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def junit_figures(path: Path) -> dict[str, dict[str, str]]:
    """Per testcase, the figures rtgate's JUnit holds as testsuite properties named '<testcase>::<figure>'."""
    from junitparser import JUnitXml

    out: dict[str, dict[str, str]] = {}
    for suite in JUnitXml.fromfile(str(path)):
        for prop in suite.properties():
            case, sep, figure = prop.name.rpartition("::")
            if sep:
                out.setdefault(case, {})[figure] = prop.value
    return out


def sampler_child_of(pid: int, measuring: bool = False) -> int | None:
    """The pid of the rtgate-sampler that runs as a child of process `pid` (rtgate may wait for the measurement
    lock first), or None; with `measuring`, only once its measuring threads exist."""
    for child, name, fields in processes():
        if name == "rtgate-sampler" and int(fields[1]) == pid:
            try:
                if not measuring or len(os.listdir(f"/proc/{child}/task")) > 1:
                    return child
            except OSError:
                continue
    return None


@pytest.fixture(scope="session")
def static_sampler(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """rtgate-sampler linked statically, as a board without our build's libraries runs it (the LAVA tests' initramfs):
    built once a session."""
    build = tmp_path_factory.mktemp("static-sampler") / "build"
    for argv in (
        ["meson", "setup", str(build), str(ROOT), "-Dstatic=true", "-Dharness=disabled", "-Dunit_tests=false"],
        ["meson", "compile", "-C", str(build)],
    ):
        r = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, (argv, r.stdout[-3000:], r.stderr[-3000:])
    return build / "sampler" / "rtgate-sampler"


@pytest.fixture(scope="session")
def cross_build(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """cross_build(NAME): the sampler built static with sampler/cross/NAME.txt, as doc/sampler.rst says (once a
    session per NAME): its meson build directory."""
    builds: dict[str, Path] = {}

    def build(name: str) -> Path:
        if name not in builds:
            where = tmp_path_factory.mktemp(f"cross-{name}") / f"build-{name}"
            cross = ROOT / "sampler" / "cross" / f"{name}.txt"
            for argv in (
                ["meson", "setup", str(where), str(ROOT), "--cross-file", str(cross), "-Dstatic=true"],
                ["meson", "compile", "-C", str(where)],
            ):
                r = subprocess.run(argv, capture_output=True, text=True, timeout=600)
                assert r.returncode == 0, (argv, r.stdout[-3000:], r.stderr[-3000:])
            builds[name] = where
        return builds[name]

    return build


@pytest.fixture(scope="session")
def lava_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The suite's one LAVA instance (tests/lava/server.py: lava-server, lava-publisher, lava-scheduler, a
    lava-worker), started on first use and stopped at the end of the session: LAVA_QEMU_DEVICES (stock qemu,
    TCG), LAVA_ARM64_DEVICE (stock qemu, arm64 virt) and LAVA_SHELL_BOARDS devices lab-000... that are shells on
    the worker (tests/lava/local_shell.py).
    Every LAVA test shares it: each start costs a database and five daemons."""
    _required("lava-server", "lava-server")
    _required("lava-worker", "lava-dispatcher")
    _required("pg_ctlcluster", "postgresql")
    sys.path.insert(0, str(Path(__file__).resolve().parent / "lava"))
    from local_shell import shell_devices
    from server import LavaSetupError, LocalLava

    shells = shell_devices(tmp_path_factory.mktemp("lava-shells"), LAVA_SHELL_BOARDS)
    server = LocalLava(
        base=tmp_path_factory.mktemp("lava-server"),
        devices=LAVA_QEMU_DEVICES + [LAVA_ARM64_DEVICE] + list(shells),
        device_dicts={**shells, LAVA_ARM64_DEVICE: LAVA_ARM64_DICT},
        # libguestfs, which builds LAVA's overlay disk for a QEMU board, boots a VM of its own: TCG too.
        worker_env={"LIBGUESTFS_BACKEND_SETTINGS": "force_tcg"},
        access_log=True,  # what rtgate asked the server, for tests/system/test_lava_lab_scale.py
    )
    started = time.monotonic()
    # A CI timeout sends SIGTERM: make it an interrupt, so the teardown below still stops everything.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        server.start()
    except BaseException as e:
        logs = server.logs()
        server.stop()
        signal.signal(signal.SIGTERM, previous)
        if isinstance(e, (LavaSetupError, subprocess.TimeoutExpired, OSError)):
            pytest.fail(f"the local LAVA instance did not come up: {e}\n{logs}")
        raise
    print(f"\nlocal LAVA up in {time.monotonic() - started:.0f} s at {server.url}")
    try:
        yield server
    finally:
        server.stop()
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")
