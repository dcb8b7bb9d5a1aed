# SPDX-License-Identifier: GPL-2.0-or-later
"""History: statistics that do not flap on noise, a store that survives kills and concurrent writers."""

from __future__ import annotations

import itertools
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import IS_ROOT, RT_TESTS
from rtgate.core.model import Histogram, RunResult, ThreadResult
from rtgate.history.compare import Settings, compare_releases
from rtgate.history.figures import trend
from rtgate.history.stats import mann_whitney_greater
from rtgate.history.store import HistoryDB


def synthetic_run(rng: random.Random, tail_scale: float, samples: int = 10000) -> RunResult:
    """Two threads: a body around 10-20 us and a 1 % Pareto tail, scaled to make it heavier."""
    threads = []
    for i in range(2):
        values = Counter()
        for _ in range(samples):
            if rng.random() < 0.01:
                values[int(20 * tail_scale * rng.paretovariate(2.5))] += 1
            else:
                values[int(10 + rng.expovariate(1 / 3))] += 1
        hist = Histogram("us", [(v, v + 1, c) for v, c in sorted(values.items())])
        total = sum(v * c for v, c in values.items())
        threads.append(
            ThreadResult(
                index=i,
                cycles=samples,
                cpu=i,
                priority=80,
                min=min(values),
                max=max(values),
                avg=total / samples,
                missed=0,
                histogram=hist,
            )
        )
    return RunResult(source="synthetic", format="rtgate-json", unit="us", threads=threads)


def test_mann_whitney_known_values() -> None:
    assert mann_whitney_greater([4, 5, 6], [1, 2, 3]) == pytest.approx(1 / 20)
    assert mann_whitney_greater([1, 2, 3], [4, 5, 6]) == pytest.approx(1.0)
    assert 0.4 < mann_whitney_greater([1, 3, 5, 7], [2, 4, 6, 8]) < 0.8
    assert mann_whitney_greater([5.0] * 5, [5.0] * 5) > 0.4  # all ties: nothing to see


def test_no_flapping_on_noise_and_a_heavier_tail_is_caught(tmp_path: Path) -> None:
    rng = random.Random(2026)
    releases = [f"6.12-rt{i}" for i in range(21)]
    with HistoryDB(tmp_path / "h.db") as db:
        for release in releases:
            for _ in range(8):
                db.add_run(synthetic_run(rng, 1.0), "board", "smp", release)
        for _ in range(8):
            db.add_run(synthetic_run(rng, 1.2), "board", "smp", "6.12-rt-heavy")
        # The tail exceedance test, the figures, and the tail mass above a 40 us gate limit.
        settings = Settings(metrics=["tail", "max", "p99.9", "above_40"])
        false = 0
        for base, new in itertools.pairwise(releases):
            decisions = {c.decision for c in compare_releases(db, "board", "smp", base, new, settings)}
            assert "not enough data" not in decisions
            false += "regression" in decisions
        assert false <= 1, f"{false} of 20 same-distribution pairs flagged as regressions (> 5 %)"
        heavy = compare_releases(db, "board", "smp", releases[-1], "6.12-rt-heavy", settings)
        flagged = {(c.metric, c.thread) for c in heavy if c.decision == "regression"}
        assert ("above_40", "worst") in flagged, [c.evidence for c in heavy]
        assert ("tail", "all") in flagged, [c.evidence for c in heavy]
        rows = trend(db, "board", "smp", "p99.9")
        assert [r["release"] for r in rows] == releases + ["6.12-rt-heavy"]
        assert rows[-1]["median"] > max(r["median"] for r in rows[:-1])


def test_too_few_runs_is_said(tmp_path: Path) -> None:
    rng = random.Random(1)
    with HistoryDB(tmp_path / "h.db") as db:
        for release, n in (("a", 2), ("b", 5)):
            for _ in range(n):
                db.add_run(synthetic_run(rng, 1.0, 2000), "board", "smp", release)
        results = compare_releases(db, "board", "smp", "a", "b", Settings())
    assert {c.decision for c in results} == {"not enough data"}
    assert "at least 3" in results[0].evidence
    # What would decide it is said: the runs needed, and a change with its interval.
    assert all(c.change is not None and c.interval is not None for c in results)


WRITER = """
import os, random, sys
# this file's tier (test_history) and tests/ (conftest, which it imports)
sys.path[:0] = [sys.argv[3], os.path.dirname(sys.argv[3])]
from test_history import synthetic_run
from rtgate.history.store import HistoryDB
rng = random.Random(int(sys.argv[2]))
with HistoryDB(sys.argv[1]) as db:
    for i in range(int(sys.argv[4])):
        db.add_run(synthetic_run(rng, 1.0, 3000), "board", "smp", "r" + sys.argv[2])
        print("added", flush=True)
"""


def _check_consistent(path: Path) -> int:
    db = sqlite3.connect(str(path))
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    runs = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    orphans = db.execute("SELECT COUNT(*) FROM runs WHERE id NOT IN (SELECT run_id FROM threads)").fetchone()[0]
    partial = db.execute(
        "SELECT COUNT(*) FROM (SELECT run_id FROM threads GROUP BY run_id HAVING COUNT(*) != 2)"
    ).fetchone()[0]
    db.close()
    assert orphans == 0 and partial == 0
    return int(runs)


def test_a_killed_writer_leaves_a_consistent_database(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    here = str(Path(__file__).resolve().parent)
    p = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), "1", here, "100000"], stdout=subprocess.PIPE, text=True
    )
    assert p.stdout is not None
    for _ in range(5):
        p.stdout.readline()
    time.sleep(random.Random(7).uniform(0.0, 0.2))
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert _check_consistent(path) >= 5
    with HistoryDB(path) as db:  # and it still takes new runs
        db.add_run(synthetic_run(random.Random(3), 1.0, 1000), "board", "smp", "after")


def test_two_concurrent_writers_both_land(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    here = str(Path(__file__).resolve().parent)
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(i), here, "15"], stdout=subprocess.DEVNULL)
        for i in (1, 2)
    ]
    assert all(w.wait(timeout=300) == 0 for w in writers)
    assert _check_consistent(path) == 30
    with HistoryDB(path) as db:
        assert sorted(db.releases("board", "smp")) == ["r1", "r2"]


def rtgate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rtgate", *args], capture_output=True, text=True, cwd=cwd)


def test_cli_add_compare_trend_with_real_results(tmp_path: Path) -> None:
    for release in ("6.1", "6.2"):
        for name in ("ct-24-S-h300.json", "ct-new-S-h300.json", "ct-24-S-h300.json", "ct-new-S-h300.json"):
            r = rtgate(
                "history",
                "add",
                "--platform",
                "vm",
                "--kernel-release",
                release,
                "--force-label",
                "--tag",
                "ci",
                "--meta",
                "board=vm1",
                f"smp={RT_TESTS / name}",
                cwd=tmp_path,
            )
            assert r.returncode == 0, r.stderr
    r = rtgate(
        "history", "compare", "--platform", "vm", "--base", "6.1", "--new", "6.2", "--json", "c.json", cwd=tmp_path
    )
    assert r.returncode == 0, r.stdout + r.stderr  # the same runs: nothing detected, and never "no change"
    assert "NO CHANGE" not in r.stdout.replace("NO DETECTABLE CHANGE", "")
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["comparisons"] and all(c["decision"] == "no detectable change" for c in doc["comparisons"])
    assert all(c["change"] == 0 and c["detectable"] is not None for c in doc["comparisons"])
    r = rtgate("history", "trend", "--platform", "vm", "--metric", "max", "--plot", "trend.png", cwd=tmp_path)
    assert r.returncode == 0 and "6.1" in r.stdout and "6.2" in r.stdout
    import matplotlib.image as mpimg

    assert mpimg.imread(str(tmp_path / "trend.png")).shape[1] > 400
    r = rtgate("history", "compare", "--platform", "vm", "--base", "6.1", "--new", "7.0", cwd=tmp_path)
    assert r.returncode == 3 and "NOT ENOUGH DATA" in r.stdout
    r = rtgate("history", "add", "--platform", "vm", str(RT_TESTS / "ct-24-verbose.stdout"), cwd=tmp_path)
    assert r.returncode == 2 and "kernel release" in r.stderr


@pytest.mark.skipif(not IS_ROOT, reason="needs root for SCHED_FIFO")
def test_run_adds_to_the_history(tmp_path: Path) -> None:
    spec = tmp_path / "t.yaml"
    spec.write_text(
        "platform: hist\nhistory: {min_runs: 2, metrics: [max]}\nmeasurements:\n  m:\n"
        "    sampler: {duration: 1s, threads: [{name: a, count: 1}]}\n"
        "    gates: [{name: g, kind: miss_rate, above_us: 1000000, rate: 50%}]\n"
    )
    for _ in range(2):
        r = rtgate("run", str(spec), "--history", "h.db", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    with HistoryDB(tmp_path / "h.db") as db:
        assert db.releases("hist", "m") == [os.uname().release] and db.count_runs() == 2
    r = rtgate(
        "history",
        "compare",
        "--db",
        "h.db",
        "--thresholds",
        str(spec),
        "--base",
        os.uname().release,
        "--new",
        os.uname().release,
        cwd=tmp_path,
    )
    # Two runs each: no exact test can reach alpha, and compare says so instead of "no change".
    assert r.returncode == 3 and "NOT ENOUGH DATA" in r.stdout and "can be below 0.167" in r.stdout, r.stdout
