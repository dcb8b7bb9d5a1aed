# SPDX-License-Identifier: GPL-2.0-or-later
"""The history at scale: compare and trend read only what their answer needs (histograms only
where a figure needs one, every release in one query) and every query is an index search, so
their cost follows the runs shown, not the store's size; the answers are those of a full read.
Timings: benchmarks/history_scale.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from history_sim import latencies, run_result
from rtgate.core.gates import Verdict
from rtgate.core.status import Status
from rtgate.history import compare as compare_module
from rtgate.history.compare import Settings, compare
from rtgate.history.figures import per_release_values, run_values, trend
from rtgate.history.store import HistoryDB

METRICS = ("max", "avg", "min", "p99", "p99.9", "above_30")


def _store(path: Path) -> HistoryDB:
    """Three releases of five 2-thread runs: every other run an rt-tests -h 40 histogram whose
    overflow holds its p99.9 (a bound, read from the histogram), one run of b judged ERROR."""
    rng = np.random.default_rng(32)
    bad = Verdict("m", "g", "max", "worst", Status.ERROR, "results have no max")
    db = HistoryDB(path)
    for release, scale in (("a", 1.0), ("b", 1.5), ("c", 1.0)):
        for i in range(5):
            run = run_result([latencies(rng, 3000, 3.0, scale) for _ in range(2)], 40 if i % 2 else None)
            db.add_run(run, "board", "m", release, verdicts=[bad] if (release, i) == ("b", 2) else [])
        db.add_run(run_result([latencies(rng, 3000, 1.0)]), "other", "m", release)  # another board
    return db


def _full_read(db: HistoryDB, metric: str) -> dict[str, list[float]]:
    """Per release, the figure of each valid run from every stored histogram, one release at a time."""
    out = {}
    for release in db.releases("board", "m"):
        bad = db.error_runs("board", "m", release)
        threads = [t for t in db.threads("board", "m", release, "all") if t.run_id not in bad]
        out[release] = run_values(threads, metric).get("worst", [])
    return out


def test_lean_reads_give_the_answers_of_a_full_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with _store(tmp_path / "h.db") as db:
        lean = db.threads("board", "m", "a", "censored")
        censored = [t for t in lean if t.figures["p99.9"] is None]
        assert censored and all(t.histogram for t in censored)  # the bound needs the histogram
        assert any(t.histogram is None for t in lean)  # and nothing else is decoded
        assert all(t.histogram is None for t in db.threads("board", "m", None, "none"))
        for metric in METRICS:
            assert per_release_values(db, "board", "m", metric) == _full_read(db, metric), metric
        assert [r["runs"] for r in trend(db, "board", "m", "p99.9")] == [5, 4, 5]
        outcomes = []
        for read in ("lean", "all"):
            if read == "all":
                monkeypatch.setattr(compare_module, "histograms_needed", lambda metrics: "all")
            for metrics in (["max", "p99.9"], ["p99", "above_30", "tail"]):
                out = compare(db, "board", "m", "a", "b", Settings(metrics=metrics))
                outcomes.append([c.as_dict() for c in out.comparisons] + [out.notes, out.excluded])
    assert outcomes[:2] == outcomes[2:]
    assert any(c["censored"] != (0, 0) for c in outcomes[0][:-2])  # the bound path was taken


def test_every_query_of_compare_and_trend_searches_an_index(tmp_path: Path) -> None:
    """No full scan of runs, threads or verdicts: SQLite's plan for each query that compare,
    trend and the CLI's lookups make is an index search (cost by the runs read, not stored)."""
    with _store(tmp_path / "h.db") as db:
        made: list[tuple[str, tuple[Any, ...]]] = []
        execute = db.db.execute

        def recording(sql: str, params: Any = ()) -> Any:
            made.append((sql, tuple(params)))
            return execute(sql, params)

        db.db.execute = recording  # type: ignore[method-assign]
        compare(db, "board", "m", "a", "b", Settings(metrics=["max", "p99.9", "tail"]))
        compare(db, "board", "m", "a", "b", Settings(), paired=True)
        for metric in METRICS:
            trend(db, "board", "m", metric)
        db.measurements("board")
        db.db.execute = execute  # type: ignore[method-assign]
        selects = [(sql, p) for sql, p in made if sql.lstrip().upper().startswith("SELECT")]
        assert len(selects) >= 10
        for sql, params in selects:
            plan = [str(row[3]) for row in execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()]
            assert not [step for step in plan if step.startswith("SCAN")], (sql, plan)
