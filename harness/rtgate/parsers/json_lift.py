# SPDX-License-Identifier: GPL-2.0-or-later
"""Histograms and block maxima of a results JSON read straight into arrays, beside json's tree.

Only arrays in the one form the sampler and cyclictest write are lifted: whole numbers without sign,
fraction or leading zero, within 64 bits, JSON whitespace only, lows strictly increasing, `null` only
as the last bucket's upper edge. Anything else is left in the text for json and the parser's checks,
which name what is wrong as they always did. No regular expression spans a histogram (re's repeat
bookkeeping costs hundreds of MB on one of a million values): its shape is checked by deleting the
digits and comparing what is left, its numbers read by json's C scanner from a flat copy.

Each lifted value is replaced in the text by a string no input can hold (a random tag), so the
rest decodes as the same document; `attach` puts the arrays back where the tags are and refuses
(returns False) when one is anywhere else than a thread's histogram or block maxima.
"""

from __future__ import annotations

import json
import operator
import os
import re
from array import array
from dataclasses import dataclass
from typing import Any

from rtgate.core.model import WholeNumbers, compact_ints
from rtgate.core.validate import MAX_VALUE

_W = "[ \t\n\r]*"  # JSON's whitespace: \\s would take what json refuses
_EMPTY = re.compile(rf"\[{_W}\]")
_NOTHING = re.compile(rf"(\[{_W}\]|\{{{_W}\}})$")  # an empty list or object, up to the end given
_KEY = re.compile('"(histogram|values|overflow_cycles|recorded)"')
# The kinds a key's value may be lifted as, tried in order.
_KINDS = {
    "histogram": ("buckets", "counts"),
    "values": ("ints",),
    "overflow_cycles": ("cycles",),  # the sampler's -h overflow cycle numbers (rtgate.threads[].overflow_cycles)
    "recorded": ("rows",),  # its --spike records, [cycle, latency, time] (rtgate.threads[].spikes.recorded)
}
_COLON = re.compile(rf"{_W}:{_W}")
# Where a list of buckets ([[...], ...]) and a list of numbers end, if they are well-formed.
_ENDS = {
    "buckets": re.compile(rf"\]{_W}\]"),
    "rows": re.compile(rf"\]{_W}\]"),
    "ints": re.compile(r"\]"),
    "cycles": re.compile(r"\]"),
    "counts": re.compile(r"\}"),
}
# The skeleton of a list once its numbers, nulls and whitespace are gone: [[,,],[,,]] or [,,,].
_BONES = {
    "buckets": str.maketrans("", "", "0123456789 \t\n\rnul"),
    "ints": str.maketrans("", "", "0123456789 \t\n\r"),
}
_BONES["rows"] = _BONES["cycles"] = _BONES["ints"]  # whole numbers only: no null
_NO_BRACKETS = str.maketrans("", "", "[]")
_DIGITS = str.maketrans("", "", "0123456789")
_NO_SPACE = str.maketrans("", "", " \t\n\r")
_COUNTS_FLAT = str.maketrans(":", ",", '{}"')
_SPACE = " \t\n\r"


@dataclass
class Lifted:
    """A lifted array: `kind` buckets (a, b, c: lows, highs, counts), counts (a: latencies, c: counts), ints
    (a, whole numbers), cycles or rows (a: whole numbers, rows flat; nothing reads them: lifted so that json's
    tree does not hold them). `well_formed`: buckets checked as core/validate checks them (lo < hi <= the next
    lo, or increasing latencies below 2^63-1), so they are not walked again."""

    kind: str
    a: array[int] | list[int]
    b: array[int] | None = None
    c: array[int] | None = None
    open_top: bool = False
    well_formed: bool = False
    samples: int | None = None  # the sum of the counts

    def __len__(self) -> int:
        return len(self.a) * (3 if self.kind == "buckets" else 2 if self.kind == "counts" else 1)


def _flat(kind: str, value: str) -> list[Any] | None:
    """The numbers (and nulls) of a value of `kind`'s shape, in order; None for any other value.

    The skeleton leaves only brackets and commas when each slot holds digits, null or whitespace;
    json then reads the slots, refusing leading zeros, an empty slot, two numbers in one, a word.
    """
    if kind == "counts":
        # {"latency": count, ...}: without digits each key is "" (nothing else, no space, was in it)
        quotes = value.translate(_DIGITS)
        n = quotes.count('""')
        if quotes.translate(_NO_SPACE) != ("{" + '"":,' * (n - 1) + '"":}' if n else "{}"):
            return None
        flat = "[" + value[1:-1].translate(_COUNTS_FLAT) + "]"
    else:
        bones = value.translate(_BONES[kind])
        if bones == "[]" and _EMPTY.fullmatch(value):
            return []  # (one number leaves "[]" too: read below)
        n = bones.count(",") + 1
        if kind in ("buckets", "rows"):
            n, expected = n // 3, "[" + "[,,]," * (n // 3 - 1) + "[,,]]"
        else:
            expected = "[" + "," * (n - 1) + "]"
        if bones != expected:
            return None
        flat = "[" + value[1:-1].translate(_NO_BRACKETS) + "]" if kind in ("buckets", "rows") else value
    try:
        numbers = json.loads(flat)
    except ValueError:  # JSONDecodeError, or more than 4,300 digits
        return None
    return numbers if len(numbers) == n * {"buckets": 3, "rows": 3, "counts": 2}.get(kind, 1) else None


def _strictly_increasing(values: list[int]) -> bool:
    return all(map(operator.lt, values, values[1:]))


def _ordered(lows: list[int], highs: list[int], open_top: bool) -> bool:
    """Every bucket [lo, hi) holds something and the next starts at or after its end (lows then increase
    strictly): what core/validate checks of buckets, done here on the numbers json read, once."""
    n = len(lows) - 1  # the last bucket's end is checked alone: it may be open
    return (
        all(map(operator.lt, lows[:n], highs))
        and all(map(operator.le, highs[:n], lows[1:]))
        and (open_top or not lows or lows[n] < highs[n])
    )


def _convert(kind: str, value: str) -> Lifted | None:
    """The arrays of a value of `kind`'s shape; None when it breaks a rule json_lift keeps."""
    flat = _flat(kind, value)
    if flat is None:
        return None
    try:
        if kind in ("cycles", "rows"):  # nothing reads them: kept compact, whole numbers within 64 bits
            return Lifted(kind, compact_ints(flat))
        if kind == "ints":  # digits only: whole numbers; within 64 bits, as json's tree is checked
            top = max(flat, default=None)
            return Lifted(kind, WholeNumbers(flat, top)) if top is None or top <= MAX_VALUE else None
        if kind == "counts":
            lows = flat[0::2]
            if not _strictly_increasing(lows):
                return None
            counts = flat[1::2]
            below = not lows or lows[-1] < MAX_VALUE  # each bucket [lo, lo + 1) within 64 bits
            return Lifted(kind, compact_ints(lows), c=compact_ints(counts), well_formed=below, samples=sum(counts))
        lows, highs, counts = flat[0::3], flat[1::3], flat[2::3]
        open_top = bool(highs) and highs[-1] is None
        if open_top:
            highs[-1] = 0
        # The comparisons run on json's numbers, not on the arrays (whose every read makes an int again).
        well_formed = _ordered(lows, highs, open_top)
        if not well_formed and not _strictly_increasing(lows):
            return None
        arrays = compact_ints(lows), compact_ints(highs), compact_ints(counts)
        return Lifted(kind, *arrays, open_top, well_formed, sum(counts))  # summed here: no int made per read
    except (OverflowError, TypeError):  # beyond 64 bits; null elsewhere than the last upper edge
        return None


class _Ends:
    """The end of a well-formed value starting at each key, found once for keys in increasing order.

    The first closing bracket after a start serves every later start before it: a text of keys that
    never close costs one scan, not one per key.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.found: dict[str, tuple[int, int, int]] = {}  # kind -> searched from, closing found at, its end

    def __call__(self, kind: str, start: int) -> int | None:
        text = self.text
        if not text.startswith("{" if kind == "counts" else "[", start):
            return None
        empty = _EMPTY.match(text, start)
        if empty and kind != "counts":
            return empty.end()
        since, closing, end = self.found.get(kind, (-1, -1, -1))
        if not since <= start <= closing:
            m = _ENDS[kind].search(text, start)
            closing, end = (m.start(), m.end()) if m else (len(text), -1)
            self.found[kind] = (start, closing, end)
        return end if end >= 0 else None


def _after_key(text: str, key: re.Match[str]) -> int | None:
    """Where the value of a key starts, or None when the match is no key (a key follows { or ,)."""
    i = key.start() - 1
    while i >= 0 and text[i] in _SPACE:
        i -= 1
    if i < 0 or text[i] not in "{,":
        return None
    colon = _COLON.match(text, key.end())
    return colon.end() if colon else None


# The most values one array of a real result holds, each kind: json reads an array whole, ~40 bytes a value for
# a moment, so this bounds that moment (~130 MB) whatever the file. Larger arrays stay in the text, for json's
# tree and the parser's limit on its values. Buckets: the sampler's largest layout (-N -h 1000000: 2^20 linear
# buckets, 14 powers of two of 128, the open one) of 3 values each; counts ("latency": count), as many
# values; ints (block maxima): the sampler's BLOCK_CAP, 4096 entries however long the run (sampler/main.c).
# Overflow cycles: at most -h N <= 1,000,000 a thread; spikes: --spike-nodes <= 1,000,000 records of 3 values.
MAX_ARRAY_VALUES = {
    "buckets": 3 * ((1 << 20) + 14 * 128 + 1),
    "counts": 3 * ((1 << 20) + 14 * 128 + 1),
    "ints": 4096,
    "cycles": 1_000_000,
    "rows": 3 * 1_000_000,
}


class Lift:
    """The text with its well-formed histograms replaced by tags, and the arrays read from them."""

    def __init__(self, text: str, limit: int, arrays: int = 3 * 1025) -> None:
        """`limit`: the most values the arrays may hold; past it `values` is above it and the rest of the
        text is not read (the file is refused). Read, a value costs ~40 bytes for a moment; an array of more
        than MAX_ARRAY_VALUES is not lifted. `arrays`: the most arrays lifted (three a thread); the rest stays
        text, for the parser's limits to refuse."""
        self.tag = "rtgate-lifted-" + os.urandom(8).hex() + "-"
        self.arrays: list[Lifted] = []
        self.values = 0
        parts: list[str] = []
        end = 0
        ends = _Ends(text)
        for key in _KEY.finditer(text):
            start = _after_key(text, key)
            if start is None or start < end:
                continue
            for kind in _KINDS[key.group(1)]:
                stop = ends(kind, start)
                # its values, from its commas: n - 1 in n numbers, 3n - 1 in n buckets, n - 1 in n pairs
                commas = text.count(",", start, stop) if stop else -1
                empty = stop is not None and commas == 0 and _NOTHING.match(text, start, stop) is not None  # [], {}
                if empty and kind in ("cycles", "rows"):
                    break  # nothing to gain: json's tree holds an empty list as cheaply (most runs: all of them)
                values = 0 if empty else (commas + 1) * (2 if kind == "counts" else 1)
                if values > limit - self.values:
                    self.values = limit + 1  # more than may be read: refused before it is
                    break
                big = values > MAX_ARRAY_VALUES[kind]
                lifted = _convert(kind, text[start:stop]) if stop is not None and not big else None
                if lifted is not None:
                    parts += (text[end:start], f'"{self.tag}{len(self.arrays)}"')
                    self.arrays.append(lifted)
                    self.values += len(lifted)
                    end = stop  # type: ignore[assignment]
                    break
            if self.values > limit or len(self.arrays) >= arrays:
                break
        parts.append(text[end:])
        self.rest = "".join(parts) if self.arrays else text

    def take(self, value: Any, kind: str) -> Lifted | Any:
        """The array a tag stands for (counted as placed), or the value itself."""
        if isinstance(value, str) and value.startswith(self.tag):
            n = int(value[len(self.tag) :])
            lifted = self.arrays[n]
            if lifted.kind == kind:
                self._placed += 1
                return lifted
        return value

    def attach(self, doc: Any) -> bool:
        """Put the arrays in place of their tags; False when a tag is anywhere else."""
        self._placed = 0
        if not isinstance(doc, dict):
            return not self.arrays
        rg = doc.get("rtgate")
        threads = rg.get("threads") if isinstance(rg, dict) else None
        for t in threads if isinstance(threads, list) else ():
            if not isinstance(t, dict):
                continue
            if "histogram" in t:
                t["histogram"] = self.take(t["histogram"], "buckets")
            bm = t.get("block_maxima")
            if isinstance(bm, dict) and "values" in bm:
                bm["values"] = self.take(bm["values"], "ints")
            if "overflow_cycles" in t:
                t["overflow_cycles"] = self.take(t["overflow_cycles"], "cycles")
            spikes = t.get("spikes")
            if isinstance(spikes, dict) and "recorded" in spikes:
                spikes["recorded"] = self.take(spikes["recorded"], "rows")
        rt = doc.get("thread")
        for t in rt.values() if isinstance(rt, dict) else ():
            if isinstance(t, dict) and "histogram" in t:
                t["histogram"] = self.take(t["histogram"], "counts")
        return self._placed == len(self.arrays)
