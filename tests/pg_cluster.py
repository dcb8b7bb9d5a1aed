# SPDX-License-Identifier: GPL-2.0-or-later
"""A private throwaway PostgreSQL 15 cluster (never the system cluster), for the history tests
and benchmarks: started in a temporary folder, stopped by its own PID, folder removed."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PG_BIN = Path("/usr/lib/postgresql/15/bin")


def available() -> bool:
    return (PG_BIN / "initdb").exists()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def private_postgres() -> Iterator[str]:
    """A server URL (user rtgate, trust auth, fsync off) for the duration of the block."""
    import psycopg

    data = Path(tempfile.mkdtemp(prefix="rtgate-pg-"))
    # initdb refuses root: run the server as the postgres user, in our own directory.
    as_user: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(data, "postgres", "postgres")
        as_user = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"]
    port = free_port()
    try:
        initdb = [str(PG_BIN / "initdb"), "-D", str(data / "db"), "-U", "rtgate", "--auth=trust", "-E", "UTF8"]
        subprocess.run(as_user + initdb + ["--no-sync"], check=True, capture_output=True, timeout=300)
        with open(data / "server.log", "wb") as log:
            server = subprocess.Popen(
                as_user
                + [str(PG_BIN / "postgres"), "-D", str(data / "db"), "-p", str(port), "-k", str(data)]
                + ["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"],
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        try:
            url = f"postgresql://rtgate@127.0.0.1:{port}/postgres"
            for _ in range(600):
                try:
                    psycopg.connect(url, connect_timeout=2).close()
                    break
                except psycopg.OperationalError:
                    if server.poll() is not None:
                        raise RuntimeError(
                            "postgres did not start: " + (data / "server.log").read_text()[-2000:]
                        ) from None
                    time.sleep(0.1)
            else:
                raise RuntimeError("postgres did not accept connections in 60 s")
            yield url
        finally:
            server.send_signal(signal.SIGINT)  # fast shutdown of our own server, by its PID
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    finally:
        shutil.rmtree(data, ignore_errors=True)


def fresh_database(url: str, name: str) -> str:
    """A new database on the throwaway server, so users do not see each other's runs."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + "/" + name
