# SPDX-License-Identifier: GPL-2.0-or-later
"""Which commit: one step of a latency bisection, measured until the data decides.

`git bisect` needs one answer per commit, and a bisection of N steps multiplies every step's
error. So each step is a sequential test: after each run of the candidate the evidence is
updated, and the step answers BAD or GOOD once the evidence against the other answer reaches
1/error, MORE (another run) before, and undecided (git bisect's skip) at `max_runs`. The chance
of each wrong answer is at most `error` however many runs it takes (Ville's inequality), so a
bisection of N steps is wrong with chance at most N x error (Bonferroni).

"Bad" is declared by the user, one of:
- a metric worse by at least a factor r (`--worse-by`): per run, the metric of the worst thread,
  on a log scale, where a factor is a shift: good is a shift of 0, bad of log(r) or more. The
  test is a test by betting on the log ratio d of a candidate run to a baseline run: a good
  commit's d is symmetric about 0, a bad one's about log(r) or above, whatever the shape or the
  size of the run-to-run noise (heavy tails, a stalled run: no model is assumed):
  - paired: the runs of an interleaved pair (sharing a pair id, measured in random order); the
    host's slow drift cancels within the pair;
  - unpaired: each candidate run against a baseline run of its own, taken in a fixed shuffled
    order (seeded), each baseline run used once per step: a step has at most as many runs as
    the baseline. Exchangeable only while the host does not drift between them.
- a gate that now fails: per run, whether it failed; Wald's SPRT of the baseline's failure
  share (one failure added) against `fail_share` (a bad commit fails that share of its runs)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import median
from typing import TYPE_CHECKING, Any

from rtgate.errors import RtgateError
from rtgate.history.draws import Draws
from rtgate.history.drift import Tolerance, differences, machine_differences
from rtgate.history.figures import histograms_needed, intervals

if TYPE_CHECKING:
    from rtgate.history.store import HistoryDB, StoredRun

GOOD, BAD, MORE, UNDECIDED = "good", "bad", "more", "undecided"
MIN_BASE_RUNS = 10  # gates: below, the baseline's failure share is a guess
BET_SIZES = (0.1, 0.25, 0.5, 0.75, 0.95)  # the share of its wealth each bet stakes, mixed
SHUFFLE_SEED = 48  # unpaired: the order baseline runs are matched to candidate runs


@dataclass
class Design:
    """What the user declared: the test's settings."""

    error: float = 0.01  # per step, each way: GOOD for a bad commit, BAD for a good one
    max_runs: int = 30  # runs (or pairs) of the candidate before giving up: undecided
    worse_by: float | None = None  # metric mode: bad is worse by at least this factor
    fail_share: float = 0.5  # gate mode: a bad commit fails the gate in at least this share of runs


@dataclass
class Step:
    """One bisect step's answer, and why."""

    decision: str
    runs: int  # candidate runs (or pairs) the decision used
    against_good: float  # log of the evidence against good (BAD at +threshold)
    against_bad: float  # log of the evidence against bad (GOOD at +threshold)
    threshold: float  # log(1 / error)
    error: float
    criterion: str  # what bad means: "p99.9 worse by x1.5", "a gate fails in >= 50% of runs"
    estimate: str = ""  # what the data show: the median ratio, or the failures
    model: str = ""  # the test, and what it assumes
    notes: list[str] = field(default_factory=list)

    def bound(self) -> str:
        """The error bound printed with every decision."""
        return (
            f"wrong with chance <= {self.error:.3g} each way per step; a bisection of N steps <= N x {self.error:.3g}"
        )

    def line(self) -> str:
        head = f"{self.decision.upper():9} {self.criterion}: {self.estimate}"
        evidence = (
            f"log evidence against good {self.against_good:+.2f}, against bad {self.against_bad:+.2f} "
            f"(decides at {self.threshold:.2f})"
        )
        return f"{head}; {evidence}; {self.bound()}"

    def as_dict(self) -> dict[str, Any]:
        keys = ("decision", "runs", "against_good", "against_bad", "threshold", "error", "criterion")
        return {k: getattr(self, k) for k in keys + ("estimate", "model", "notes")} | {"bound": self.bound()}


def check_design(design: Design) -> None:
    """One-line errors for settings no test can honour."""
    if not 0 < design.error < 0.5:
        raise RtgateError(f"--error {design.error}: must be above 0 and below 0.5")
    if design.max_runs < 1:
        raise RtgateError(f"--max-runs {design.max_runs}: must be at least 1")
    if design.worse_by is not None and not (design.worse_by > 1 and math.isfinite(design.worse_by)):
        raise RtgateError(f"--worse-by {design.worse_by}: must be a factor above 1 (1.2 is 20 % worse)")
    if not 0 < design.fail_share < 1:
        raise RtgateError(f"--fail-share {design.fail_share}: must be above 0 and below 1")


def _sprt(increments: list[float], design: Design) -> tuple[str, int, float]:
    """Wald's test on per-run log likelihood ratios, in run order, to the first crossing:
    (decision, runs used, the sum): BAD at log(1/error), GOOD at -log(1/error)."""
    threshold = math.log(1 / design.error)
    total = 0.0
    for i, x in enumerate(increments[: design.max_runs], 1):
        total += x
        if total >= threshold:
            return BAD, i, total
        if total <= -threshold:
            return GOOD, i, total
    used = min(len(increments), design.max_runs)
    return (UNDECIDED if used >= design.max_runs else MORE), used, total


def _log_mean_exp(values: list[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values) / len(values))


def _bets(diffs: list[float], shift: float, threshold: float) -> tuple[str, int, float, float]:
    """Two tests by betting on the log ratios `diffs`, in order, to the first decision:
    (decision or MORE, runs used, log wealth against good, log wealth against bad).

    Against good (a ratio of 1): each run pays 1 + lambda * tanh(d / shift), a bet on d > 0 that
    wins or loses at most lambda of the wealth. A good commit's d is symmetric about 0, so every
    bet pays 1 on average whatever the noise: the wealth is a non-negative martingale, and by
    Ville's inequality it ever reaches 1/error with chance at most error. A better commit (d below
    0) only loses more. Against bad (a ratio of the factor or more), the same bet on shift - d.
    Each wealth is the mean over BET_SIZES of the wealth of that bet (a mean of martingales is
    one): no bet size needs the noise known beforehand. tanh(d / shift) weighs a run by how far
    it moves in units of the factor asked and caps a stalled run at one unit."""
    bad_w = [0.0] * len(BET_SIZES)
    good_w = [0.0] * len(BET_SIZES)
    against_good = against_bad = 0.0
    for i, d in enumerate(diffs, 1):
        up, down = math.tanh(d / shift), math.tanh((shift - d) / shift)
        bad_w = [w + math.log1p(lam * up) for w, lam in zip(bad_w, BET_SIZES)]
        good_w = [w + math.log1p(lam * down) for w, lam in zip(good_w, BET_SIZES)]
        against_good, against_bad = _log_mean_exp(bad_w), _log_mean_exp(good_w)
        if against_good >= threshold:
            return BAD, i, against_good, against_bad
        if against_bad >= threshold:
            return GOOD, i, against_good, against_bad
    return MORE, len(diffs), against_good, against_bad


def _logs(values: list[float]) -> list[float]:
    """Logarithms of the figures; a zero (a share with no sample above) floored at half the
    smallest positive figure of the step, or at 1e-9 when none is."""
    positive = [v for v in values if v > 0]
    floor = min(positive) / 2 if positive else 1e-9
    return [math.log(max(v, floor)) for v in values]


def shuffled(n: int) -> list[int]:
    """The baseline runs' order for unpaired steps: fixed for a given number of runs, so a step
    re-read after another run matches every earlier run to the same baseline run."""
    keys = [int(k) for k in Draws(SHUFFLE_SEED).words(n)] if n else []
    return sorted(range(n), key=keys.__getitem__)


def decide_metric(
    base: list[float], new: list[float], design: Design, metric: str, pairs: list[tuple[float, float]] | None = None
) -> Step:
    """The step on a metric: `base` the baseline's per-run figures, `new` the candidate's, both in
    the order measured; with `pairs`, the (baseline, candidate) figures of interleaved pairs in
    the candidate's order, judged instead."""
    assert design.worse_by is not None
    shift = math.log(design.worse_by)
    criterion = f"{metric} worse by x{design.worse_by:g}"
    threshold = math.log(1 / design.error)
    notes: list[str] = []
    if pairs is None:
        order = shuffled(len(base))
        pairs = [(base[order[i]], v) for i, v in enumerate(new[: len(base)])]
        if len(new) > len(base):
            notes.append(f"only {len(base)} of {len(new)} runs judged: each needs a baseline run of its own")
        runs = min(design.max_runs, len(base))
        model = f"each run against a baseline run of its own ({len(base)} baseline runs, matched in a seeded order)"
    else:
        runs = design.max_runs
        model = "interleaved pairs (the host's drift cancels within a pair)"
    model += "; a test by betting on log ratios, exact for any noise symmetric under no change"
    logs = _logs([v for p in pairs for v in p])
    diffs = [logs[2 * i + 1] - logs[2 * i] for i in range(len(pairs))][: design.max_runs]
    decision, used, against_good, against_bad = _bets(diffs, shift, threshold)
    if decision == MORE and used >= runs:
        decision = UNDECIDED
        if runs < design.max_runs:
            notes.append(f"the baseline's {len(base)} runs are used up: measure more of them to go on")
    ratio = f"median ratio x{math.exp(median(diffs[:used])):.3g}" if used else "no run yet"
    unit = "pair(s)" if model.startswith("interleaved") else "run(s)"
    estimate = f"{ratio} over {used} {unit}"
    return Step(decision, used, against_good, against_bad, threshold, design.error, criterion, estimate, model, notes)


def decide_gate(base_failed: list[bool], new_failed: list[bool], design: Design, gates: str) -> Step:
    """The step on gates: per run, whether a gate failed; the baseline's failure share (with one
    failure added, so a baseline that never failed is not taken to never fail) against
    `fail_share`."""
    criterion = f"{gates} fails in >= {design.fail_share:.0%} of runs"
    if len(base_failed) < MIN_BASE_RUNS:
        raise RtgateError(
            f"the baseline has {len(base_failed)} run(s) with a verdict of {gates}: give at least {MIN_BASE_RUNS}"
        )
    p0 = (sum(base_failed) + 1) / (len(base_failed) + 2)
    p1 = design.fail_share
    if p0 >= p1:
        raise RtgateError(
            f"{gates} already fails in {sum(base_failed)} of {len(base_failed)} baseline runs: a failure says "
            "nothing about the commit; declare bad as a metric (--metric M --worse-by R) or a larger --fail-share"
        )
    increments = [math.log(p1 / p0) if f else math.log((1 - p1) / (1 - p0)) for f in new_failed]
    decision, used, total = _sprt(increments, design)
    fails = sum(new_failed[:used])
    return Step(
        decision,
        used,
        total,
        -total,
        math.log(1 / design.error),
        design.error,
        criterion,
        f"failed in {fails} of {used} run(s)",
        f"Wald's SPRT: baseline failure share {p0:.3g} ({sum(base_failed)} of {len(base_failed)} runs, one added)",
    )


def metric_known(metric: str) -> bool:
    """A per-run figure the store keeps or derives: min, avg, max, p99, p99.9, above_<us>."""
    from rtgate.history.store import STORED_FIGURES

    if metric in STORED_FIGURES:
        return True
    number = metric.removeprefix("above_")
    try:
        return metric != number and float(number) > 0
    except ValueError:
        return False


@dataclass
class Evidence:
    """What the store holds for one step: the runs, and what keeps them from being compared."""

    step: Step
    drift: list[str]
    machines: list[str]
    notes: list[str]
    paired: bool


def _valid_runs(db: HistoryDB, platform: str, measurement: str, release: str, notes: list[str]) -> list[StoredRun]:
    bad = db.error_runs(platform, measurement, release)
    if bad:
        notes.append(f"{len(bad)} run(s) of {release} left out: a gate said ERROR (not a valid measurement)")
    return [r for r in db.runs(platform, measurement, release) if r.id not in bad]


def _figures(db: HistoryDB, platform: str, measurement: str, release: str, metric: str) -> dict[int, float]:
    """Per run id, the metric of its worst thread (a bound in an overflow: its lower end)."""
    threads = db.threads(platform, measurement, release, histograms_needed([metric]))
    return {run: v.lo for run, v in intervals(threads, metric)["worst"].items()}


def _paired(base_runs: list[StoredRun], new_runs: list[StoredRun]) -> list[tuple[int, int]]:
    """(base run, new run) of each pair id, in the new runs' order."""
    by_pair = {r.pair_id: r.id for r in base_runs if r.pair_id}
    return [(by_pair[r.pair_id], r.id) for r in new_runs if r.pair_id and r.pair_id in by_pair]


def run_step(
    db: HistoryDB,
    platform: str,
    measurement: str,
    base: str,
    new: str,
    design: Design,
    metric: str | None,
    gates: list[str],
    paired: bool = False,
    tolerance: Tolerance | None = None,
) -> Evidence:
    """The step from the store: the baseline's and the candidate's valid runs, in the order added,
    judged on the metric (design.worse_by) or on the named gates' verdicts."""
    notes: list[str] = []
    base_runs = _valid_runs(db, platform, measurement, base, notes)
    new_runs = _valid_runs(db, platform, measurement, new, notes)
    base_fp, new_fp = [r.fingerprint for r in base_runs], [r.fingerprint for r in new_runs]
    drift = differences(base_fp, new_fp, tolerance or Tolerance(), numeric=not paired)
    machines = machine_differences(base_fp, new_fp)
    if metric is not None:
        b, n = (_figures(db, platform, measurement, rel, metric) for rel in (base, new))
        base_values = [b[r.id] for r in base_runs if r.id in b]
        pairs = None
        if paired:
            pairs = [(b[x], n[y]) for x, y in _paired(base_runs, new_runs) if x in b and y in n]
            unpaired = len([r for r in new_runs if r.id in n]) - len(pairs)
            if unpaired:
                notes.append(f"{unpaired} run(s) of {new} without a baseline partner left out of the paired test")
        step = decide_metric(base_values, [n[r.id] for r in new_runs if r.id in n], design, metric, pairs)
    else:
        fb, fn = (db.gate_failures(platform, measurement, rel, gates) for rel in (base, new))
        named = " or ".join(gates) if gates else "a gate"
        step = decide_gate(
            [fb[r.id] for r in base_runs if r.id in fb], [fn[r.id] for r in new_runs if r.id in fn], design, named
        )
    step.notes += [f"test: {step.model}"] if step.model else []
    return Evidence(step, drift, machines, notes, paired)
