# SPDX-License-Identifier: GPL-2.0-or-later
"""Missed periods of tools that skip them silently (cyclictest), derived from what their results say.

cyclictest (clock_nanosleep TIMER_ABSTIME, the default) measures latency = wake-up - deadline, then
moves the deadline one interval on and, while the wake-up is still past it, one more: a wake-up L late
skips #{k >= 1 : k * interval < L} periods without a sample. Two independent views bound that count:

- latencies: every histogram bucket (and the overflow, up to the exact max) says how many periods its
  samples can have skipped; without a histogram the max and the sum (cycles x avg) bound it.
- counts: a -D run has floor(D / interval) periods per thread; a -l N run stops every thread when the
  first reaches N, so a thread with fewer had at least the periods of that first thread. The deficit,
  less one period of start/stop slack, was missed.

A deficit far larger than the latencies can explain means the run stopped early (cyclictest writes
its JSON on SIGINT too, saying nothing), and so does a wall clock (start/end time) shorter than -D.
"""

from __future__ import annotations

import math
from itertools import islice, repeat
from operator import floordiv, mul, sub

from rtgate.core.model import RUNNING_SUMS_FROM, Buckets, MeasuredSetup, RunResult, ThreadResult
from rtgate.errors import ResultsError

# How far the true average can be above the printed one, in the results' unit.
AVG_SLACK = {"histogram-text": 1.0, "summary-text": 1.0, "rt-tests-json": 0.005}
# Formats of tools that skip periods without counting them (cyclictest; rtgate-sampler's text views).
SKIPS_SILENTLY = frozenset({"histogram-text", "summary-text", "verbose-text", "rt-tests-json"})
# Periods unaccounted for (neither sampled nor skipped) beyond the start-up slack mean the run stopped early
# or the file was cut: more than 5 % of them, or more than half a second of them (cyclictest's threads start
# a few ms after its -D clock; a cut file lacks its last samples silently).
EARLY_SHARE = 0.05
START_SLACK_S = 0.5


def _skips_below(value: float, interval: float) -> int:
    """Periods skipped by a wake-up later than `value` (exclusive): #{k >= 1 : k * interval < value}."""
    return max(0, math.ceil(value / interval) - 1)


def latency_bounds(run: RunResult, t: ThreadResult, interval_us: int) -> tuple[int, int]:
    """(fewest, most) periods the thread's wake-ups can have skipped, from its latencies alone."""
    if t.cycles == 0 or t.max is None:
        return 0, 0
    iv = interval_us * run.units_per_us()
    top = t.max + 1  # values are truncated to whole units: the true max is below max+1
    hi_max = _skips_below(top, iv)
    lo_max = _skips_below(t.max, iv)  # the max sample itself was at least this late
    sum_hi = None
    if t.avg is not None:
        total = (t.avg + AVG_SLACK.get(run.format, 0.0)) * t.cycles
        sum_hi = math.floor(total / iv)  # every skipped period needs a whole interval of latency
    h = t.histogram
    if h is None:
        lo, hi = lo_max, t.cycles * hi_max
    else:
        lo = hi = 0
        # buckets that end at or below one interval skip nothing: a 24 h histogram is nearly all of them
        skip = h.buckets.first_above(iv - 1) if isinstance(h.buckets, Buckets) else 0
        if isinstance(h.buckets, Buckets) and type(iv) is int and type(top) is int:
            lo, hi = _bucket_skips(h.buckets, skip, iv, top)
        else:
            ceil = math.ceil
            for b_lo, b_hi, c in islice(h.buckets, skip, None):  # _skips_below inline: once per bucket
                upper = top if b_hi is None or b_hi > top else b_hi
                lo += c * max(0, ceil(b_lo / iv) - 1)
                hi += c * max(0, ceil(upper / iv) - 1)
        if h.overflow:
            start = h.range_end or 0
            in_overflow_max = t.max >= start
            lo += (lo_max if in_overflow_max else 0) + (h.overflow - (1 if in_overflow_max else 0)) * _skips_below(
                start, iv
            )
            hi += h.overflow * hi_max
        lo = max(lo, lo_max)
    if sum_hi is not None:
        hi = min(hi, sum_hi)
    return lo, max(lo, hi)


def _bucket_skips(b: Buckets, start: int, iv: int, top: int) -> tuple[int, int]:
    """What latency_bounds sums over buckets `start` and up: count x periods skipped by the bucket's low
    end and by its high end (at most top), with whole numbers (ceil(v / iv) - 1 = (v - 1) // iv for v >= 1)
    in map chains that run in C: a loop over a cyclictest histogram of 1.4 million buckets took 1 s."""
    n = len(b.lows)
    if n - start > RUNNING_SUMS_FROM and b.samples() * ((top - 1) // iv + 1) < 2**63:
        return _bucket_skips_np(b, start, iv, top)  # 0.6 s in maps for 1.4 million buckets, 0.02 s here
    lows, counts = b.lows[start:], b.counts[start:]
    one, per = repeat(1), repeat(iv)
    lo = sum(map(mul, counts, map(floordiv, map(sub, lows, one), per)))
    if len(lows) and lows[0] == 0:  # only the first can start at 0: it skips nothing, not -1
        lo += counts[0]
    closed = n - 1 if b.open_top else n
    highs = b.highs[start:closed] if b.highs is not None else map((1).__add__, b.lows[start:closed])
    uppers = map(min, highs, repeat(top))
    hi = sum(map(mul, counts, map(floordiv, map(sub, uppers, one), per)))  # ends with the closed buckets
    if b.open_top and start < n:
        hi += counts[-1] * ((top - 1) // iv)
    return lo, hi


def _bucket_skips_np(b: Buckets, start: int, iv: int, top: int) -> tuple[int, int]:
    """_bucket_skips in numpy's 64-bit integers, which the caller checked cannot overflow: every sum is at
    most the samples times the most periods one can skip."""
    import numpy as np  # only for histograms of more than RUNNING_SUMS_FROM buckets: 0.1 s to import

    n = len(b.lows)
    closed = n - 1 if b.open_top else n
    lows = np.asarray(b.lows[start:], dtype=np.int64)
    counts = np.asarray(b.counts[start:], dtype=np.int64)
    lo = int((counts * np.maximum(0, (lows - 1) // iv)).sum())
    highs = lows[: closed - start] + 1 if b.highs is None else np.asarray(b.highs[start:closed], dtype=np.int64)
    hi = int((counts[: closed - start] * ((np.minimum(highs, top) - 1) // iv)).sum())
    if b.open_top and start < n:
        hi += int(counts[-1]) * ((top - 1) // iv)
    return lo, hi


def _interval_of(t: ThreadResult) -> int | None:
    return t.interval_us if t.interval_us else None


def derive_missed(run: RunResult, setup: MeasuredSetup | None, what: str) -> None:
    """Set each thread's missed periods (exact, or a range) and the derivation, for results whose
    tool does not count them. `what` names the format in the reasons (e.g. "rt-tests JSON")."""
    early: list[str] = []
    elapsed = setup.elapsed_s if setup else None
    if setup is not None and setup.duration_s and elapsed and elapsed[1] < setup.duration_s:
        early.append(f"the run lasted at most {elapsed[1]:g} s (start/end time) of -D {setup.duration_s:g}")
    if setup is not None and setup.relative:
        for t in run.threads:
            t.missed = None
            t.missed_derivation = "relative sleeps (-r) never skip a period, they stretch it: unknowable"
        return
    _check_clock(run, setup)
    derivation = _Derivation(run, setup, what, early)
    bounds: dict[int, tuple[int, int]] = {}
    for t in run.threads:
        iv = _interval_of(t)
        if iv is not None:
            bounds[t.index] = latency_bounds(run, t, iv)
    for t in run.threads:
        iv = _interval_of(t)
        if iv is None:
            t.missed = None
            t.missed_derivation = f"{what} do not say the interval: missed periods cannot be known"
            continue
        derivation.thread(t, iv, *bounds[t.index])
    if setup is not None and early:
        setup.stopped_early = "; ".join(early)


def _check_clock(run: RunResult, setup: MeasuredSetup | None) -> None:
    """A thread's cycles take at least (cycles - 1) intervals of wall clock: more than the start/end times allow
    means the interval its command line gives is not the run's (-i 200 edited to -i 5000 hides every missed
    period of a -l run)."""
    elapsed = setup.elapsed_s if setup is not None else None
    if setup is None or elapsed is None or setup.length_assumed:
        return
    for t in run.threads:
        iv = _interval_of(t)
        if iv and t.cycles > 1 and (t.cycles - 1) * iv / 1e6 > elapsed[1]:
            raise ResultsError(
                f"contradicts its command line ({setup.source}): thread {t.index}'s {t.cycles} cycles at -i {iv} "
                f"take {(t.cycles - 1) * iv / 1e6:g} s, but the run lasted at most {elapsed[1]:g} s (start/end time)",
                path=run.source,
            )


def _set_range(t: ThreadResult, lo: int, hi: int, derivation: str) -> None:
    t.missed, t.missed_upper = lo, (hi if hi > lo else None)
    t.missed_derivation = derivation


class _Derivation:
    """What the whole run says about its length (-D, -l, -b, its clock), applied to each thread."""

    def __init__(self, run: RunResult, setup: MeasuredSetup | None, what: str, early: list[str]) -> None:
        self.run = run
        self.setup = setup
        self.what = what
        self.early = early  # why the run looks stopped early: added to as threads show it
        self.elapsed = setup.elapsed_s if setup else None
        self.broke = (
            setup is not None
            and setup.breaktrace is not None
            and any(t.max is not None and t.max > setup.breaktrace for t in run.threads)
        )
        self.loops = setup.loops if setup else None
        self.reached = [t for t in run.threads if self.loops and t.cycles >= self.loops]
        self.reached_ids = {id(t) for t in self.reached}  # `t in reached` compared dataclasses: quadratic in threads

    def unknown_length(self) -> str | None:
        """Why the periods a thread should have had are unknown, or None when the run says them."""
        setup = self.setup
        if setup is not None and not self.broke and (setup.duration_s is not None or self.loops is not None):
            return None
        if self.broke:
            return "the run stopped at -b"
        if setup is not None and "command line" in setup.source:
            return "the command line has neither -D nor -l"
        return f"{self.what} do not say how long the run was"

    def expected(self, iv: int) -> tuple[int, str]:
        """The periods a thread at interval iv should have had, and why."""
        loops = self.loops
        if self.reached:
            first = self.reached[0]
            first_iv = _interval_of(first) or iv
            expected = math.floor((loops or 0) * first_iv / iv) if loops else None
            basis = f"thread {first.index} reached -l {loops} at -i {first_iv}, which stops every thread"
        elif self.setup is not None and self.setup.duration_s is not None:
            expected = math.floor(self.setup.duration_s * 1e6 / iv)
            basis = f"-D {self.setup.duration_s:g} s at -i {iv}"
        else:
            self.early.append(
                f"no thread reached -l {loops} ({max(x.cycles for x in self.run.threads)} cycles at most)"
            )
            expected = loops
            basis = f"-l {loops}"
        assert expected is not None
        return expected, basis

    def reached_loops(self, t: ThreadResult, iv: int, lat_lo: int, lat_hi: int, lat: str) -> None:
        """It stopped the run at -l N: periods it skipped itself show only in its latencies (and the clock)."""
        hi = lat_hi
        if self.elapsed:
            hi = min(hi, max(lat_lo, math.floor(self.elapsed[1] * 1e6 / iv) - t.cycles))
        _set_range(
            t,
            lat_lo,
            hi,
            f"reached -l {self.loops}, so only its latencies show what it skipped: {lat}"
            + (f", the clock at most {hi}" if hi < lat_hi else ""),
        )
        t.expected_periods = None

    def thread(self, t: ThreadResult, iv: int, lat_lo: int, lat_hi: int) -> None:
        lat = f"its latencies allow {lat_lo}" if lat_lo == lat_hi else f"its latencies allow {lat_lo}..{lat_hi}"
        why = self.unknown_length()
        if why is not None:
            _set_range(t, lat_lo, lat_hi, f"expected periods unknown ({why}); {lat}")
            return
        if self.reached and id(t) in self.reached_ids:
            self.reached_loops(t, iv, lat_lo, lat_hi, lat)
            return
        expected, basis = self.expected(iv)
        # Threads stop a moment after -D ends or the first reaches -l (another of cyclictest's 2 threads at -l 2000
        # had 1018 cycles of the 1000 -l allows it): only far more samples than -D allows contradict the run.
        beyond = max(2.0, EARLY_SHARE * expected, START_SLACK_S * 1e6 / iv)
        if (
            not self.reached
            and t.cycles > expected + beyond
            and self.setup is not None
            and not self.setup.length_assumed
        ):
            # The command line (recorded, or told with --cmdline) is not how the run was made: believed, its
            # longer interval would hide missed periods.
            raise ResultsError(
                f"contradicts its command line ({self.setup.source}): {basis}: {expected} periods expected but "
                f"thread {t.index} has {t.cycles} cycles",
                path=self.run.source,
            )
        if t.cycles > expected + 2:
            # More samples than the thresholds' length allows: a longer run than they ask.
            _set_range(
                t,
                lat_lo,
                lat_hi,
                f"{basis}: {expected} periods expected but {t.cycles} cycles, so the run was longer than that; {lat}",
            )
            return
        t.expected_periods = expected
        deficit = expected - t.cycles
        cnt_lo = max(0, deficit - 1)  # one period of start/stop slack
        cnt_hi = max(0, deficit + 1)
        if cnt_lo > lat_hi:
            # Periods nobody skipped: the thread was not measuring (stopped early, or started late).
            unaccounted = cnt_lo - lat_hi
            if unaccounted > max(2, min(EARLY_SHARE * expected, START_SLACK_S * 1e6 / iv)):
                self.early.append(
                    f"thread {t.index} has {t.cycles} cycles of {expected} expected ({basis}) and its "
                    f"latencies explain at most {lat_hi} skipped"
                )
            _set_range(
                t,
                lat_lo,
                lat_hi,
                f"{basis}: {expected} periods expected, {t.cycles} cycles; {lat}, so "
                f"{unaccounted} periods were not measured rather than missed",
            )
            return
        # A late last wake-up can skip periods past the end of the run: the count caps the latencies.
        lo = max(cnt_lo, min(lat_lo, cnt_hi))
        hi = max(lo, min(lat_hi, cnt_hi))
        shown = f"{lo}" if hi == lo else f"{lo}..{hi}"
        _set_range(
            t,
            lo,
            hi,
            f"{basis}: {expected} periods expected, {t.cycles} cycles, {shown} missed (one period of slack; {lat})",
        )
