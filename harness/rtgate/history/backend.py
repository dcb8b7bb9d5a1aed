# SPDX-License-Identifier: GPL-2.0-or-later
"""One connection interface over SQLite (a file, the default) and PostgreSQL (a lab's shared server).

The schema is written once in SQLite's dialect; PostgreSQL gets the same tables with 64-bit
serial keys and double-precision reals. Queries use '?' placeholders; PostgreSQL's '%s' are
substituted here. Every write is one transaction: a run is stored whole or not at all."""

from __future__ import annotations

import _thread
import os
import re
import sqlite3
import stat
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rtgate.errors import RtgateError
from rtgate.safe_io import check_regular_or_absent


def is_postgres_url(target: str) -> bool:
    return target.startswith(("postgresql://", "postgres://"))


def redacted(target: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", target)


def _pg_ddl(statement: str) -> str:
    statement = statement.replace("INTEGER PRIMARY KEY", "BIGSERIAL PRIMARY KEY")
    statement = re.sub(r"\bINTEGER\b", "BIGINT", statement)
    return re.sub(r"\bREAL\b", "DOUBLE PRECISION", statement)


BUSY_TIMEOUT_S = 60.0


def _set_wal(conn: sqlite3.Connection) -> None:
    """WAL mode, set once per file. Switching needs the file to itself, and SQLite answers "database
    is locked" at once, without its busy handler, when another connection holds it (writers opening
    a new store together): so retry within the busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    delay = 0.001
    while True:
        try:
            if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
                return
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if ("locked" not in str(e) and "busy" not in str(e)) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


def check_intact(target: str) -> None:
    """Refuse a damaged SQLite store before anything is written into it."""
    conn = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S)  # it exists: nothing is created
    try:
        _check_intact(conn, target)
    finally:
        conn.close()


def _identity(target: str) -> tuple[int, int, int, int] | None:
    """A regular, non-empty file's device, inode, size and modification time; else None."""
    try:
        st = os.stat(target)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


class EarlyCheck:
    """check_intact() of an existing SQLite store, begun in a thread before a command's imports:
    sqlite3 releases the GIL while it reads the file, so beside numpy's import it costs no wall
    time where a second CPU is free (~10 ms of `history compare` at 1e4 runs). The Backend opened
    with it waits for the answer and takes it instead of checking again, provided the file is
    still the one checked (device, inode, size, modification time); else it checks as usual."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.identity = _identity(target)  # FIFOs, devices and new stores are left to the open
        self.error: BaseException | None = None
        self._done = _thread.allocate_lock()  # `threading` would cost an import: held until the check ends
        if self.identity is not None:
            self._done.acquire()
            _thread.start_new_thread(self._run, ())

    def _run(self) -> None:
        try:
            check_intact(self.target)
        except BaseException as e:  # handed to the thread that opens the store
            self.error = e
        finally:
            self._done.release()

    def answered(self) -> bool:
        """Whether the check ran on the file as it is now; raises what it found."""
        if self.identity is None:
            return False
        with self._done:
            pass
        if _identity(self.target) != self.identity:
            return False
        if self.error is not None:
            raise self.error
        return True


def _check_intact(conn: sqlite3.Connection, target: str) -> None:
    """A truncated file (not whole pages) or a failed quick_check names the damage in one line."""
    try:
        size = os.path.getsize(target)
    except OSError:
        return  # a new store
    if size == 0:
        return
    try:
        page = int(conn.execute("PRAGMA page_size").fetchone()[0])
        result = [str(r[0]) for r in conn.execute("PRAGMA quick_check(3)").fetchall()]
    except sqlite3.DatabaseError as e:
        raise RtgateError(
            f"damaged history database ({' '.join(str(e).split())}): restore it from a copy; nothing was written",
            path=target,
        ) from e
    if size % page:
        result = [f"{size} bytes is not a whole number of {page}-byte pages (truncated)"] + result
    damage = [" ".join(r.split()) for r in result if r != "ok"]
    if damage:
        raise RtgateError(
            f"damaged history database ({'; '.join(damage)[:200]}): restore it from a copy; nothing was written",
            path=target,
        )


def check_target(target: str) -> None:
    """Before measuring: the --history target is reachable and usable (a PostgreSQL URL is
    connected to; a SQLite file is a regular file or absent, in a writable folder, and intact).
    One-line RtgateError otherwise."""
    if is_postgres_url(target):
        Backend(target).close()
        return
    path = Path(target)
    check_regular_or_absent(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not path.exists():
        if not os.access(folder, os.W_OK | os.X_OK):
            raise RtgateError("cannot create the history database: its folder is not writable", path=target)
        return
    if not os.access(path, os.R_OK | os.W_OK):
        raise RtgateError("cannot write the history database", path=target)
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError as e:
        raise RtgateError(f"cannot read the history database: {e.strerror}", path=target) from e
    if head and head != b"SQLite format 3\x00":
        raise RtgateError("not a SQLite history database (no SQLite header)", path=target)
    if head:
        try:
            check_intact(target)
        except sqlite3.Error as e:
            raise RtgateError(f"not a usable history database: {e}", path=target) from e


class Backend:
    """A connection in autocommit mode; `transaction()` groups statements."""

    dialect = "sqlite"

    def __init__(self, target: str, early: EarlyCheck | None = None) -> None:
        self.target = target
        if is_postgres_url(target):
            self.dialect = "postgresql"
            try:
                import psycopg
            except ImportError as e:
                raise RtgateError(
                    "a PostgreSQL history needs psycopg: pip install 'rtgate[postgres]'", path=redacted(target)
                ) from e
            self.errors: tuple[type[BaseException], ...] = (psycopg.Error,)
            try:
                self.conn: Any = psycopg.connect(target, autocommit=True)
            except psycopg.Error as e:
                raise RtgateError(f"cannot connect: {str(e).strip().splitlines()[0]}", path=redacted(target)) from e
        else:
            self.errors = (sqlite3.Error,)
            try:
                self.conn = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S, isolation_level=None)
                self.conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
                if early is None or early.target != target or not early.answered():
                    _check_intact(self.conn, target)
                _set_wal(self.conn)
                self.conn.execute("PRAGMA foreign_keys=ON")
            except sqlite3.Error as e:
                self.conn.close()
                raise RtgateError(f"not a usable history database: {e}", path=target) from e
            except RtgateError:
                self.conn.close()
                raise

    def close(self) -> None:
        self.conn.close()

    def ddl(self, statement: str) -> str:
        return _pg_ddl(statement) if self.dialect == "postgresql" else statement

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        if self.dialect == "postgresql":
            sql = sql.replace("?", "%s")
        return self.conn.execute(sql, tuple(params))

    def insert(self, sql: str, params: Sequence[Any]) -> int:
        """An INSERT that returns the new row's id (both servers support RETURNING)."""
        return int(self.execute(sql + " RETURNING id", params).fetchone()[0])

    @contextmanager
    def transaction(self, lock: bool = False) -> Iterator[None]:
        """One transaction; `lock` serialises it against other writers (schema migrations)."""
        if self.dialect == "postgresql":
            with self.conn.transaction():
                if lock:  # CREATE TABLE IF NOT EXISTS races between sessions without it
                    self.conn.execute("SELECT pg_advisory_xact_lock(727411)")
                yield
            return
        self.conn.execute("BEGIN IMMEDIATE")  # takes the write lock now: no upgrade deadlock
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
