# SPDX-License-Identifier: GPL-2.0-or-later
"""history bisect (issue 48): the sequential decision's error rates on simulated data of known
answer, and the command's exit codes as git bisect run reads them, in-process."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from history_sim import synthetic_run
from in_process import rtgate
from rtgate.errors import RtgateError
from rtgate.history.bisect import BAD, GOOD, UNDECIDED, Design, decide_gate, decide_metric
from rtgate.history.store import HistoryDB

SCALE = 0.3  # log-scale noise of a run's figure


def _figures(rng: np.random.Generator, n: int, factor: float = 1.0, skewed: bool = False) -> list[float]:
    """Per-run figures: t(3) noise on the log scale, or (skewed) a run-to-run host level that is
    lognormal with one run in ten stalled x5: the test assumes no shape."""
    if skewed:
        level = np.exp(0.5 * rng.standard_normal(n)) * np.where(rng.random(n) < 0.1, 5.0, 1.0)
        return list(100.0 * factor * level)
    return list(100.0 * factor * np.exp(SCALE * rng.standard_t(3, n)))


def _paired_step(rng: np.random.Generator, factor: float, design: Design, skewed: bool = False) -> tuple[str, int]:
    """One step on pairs measured ahead: the test stops at its first decision, as it would have
    stopped the wrapper after that pair."""
    pairs = list(zip(_figures(rng, design.max_runs, 1.0, skewed), _figures(rng, design.max_runs, factor, skewed)))
    step = decide_metric([], [], design, "p99.9", pairs)
    return step.decision, step.runs


@pytest.mark.parametrize("skewed", [False, True], ids=["t3", "skewed"])
@pytest.mark.parametrize("factor,wrong", [(1.0, BAD), (2.0, GOOD)])
def test_wrong_decisions_stay_within_the_error_asked(factor: float, wrong: str, skewed: bool) -> None:
    """Known answer: 300 steps on a good commit (x1) and on one exactly at the declared factor
    (x2), under two noises of different shape; wrong decisions at most --error 0.05 (plus 2.5
    standard errors of 300 steps)."""
    rng = np.random.default_rng(48)
    design = Design(error=0.05, max_runs=400, worse_by=2.0)
    answers = [_paired_step(rng, factor, design, skewed)[0] for _ in range(300)]
    assert answers.count(wrong) / 300 <= 0.05 + 2.5 * math.sqrt(0.05 * 0.95 / 300)
    assert answers.count(UNDECIDED) == 0


def test_a_large_regression_decides_in_fewer_runs_than_one_at_the_threshold() -> None:
    rng = np.random.default_rng(3)
    design = Design(error=0.05, max_runs=400, worse_by=1.5)
    large = [_paired_step(rng, 3.0, design) for _ in range(30)]
    at = [_paired_step(rng, 1.5, design) for _ in range(30)]
    assert all(d == BAD for d, _ in large)
    assert np.median([n for _, n in large]) <= 8 < np.median([n for _, n in at])


def test_unpaired_each_run_is_judged_against_a_baseline_run_of_its_own() -> None:
    rng = np.random.default_rng(5)
    base = _figures(rng, 12)
    step = decide_metric(base, _figures(rng, 12, 4.0), Design(worse_by=2.0), "p99.9")
    assert step.decision == BAD and step.runs <= 12
    out = decide_metric(base, _figures(rng, 14, 1.4), Design(worse_by=2.0), "p99.9")
    assert out.decision == UNDECIDED and out.runs == 12
    assert any("used up" in n for n in out.notes) and any("only 12 of 14 runs" in n for n in out.notes)
    assert "wrong with chance <= 0.01 each way per step; a bisection of N steps <= N x 0.01" in out.line()


def test_gates_a_failing_candidate_is_bad_and_a_failing_baseline_is_refused() -> None:
    design = Design(error=0.01)
    step = decide_gate([False] * 12, [True, True, True], design, "max")
    assert step.decision == BAD and step.runs == 3
    assert decide_gate([False] * 12, [False] * 10, design, "max").decision == GOOD
    with pytest.raises(RtgateError, match="already fails in 9 of 12 baseline runs"):
        decide_gate([True] * 9 + [False] * 3, [True], design, "max")


def _store(path: Path, new_factor: float, new_runs: int, base_runs: int = 12, seed: int = 7) -> None:
    rng = np.random.default_rng(seed)
    with HistoryDB(path) as db:
        for _ in range(base_runs):
            db.add_run(synthetic_run(rng, samples=2000, threads=1), "b", "m", "good")
        for _ in range(new_runs):
            db.add_run(synthetic_run(rng, new_factor, samples=2000, threads=1), "b", "m", "c1")


def test_cli_exit_codes_are_git_bisect_runs(tmp_path: Path) -> None:
    """A x4 commit: one run is not enough (MORE, 3; undecided at --max-runs 1: 125, skip); ten are (BAD, 1)."""
    db = tmp_path / "h.db"
    _store(db, 4.0, 1)
    args = ["history", "bisect", "--db", str(db), "--platform", "b", "--base", "good", "--new", "c1"]
    declared = ["--metric", "p99", "--worse-by", "1.5"]
    more = rtgate(*args, *declared)
    assert more.returncode == 3 and "MORE" in more.stdout, more.stdout + more.stderr
    skip = rtgate(*args, *declared, "--max-runs", "1")
    assert skip.returncode == 125 and "UNDECIDED" in skip.stdout
    _store(db, 4.0, 9, base_runs=0, seed=8)
    bad = rtgate(*args, *declared)
    assert bad.returncode == 1 and "BAD" in bad.stdout and "wrong with chance <= 0.01 each way per step" in bad.stdout
    for bad_args, message in (
        (["--metric", "p99"], "give --metric and --worse-by together"),
        (["--metric", "p99", "--worse-by", "0.9"], "--worse-by 0.9: must be a factor above 1"),
        (["--metric", "p42", "--worse-by", "2"], "--metric p42: not a per-run figure"),
        (["--metric", "p99", "--worse-by", "2", "--error", "0.7"], "--error 0.7"),
    ):
        r = rtgate(*args, *bad_args)
        assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, r.stderr
    trend = rtgate("history", "trend", "--db", str(db), "--platform", "b", "--metric", "p99")
    line = next(x for x in trend.stdout.splitlines() if x.startswith("c1"))
    assert "BAD after " in line and "run(s), p99 worse by x1.5" in line  # the latest decision
    assert not any("after" in x for x in trend.stdout.splitlines() if x.startswith("good"))


def test_cli_a_good_commit_is_good(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    _store(db, 1.0, 12)
    r = rtgate(
        *["history", "bisect", "--db", str(db), "--platform", "b", "--base", "good", "--new", "c1"],
        *["--metric", "p99", "--worse-by", "2", "--error", "0.05"],
    )
    assert r.returncode == 0 and "GOOD" in r.stdout, r.stdout + r.stderr


def test_the_documented_wrapper_is_the_shipped_one() -> None:
    """doc/history.rst prints scripts/bisect-step.sh whole: the script the live test runs."""
    from conftest import ROOT

    shipped = (ROOT / "scripts" / "bisect-step.sh").read_text()
    doc = (ROOT / "doc" / "history.rst").read_text()
    block = doc[doc.index("    #!/bin/sh\n") :]
    lines = []
    for line in block.splitlines():
        if line and not line.startswith("    "):
            break
        lines.append(line[4:])
    assert "\n".join(lines).strip() + "\n" == shipped


GATES = """\
platform: b
measurements:
  m:
    sampler: {interval_us: 1000, duration: 5s, threads: [{name: rt, cpus: [0], priority: 80}]}
    gates:
      - {name: max, kind: max, limit_us: 300}
      - {name: avg, kind: avg, limit_us: 1000}
"""


def test_cli_bad_is_a_gate_that_now_fails(tmp_path: Path) -> None:
    """Stored verdicts: the baseline passes the max gate in 11 of 12 runs, a x20 commit fails it
    in every run: BAD; the avg gate it still passes says MORE on the same runs."""
    from rtgate.core.thresholds import load_thresholds
    from rtgate.history.record import add_run

    (tmp_path / "g.yaml").write_text(GATES)
    tf = load_thresholds(str(tmp_path / "g.yaml"))
    rng = np.random.default_rng(1)
    db = str(tmp_path / "h.db")
    with HistoryDB(db) as h:
        for release, scale, n in (("good", 0.5, 12), ("c1", 20.0, 6)):
            for _ in range(n):
                add_run(h, synthetic_run(rng, scale, samples=2000, threads=1), "b", "m", tf, release, force_label=True)
    args = ["history", "bisect", "--db", db, "--thresholds", str(tmp_path / "g.yaml"), "--base", "good", "--new", "c1"]
    r = rtgate(*args)
    assert r.returncode == 1 and "BAD       a gate fails in >= 50% of runs: failed in 4 of 4 run(s)" in r.stdout, (
        r.stdout
    )
    assert "baseline failure share 0.143 (1 of 12 runs, one added)" in r.stdout
    r = rtgate(*args, "--gate", "avg")
    assert r.returncode == 3 and "MORE      avg fails in >= 50% of runs: failed in 0 of 6 run(s)" in r.stdout
    r = rtgate(*args, "--gate", "nope")
    assert r.returncode == 2 and "--gate nope: no such gate in measurement m (max, avg)" in r.stderr
