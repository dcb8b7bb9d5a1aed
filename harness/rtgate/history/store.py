# SPDX-License-Identifier: GPL-2.0-or-later
"""The history store: a SQLite file or a PostgreSQL database, safe with concurrent writers and
interrupted writes.

One transaction per added run (SQLite in WAL mode): a run is in the database whole or not at
all. The schema has a version and migrations, so old databases keep working."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rtgate.core.units import UNIT_SCALE
from rtgate.errors import RtgateError
from rtgate.history.backend import Backend, is_postgres_url, redacted
from rtgate.history.drift import fingerprint
from rtgate.safe_io import check_regular_or_absent

if TYPE_CHECKING:  # neither the gates nor the results model are loaded to read the history (compare, trend)
    from rtgate.core.gates import Verdict
    from rtgate.core.model import RunResult, ThreadResult

SCHEMA_VERSION = 4
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
    2: [  # interleaved A/B pairs, and the environment fingerprint of the drift guard
        "ALTER TABLE runs ADD COLUMN pair_id TEXT",
        "ALTER TABLE runs ADD COLUMN fingerprint TEXT",
        "CREATE INDEX runs_by_pair ON runs (platform, measurement, pair_id)",
    ],
    3: [  # comparisons leave out runs with an ERROR verdict: found per run, not by a scan
        "CREATE INDEX verdicts_by_run ON verdicts (run_id, status)",
    ],
    4: [  # `history bisect` records each step's decision: `trend` marks the commits a bisection measured
        """CREATE TABLE bisect_steps (
            id INTEGER PRIMARY KEY,
            platform TEXT NOT NULL,
            measurement TEXT NOT NULL,
            kernel_release TEXT NOT NULL,
            base TEXT NOT NULL,
            criterion TEXT NOT NULL,
            decision TEXT NOT NULL,
            runs INTEGER NOT NULL,
            error REAL NOT NULL,
            decided_at REAL NOT NULL)""",
        "CREATE INDEX bisect_steps_by_release ON bisect_steps (platform, measurement, kernel_release)",
    ],
}


# The per-thread figures stored as columns of `threads`, by the name compare and trend use.
STORED_FIGURES = {"min": "min", "avg": "avg", "max": "max", "p99": "p99", "p99.9": "p999"}


@dataclass
class StoredThread:
    run_id: int
    kernel_release: str
    thread: str
    cycles: int
    missed: int | None
    figures: dict[str, float | None]  # min, avg, max, p99, p99.9 in us (None: unknown or in the overflow)
    histogram: list[list[Any]] | None  # [lo, hi, count] in us; ["overflow", range_end_us, count]


@dataclass
class StoredRun:
    id: int
    kernel_release: str
    pair_id: str | None
    tags: list[str]
    fingerprint: dict[str, Any]


def thread_ids(threads: list[ThreadResult], planned: list[int | None] | None = None) -> list[str]:
    """Stable names for a run's threads: 'cpu1' when it is alone on CPU 1, 't0-cpu1' when it shares
    it ('-t 2 -a 1'), 't0' when not pinned. Unique within the run, the same across runs of one setup.

    planned: the CPUs the threshold file places the threads on, for results that state none (the
    gates' rule, thread_plan.named_cpu): every format of one run is stored under the same names."""
    from rtgate.core.thread_plan import thread_name

    cpus = (planned or []) + [None] * len(threads)
    base = [thread_name(t, c) for t, c in zip(threads, cpus)]
    names = [b if base.count(b) == 1 else f"t{t.index}-{b}" for b, t in zip(base, threads)]
    seen: dict[str, int] = {}
    out = []
    for n in names:  # duplicate indices in a hand-made file: still store every thread
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}#{seen[n]}")
    return out


def _hist_us(rows: list[list[Any]], per_us: int) -> list[list[Any]]:
    if per_us == 1:
        return rows
    return [
        [lo, hi / per_us, c] if lo == "overflow" else [lo / per_us, None if hi is None else hi / per_us, c]
        for lo, hi, c in rows
    ]


def _release_filter(platform: str, measurement: str, release: str | None) -> tuple[str, tuple[str, ...]]:
    """The WHERE clause over runs `r` of one release, or of every release: both use runs_by_release."""
    if release is None:
        return "r.platform = ? AND r.measurement = ?", (platform, measurement)
    return "r.platform = ? AND r.measurement = ? AND r.kernel_release = ?", (platform, measurement, release)


class HistoryDB:
    """`target`: a SQLite file name, or a postgresql://user@host:port/dbname URL."""

    def __init__(self, target: str | Path) -> None:
        self.path = str(target)
        if not is_postgres_url(self.path):
            check_regular_or_absent(Path(self.path))  # sqlite3 would open /dev/full or a FIFO as its database
        self.db = Backend(self.path)
        try:
            self._migrate()
        except self.db.errors as e:
            self.db.close()
            raise RtgateError(f"not a usable history database: {e}", path=redacted(self.path)) from e

    @property
    def dialect(self) -> str:
        return self.db.dialect

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> HistoryDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _current(self) -> bool:
        """The schema is this rtgate's: nothing to create or migrate, so no write and no lock
        (compare and trend only read; a store being migrated by another writer is not current)."""
        try:
            row = self.db.execute("SELECT version FROM schema").fetchone()
        except self.db.errors:
            return False  # a new store: no schema table yet
        return bool(row) and row[0] == SCHEMA_VERSION

    def _migrate(self) -> None:
        if self._current():
            return
        with self.db.transaction(lock=True):
            self.db.execute("CREATE TABLE IF NOT EXISTS schema (version INTEGER NOT NULL)")
            row = self.db.execute("SELECT version FROM schema").fetchone()
            version = row[0] if row else 0
            if version > SCHEMA_VERSION:
                raise RtgateError(
                    f"history schema {version} is newer than this rtgate ({SCHEMA_VERSION})", path=redacted(self.path)
                )
            for v in range(version + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[v]:
                    self.db.execute(self.db.ddl(statement))
            if row:
                self.db.execute("UPDATE schema SET version = ?", (SCHEMA_VERSION,))
            else:
                self.db.execute("INSERT INTO schema (version) VALUES (?)", (SCHEMA_VERSION,))

    def add_run(
        self,
        run: RunResult,
        platform: str,
        measurement: str,
        kernel_release: str,
        kernel_config: str | None = None,
        tags: Iterable[str] = (),
        metadata: dict[str, Any] | None = None,
        verdicts: Iterable[Verdict] = (),
        pair_id: str | None = None,
        planned: list[int | None] | None = None,
    ) -> int:
        from rtgate.core.recorded import recorded_environment

        scale = run.units_per_us()
        # What rtgate run recorded (machine, load, preflight), also when the results were read back from a folder.
        environment = recorded_environment(run)
        rows = []
        from rtgate.core.thread_plan import naming_cpus  # the gates' names: one run, one name in every format

        named = naming_cpus(planned, run) if planned else None
        for t, name in zip(run.threads, thread_ids(run.threads, named)):
            p99 = p999 = None
            hist = None
            if t.histogram is not None:
                # Percentiles in the overflow are only bounds: kept as None here; compare derives
                # the bound from the stored histogram.
                v, over = t.histogram.percentile(99.0, t.max)
                p99 = None if v is None or over else v / scale
                v, over = t.histogram.percentile(99.9, t.max)
                p999 = None if v is None or over else v / scale
                hist = json.dumps(
                    [[lo, hi, c] for lo, hi, c in t.histogram.buckets]
                    + ([["overflow", t.histogram.range_end, t.histogram.overflow]] if t.histogram.overflow else [])
                )
            bm = None
            if t.block_maxima is not None:
                bm = json.dumps({"block_seconds": t.block_maxima.block_seconds, "values": t.block_maxima.values})
            rows.append(
                (
                    name,
                    t.index,
                    t.cpu,
                    t.priority,
                    t.cycles,
                    t.missed,
                    None if t.min is None else t.min / scale,
                    None if t.avg is None else t.avg / scale,
                    None if t.max is None else t.max / scale,
                    p99,
                    p999,
                    hist,
                    bm,
                )
            )
        try:
            with self.db.transaction():
                run_id = self.db.insert(
                    "INSERT INTO runs (platform, measurement, kernel_release, kernel_config, tags, metadata, "
                    "source, format, unit, added_at, environment, pair_id, fingerprint) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        platform,
                        measurement,
                        kernel_release,
                        kernel_config,
                        json.dumps(sorted(tags)),
                        json.dumps(metadata or {}, sort_keys=True),
                        run.source,
                        run.format,
                        run.unit,
                        time.time(),
                        json.dumps(environment, default=str),
                        pair_id,
                        json.dumps(fingerprint(environment), sort_keys=True, default=str),
                    ),
                )
                for row in rows:
                    self.db.execute(
                        "INSERT INTO threads VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (run_id,) + row
                    )
                for verdict in verdicts:
                    self.db.execute(
                        "INSERT INTO verdicts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            run_id,
                            verdict.gate,
                            verdict.thread,
                            verdict.status.value,
                            verdict.value,
                            verdict.limit,
                            verdict.bound,
                            verdict.samples,
                            verdict.reason,
                        ),
                    )
        except self.db.errors as e:
            raise RtgateError(f"could not store {run.source}: {e}", path=redacted(self.path)) from e
        return run_id

    def releases(self, platform: str, measurement: str) -> list[str]:
        """Releases in the order they were first added."""
        rows = self.db.execute(
            "SELECT kernel_release, MIN(id) FROM runs WHERE platform = ? AND measurement = ? "
            "GROUP BY kernel_release ORDER BY MIN(id)",
            (platform, measurement),
        ).fetchall()
        return [r[0] for r in rows]

    def measurements(self, platform: str) -> list[str]:
        return sorted(
            r[0]
            for r in self.db.execute("SELECT DISTINCT measurement FROM runs WHERE platform = ?", (platform,)).fetchall()
        )

    def runs(self, platform: str, measurement: str, release: str) -> list[StoredRun]:
        rows = self.db.execute(
            "SELECT id, kernel_release, pair_id, tags, fingerprint, environment FROM runs "
            "WHERE platform = ? AND measurement = ? AND kernel_release = ? ORDER BY id",
            (platform, measurement, release),
        ).fetchall()
        # Runs stored before the fingerprint existed get it from their stored environment.
        return [
            StoredRun(
                id=r[0],
                kernel_release=r[1],
                pair_id=r[2],
                tags=json.loads(r[3] or "[]"),
                fingerprint=json.loads(r[4]) if r[4] else fingerprint(json.loads(r[5] or "{}")),
            )
            for r in rows
        ]

    def threads(
        self, platform: str, measurement: str, release: str | None, histograms: str = "all"
    ) -> list[StoredThread]:
        """The threads of a release's runs (release None: of every release), in run order.

        histograms: "all"; "censored", only where a stored percentile is unknown (what compare
        needs to bound it); "none". Decoding every histogram is most of what a trend over
        thousands of runs costs, and max or p99.9 need none of them."""
        where, params = _release_filter(platform, measurement, release)
        return self._threads(where, params, histograms)

    def run_threads(self, run_ids: list[int], histograms: str = "all") -> list[StoredThread]:
        """The threads of these runs, in run order."""
        out: list[StoredThread] = []
        for i in range(0, len(run_ids), 500):  # bounded statements
            chunk = tuple(run_ids[i : i + 500])
            out += self._threads(f"r.id IN ({', '.join('?' * len(chunk))})", chunk, histograms)
        return out

    def _threads(self, where: str, params: tuple[Any, ...], histograms: str) -> list[StoredThread]:
        hist = {"all": "t.histogram", "censored": "CASE WHEN t.p99 IS NULL OR t.p999 IS NULL THEN t.histogram END"}
        rows = self.db.execute(
            "SELECT t.run_id, r.kernel_release, t.thread, t.cycles, t.missed, t.min, t.avg, t.max, t.p99, t.p999, "
            f"{hist.get(histograms, 'NULL')}, r.unit FROM threads t JOIN runs r ON r.id = t.run_id "
            f"WHERE {where} ORDER BY t.run_id, t.idx",
            params,
        ).fetchall()
        return [
            StoredThread(
                run_id=r[0],
                kernel_release=r[1],
                thread=r[2],
                cycles=r[3],
                missed=r[4],
                figures={"min": r[5], "avg": r[6], "max": r[7], "p99": r[8], "p99.9": r[9]},
                histogram=_hist_us(json.loads(r[10]), UNIT_SCALE.get(r[11], 1)) if r[10] else None,
            )
            for r in rows
        ]

    def worst_figures(self, platform: str, measurement: str, figure: str) -> list[tuple[str, int, float | None, int]]:
        """Per run of every release, in run order: (release, run id, the largest stored `figure`
        (min, avg, max, p99, p99.9) of its threads, how many threads have it unknown). One
        aggregate in the database: a trend over 10,000 runs reads 10,000 short rows."""
        column = STORED_FIGURES[figure]
        where, params = _release_filter(platform, measurement, None)
        rows = self.db.execute(
            f"SELECT r.kernel_release, t.run_id, MAX(t.{column}), COUNT(*) - COUNT(t.{column}) "
            f"FROM threads t JOIN runs r ON r.id = t.run_id WHERE {where} "
            "GROUP BY t.run_id, r.kernel_release ORDER BY t.run_id",
            params,
        ).fetchall()
        return [(r[0], int(r[1]), r[2], int(r[3])) for r in rows]

    def error_runs(self, platform: str, measurement: str, release: str | None) -> set[int]:
        """Runs a gate judged ERROR (not a valid measurement): left out of every comparison.
        release None: of every release."""
        where, params = _release_filter(platform, measurement, release)
        rows = self.db.execute(
            f"SELECT DISTINCT r.id FROM runs r JOIN verdicts v ON v.run_id = r.id WHERE {where} AND v.status = 'ERROR'",
            params,
        ).fetchall()
        return {int(r[0]) for r in rows}

    def gate_failures(self, platform: str, measurement: str, release: str, gates: list[str]) -> dict[int, bool]:
        """Per run of a release with a PASS or FAIL verdict of these gates (all when none are named):
        whether one failed. A run with only INCONCLUSIVE or ERROR verdicts of them is not in it."""
        where, params = _release_filter(platform, measurement, release)
        rows = self.db.execute(
            f"SELECT r.id, v.gate, v.status FROM runs r JOIN verdicts v ON v.run_id = r.id WHERE {where} "
            "AND v.status IN ('PASS', 'FAIL') ORDER BY r.id",
            params,
        ).fetchall()
        out: dict[int, bool] = {}
        for run, gate, status in rows:
            if not gates or gate in gates:
                out[int(run)] = out.get(int(run), False) or status == "FAIL"
        return out

    def add_bisect_step(
        self,
        platform: str,
        measurement: str,
        release: str,
        base: str,
        criterion: str,
        decision: str,
        runs: int,
        error: float,
    ) -> None:
        """One bisect step's decision on a release (a commit), against the known-good `base`."""
        try:
            with self.db.transaction():
                self.db.execute(
                    "INSERT INTO bisect_steps (platform, measurement, kernel_release, base, criterion, decision, "
                    "runs, error, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (platform, measurement, release, base, criterion, decision, runs, error, time.time()),
                )
        except self.db.errors as e:
            raise RtgateError(f"could not record the bisect step: {e}", path=redacted(self.path)) from e

    def bisect_steps(self, platform: str, measurement: str) -> dict[str, tuple[str, int, str]]:
        """Per release a bisection decided on: its latest (decision, runs, criterion)."""
        rows = self.db.execute(
            "SELECT kernel_release, decision, runs, criterion FROM bisect_steps "
            "WHERE platform = ? AND measurement = ? ORDER BY id",
            (platform, measurement),
        ).fetchall()
        return {r[0]: (str(r[1]), int(r[2]), str(r[3])) for r in rows}

    def count_runs(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0])


__all__ = ["HistoryDB", "StoredRun", "StoredThread", "is_postgres_url", "thread_ids"]
