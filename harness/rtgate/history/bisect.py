# SPDX-License-Identifier: GPL-2.0-or-later
"""Which commit: one step of a latency bisection, measured until the data decides.

`git bisect` needs one answer per commit, and a bisection of N steps multiplies every step's
error. So each step is a sequential probability ratio test (Wald): after each run of the
candidate, the log likelihood ratio of "bad" against "good" is summed over its runs so far; the
step decides BAD when it reaches log(1/error), GOOD when it falls to -log(1/error), and asks for
another run (MORE) in between. Wald's inequalities bound the chance of either wrong decision by
`error`, whatever the number of runs; stopping at `max_runs` undecided (git bisect's skip) only
lowers them. A bisection of N steps is then wrong with chance at most N x error (Bonferroni),
plus, unpaired, once the baseline's own error (below).

"Bad" is declared by the user, one of:
- a metric worse by at least a factor r (`--worse-by`): per run the metric of the worst thread,
  on a log scale, where a factor is a shift: good is a shift of 0, bad of log(r) or more. The
  run-to-run noise is Student's t with 3 degrees of freedom, the project's model of host
  interference (tests/history_sim.py): heavy tails, so one stalled run moves the sum by a
  bounded amount instead of deciding alone. Its scale comes from the baseline's runs (median
  absolute deviation), never from the candidate's.
  - paired (interleaved runs sharing a pair id): each pair's log ratio; a good commit's is
    centred on 0 by design, and slow host drift cancels within the pair;
  - unpaired: each candidate run against the baseline's median, which is itself only known to
    within a margin; both hypotheses are moved inward by that margin (at confidence 1 - error),
    so the per-step bound still holds, and the baseline's chance of lying outside it (error) is
    counted once for the whole bisection. A baseline too small for the factor asked is refused
    with the number of runs it needs.
- a gate that now fails: per run, whether it failed; a Bernoulli SPRT of the baseline's failure
  share against `fail_share` (a bad commit fails that share of its runs or more)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist, median
from typing import TYPE_CHECKING, Any

from rtgate.errors import RtgateError
from rtgate.history.drift import Tolerance, differences, machine_differences
from rtgate.history.figures import histograms_needed, intervals

if TYPE_CHECKING:
    from rtgate.history.store import HistoryDB, StoredRun

GOOD, BAD, MORE, UNDECIDED = "good", "bad", "more", "undecided"
NU = 3  # degrees of freedom of the noise model
T3_MAD = 0.7649  # median absolute deviation of Student's t(3) per unit of scale
T3_AT_ZERO = 2 / (math.pi * math.sqrt(3))  # its density at 0, per unit of scale
SCALE_FLOOR = 0.01  # log scale: integer-us figures that all tie still have a 1 % noise
MIN_BASE_RUNS = 10  # below, the noise scale of the baseline is a guess


@dataclass
class Design:
    """What the user declared: the test's settings."""

    error: float = 0.01  # per step, each way: GOOD for a bad commit, BAD for a good one
    max_runs: int = 20  # runs (or pairs) of the candidate before giving up: undecided
    worse_by: float | None = None  # metric mode: bad is worse by at least this factor
    fail_share: float = 0.5  # gate mode: a bad commit fails the gate in at least this share of runs


@dataclass
class Step:
    """One bisect step's answer, and why."""

    decision: str
    runs: int  # candidate runs (or pairs) the decision used
    llr: float  # log likelihood ratio of bad (the mixture of its shifts) against good
    threshold: float  # log(1 / error): BAD at +threshold, GOOD at -threshold
    error: float
    criterion: str  # what bad means: "p99.9 worse by x1.5", "gate max fails"
    estimate: str = ""  # what the data show: the median ratio, or the failures
    model: str = ""  # the noise model and where its scale comes from
    notes: list[str] = field(default_factory=list)
    baseline_error: float = 0.0  # unpaired: the chance the baseline's margin is wrong (once per bisection)
    llr_good: float = 0.0  # log likelihood ratio of the smallest bad shift against good: GOOD at -threshold

    def bound(self) -> str:
        """The error bound printed with every decision."""
        text = (
            f"wrong with chance <= {self.error:.3g} each way per step (sequential test); "
            f"a bisection of N steps <= N x {self.error:.3g}"
        )
        if self.baseline_error:
            text += f" + {self.baseline_error:.3g} (the baseline's margin, once)"
        return text

    def line(self) -> str:
        head = f"{self.decision.upper():9} {self.criterion}: {self.estimate}"
        sums = (
            f"after {self.runs} run(s) log LR {self.llr:+.2f} (BAD at {self.threshold:+.2f}) and "
            f"{self.llr_good:+.2f} (GOOD at {-self.threshold:+.2f})"
        )
        return f"{head}; {sums}; {self.bound()}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "runs": self.runs,
            "llr": self.llr,
            "llr_good": self.llr_good,
            "threshold": self.threshold,
            "error": self.error,
            "baseline_error": self.baseline_error,
            "criterion": self.criterion,
            "estimate": self.estimate,
            "model": self.model,
            "notes": self.notes,
            "bound": self.bound(),
        }


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


def _log_t(z: float) -> float:
    """log density of Student's t(NU), up to its constant (which cancels in a ratio)."""
    return -(NU + 1) / 2 * math.log1p(z * z / NU)


INFLATE = 0.5  # the scale raised by half its relative sampling error, 1/sqrt(n) (benchmarks/bisect_power.py errors)
RECENT = 60  # the noise scale from the baseline's last runs: the host's noise now, at a bounded cost


def noise_scale(logs: list[float]) -> float:
    """The t(3) scale of log values: their median absolute deviation, robust to stalled runs,
    raised by its own sampling error (a scale taken too small makes every run look decisive)."""
    logs = logs[-RECENT:]
    centre = median(logs)
    mad = median(abs(x - centre) for x in logs) / T3_MAD
    return max(mad * (1 + INFLATE / math.sqrt(len(logs))), SCALE_FLOOR)


def difference_scale(logs: list[float]) -> float:
    """The t(3) scale of the difference of two runs' log figures: the median of the baseline's
    differences between every two of its runs (more of them than runs: a steadier estimate),
    raised by its sampling error as noise_scale is."""
    logs = logs[-RECENT:]
    diffs = [abs(a - b) for i, a in enumerate(logs) for b in logs[i + 1 :]]
    return max(median(diffs) / T3_MAD * (1 + INFLATE / math.sqrt(len(logs))), SCALE_FLOOR)


def median_margin(n: int, scale: float, error: float) -> float:
    """How far the median of n runs may lie from the true one, at confidence 1 - error (its
    large-sample spread under the t(3) model: 1 / (2 f(0) sqrt(n)))."""
    return NormalDist().inv_cdf(1 - error) * scale / (2 * T3_AT_ZERO * math.sqrt(n))


def base_runs_needed(scale: float, shift: float, error: float) -> int:
    """Baseline runs whose median margin is a quarter of the shift: the test can then decide."""
    z = NormalDist().inv_cdf(1 - error)
    return math.ceil((4 * z * scale / (2 * T3_AT_ZERO * shift)) ** 2)


COMPONENTS = 4  # bad's mixture: shifts of 1, 2, 4 and 8 times the declared one


def _sprt(increments: list[list[float]], design: Design) -> tuple[str, int, float, float]:
    """Walk the runs in order, stop at the first decision: (decision, runs used, log LR for bad,
    log LR for good). Each increment is a run's log likelihood ratio of each of bad's shifts
    against good. BAD when the mixture of bad's shifts (weights 1/2, 1/4, ...) reaches
    log(1/error); GOOD when the smallest bad shift's ratio falls to -log(1/error). Both sums are
    non-negative martingales under the hypothesis they reject, so Ville's inequality bounds each
    wrong decision by `error` over any number of runs: no overshoot approximation. The mixture
    keeps a run far beyond the declared factor from counting as an outlier of it."""
    threshold = math.log(1 / design.error)
    k = len(increments[0]) if increments else 1
    weights = [math.log(2.0 ** -(j + 1)) for j in range(k - 1)] + [math.log(2.0 ** -(k - 1))]
    sums = [0.0] * k
    bad = 0.0
    for i, run in enumerate(increments[: design.max_runs], 1):
        sums = [s + x for s, x in zip(sums, run)]
        top = max(w + s for w, s in zip(weights, sums))
        bad = top + math.log(sum(math.exp(w + s - top) for w, s in zip(weights, sums)))
        if bad >= threshold:
            return BAD, i, bad, sums[0]
        if sums[0] <= -threshold:
            return GOOD, i, bad, sums[0]
    used = min(len(increments), design.max_runs)
    return (UNDECIDED if used >= design.max_runs else MORE), used, bad, sums[0]


def _shift_increments(residuals: list[float], low: float, high: float, scale: float) -> list[list[float]]:
    """Per run, the log likelihood ratio under the t(3) model of each of bad's shifts
    (low + 2**j (high - low)) against good's (low)."""
    shifts = [low + 2**j * (high - low) for j in range(COMPONENTS)]
    return [[_log_t((x - s) / scale) - _log_t((x - low) / scale) for s in shifts] for x in residuals]


def _logs(values: list[float], what: str) -> list[float]:
    """Logarithms of positive figures; a zero (a share with no sample above) floored at half the
    smallest positive one."""
    positive = [v for v in values if v > 0]
    if not positive:
        raise RtgateError(f"{what}: no run has a figure above 0: a factor cannot be judged")
    floor = min(positive) / 2
    return [math.log(max(v, floor)) for v in values]


def decide_metric(
    base: list[float], new: list[float], design: Design, metric: str, pairs: list[tuple[float, float]] | None = None
) -> Step:
    """The step on a metric: `base` the baseline's per-run figures (its every valid run, for the
    noise scale), `new` the candidate's in run order; with `pairs`, (base, new) figures of the
    interleaved pairs in the candidate's run order, judged instead of `new`."""
    assert design.worse_by is not None
    shift = math.log(design.worse_by)
    criterion = f"{metric} worse by x{design.worse_by:g}"
    if len(base) < MIN_BASE_RUNS:
        raise RtgateError(
            f"the baseline has {len(base)} valid run(s) with {metric}: give at least {MIN_BASE_RUNS} "
            "(its run-to-run noise sets the test's scale)"
        )
    base_logs = _logs(base, "baseline")
    scale = noise_scale(base_logs)
    threshold = math.log(1 / design.error)
    if pairs is not None:
        if not pairs:
            return Step(MORE, 0, 0.0, threshold, design.error, criterion, "no complete pair yet", notes=[])
        flat = _logs([v for p in pairs for v in p] + base, "pairs")
        diffs = [flat[2 * i + 1] - flat[2 * i] for i in range(len(pairs))]
        # The pairs' own spread once there are enough: runs measured back to back share the host's
        # state, so their differences vary less than those of baseline runs measured hours apart.
        pair_scale = noise_scale(diffs) if len(diffs) >= MIN_BASE_RUNS else difference_scale(base_logs)
        decision, used, total, good = _sprt(_shift_increments(diffs, 0.0, shift, pair_scale), design)
        ratio = math.exp(median(diffs[:used])) if used else 1.0
        model = (
            f"paired log ratios, t(3) noise of scale {pair_scale:.3g} (from "
            f"{f'{len(diffs)} pairs' if len(diffs) >= MIN_BASE_RUNS else f'{len(base)} baseline runs'}); "
            "good is a ratio of 1, bad of at least the factor"
        )
        estimate = f"median ratio x{ratio:.3g} over {used} pair(s)"
        return Step(decision, used, total, threshold, design.error, criterion, estimate, model, llr_good=good)
    if not new:
        return Step(MORE, 0, 0.0, threshold, design.error, criterion, "no run of the candidate yet")
    centre = median(base_logs)
    margin = median_margin(len(base_logs), scale, design.error)
    if margin >= shift / 2:
        need = base_runs_needed(scale, shift, design.error)
        raise RtgateError(
            f"the baseline's {len(base)} runs place its median {metric} only within x{math.exp(margin):.3g}: "
            f"worse-by x{design.worse_by:g} cannot be decided against it; measure about {need} baseline runs, "
            "or interleave baseline and candidate runs (--paired)"
        )
    logs = [math.log(max(v, math.exp(centre) * 1e-6)) for v in new]
    low, high = margin, shift - margin  # both hypotheses moved inward by the baseline's margin
    residuals = [x - centre for x in logs]
    decision, used, total, good = _sprt(_shift_increments(residuals, low, high, scale), design)
    ratio = math.exp(median(logs[:used]) - centre) if used else 1.0
    model = (
        f"log figures against the median of {len(base)} baseline runs (known within x{math.exp(margin):.3g}), "
        f"t(3) noise of scale {scale:.3g}; good is a ratio up to x{math.exp(low):.3g}, bad from x{math.exp(high):.3g}"
    )
    return Step(
        decision,
        used,
        total,
        threshold,
        design.error,
        criterion,
        f"median ratio x{ratio:.3g} over {used} run(s)",
        model,
        baseline_error=design.error,
        llr_good=good,
    )


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
    increments = [[math.log(p1 / p0) if f else math.log((1 - p1) / (1 - p0))] for f in new_failed]
    decision, used, total, good = _sprt(increments, design)
    fails = sum(new_failed[:used])
    return Step(
        decision,
        used,
        total,
        math.log(1 / design.error),
        design.error,
        criterion,
        f"failed in {fails} of {used} run(s)",
        f"Bernoulli: baseline failure share {p0:.3g} ({sum(base_failed)} of {len(base_failed)} runs, one added)",
        llr_good=good,
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
    step.notes += [f"noise model: {step.model}"] if step.model else []
    return Evidence(step, drift, machines, notes, paired)
