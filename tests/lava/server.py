# SPDX-License-Identifier: GPL-2.0-or-later
"""A real LAVA instance for the tests, from Debian's packages and nothing else.

PostgreSQL (the system cluster 15/main, started if it is down and stopped again unless another
client uses it; a database and role of our own, copied from a template database and dropped at the
end), lava-server's Django app under gunicorn on a free loopback port, lava-publisher (the events
that wake the others, as in a lab), lava-scheduler, and one lava-worker with stock `qemu` devices.
No systemd: every
daemon is started here and stopped by its PID (its process group). Everything lava-server writes
(media, device dictionaries, logs) lives in one temporary directory; the only file outside it is
the worker's env.yaml under /etc/lava-server/dispatcher.d/<worker>/, which lava-server reads from
that fixed place, removed at the end. What stays on the machine on purpose: the template database
rtgate_tpl_lava_<lava-server's version> (and its role), built once and kept for the next session.
Test tooling, not shipped."""

from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PG_VERSION, PG_CLUSTER = "15", "main"
PING_S = 2  # lava-worker's ping interval for the tests: a finished job is seen within 2 s, not 20
ENV_DIR = Path("/etc/lava-server/dispatcher.d")
CLUSTER_LOCK = Path(tempfile.gettempdir()) / "rtgate-lava-cluster.lock"

# The device dictionary of each test board: the stock qemu type, and settings safe on a CI VM with
# loopback only. TCG: nested KVM hangs this kernel's early boot.
DEVICE_DICT = """{% extends 'qemu.jinja2' %}
{% set no_kvm = True %}
{% set netdevice = 'user' %}
{% set memory = 768 %}
"""


class LavaSetupError(RuntimeError):
    pass


@contextmanager
def _cluster_lock() -> Iterator[None]:
    """One test session at a time starts or stops the system cluster, and builds or copies the
    template database: concurrent sessions share both."""
    fd = os.open(CLUSTER_LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)  # /tmp: never through a link
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _lava_version() -> str:
    """lava-server's package version, as a database name may carry it ("2023.01-2" -> "2023_01_2")."""
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "lava-server"], capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.strip():
        raise LavaSetupError(f"dpkg-query: no version of lava-server: {r.stderr.strip()}")
    return re.sub(r"[^a-z0-9]+", "_", r.stdout.strip().lower())


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def free_ports(n: int) -> list[int]:
    """n distinct free loopback ports (all held open at once, so none is handed out twice)."""
    socks = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


def _cluster_port() -> tuple[int, bool]:
    """The system cluster's port, and whether it is running."""
    out = subprocess.run(["pg_lsclusters", "--no-header"], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if f[:2] == [PG_VERSION, PG_CLUSTER]:
            return int(f[2]), f[3] == "online"
    raise LavaSetupError(f"no PostgreSQL cluster {PG_VERSION}/{PG_CLUSTER} (pg_lsclusters: {out!r})")


@dataclass
class Daemon:
    name: str
    proc: subprocess.Popen[bytes]
    log: Path
    grace: float = 15  # seconds from SIGTERM to SIGKILL


@dataclass
class LocalLava:
    base: Path
    devices: list[str]
    worker_env: dict[str, str] = field(default_factory=dict)
    device_dict: str = DEVICE_DICT  # every device's dictionary (a Jinja2 template extending a device type's)
    device_dicts: dict[str, str] = field(default_factory=dict)  # a dictionary of its own for some devices
    access_log: bool = False  # gunicorn's access log in logs/access.log: what a client asked, line by line
    # lava-worker reports a finished job at its next ping (no event for that): LAVA's default is 20 s.
    ping_interval: int = PING_S
    port: int = 0
    events_port: int = 0  # lava-publisher's zmq PUB socket: lava-scheduler listens there
    ws_port: int = 0  # lava-publisher's websocket: lava-worker listens there
    internal_port: int = 0  # where lava-server's processes push their events to lava-publisher
    url: str = ""
    token: str = ""
    user: str = "rtgate-admin"
    worker: str = ""
    db: str = ""
    daemons: list[Daemon] = field(default_factory=list)
    started_cluster: bool = False
    _db_password: str = ""
    _secret: str = ""

    # -- set up ------------------------------------------------------------------------------
    def start(self) -> LocalLava:
        self.base.mkdir(parents=True, exist_ok=True)
        tag = f"{os.getpid()}_{secrets.token_hex(3)}"
        self.db = f"rtgate_lava_{tag}"
        self.worker = f"rtgate-worker-{tag.replace('_', '-')}"
        self._db_password = secrets.token_hex(12)
        self._secret = secrets.token_hex(16)
        self.port, self.events_port, self.ws_port, self.internal_port = free_ports(4)
        self.url = f"http://127.0.0.1:{self.port}/"
        # worker/tmp as Debian's package ships /var/lib/lava/dispatcher/tmp: lava-worker creates it
        # only when it starts a job, and a cancel of a job it never started (cancelled once
        # scheduled) makes tmp/<job id> without parents: FileNotFoundError, and the worker exits
        # (lava_dispatcher/worker.py, Job.__init__ called from cancel()), the job Canceling forever.
        for d in ("media", "devices", "health-checks", "worker", "worker/tmp", "logs"):
            (self.base / d).mkdir(exist_ok=True)
        self._postgres()  # lava-server's schema and the qemu device type, from the template
        # Job ids of our own: lava-run keeps downloads under /var/lib/lava/dispatcher/tmp/<job id>,
        # and every fresh database would start at 1.
        self.psql(
            f"ALTER SEQUENCE lava_scheduler_app_testjob_id_seq RESTART WITH {secrets.randbelow(10**8) + 10**6}",
            db=self.db,
        )
        for name in self.devices:
            (self.base / "devices" / f"{name}.jinja2").write_text(self.device_dicts.get(name, self.device_dict))
        worker_token = self.populate()
        env_dir = ENV_DIR / self.worker
        env_dir.mkdir(parents=True, exist_ok=True)
        overrides = {
            "LC_ALL": "C.UTF-8",
            "LANG": "C",
            "PATH": "/usr/local/bin:/usr/local/sbin:/bin:/usr/bin:/usr/sbin:/sbin",
            **self.worker_env,
        }
        (env_dir / "env.yaml").write_text(json.dumps({"purge": True, "overrides": overrides}))

        # lava-publisher: every submission, scheduling, cancel and idle board is an event that wakes
        # lava-scheduler and lava-worker at once, as in a lab. Without it both only look every 20 s,
        # and each job waits up to a minute on nothing. (zmq connects whenever the publisher is up.)
        self.spawn(
            "lava-publisher",
            [
                "lava-server", "manage", "lava-publisher", "--host", "127.0.0.1", "--port", str(self.ws_port),
                "--user", "root", "--group", "root", "--level", "DEBUG",
                "--log-file", str(self.base / "logs" / "lava-publisher.log"),
            ],
            grace=1,  # stopped, it waits 5 s for events from daemons that are gone by then
        )  # fmt: skip
        gunicorn = shutil.which("gunicorn3") or shutil.which("gunicorn") or "gunicorn3"
        self.spawn(
            "gunicorn",
            [
                gunicorn,
                "lava_server.wsgi",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--worker-class",
                "sync",
                "--workers",
                "3",
                "--timeout",
                "120",
                "--log-level",
                "info",
                *(["--access-logfile", str(self.base / "logs" / "access.log")] if self.access_log else []),
            ],
        )
        # As root, like gunicorn here (it drops to lavaserver by default, who cannot read our files).
        self.spawn(
            "lava-scheduler",
            [
                "lava-server",
                "manage",
                "lava-scheduler",
                "--user",
                "root",
                "--group",
                "root",
                "--level",
                "DEBUG",
                "--log-file",
                str(self.base / "logs" / "lava-scheduler.log"),
                "--event-url",
                f"tcp://127.0.0.1:{self.events_port}",
            ],
        )
        # The three start side by side; the worker needs the publisher's websocket and the REST API.
        self.wait_for(lambda: _listening(self.ws_port), 120, "lava-publisher listening", every=0.2)
        self.wait_for(lambda: self._get_ok("api/v0.2/system/version/"), 120, "lava-server answering HTTP", every=0.2)
        self.spawn(
            "lava-worker",
            [
                "lava-worker",
                "--name",
                self.worker,
                "--token",
                worker_token,
                "--url",
                self.url,
                "--ws-url",
                f"ws://127.0.0.1:{self.ws_port}/ws/",
                "--ping-interval",
                str(self.ping_interval),
                "--worker-dir",
                str(self.base / "worker"),
                "--http-timeout",
                "180",
                "--log-file",
                str(self.base / "logs" / "lava-worker.log"),
                "--level",
                "DEBUG",
            ],
            env=self.worker_process_env(),
        )
        self.wait_for(
            lambda: self.api(f"workers/{self.worker}/").get("state") == "Online", 180, "the worker online", every=0.2
        )
        return self

    def populate(self) -> str:
        """Our user and its API token, the worker, and every device, in one Django start-up (each
        `lava-server manage` costs one, and 50 boards added one by one would cost minutes of CPU): the
        users, tokens and workers commands through Django's call_command, and each device as `manage
        devices add NAME --device-type qemu --worker W --tags NAME` adds it (idle, good, tagged with
        its own name). Returns the worker's token."""
        script = f"""
import io, json
from django.core.management import call_command
from lava_scheduler_app.models import Device, DeviceType, Tag, Worker

def manage(*args):
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()

manage("users", "add", {self.user!r}, "--superuser", "--staff", "--passwd", {secrets.token_hex(8)!r})
token = manage("tokens", "add", "--user", {self.user!r}).strip().splitlines()[-1]
worker_token = manage("workers", "add", {self.worker!r}).split("Token:")[-1].strip()
dt = DeviceType.objects.get(name="qemu")
worker = Worker.objects.get(hostname={self.worker!r})
for name in json.loads({json.dumps(json.dumps(self.devices))}):
    d = Device.objects.create(
        hostname=name, device_type=dt, description=None, state=Device.STATE_IDLE, health=Device.HEALTH_GOOD,
        worker_host=worker,
    )
    d.tags.add(Tag.objects.get_or_create(name=name)[0])
    d.save()
print(json.dumps({{"token": token, "worker_token": worker_token}}))
"""
        made = json.loads(self.manage("shell", "-c", script).strip().splitlines()[-1])
        self.token = made["token"]
        return str(made["worker_token"])

    def server_env(self, database: tuple[str, str, str] | None = None, events: bool = False) -> dict[str, str]:
        """lava-server's environment; `database` (name, role, password): another database than ours;
        `events`: send events to lava-publisher (the daemons do; a `manage` command has no one to tell)."""
        name, role, password = database or (self.db, self.db, self._db_password)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LAVA_", "DJANGO_", "DATABASE_"))}
        env.update(
            {
                "DATABASE_URL": f"postgres://{role}:{password}@127.0.0.1:{_cluster_port()[0]}/{name}",
                "SECRET_KEY": self._secret,
                "LAVA_SETTINGS_MEDIA_ROOT": str(self.base / "media"),
                "LAVA_SETTINGS_DEVICES_PATH": str(self.base / "devices"),
                "LAVA_SETTINGS_HEALTH_CHECKS_PATH": str(self.base / "health-checks"),
                "LAVA_SETTINGS_DJANGO_LOGFILE": str(self.base / "logs" / "django.log"),
                "LAVA_YAML_SETTINGS_EVENT_NOTIFICATION": "true" if events else "false",
                "LAVA_SETTINGS_INTERNAL_EVENT_SOCKET": f"tcp://127.0.0.1:{self.internal_port}",
                "LAVA_SETTINGS_EVENT_SOCKET": f"tcp://127.0.0.1:{self.events_port}",
            }
        )
        return env

    def worker_process_env(self) -> dict[str, str]:
        return {k: v for k, v in os.environ.items() if not k.startswith(("LAVA_", "DJANGO_", "DATABASE_"))}

    def _postgres(self) -> None:
        with _cluster_lock():
            _, online = _cluster_port()
            if not online:
                r = subprocess.run(
                    ["pg_ctlcluster", PG_VERSION, PG_CLUSTER, "start"], capture_output=True, text=True, timeout=120
                )
                if r.returncode != 0:
                    raise LavaSetupError(f"pg_ctlcluster {PG_VERSION} {PG_CLUSTER} start: {r.stderr.strip()}")
                self.started_cluster = True
            self._drop_stale()
            self.psql(f"CREATE ROLE {self.db} LOGIN PASSWORD '{self._db_password}'")
            template = self._template()
            # Created under the lock: from now on our database tells a session that wants to stop the
            # cluster that we still use it.
            # A copy of the template: CREATE DATABASE copies it block by block (the template has no
            # connection: nobody writes to it while it is copied).
            self.psql(f"CREATE DATABASE {self.db} OWNER {self.db} TEMPLATE {template}")
        # The copy's tables belong to the template's role: ours from now on, and nothing of it left.
        self.psql(f"REASSIGN OWNED BY {template} TO {self.db}; DROP OWNED BY {template}", db=self.db)

    def _stop_cluster(self) -> None:
        """Stop the cluster we started, unless someone else uses it now: another instance's database
        exists (another test session, alive or killed before its teardown) or another client is
        connected. Then it stays up: a session that found it running never stops it, so the last
        user out leaves it running rather than pull it from under a session still at work."""
        with _cluster_lock():
            try:
                others = self.psql(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
                    tuples=True,
                ).strip()
                ours = self.psql(r"SELECT datname FROM pg_database WHERE datname LIKE 'rtgate\_lava\_%'", tuples=True)
            except (LavaSetupError, subprocess.TimeoutExpired, OSError):
                return
            if others != "0" or ours.split():
                return
            subprocess.run(
                ["pg_ctlcluster", PG_VERSION, PG_CLUSTER, "stop", "-m", "fast"], capture_output=True, timeout=120
            )

    def _template(self) -> str:
        """The template database of this lava-server version: lava-server's schema (`manage migrate`,
        a quarter of a minute of CPU) and the qemu device type, built once per machine and version,
        then copied for each instance. Called under the cluster lock. Its objects belong to a role
        of its own (each instance takes them over in its copy); the database itself to postgres."""
        name = f"rtgate_tpl_lava_{_lava_version()}"
        if self.psql(f"SELECT 1 FROM pg_database WHERE datname = '{name}'", tuples=True).strip():
            return name
        # Templates of another lava-server version: their schema is not this one's.
        old = self.psql(r"SELECT datname FROM pg_database WHERE datname LIKE 'rtgate\_tpl\_lava\_%'", tuples=True)
        for stale in old.split():
            self.psql(f"ALTER DATABASE {stale} WITH IS_TEMPLATE false")
            self.psql(f"DROP DATABASE IF EXISTS {stale} WITH (FORCE)")
            self.psql(f"DROP ROLE IF EXISTS {stale}")
        # Built under a name of this session's (_drop_stale removes it if the session dies midway),
        # then renamed: a template under its final name is always complete.
        build, password = f"{self.db}_tpl", secrets.token_hex(12)
        exists = self.psql(f"SELECT 1 FROM pg_roles WHERE rolname = '{name}'", tuples=True).strip()
        self.psql(f"{'ALTER' if exists else 'CREATE'} ROLE {name} LOGIN PASSWORD '{password}'")
        self.psql(f"CREATE DATABASE {build} OWNER postgres")
        self.psql(f"GRANT ALL ON SCHEMA public TO {name}", db=build)
        try:
            self.manage("migrate", "--noinput", timeout=900, database=(build, name, password))
            self.manage("device-types", "add", "qemu", database=(build, name, password))
            self.psql(f"ALTER DATABASE {build} RENAME TO {name}")
            self.psql(f"ALTER DATABASE {name} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false")
        except BaseException:
            self.psql(f"DROP DATABASE IF EXISTS {build} WITH (FORCE)")
            raise
        finally:
            self.psql(f"ALTER ROLE {name} NOLOGIN")
        return name

    def _drop_stale(self) -> None:
        """What a test session killed before its teardown left: databases, roles and env.yaml files
        named after a process that is gone."""

        def gone(pid: str) -> bool:
            return pid.isdigit() and int(pid) != os.getpid() and not Path(f"/proc/{pid}").exists()

        for kind, table, column in (("DATABASE", "pg_database", "datname"), ("ROLE", "pg_roles", "rolname")):
            names = self.psql(f"SELECT {column} FROM {table} WHERE {column} LIKE 'rtgate_lava_%'", tuples=True)
            for name in names.split():
                if gone(name.split("_")[2]):
                    self.psql(f"DROP {kind} IF EXISTS {name}" + (" WITH (FORCE)" if kind == "DATABASE" else ""))
        for d in ENV_DIR.glob("rtgate-worker-*"):
            if gone(d.name.split("-")[2]):
                shutil.rmtree(d, ignore_errors=True)

    def psql(self, sql: str, db: str = "postgres", tuples: bool = False) -> str:
        r = subprocess.run(
            [
                "runuser",
                "-u",
                "postgres",
                "--",
                "psql",
                "-X",
                "-q",
                *(["-A", "-t"] if tuples else []),
                "-v",
                "ON_ERROR_STOP=1",
                "-p",
                str(_cluster_port()[0]),
                "-d",
                db,
                "-c",
                sql,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            cwd="/",
        )
        if r.returncode != 0:
            raise LavaSetupError(f"psql {sql.split()[0:3]}: {r.stderr.strip()}")
        return r.stdout

    def manage(self, *args: str, timeout: float = 300, database: tuple[str, str, str] | None = None) -> str:
        r = subprocess.run(
            ["lava-server", "manage", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=self.server_env(database),
            cwd=str(self.base),
        )
        if r.returncode != 0:
            raise LavaSetupError(f"lava-server manage {' '.join(args[:2])}: {(r.stderr or r.stdout)[-2000:]}")
        return r.stdout

    def spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None, grace: float = 15) -> None:
        log = self.base / "logs" / f"{name}.out"
        with log.open("ab") as out:
            proc = subprocess.Popen(
                argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=str(self.base),
                env=env or self.server_env(events=True),
                start_new_session=True,
            )
        self.daemons.append(Daemon(name, proc, log, grace))

    def check_alive(self, what: str) -> None:
        for d in self.daemons:
            if d.proc.poll() is not None:
                raise LavaSetupError(f"{d.name} exited ({d.proc.returncode}) while waiting for {what}")

    def wait_for(self, ready: Any, seconds: float, what: str, every: float = 1) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.check_alive(what)
            try:
                if ready():
                    return
            except (OSError, ValueError, urllib.error.URLError):
                pass
            time.sleep(every)
        raise LavaSetupError(f"timed out after {seconds:.0f} s waiting for {what}")

    # -- REST ---------------------------------------------------------------------------------
    def _get_ok(self, path: str) -> bool:
        with urllib.request.urlopen(self.url + path, timeout=10) as r:
            return bool(r.status == 200)

    def api(self, path: str, data: Any = None, raw: bool = False) -> Any:
        req = urllib.request.Request(
            self.url + "api/v0.2/" + path,
            method="POST" if data is not None else "GET",
            headers={"Authorization": f"Token {self.token}", "Content-Type": "application/json"},
            data=json.dumps(data).encode() if data is not None else None,
        )
        with urllib.request.urlopen(req, timeout=60) as r:
            body = r.read().decode()
        return body if raw else json.loads(body)

    def wait_idle(self, seconds: float = 300) -> None:
        """Every device Idle and Good: the previous jobs are finished and their boards released."""

        def idle() -> bool:
            for name in self.devices:
                d = self.api(f"devices/{name}/")
                if d.get("state") != "Idle":
                    return False
            return True

        self.wait_for(idle, seconds, "every device idle")

    # -- diagnostics and tear down ----------------------------------------------------------
    def logs(self, tail: int = 4000) -> str:
        parts = []
        for p in sorted((self.base / "logs").glob("*")):
            text = p.read_text(errors="replace")
            parts.append(f"==> {p.name} <==\n{text[-tail:]}")
        return "\n".join(parts)

    def stop(self) -> None:
        _stop_groups(list(reversed(self.daemons)))
        _stop_jobs_of(self.base)
        shutil.rmtree(ENV_DIR / self.worker, ignore_errors=True) if self.worker else None
        if self.db:
            for sql in (f"DROP DATABASE IF EXISTS {self.db} WITH (FORCE)", f"DROP ROLE IF EXISTS {self.db}"):
                try:
                    self.psql(sql)
                except (LavaSetupError, subprocess.TimeoutExpired, OSError):
                    pass
        if self.started_cluster:
            self._stop_cluster()
        left = _processes_in(self.base)
        if left:
            raise LavaSetupError(f"processes of the LAVA instance survived the teardown: {left}")


def _stop_groups(daemons: list[Daemon]) -> None:
    """SIGTERM to each daemon's process group (it leads it), all at once, SIGKILL to what is left
    after its grace period."""
    for d in daemons:
        if d.proc.poll() is None:
            try:
                os.killpg(d.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    start = time.monotonic()
    for d in daemons:
        try:
            d.proc.wait(timeout=max(start + d.grace - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(d.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            d.proc.wait(timeout=30)


def _processes_in(base: Path) -> list[int]:
    """Processes whose working directory is our instance's directory: every daemon started here
    runs there, and so does everything they start (lava-run renames itself, so its command line
    cannot tell; a cancelled job's lava-run can outlive the worker, blocked on a pipe)."""
    mine = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(proc / "cwd").removesuffix(" (deleted)")
        except OSError:
            continue
        if cwd == str(base) or cwd.startswith(str(base) + "/"):
            mine.append(int(proc.name))
    return mine


def _stop_jobs_of(base: Path) -> None:
    """SIGTERM to what is left of ours (by process group), then SIGKILL to what survives that."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        left = _processes_in(base)
        if not left:
            return
        for pid in left:
            try:
                os.killpg(os.getpgid(pid), sig)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _processes_in(base):
            time.sleep(0.5)
