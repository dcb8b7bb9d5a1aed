# SPDX-License-Identifier: GPL-2.0-or-later
"""What a release comparison answers: a verdict, the change with its interval, the resolving
power; five pairs can show a regression; only valid runs; the word and the sign agree; the
release label comes from the data; machines are not mixed. Known answers from seeded runs."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from history_sim import latencies, run_result
from rtgate.core.gates import Verdict
from rtgate.core.status import Status
from rtgate.errors import RtgateError
from rtgate.history.compare import (
    IMPROVEMENT,
    NOT_COMPARABLE,
    NOT_ENOUGH,
    REGRESSION,
    UNDETECTED,
    Settings,
    compare,
    latest_verdict,
    summary,
)
from rtgate.history.record import release_label
from rtgate.history.store import HistoryDB


def _run(rng: np.random.Generator, scale: float, host: float = 1.0, env: dict | None = None):  # type: ignore[no-untyped-def]
    return run_result([latencies(rng, 4000, host, scale) for _ in range(2)], environment=env)


def _env(kernel: str = "6.12", cpu: str = "Cortex-A53", load: float = 0.2) -> dict:
    return {
        "system": {"kernel_release": kernel, "cpu_model": cpu, "cpu_count": 2, "loadavg": [load] * 3},
        "loadavg_after": [load] * 3,
    }


def test_five_pairs_can_show_a_regression(tmp_path: Path) -> None:
    """Five interleaved pairs where the new kernel makes every latency x1.3 (both runs of a pair
    see the same host): max and p99.9 rise in every pair, and the exact sign-flip test gives
    p = 1/32 for both together, below alpha 0.05 one-sided: REGRESSION, with size and interval."""
    rng = np.random.default_rng(11)
    with HistoryDB(tmp_path / "h.db") as db:
        for i in range(5):
            values = latencies(rng, 20000, float(np.exp(rng.uniform(0, 1))), 1.0)
            db.add_run(run_result([values]), "b", "m", "old", pair_id=f"p{i}")
            db.add_run(run_result([values * 1.3]), "b", "m", "new", pair_id=f"p{i}")
        out = compare(db, "b", "m", "old", "new", Settings(), paired=True)
    for c in out.comparisons:
        assert c.decision == REGRESSION, summary(c)
        assert c.p_worse == pytest.approx(1 / 32)
        assert c.change is not None and c.change > 0 and c.interval is not None and c.unit == "us"
        assert "5 pairs" in summary(c) and "95 % interval" in summary(c)


def test_five_pairs_can_show_a_regression_on_each_thread(tmp_path: Path) -> None:
    """Two threads, five pairs, every latency x1.3: the worst line and each thread's line, for max
    and p99.9, are one family of six; min-P follows their correlation, so each still gets 1/32."""
    rng = np.random.default_rng(21)
    with HistoryDB(tmp_path / "h.db") as db:
        for i in range(5):
            host = float(np.exp(rng.uniform(0, 1)))
            values = [latencies(rng, 20000, host, 1.0) for _ in range(2)]
            db.add_run(run_result(values), "b", "m", "old", pair_id=f"p{i}")
            db.add_run(run_result([v * 1.3 for v in values]), "b", "m", "new", pair_id=f"p{i}")
        out = compare(db, "b", "m", "old", "new", Settings(), paired=True)
    lines = [(c.metric, c.thread) for c in out.comparisons]
    assert len(lines) == 6 and lines[0] == ("max", "worst") and lines[3] == ("p99.9", "worst"), lines
    assert {t for _, t in lines} - {"worst"} and len({t for _, t in lines}) == 3
    for c in out.comparisons:
        assert c.decision == REGRESSION and c.p_worse == pytest.approx(1 / 32), summary(c)


def test_a_thread_that_regresses_under_a_worse_one_is_found(tmp_path: Path) -> None:
    """Thread 0 goes from ~20 to ~60 us while thread 1 stays the worst at ~200 us: the worst
    line sees nothing, thread 0's line says REGRESSION, and the plot title says so too."""
    rng = np.random.default_rng(22)
    with HistoryDB(tmp_path / "h.db") as db:
        for release, scale in (("old", 1.0), ("new", 3.0)):
            for _ in range(6):
                quiet = 14.0 + rng.gamma(2.0, 1.0, 5000)
                db.add_run(run_result([quiet * scale, 180.0 + rng.gamma(4.0, 3.0, 5000)]), "b", "m", release)
        out = compare(db, "b", "m", "old", "new", Settings(metrics=["max"]))
    by = {c.thread: c for c in out.comparisons}
    assert by["worst"].decision == UNDETECTED, summary(by["worst"])
    regressed = [c for t, c in by.items() if t != "worst" and c.decision == REGRESSION]
    assert len(regressed) == 1 and regressed[0].change is not None and regressed[0].change > 20
    assert f"(REGRESSION on {regressed[0].thread})" in (latest_verdict(out, "max", "old", "new") or "")


def test_a_thread_with_too_few_runs_says_not_enough(tmp_path: Path) -> None:
    """A second thread only in one run of each release: its line is NOT ENOUGH DATA and says the
    smallest design that could decide; the worst line and the shared thread are still tested."""
    rng = np.random.default_rng(23)
    with HistoryDB(tmp_path / "h.db") as db:
        for release in ("a", "b"):
            for i in range(6):
                n = 2 if i == 0 else 1
                db.add_run(run_result([latencies(rng, 3000, 1.0) for _ in range(n)]), "b", "m", release)
        out = compare(db, "b", "m", "a", "b", Settings(metrics=["max"]))
    lines = {c.thread: c for c in out.comparisons}
    assert len(lines) == 3
    short = [c for c in lines.values() if len(c.base) == 1]
    assert len(short) == 1 and short[0].decision == NOT_ENOUGH
    assert "runs to decide: at least 4 per release" in summary(short[0]), summary(short[0])
    assert all(c.decision == UNDETECTED for c in lines.values() if c is not short[0])


def test_too_few_says_how_many_would_decide(tmp_path: Path) -> None:
    """3 vs 3 runs: no exact test can go below 1/20 = alpha: NOT ENOUGH DATA, and the runs needed."""
    rng = np.random.default_rng(12)
    with HistoryDB(tmp_path / "h.db") as db:
        for _ in range(3):
            db.add_run(_run(rng, 1.0), "b", "m", "a")
            db.add_run(_run(rng, 1.4), "b", "m", "b")
        out = compare(db, "b", "m", "a", "b", Settings())
    for c in out.comparisons:
        assert c.decision == NOT_ENOUGH and c.runs_needed is not None and c.runs_needed >= 4, summary(c)
        assert f"runs to decide: {c.runs_needed} per release" in summary(c)


def test_nothing_found_says_what_could_have_been(tmp_path: Path) -> None:
    rng = np.random.default_rng(13)
    with HistoryDB(tmp_path / "h.db") as db:
        for _ in range(6):
            db.add_run(_run(rng, 1.0), "b", "m", "a")
            db.add_run(_run(rng, 1.0), "b", "m", "b")
        out = compare(db, "b", "m", "a", "b", Settings())
    for c in out.comparisons:
        assert c.decision == UNDETECTED, summary(c)
        assert c.detectable is not None and c.detectable > 0
        assert "would have been found with 80 % power at 6 vs 6 runs" in summary(c)
        assert "NO CHANGE" not in c.decision.upper().replace("NO DETECTABLE CHANGE", "")


@pytest.mark.parametrize("paired", [False, True])
def test_word_and_sign_agree_over_random_aa_splits(tmp_path: Path, paired: bool) -> None:
    """30 runs of one kernel split at random into two 'releases' 40 times: whatever is said,
    REGRESSION comes with a positive change and IMPROVEMENT with a negative one."""
    rng = np.random.default_rng(14)
    with HistoryDB(tmp_path / "h.db") as db:
        runs = [run_result([latencies(rng, 3000, float(np.exp(rng.standard_normal())), 1.0)]) for _ in range(16)]
        split = random.Random(5)
        flagged = 0
        for k in range(40):
            order = split.sample(range(16), 16)
            for j, i in enumerate(order):
                db.add_run(runs[i], "b", f"m{k}", "a" if j < 8 else "b", pair_id=f"p{j % 8}")
            out = compare(db, "b", f"m{k}", "a", "b", Settings(metrics=["max", "p99.9", "avg"]), paired=paired)
            for c in out.comparisons:
                if c.decision == REGRESSION:
                    assert c.change > 0 and (c.effect or 0) > 0, summary(c)
                    flagged += 1
                if c.decision == IMPROVEMENT:
                    assert c.change < 0 and (c.effect or 0) < 0, summary(c)
                    flagged += 1
    assert flagged <= 6  # 40 splits x 2 directions at alpha 0.05: about 4 expected


def test_error_runs_are_left_out_and_counted(tmp_path: Path) -> None:
    rng = np.random.default_rng(15)
    bad = Verdict("m", "g", "max", "worst", Status.ERROR, "results have no max")
    with HistoryDB(tmp_path / "h.db") as db:
        for _ in range(5):
            db.add_run(_run(rng, 1.0), "b", "m", "a")
            db.add_run(_run(rng, 1.0), "b", "m", "b")
        for _ in range(3):  # invalid measurements with huge figures: would read as a regression
            db.add_run(_run(rng, 50.0), "b", "m", "b", verdicts=[bad])
        out = compare(db, "b", "m", "a", "b", Settings())
    assert out.excluded == {"a": 0, "b": 3} and out.n_runs == {"a": 5, "b": 5}
    assert any("3 run(s) of b left out" in n for n in out.notes)
    assert all(len(c.new) == 5 and c.decision != REGRESSION for c in out.comparisons)


def test_machines_that_differ_are_not_compared(tmp_path: Path) -> None:
    rng = np.random.default_rng(16)
    with HistoryDB(tmp_path / "h.db") as db:
        for _ in range(5):
            db.add_run(_run(rng, 1.0, env=_env(cpu="Cortex-A53")), "b", "m", "a")
            db.add_run(_run(rng, 2.0, env=_env(cpu="Cortex-A72")), "b", "m", "b")
        out = compare(db, "b", "m", "a", "b", Settings())
    assert out.refused and "cpu_model: Cortex-A53 (base) vs Cortex-A72 (new)" in out.machines[0]
    assert all(c.decision == NOT_COMPARABLE and "different machines" in summary(c) for c in out.comparisons)


def test_environment_unknown_is_said(tmp_path: Path) -> None:
    rng = np.random.default_rng(17)
    with HistoryDB(tmp_path / "h.db") as db:
        for _ in range(4):
            db.add_run(_run(rng, 1.0), "b", "m", "a")
            db.add_run(_run(rng, 1.0, env=_env()), "b", "m", "b")
        out = compare(db, "b", "m", "a", "b", Settings())
    assert any(n.startswith("environment unknown for 4 run(s) of a") for n in out.notes)
    assert not any("of b" in n and "environment unknown" in n for n in out.notes)


def test_relative_load_drift_on_a_busy_host(tmp_path: Path) -> None:
    """Load 3.5 per CPU, then 4.0: a small absolute step on a busy host, 12.5 % relative: drift."""
    rng = np.random.default_rng(18)
    with HistoryDB(tmp_path / "h.db") as db:
        for _ in range(4):
            db.add_run(_run(rng, 1.0, env=_env(load=7.0)), "b", "m", "a")
            db.add_run(_run(rng, 1.0, env=_env(load=8.0)), "b", "m", "b")
            db.add_run(_run(rng, 1.0, env=_env(load=7.2)), "b", "m", "c")
        drifted = compare(db, "b", "m", "a", "b", Settings())
        steady = compare(db, "b", "m", "a", "c", Settings())
    assert any(d.startswith("load_per_cpu") for d in drifted.drift), drifted.drift
    assert not steady.drift


def test_release_label_comes_from_the_data() -> None:
    rng = np.random.default_rng(19)
    run = _run(rng, 1.0, env=_env(kernel="6.18.44"))
    assert release_label(run, None) == "6.18.44"
    assert release_label(run, "6.18.44") == "6.18.44"
    with pytest.raises(RtgateError, match=r"contradicts the kernel the results recorded \(6.18.44\)"):
        release_label(run, "6.6.52-rt43")
    assert release_label(run, "6.6.52-rt43", force=True) == "6.6.52-rt43"
    bare = _run(rng, 1.0)
    assert release_label(bare, "mine") == "mine"
    with pytest.raises(RtgateError, match="do not say the kernel release"):
        release_label(bare, None)


def test_paired_tail_with_a_run_missing_a_thread(tmp_path: Path) -> None:
    """Six interleaved pairs, every latency x3 in the new release; one new run lost its second
    thread. That pair is no evidence in the thread's own tail cell (it stopped compare with a
    KeyError): the tail family still finds the regression."""
    rng = np.random.default_rng(21)
    with HistoryDB(tmp_path / "h.db") as db:
        for i in range(6):
            values = [latencies(rng, 4000, 1.0) for _ in range(2)]
            db.add_run(run_result(values), "b", "m", "old", pair_id=f"p{i}")
            db.add_run(run_result([v * 3 for v in values[: 1 if i == 2 else 2]]), "b", "m", "new", pair_id=f"p{i}")
        out = compare(db, "b", "m", "old", "new", Settings(metrics=["tail"]), paired=True)
    (tail,) = out.comparisons
    assert tail.metric == "tail" and tail.paired and len(tail.new) == 6
    assert tail.decision == REGRESSION, summary(tail)
