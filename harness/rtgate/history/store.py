"""The history store: SQLite, one file, safe with concurrent writers and interrupted writes.

WAL journaling and one transaction per added run: a run is in the database whole or not at all.
The schema has a version and migrations, so old databases keep working."""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from rtgate.errors import RtgateError
from rtgate.core.gates import Verdict
from rtgate.core.model import RunResult, ThreadResult
from rtgate.safe_io import check_regular_or_absent

SCHEMA_VERSION = 1
MIGRATIONS: dict[int, list[str]] = {
    1: [
        """CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            platform TEXT NOT NULL,
            measurement TEXT NOT NULL,
            kernel_release TEXT NOT NULL,
            kernel_config TEXT,
            tags TEXT NOT NULL DEFAULT '[]',
            metadata TEXT NOT NULL DEFAULT '{}',
            source TEXT,
            format TEXT,
            unit TEXT NOT NULL,
            added_at REAL NOT NULL,
            environment TEXT NOT NULL DEFAULT '{}')""",
        """CREATE TABLE threads (
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            thread TEXT NOT NULL,
            idx INTEGER NOT NULL, cpu INTEGER, priority INTEGER,
            cycles INTEGER NOT NULL, missed INTEGER,
            min REAL, avg REAL, max REAL, p99 REAL, p999 REAL,
            histogram TEXT, block_maxima TEXT,
            PRIMARY KEY (run_id, thread))""",
        """CREATE TABLE verdicts (
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            gate TEXT NOT NULL, thread TEXT NOT NULL, status TEXT NOT NULL,
            value REAL, limit_value REAL, bound REAL, samples INTEGER, reason TEXT)""",
        "CREATE INDEX runs_by_release ON runs (platform, measurement, kernel_release)",
    ],
}


@dataclass
class StoredThread:
    run_id: int
    kernel_release: str
    thread: str
    cycles: int
    missed: int | None
    figures: dict[str, float | None]  # min, avg, max, p99, p999 in us
    histogram: list[list[Any]] | None


def _thread_id(t: ThreadResult) -> str:
    return f"cpu{t.cpu}" if t.cpu is not None and t.cpu >= 0 else f"t{t.index}"


class HistoryDB:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        check_regular_or_absent(self.path)  # sqlite3 would open /dev/full or a FIFO as its database
        try:
            self.db = sqlite3.connect(str(self.path), timeout=60.0, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.execute("PRAGMA busy_timeout=60000")
            self._migrate()
        except sqlite3.DatabaseError as e:
            raise RtgateError(f"not a usable history database: {e}", path=str(self.path)) from e

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "HistoryDB":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _migrate(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.execute("CREATE TABLE IF NOT EXISTS schema (version INTEGER NOT NULL)")
            row = self.db.execute("SELECT version FROM schema").fetchone()
            version = row[0] if row else 0
            if version > SCHEMA_VERSION:
                raise RtgateError(f"history schema {version} is newer than this rtgate ({SCHEMA_VERSION})",
                                  path=str(self.path))
            for v in range(version + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[v]:
                    self.db.execute(statement)
            if row:
                self.db.execute("UPDATE schema SET version = ?", (SCHEMA_VERSION,))
            else:
                self.db.execute("INSERT INTO schema (version) VALUES (?)", (SCHEMA_VERSION,))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def add_run(self, run: RunResult, platform: str, measurement: str, kernel_release: str,
                kernel_config: str | None = None, tags: Iterable[str] = (), metadata: dict[str, Any] | None = None,
                verdicts: Iterable[Verdict] = ()) -> int:
        scale = run.units_per_us()
        self.db.execute("BEGIN IMMEDIATE")
        try:
            cur = self.db.execute(
                "INSERT INTO runs (platform, measurement, kernel_release, kernel_config, tags, metadata, source, "
                "format, unit, added_at, environment) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (platform, measurement, kernel_release, kernel_config, json.dumps(sorted(tags)),
                 json.dumps(metadata or {}, sort_keys=True), run.source, run.format, run.unit, time.time(),
                 json.dumps(run.environment, default=str)))
            run_id = int(cur.lastrowid or 0)
            for t in run.threads:
                p99 = p999 = None
                hist = None
                if t.histogram is not None:
                    v, over = t.histogram.percentile(99.0, t.max)
                    p99 = None if v is None or over else v / scale
                    v, over = t.histogram.percentile(99.9, t.max)
                    p999 = None if v is None or over else v / scale
                    hist = json.dumps([[lo, hi, c] for lo, hi, c in t.histogram.buckets] +
                                      ([["overflow", t.histogram.range_end, t.histogram.overflow]]
                                       if t.histogram.overflow else []))
                bm = None
                if t.block_maxima is not None:
                    bm = json.dumps({"block_seconds": t.block_maxima.block_seconds, "values": t.block_maxima.values})
                self.db.execute(
                    "INSERT INTO threads VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (run_id, _thread_id(t), t.index, t.cpu, t.priority, t.cycles, t.missed,
                     None if t.min is None else t.min / scale, None if t.avg is None else t.avg / scale,
                     None if t.max is None else t.max / scale, p99, p999, hist, bm))
            for v in verdicts:
                self.db.execute("INSERT INTO verdicts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                (run_id, v.gate, v.thread, v.status.value, v.value, v.limit, v.bound, v.samples,
                                 v.reason))
            self.db.execute("COMMIT")
            return run_id
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def releases(self, platform: str, measurement: str) -> list[str]:
        """Releases in the order they were first added."""
        rows = self.db.execute("SELECT kernel_release, MIN(id) FROM runs WHERE platform = ? AND measurement = ? "
                               "GROUP BY kernel_release ORDER BY MIN(id)", (platform, measurement)).fetchall()
        return [r[0] for r in rows]

    def measurements(self, platform: str) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT DISTINCT measurement FROM runs WHERE platform = ?",
                                              (platform,))]

    def threads(self, platform: str, measurement: str, release: str) -> list[StoredThread]:
        rows = self.db.execute(
            "SELECT t.run_id, r.kernel_release, t.thread, t.cycles, t.missed, t.min, t.avg, t.max, t.p99, t.p999, "
            "t.histogram FROM threads t JOIN runs r ON r.id = t.run_id "
            "WHERE r.platform = ? AND r.measurement = ? AND r.kernel_release = ? ORDER BY t.run_id, t.idx",
            (platform, measurement, release)).fetchall()
        return [StoredThread(run_id=r[0], kernel_release=r[1], thread=r[2], cycles=r[3], missed=r[4],
                             figures={"min": r[5], "avg": r[6], "max": r[7], "p99": r[8], "p99.9": r[9]},
                             histogram=json.loads(r[10]) if r[10] else None) for r in rows]

    def count_runs(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
