# SPDX-License-Identifier: GPL-2.0-or-later
"""The history on a real PostgreSQL server: a private throwaway cluster started by the test (never
the system cluster), the same schema and answers as SQLite, concurrent writers on both."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from conftest import RT_TESTS
from history_sim import synthetic_run
from pg_cluster import available, free_port, fresh_database, private_postgres
from rtgate.history.compare import Settings, compare
from rtgate.history.figures import per_release_values
from rtgate.history.store import HistoryDB


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    if not available():
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL 15 is required in CI: scripts/bootstrap installs postgresql-15")
        pytest.skip("PostgreSQL 15 not installed")
    pytest.importorskip("psycopg")
    with private_postgres() as url:
        yield url


def rtgate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rtgate", *args], capture_output=True, text=True, cwd=cwd)


def test_cli_on_postgres_matches_sqlite(pg_url: str, tmp_path: Path) -> None:
    url = fresh_database(pg_url, "cli")
    outputs = []
    for db in (url, str(tmp_path / "h.db")):
        for release in ("6.1", "6.2"):
            for name in ("ct-24-S-h300.json", "ct-new-S-h300.json", "ct-24-S-h300.json", "ct-new-t2-H200.json"):
                r = rtgate(
                    "history",
                    "add",
                    "--db",
                    db,
                    "--platform",
                    "vm",
                    "--kernel-release",
                    release,
                    "--force-label",
                    "--pair-id",
                    name + release[-1],
                    f"smp={RT_TESTS / name}",
                    cwd=tmp_path,
                )
                assert r.returncode == 0, r.stderr
        r = rtgate(
            "history",
            "compare",
            "--db",
            db,
            "--platform",
            "vm",
            "--base",
            "6.1",
            "--new",
            "6.2",
            "--metric",
            "tail",
            "--metric",
            "p99.9",
            "--json",
            "c.json",
            cwd=tmp_path,
        )
        # t0 and t1 (the unpinned -t 2 run) have one run each: too few for their own test.
        assert r.returncode == 3 and "NOT ENOUGH DATA" in r.stdout, r.stdout + r.stderr
        doc = json.loads((tmp_path / "c.json").read_text())
        outputs.append([(c["metric"], c["thread"], c["decision"], c["p_worse"]) for c in doc["comparisons"]])
        r = rtgate("history", "trend", "--db", db, "--platform", "vm", "--metric", "p99.9", cwd=tmp_path)
        assert r.returncode == 0 and "6.2" in r.stdout
    assert outputs[0] == outputs[1]  # one schema, one answer


def test_postgres_compare_finds_a_regression_and_says_censored(pg_url: str) -> None:
    url = fresh_database(pg_url, "censored")
    rng = np.random.default_rng(5)
    with HistoryDB(url) as db:
        assert db.dialect == "postgresql"
        for _ in range(6):
            db.add_run(synthetic_run(rng, 1.0, 3000, histogram_limit=100), "b", "m", "old")
            db.add_run(synthetic_run(rng, 3.0, 3000, histogram_limit=100), "b", "m", "new")
        out = compare(db, "b", "m", "old", "new", Settings(metrics=["tail", "p99.9"]))
    found = {(c.metric, c.thread): c for c in out.comparisons}
    assert next(c for c in out.comparisons if c.metric == "tail").decision == "regression"
    assert found[("p99.9", "worst")].censored[1] > 0


def test_trend_reads_on_postgres_match_sqlite(pg_url: str, tmp_path: Path) -> None:
    """Trend's aggregate and bounded reads (GROUP BY in the server, histograms only of runs whose
    percentile is in an overflow) answer on PostgreSQL as on SQLite, for every figure."""
    from rtgate.core.gates import Verdict
    from rtgate.core.status import Status

    bad = [Verdict("m", "g", "max", "worst", Status.ERROR, "results have no max")]
    rng = np.random.default_rng(9)
    runs = [synthetic_run(rng, samples=3000, histogram_limit=60 if i % 2 else None) for i in range(12)]
    answers = []
    for target in (fresh_database(pg_url, "trend"), str(tmp_path / "h.db")):
        with HistoryDB(target) as db:
            for i, run in enumerate(runs):
                db.add_run(run, "b", "m", f"r{i // 4}", verdicts=bad if i == 5 else ())
            answers.append([per_release_values(db, "b", "m", m) for m in ("max", "avg", "p99", "p99.9", "above_40")])
    assert answers[0] == answers[1]
    assert [len(v) for v in answers[0][0].values()] == [4, 3, 4]


WRITER = """
import sys
sys.path.insert(0, sys.argv[3])
import numpy as np
from history_sim import synthetic_run
from pg_cluster import available, free_port, fresh_database, private_postgres
from rtgate.history.store import HistoryDB
rng = np.random.default_rng(int(sys.argv[2]))
with HistoryDB(sys.argv[1]) as db:
    for i in range(int(sys.argv[4])):
        db.add_run(synthetic_run(rng, samples=2000), "board", "smp", "r" + sys.argv[2])
"""


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_concurrent_writers_all_land(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Four writers at once, the schema created by whichever comes first: every run lands whole."""
    target = (
        str(tmp_path / "h.db") if backend == "sqlite" else fresh_database(request.getfixturevalue("pg_url"), "writers")
    )
    here = str(Path(__file__).resolve().parents[1])  # tests/: history_sim
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, target, str(i), here, "10"], stderr=subprocess.PIPE, text=True)
        for i in range(4)
    ]
    for w in writers:
        assert w.wait(timeout=600) == 0, w.stderr.read() if w.stderr else ""
    with HistoryDB(target) as db:
        assert db.count_runs() == 40
        assert sorted(db.releases("board", "smp")) == ["r0", "r1", "r2", "r3"]
        orphans = db.db.execute("SELECT COUNT(*) FROM runs WHERE id NOT IN (SELECT run_id FROM threads)").fetchone()
        partial = db.db.execute(
            "SELECT COUNT(*) FROM (SELECT run_id FROM threads GROUP BY run_id HAVING COUNT(*) != 2) AS x"
        ).fetchone()
        assert orphans[0] == 0 and partial[0] == 0


def test_unreachable_postgres_is_a_clean_error(tmp_path: Path) -> None:
    r = rtgate(
        "history",
        "trend",
        "--db",
        f"postgresql://nobody:secret@127.0.0.1:{free_port()}/x",
        "--platform",
        "p",
        cwd=tmp_path,
    )
    assert r.returncode == 2 and "cannot connect" in r.stderr and "secret" not in r.stderr
    assert "Traceback" not in r.stderr


def test_bisect_steps_on_postgres_match_sqlite(pg_url: str, tmp_path: Path) -> None:
    """history bisect's decisions (schema 4's table) are stored and marked by trend alike on both
    backends: a x4 candidate against its baseline, in interleaved pairs."""
    outputs = []
    for target in (fresh_database(pg_url, "bisect"), str(tmp_path / "h.db")):
        rng = np.random.default_rng(48)
        with HistoryDB(target) as db:
            for i in range(12):
                db.add_run(synthetic_run(rng, samples=2000, threads=1), "b", "m", "good", pair_id=f"p{i}")
                db.add_run(synthetic_run(rng, 4.0, samples=2000, threads=1), "b", "m", "c1", pair_id=f"p{i}")
        args = ["--db", target, "--platform", "b", "--base", "good", "--new", "c1", "--paired"]
        r = rtgate("history", "bisect", *args, "--metric", "p99", "--worse-by", "1.5", "--error", "0.05", cwd=tmp_path)
        assert r.returncode == 1 and "BAD" in r.stdout, r.stdout + r.stderr
        trend = rtgate("history", "trend", "--db", target, "--platform", "b", "--metric", "p99", cwd=tmp_path)
        assert trend.returncode == 0, trend.stderr
        outputs.append((r.stdout.replace(target, "DB"), trend.stdout))
    assert outputs[0] == outputs[1]
    assert any(line.startswith("c1") and "BAD after" in line for line in outputs[0][1].splitlines())
