# SPDX-License-Identifier: GPL-2.0-or-later
"""One connection interface over SQLite (a file, the default) and PostgreSQL (a lab's shared server).

The schema is written once in SQLite's dialect; PostgreSQL gets the same tables with 64-bit
serial keys and double-precision reals. Queries use '?' placeholders; PostgreSQL's '%s' are
substituted here. Every write is one transaction: a run is stored whole or not at all."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rtgate.errors import RtgateError


def is_postgres_url(target: str) -> bool:
    return target.startswith(("postgresql://", "postgres://"))


def redacted(target: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", target)


def _pg_ddl(statement: str) -> str:
    statement = statement.replace("INTEGER PRIMARY KEY", "BIGSERIAL PRIMARY KEY")
    statement = re.sub(r"\bINTEGER\b", "BIGINT", statement)
    return re.sub(r"\bREAL\b", "DOUBLE PRECISION", statement)


class Backend:
    """A connection in autocommit mode; `transaction()` groups statements."""

    dialect = "sqlite"

    def __init__(self, target: str) -> None:
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
                self.conn = sqlite3.connect(target, timeout=60.0, isolation_level=None)
                self.conn.execute("PRAGMA journal_mode=WAL")
                self.conn.execute("PRAGMA foreign_keys=ON")
                self.conn.execute("PRAGMA busy_timeout=60000")
            except sqlite3.Error as e:
                raise RtgateError(f"not a usable history database: {e}", path=target) from e

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
