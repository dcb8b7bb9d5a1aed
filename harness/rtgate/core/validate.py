# SPDX-License-Identifier: GPL-2.0-or-later
"""Results that contradict themselves are refused, whatever format they came from.

Every parser ends with check_run(): a damaged or edited file must end as an error naming the file
and the field (or line), never as a verdict. The checks are the ones the data itself can prove:
honest cyclictest and rtgate-sampler output passes all of them (tests/system/test_damage.py runs them on
every recorded fixture and on live runs of both programs).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import cast

from rtgate.core import validity
from rtgate.core.model import Buckets, Histogram, RunResult, ThreadResult, WholeNumbers
from rtgate.errors import ResultsError

# cyclictest and rtgate-sampler keep latencies and counts in 64-bit integers.
MAX_VALUE = 2**63 - 1
MAX_SPAN_S = MAX_VALUE / 1e9  # a thread's span in seconds, from 64-bit nanoseconds

# How a format prints the average, and so how far the true average may lie from it:
# (below, above) the printed value. Truncating formats print floor(avg); the live T: screen reads a
# thread's statistics while it runs, so its average may count one sample more or less than C:.
AVG_SLACK: dict[str, tuple[float, float]] = {
    "rtgate-json": (0.005, 0.005),  # sum / cycles, printed with two decimals (sum is exact)
    "rt-tests-json": (0.005, 0.005),  # %.2f
    "histogram-text": (0.0, 1.0),  # (long)(avg / cycles)
    "summary-text": (0.0, 1.0),
    "verbose-text": (1e-9, 1e-9),  # computed here from every sample
    "rtla-timerlat-hist": (0.0, 1.0),  # sum / count in integers
}

Locate = Callable[[int, str], "tuple[int | None, str | None]"]  # (position, field) -> line, key


def _no_location(pos: int, name: str) -> tuple[int | None, str | None]:
    return None, f"thread {pos}: {name}" if name else f"thread {pos}"


def is_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_run(run: RunResult, locate: Locate | None = None) -> RunResult:
    """Raise ResultsError on the first contradiction; return the run unchanged otherwise."""
    where = locate or _no_location

    def fail(pos: int, name: str, message: str) -> ResultsError:
        line, key = where(pos, name)
        return ResultsError(message, path=run.source, line=line, key=key)

    if run.unit not in ("us", "ns"):
        raise ResultsError(f"unit must be us or ns, not {run.unit!r}", path=run.source)
    if not run.threads:
        if validity.not_measured(run) is not None:  # the engine's record of a measurement it did not make
            return run
        raise ResultsError("no threads in results", path=run.source)
    seen: set[int] = set()
    for pos, t in enumerate(run.threads):
        if not _is_int(t.index) or not 0 <= t.index < 1_000_000:
            raise fail(pos, "index", f"thread index must be a whole number, not {t.index!r}")
        if t.index in seen:
            raise fail(pos, "index", f"thread {t.index} appears twice")
        seen.add(t.index)
        _check_thread(run, pos, t, fail)
    missing = sorted(set(range(max(seen) + 1)) - seen)
    if missing:
        raise ResultsError(
            f"thread {missing[0]} has no data, but thread {max(seen)} does (threads are numbered from 0)",
            path=run.source,
        )
    return run


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _count(v: object) -> bool:
    return _is_int(v) and 0 <= v <= MAX_VALUE  # type: ignore[operator]


def _latency(v: object) -> bool:
    """A whole, finite, non-negative latency in 64 bits (1.0 as written by some tools is whole)."""
    # the range first: math.isfinite() of a 400-digit int raises OverflowError; NaN fails every comparison
    return is_number(v) and 0 <= v <= MAX_VALUE and float(v).is_integer()  # type: ignore[arg-type,operator]


def _check_thread(run: RunResult, pos: int, t: ThreadResult, fail: Callable[[int, str, str], ResultsError]) -> None:
    _check_fields(pos, t, fail)
    # A checkpoint of a running rtgate-sampler reads min, max and sum a moment before the histogram:
    # one sample per thread may be in one and not the other. Its gates are ERROR (not finished) anyway.
    racy = run.format == "rtgate-json" and not run.complete
    if t.histogram is not None:
        _check_histogram(pos, t, t.histogram, fail, racy)
    if t.block_maxima is not None and not racy:
        _check_blocks(pos, t, fail)
    if t.cycles == 0:
        return  # nothing measured: min, max and avg say nothing
    if t.min is None or t.max is None:
        raise fail(pos, "max" if t.min is not None else "min", f"missing for a thread with {t.cycles} cycles")
    if t.min > t.max:
        raise fail(pos, "min", f"min {t.min:g} is above max {t.max:g}")
    if t.avg is not None:
        _check_avg(run, pos, t, fail, racy)


def _check_fields(pos: int, t: ThreadResult, fail: Callable[[int, str, str], ResultsError]) -> None:
    """Each field alone: whole numbers in range, a name, finite latencies."""
    if not _count(t.cycles):
        raise fail(pos, "cycles", f"cycles must be a whole number from 0 to 2^63-1, not {t.cycles!r}")
    if t.missed is not None and not _count(t.missed):
        raise fail(pos, "missed_periods", f"must be a whole number from 0 to 2^63-1, not {t.missed!r}")
    for name, value, lo, hi in (
        ("cpu", t.cpu, -1, 1_000_000),
        ("priority", t.priority, -1_000, 1_000),
        ("interval_us", t.interval_us, 0, MAX_VALUE),
    ):
        if value is not None and (not _is_int(value) or not lo <= value <= hi):
            raise fail(pos, name, f"must be a whole number from {lo} to {hi}, not {value!r}")
    if t.policy is not None and not isinstance(t.policy, str):
        raise fail(pos, "policy", f"must be a name, not {t.policy!r}")
    for name, latency in (("min", t.min), ("max", t.max)):
        if latency is not None and not _latency(latency):
            raise fail(pos, name, f"must be a whole, non-negative latency, not {latency!r}")
    if t.avg is not None and not (is_number(t.avg) and 0 <= t.avg <= MAX_VALUE):
        raise fail(pos, "avg", f"must be a finite, non-negative latency, not {t.avg!r}")
    if t.span_s is not None and not (is_number(t.span_s) and 0 <= t.span_s <= MAX_SPAN_S):
        raise fail(pos, "span_s", f"must be a finite, non-negative number of seconds, not {t.span_s!r}")


def _check_avg(
    run: RunResult, pos: int, t: ThreadResult, fail: Callable[[int, str, str], ResultsError], racy: bool
) -> None:
    assert t.avg is not None and t.min is not None and t.max is not None
    below, above = AVG_SLACK.get(run.format, (0.005, 0.005))
    lowest, highest = float(t.min), float(t.max)  # what the sum over cycles can average to
    if run.format == "summary-text" or racy:
        # a live snapshot: the sum may hold one sample more or less than the cycle count
        n = t.cycles
        lowest, highest = lowest * (n - 1) / n, highest * (n + 1) / n
    # a truncated print is a bound: the true average is below avg + 1, never at it
    if (t.avg + above <= lowest) if above >= 1.0 else (t.avg + above < lowest):
        raise fail(pos, "avg", f"avg {t.avg:g} is below min {t.min:g}")
    if t.avg - below > highest:
        raise fail(pos, "avg", f"avg {t.avg:g} is above max {t.max:g}")


def _whole_top(values: Sequence[object]) -> tuple[bool, int | None]:
    """Whether every value is a whole number from 0 to MAX_VALUE (bool is no number), at C speed, and the
    largest (None: no value)."""
    if not values:
        return True, None
    if set(map(type, values)) != {int}:
        return False, None
    ints = cast("Sequence[int]", values)
    top = max(ints)
    return min(ints) >= 0 and top <= MAX_VALUE, top


def _whole(values: Sequence[object]) -> bool:
    """Every value a whole number from 0 to MAX_VALUE (bool is no number), at C speed."""
    return _whole_top(values)[0]


def _arrays_well_formed(b: Buckets) -> bool:
    """_buckets_well_formed for buckets held in arrays (every value a whole number already)."""
    if b.well_formed:  # checked as below by the parser that read them (json_lift), on its numbers
        return True
    n = len(b.lows)
    if not n:
        return True
    if min(b.lows) < 0 or min(b.counts) < 0 or max(b.counts) > MAX_VALUE or max(b.lows) > MAX_VALUE:
        return False
    if b.highs is None:  # [lo, lo + 1): each bucket ends where the next may start
        return max(b.lows) < MAX_VALUE and all(map(operator.lt, b.lows, b.lows[1:]))
    inner_lows, inner = b.lows[: n - 1], b.highs[: n - 1]
    last = None if b.open_top else b.highs[n - 1]
    return (
        all(map(operator.gt, inner, inner_lows))
        and (last is None or b.lows[n - 1] < last <= MAX_VALUE)
        and all(map(operator.ge, b.lows[1:], inner))
    )


def _buckets_well_formed(buckets: Sequence[tuple[int, int | None, int]]) -> bool:
    """The loop of _check_histogram in builtins, for the common case: a 24 h, 64-thread result has
    40,000 buckets. False sends the histogram through that loop, which names the bad bucket."""
    if isinstance(buckets, Buckets):
        return _arrays_well_formed(buckets)
    if not buckets:
        return True
    if set(map(type, buckets)) - {tuple, list} or set(map(len, buckets)) != {3}:
        return False
    lows, highs, counts = zip(*buckets)
    inner, last = highs[:-1], highs[-1]  # only the last bucket may be open
    if not (_whole(lows) and _whole(counts) and _whole(inner) and (last is None or _whole((last,)))):
        return False
    # every bucket holds something ([lo, hi) with hi > lo), the next starts at or after its end
    return (
        all(map(operator.gt, inner, lows))
        and (last is None or last > lows[-1])
        and all(map(operator.ge, lows[1:], inner))
    )


def _check_histogram(
    pos: int, t: ThreadResult, h: Histogram, fail: Callable[[int, str, str], ResultsError], racy: bool = False
) -> None:
    if not _buckets_well_formed(h.buckets):
        _name_bad_bucket(pos, h, fail)
    if not _count(h.overflow):
        raise fail(pos, "histogram", f"overflow must be a whole number, not {h.overflow!r}")
    if h.total != t.cycles:
        raise fail(pos, "cycles", f"the histogram holds {h.total} samples but cycles is {t.cycles}")
    # the lowest and highest non-empty buckets (not a list of all of them: 40,000 in a 24 h, 64-thread result)
    if isinstance(h.buckets, Buckets):
        low, top = h.buckets.filled_ends()
    else:
        low = next(((lo, hi) for lo, hi, c in h.buckets if c), None)
        top = next(((lo, hi) for lo, hi, c in reversed(h.buckets) if c), None)
    if h.range_end is not None and top is not None and top[0] >= h.range_end:
        raise fail(pos, "histogram", f"bucket {top[0]} lies beyond the histogram's range ({h.range_end})")
    if t.cycles == 0 or t.max is None or t.min is None:
        return
    if racy:  # at most one sample (the one in flight) may lie outside [min, max]
        outside = sum(c for lo, hi, c in h.buckets if lo > t.max or (hi is not None and hi - 1 < t.min))
        if outside > 1:
            raise fail(pos, "max", f"{outside} samples lie outside min {t.min:g} and max {t.max:g}")
    elif low is not None and top is not None:
        _check_extremes(pos, t, h, low, top, fail)
    _check_overflow(pos, t, h, low is not None, fail)


def _name_bad_bucket(pos: int, h: Histogram, fail: Callable[[int, str, str], ResultsError]) -> None:
    prev_hi: int | None = None
    prev_lo = -1
    for i, bucket in enumerate(h.buckets):
        lo, hi, c = bucket
        if not (_count(lo) and (hi is None or _count(hi)) and _count(c)):
            raise fail(pos, "histogram", f"bucket {bucket!r} is not [low, high or open, count] in whole numbers")
        if hi is not None and hi <= lo:
            raise fail(pos, "histogram", f"bucket [{lo}, {hi}) is empty or reversed")
        if lo <= prev_lo or (prev_hi is not None and lo < prev_hi) or (prev_hi is None and i > 0):
            raise fail(
                pos,
                "histogram",
                f"bucket at {lo} overlaps or repeats the one before (buckets must be strictly increasing)",
            )
        prev_lo, prev_hi = lo, hi


def _check_extremes(
    pos: int,
    t: ThreadResult,
    h: Histogram,
    low: tuple[int, int | None],
    top: tuple[int, int | None],
    fail: Callable[[int, str, str], ResultsError],
) -> None:
    """min and max lie in the lowest and highest non-empty buckets."""
    assert t.min is not None and t.max is not None
    top_lo, top_hi = top
    if t.max < top_lo:
        raise fail(pos, "max", f"max {t.max:g} is below the highest non-empty histogram bucket ({top_lo})")
    if h.overflow == 0 and top_hi is not None and t.max > top_hi - 1:
        raise fail(
            pos,
            "max",
            f"max {t.max:g} lies beyond the highest non-empty histogram bucket ({top_lo}) and no sample overflowed",
        )
    low_lo, low_hi = low
    if t.min < low_lo:
        raise fail(pos, "min", f"min {t.min:g} is below the lowest non-empty histogram bucket ({low_lo})")
    if low_hi is not None and t.min > low_hi - 1:
        raise fail(pos, "min", f"min {t.min:g} is above the lowest non-empty histogram bucket ({low_lo})")


def _check_overflow(
    pos: int, t: ThreadResult, h: Histogram, filled: bool, fail: Callable[[int, str, str], ResultsError]
) -> None:
    assert t.min is not None and t.max is not None
    if h.overflow and h.range_end is not None and t.max < h.range_end:
        raise fail(
            pos,
            "max",
            f"max {t.max:g} is inside the histogram's range ({h.range_end}) but {h.overflow} samples overflowed it",
        )
    if h.overflow and not filled and h.range_end is not None and t.min < h.range_end:
        raise fail(
            pos, "min", f"min {t.min:g} is inside the histogram's range ({h.range_end}) but every sample overflowed it"
        )


def _check_blocks(pos: int, t: ThreadResult, fail: Callable[[int, str, str], ResultsError]) -> None:
    b = t.block_maxima
    assert b is not None
    if not _count(b.block_cycles) or not _count(b.partial_cycles):
        raise fail(pos, "block_maxima", "block_cycles and partial_cycles must be whole numbers")
    if not (is_number(b.block_seconds) and 0 <= b.block_seconds <= MAX_VALUE):
        raise fail(pos, "block_maxima", f"block_seconds must be a finite number, not {b.block_seconds!r}")
    if isinstance(b.values, WholeNumbers):  # checked, and its largest found, by the parser that read it
        whole, top = True, b.values.top
    else:
        whole, top = _whole_top(b.values) if isinstance(b.values, list) else (False, None)
    if not whole:
        raise fail(pos, "block_maxima", "values must be whole, non-negative latencies")
    if b.partial_max is not None and not _count(b.partial_max):
        raise fail(pos, "block_maxima", f"partial_max must be a whole latency, not {b.partial_max!r}")
    tops = [top] if top is not None else []
    highest = max([*tops, b.partial_max] if b.partial_max is not None else tops, default=None)
    if highest is not None and t.max is not None and t.cycles and highest > t.max:
        raise fail(pos, "block_maxima", f"a block's max ({highest}) is above the thread's max {t.max:g}")
