# SPDX-License-Identifier: GPL-2.0-or-later
"""The one results model every parser produces and every gate and reporter reads."""

from __future__ import annotations

import math
import struct
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import accumulate, chain, compress, islice, takewhile
from operator import gt
from typing import Any, overload

from rtgate.core.units import UNIT_SCALE


def compact_ints(values: Iterable[int]) -> array[int]:
    """Whole numbers from 0 to 2^63-1 in 4 bytes each when they fit, else 8 (OverflowError beyond)."""
    values = values if isinstance(values, (list, array)) else list(values)
    for code in "iq":  # struct packs a list of ints in about half the time array() takes to read it
        try:
            packed = struct.pack(f"{len(values)}{code}", *values)
        except struct.error:
            continue
        out = array(code)
        out.frombytes(packed)
        return out
    return array("q", values)  # raises what array() raises: OverflowError beyond 64 bits, TypeError for no int


class WholeNumbers(list[int]):
    """A list its parser checked: every value a whole number from 0 to 2^63-1; `top` its largest (None: empty).
    core/validate then need not walk it again. It compares, copies and serialises as the list it is."""

    __slots__ = ("top",)

    def __init__(self, values: Iterable[int] = (), top: int | None = None) -> None:
        super().__init__(values)
        self.top = max(self, default=None) if top is None else top


RUNNING_SUMS_FROM = 65_536  # buckets: fewer are walked for each rank, more keep their running sums


class Buckets(Sequence[tuple[int, "int | None", int]]):
    """Buckets held as arrays of whole numbers, read as (lo, hi, count) tuples.

    A 24 h, 64-thread result has 200,000 buckets: as tuples of Python ints they cost ~100 bytes
    each, here 8 to 12. `highs` None: every bucket is [lo, lo + 1). `open_top`: the last bucket
    has no upper edge (its entry in `highs` is ignored). The parser that builds one checks that
    lows increase strictly, so no sort is needed. `well_formed`: the parser checked every bucket as
    core/validate would (lo < hi <= the next lo, 64-bit values), which then need not walk them again;
    `samples`: the sum of the counts, when the parser has it.
    """

    __slots__ = ("_running", "_samples", "counts", "highs", "lows", "open_top", "well_formed")

    def __init__(
        self,
        lows: array[int],
        highs: array[int] | None,
        counts: array[int],
        open_top: bool = False,
        well_formed: bool = False,
        samples: int | None = None,
    ) -> None:
        self.lows, self.highs, self.counts, self.open_top = lows, highs, counts, open_top
        self.well_formed = well_formed
        self._samples = samples  # the sum of the counts, when the parser that read them has it
        self._running: array[int] | list[int] | None = None  # running sums of the counts, for at_rank

    def __len__(self) -> int:
        return len(self.lows)

    def _highs(self) -> Iterable[int | None]:
        if self.highs is not None:
            return self.highs
        return map((1).__add__, self.lows)

    def __iter__(self) -> Iterator[tuple[int, int | None, int]]:
        rows = zip(self.lows, self._highs(), self.counts)
        if not self.open_top:
            return rows
        last = ((self.lows[-1], None, self.counts[-1]),)
        return chain(islice(rows, len(self.lows) - 1), last)

    def __reversed__(self) -> Iterator[tuple[int, int | None, int]]:
        return (self[i] for i in range(len(self.lows) - 1, -1, -1))

    @overload
    def __getitem__(self, i: int) -> tuple[int, int | None, int]: ...
    @overload
    def __getitem__(self, i: slice) -> list[tuple[int, int | None, int]]: ...
    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return list(self)[i]
        n = len(self.lows)
        i = i + n if i < 0 else i
        if not 0 <= i < n:
            raise IndexError(i)
        lo = self.lows[i]
        if self.open_top and i == n - 1:
            return lo, None, self.counts[i]
        return lo, (lo + 1 if self.highs is None else self.highs[i]), self.counts[i]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    # Histograms that reach the gates have passed core/validate.py: lows strictly increasing, each
    # bucket [lo, hi) non-empty and below the next. So the buckets above a limit are a tail, found by
    # bisection instead of a loop over 200,000 tuples.

    def _closed(self) -> int:
        return len(self.lows) - 1 if self.open_top else len(self.lows)

    def first_above(self, limit: float) -> int:
        """The first bucket whose highest value (hi - 1) is above `limit`; an open one always is."""
        if self.highs is None:  # hi - 1 = lo
            return bisect_right(self.lows, limit, 0, self._closed())
        return bisect_right(self.highs, limit, 0, self._closed(), key=(-1).__add__)

    def first_low_above(self, limit: float) -> int:
        """The first bucket whose every value (lo and up) is above `limit`."""
        return bisect_right(self.lows, limit)

    def at_rank(self, rank: int) -> int:
        """The bucket holding the rank-th sample (1-based) in order; len(self) when the buckets hold fewer."""
        # The running sums stop at that bucket: latencies crowd the first buckets, and a percentile
        # gate's rank lies among them, not past the long tail of sparse ones (a 24 h run's 3,000).
        if len(self.counts) <= RUNNING_SUMS_FROM:
            return len(list(takewhile(partial(gt, rank), accumulate(self.counts))))
        # A histogram of a million 1-unit buckets (cyclictest -h) is asked for several ranks, each near
        # its end: its running sums once (8 bytes a bucket), then a bisection for each.
        if self._running is None:
            sums = accumulate(self.counts)
            self._running = array("q", sums) if self.samples() < 2**63 else list(sums)
        return bisect_left(self._running, rank)

    def filled_ends(self) -> tuple[tuple[int, int | None] | None, tuple[int, int | None] | None]:
        """(lo, hi) of the first and of the last bucket that holds samples (None when none does), found
        by C iterators: a loop over tuples took 1 s over the 4.7 million empty buckets a hostile file holds."""
        n = len(self.counts)
        first = next(compress(range(n), self.counts), None)
        if first is None:
            return None, None
        last = next(compress(range(n - 1, -1, -1), reversed(self.counts)))
        return self[first][:2], self[last][:2]

    def samples(self) -> int:
        """The sum of the counts (counted once)."""
        if self._samples is None:
            self._samples = sum(self.counts)
        return self._samples

    def samples_from(self, i: int) -> int:
        """The sum of the counts of buckets i and above, from whichever side of i has fewer buckets."""
        if i > len(self.counts) // 2:
            return sum(self.counts[i:])
        return self.samples() - sum(self.counts[:i])

    def __deepcopy__(self, memo: dict[int, Any]) -> list[tuple[int, int | None, int]]:
        # dataclasses.asdict copies each field deeply: a run's digest (reports/kcidb.py) serialises
        # the buckets as the list of tuples every other parser gives, whatever holds them.
        return list(self)

    def __repr__(self) -> str:
        return f"Buckets({list(self)!r})"


@dataclass
class Histogram:
    """Latency counts in buckets [lo, hi), sorted by lo; hi None = open upwards.

    `overflow` counts samples whose value is only known to be >= `range_end` (rt-tests
    `-h N` overflow, or cycles missing from the histogram); rtgate's own full-range
    histogram never has any.
    """

    unit: str
    buckets: list[tuple[int, int | None, int]] | Buckets
    overflow: int = 0
    range_end: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.buckets, Buckets):
            self.total = self.buckets.samples() + self.overflow
            return
        self.buckets.sort()  # linear when already sorted, as every parser produces them
        self.total = sum(c for _, _, c in self.buckets) + self.overflow

    def _from_rank(self, rank: int) -> Iterable[tuple[int, int | None, int]]:
        """The buckets, or for arrays only the one holding the rank-th sample (the loops over them
        stop there), counted as if those before it had been seen."""
        b = self.buckets
        if not isinstance(b, Buckets):
            return b
        i = b.at_rank(rank)
        if i >= len(b):
            return ()
        lo, hi, _ = b[i]
        return ((lo, hi, rank),)  # seen reaches rank in this bucket, as the loop over all would

    def count_above(self, limit: float, known_max: float | None) -> int:
        """Samples that may be above `limit` (value > limit), counted conservatively.

        A bucket counts whole when any value in it could exceed the limit; overflow samples
        count unless the exact maximum shows no sample exceeds the limit.
        """
        if known_max is not None and known_max <= limit:
            return 0
        b = self.buckets
        if isinstance(b, Buckets):
            return b.samples_from(b.first_above(limit)) + self.overflow
        above = sum(c for lo, hi, c in b if hi is None or hi - 1 > limit)
        return above + self.overflow

    def percentile(self, q: float, known_max: float | None) -> tuple[float | None, bool]:
        """Conservative q-th percentile (0 < q < 100): the highest value the sample could have.

        Returns (value, in_overflow). In the overflow, the value is only known to be >= range_end
        (or is the exact max when that is the only thing known).
        """
        total = self.total
        if total == 0:
            return None, False
        rank = max(1, math.ceil(q * total / 100.0 - 1e-9))  # 99.9 % of 10000 is 9990, not 9991
        seen = 0
        for lo, hi, c in self._from_rank(rank):
            seen += c
            if seen >= rank:
                upper = known_max if hi is None else hi - 1
                if known_max is not None and upper is not None:
                    upper = min(upper, known_max)
                return float(upper if upper is not None else lo), False
        if known_max is not None:
            return float(known_max), True
        return (float(self.range_end) if self.range_end is not None else None), True

    def count_range(self, limit: float, known_max: float | None) -> tuple[int, int]:
        """(fewest, most) samples that can be above `limit`.

        The most is count_above's conservative count. The fewest counts buckets wholly above the
        limit, the overflow when it starts above the limit, and the max itself when it is above:
        an overflow that starts below the limit hides how many of its samples are above.
        """
        most = self.count_above(limit, known_max)
        if most == 0:
            return 0, 0
        b = self.buckets
        if isinstance(b, Buckets):
            fewest = b.samples_from(b.first_low_above(limit))
        else:
            fewest = sum(c for lo, _, c in b if lo > limit)
        if self.overflow and self.range_end is not None and self.range_end > limit:
            fewest += self.overflow
        if known_max is not None and known_max > limit:
            fewest = max(fewest, 1)
        return min(fewest, most), most

    def percentile_range(self, q: float, known_max: float | None) -> tuple[float, float | None] | None:
        """The lowest and highest value the q-th percentile sample can have (None: no samples).

        Exact in 1-unit buckets; a bucket's range in wider ones; in the overflow, from where the
        overflow starts to the exact max (None when the max is unknown too).
        """
        total = self.total
        if total == 0:
            return None
        rank = max(1, math.ceil(q * total / 100.0 - 1e-9))
        seen = 0
        for lo, hi, c in self._from_rank(rank):
            seen += c
            if seen >= rank:
                top = known_max if hi is None else hi - 1
                if known_max is not None and top is not None:
                    top = min(top, known_max)
                return float(min(lo, top) if top is not None else lo), None if top is None else float(top)
        if known_max is not None and rank >= total:
            return float(known_max), float(known_max)  # the top sample is the max
        bottom = float(self.range_end) if self.range_end is not None else 0.0
        return bottom, None if known_max is None else float(max(known_max, bottom))


@dataclass
class BlockMaxima:
    """The max latency of each block of `block_cycles` cycles, in order."""

    block_cycles: int
    block_seconds: float
    values: list[int]
    partial_cycles: int = 0
    partial_max: int | None = None


@dataclass
class ThreadResult:
    """One thread's results: counts and latencies in the run's unit, placement, histogram, block maxima."""

    index: int
    cycles: int
    min: float | None
    max: float | None
    avg: float | None
    cpu: int | None = None
    priority: int | None = None
    policy: str | None = None
    interval_us: int | None = None
    missed: int | None = None  # None: the format cannot tell
    # rtgate-sampler: seconds from the start of the thread's first period to its end, which its sampled
    # and missed periods must account for (core/validity.py overrun); None: the format does not say
    span_s: float | None = None
    histogram: Histogram | None = None
    block_maxima: BlockMaxima | None = None
    label: str | None = None  # thread group name from the threshold file
    # How missed periods were derived for tools that do not count them (rt-tests): the periods the
    # thread should have had, an upper bound when only a range is known, and the derivation in words.
    expected_periods: int | None = None
    missed_upper: int | None = None  # None: `missed` is exact (or unknown)
    missed_derivation: str | None = None

    def describe(self) -> str:
        parts = [f"thread {self.index}"]
        extra = []
        if self.cpu is not None and self.cpu >= 0:
            extra.append(f"cpu {self.cpu}")
        if self.priority is not None:
            extra.append(f"prio {self.priority}")
        if extra:
            parts.append("(" + ", ".join(extra) + ")")
        return " ".join(parts)


@dataclass
class MeasuredSetup:
    """What results say about how they were measured; None = the results do not say."""

    source: str  # "rtgate JSON", "rt-tests command line", "T: lines", "-v headers"
    tool: str | None = None
    interval_us: int | None = None  # base interval (thread 0)
    distance_us: int | None = None  # per-thread increment as run (cyclictest drops it with -h)
    duration_s: float | None = None  # -D
    loops: int | None = None  # -l
    policy: str | None = None
    priority: int | None = None  # of thread 0
    priospread: bool = False
    threads: int | None = None
    nsecs: bool | None = None  # -N: values in ns
    relative: bool = False  # -r
    breaktrace: int | None = None  # -b, in the results' unit
    elapsed_s: tuple[float, float] | None = None  # wall-clock bounds of the whole run
    stopped_early: str | None = None  # why the results show the run ended before its -D/-l
    length_assumed: bool = False  # -D/-l are the thresholds', not the run's: short is "shorter than asked"
    pinned: bool | None = None  # the command line pins threads (-a, -S, --thread-cpus); None: not known
    # cyclictest -v prints "Thread N Interval: X" after adding -d (without -h): X is thread N+1's interval.
    # Per thread index, the X printed; its interval is X - d, exact when two threads show d (parsers/verbose.py).
    announced_intervals: dict[int, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass
class RunResult:
    """One results file as every parser gives it: its threads, how the run ended, what it recorded."""

    source: str
    format: str
    unit: str
    threads: list[ThreadResult]
    complete: bool = True
    stop_reason: str | None = None
    signal: str | None = None
    cmdline: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    elapsed_s: float | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    # How the results say they were measured, None when they do not.
    measured_setup: MeasuredSetup | None = None

    def thread(self, index: int) -> ThreadResult | None:
        # Indexed once per list of threads: a lookup per verdict was quadratic in the thread count.
        cached = self.__dict__.get("_by_index")
        if cached is None or cached[0] is not self.threads or cached[1] != len(self.threads):
            by_index: dict[int, ThreadResult] = {}
            for t in self.threads:
                by_index.setdefault(t.index, t)
            cached = (self.threads, len(self.threads), by_index)
            self.__dict__["_by_index"] = cached
        return cached[2].get(index)

    def units_per_us(self) -> int:
        return UNIT_SCALE[self.unit]


def merge_counts(counts: Iterable[tuple[int, int]]) -> list[tuple[int, int | None, int]]:
    """Exact value -> count pairs as 1-unit buckets."""
    return [(v, v + 1, c) for v, c in sorted(counts) if c]
