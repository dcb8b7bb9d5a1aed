# SPDX-License-Identifier: GPL-2.0-or-later
"""Histograms read into arrays (parsers/json_lift.py) give the same model, the same verdict and the same
error as json's tree: each input below is parsed both ways and the outcomes compared."""

from __future__ import annotations

import json
import re
import types
from array import array
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, RT_TESTS
from rtgate.core.model import Buckets, Histogram, RunResult
from rtgate.errors import ResultsError
from rtgate.parsers import json_lift, json_results, load_results
from rtgate.reports.kcidb import run_digest

SAMPLER_JSON = FIXTURES / "rtgate-sampler" / "rs-t2-h200.json"
CT_JSON = RT_TESTS / "ct-new-S-h300.json"


def _outcome(path: Path) -> tuple[str, Any]:
    try:
        run = load_results(path)
    except ResultsError as e:
        return "error", str(e)
    return "ok", run


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[tuple[str, Any], tuple[str, Any]]:
    lifted = _outcome(path)
    with monkeypatch.context() as m:  # nothing lifted: json's tree, as before json_lift
        m.setattr(json_results, "Lift", lambda text, *limits: types.SimpleNamespace(arrays=[], rest=text, values=0))
        tree = _outcome(path)
    return lifted, tree


def _buckets(run: RunResult) -> list[list[tuple[int, int | None, int]] | None]:
    return [None if t.histogram is None else list(t.histogram.buckets) for t in run.threads]


def _same(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Any]:
    lifted, tree = _both(path, monkeypatch)
    assert lifted[0] == tree[0], (lifted, tree)
    if lifted[0] == "error":
        assert lifted[1] == tree[1]
    else:
        assert lifted[1] == tree[1]
        assert _buckets(lifted[1]) == _buckets(tree[1])
        assert run_digest(lifted[1]) == run_digest(tree[1])  # export's identity of a run
    return lifted


def _sampler_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(SAMPLER_JSON.read_text())
    return doc


def _write(tmp_path: Path, text: str, name: str = "r.json") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_recorded_results_are_lifted_and_read_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    for path in (SAMPLER_JSON, CT_JSON, RT_TESTS / "ct-24-S-h300.json", RT_TESTS / "ct-new-t2-H200.json"):
        lift = json_lift.Lift(path.read_text(), 10**6)
        assert lift.arrays, path  # the test would prove nothing if nothing were lifted
        kind, run = _same(path, monkeypatch)
        assert kind == "ok"
    run = load_results(SAMPLER_JSON)
    assert all(isinstance(t.histogram.buckets, Buckets) for t in run.threads if t.histogram)


@pytest.mark.parametrize("indent", [None, 0, 1, "\t", "\r\n  "])
def test_any_json_whitespace_reads_alike(tmp_path: Path, indent: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _sampler_doc()
    text = json.dumps(doc, indent=indent) if not (isinstance(indent, str) and "\r" in indent) else None
    if text is None:
        text = json.dumps(doc, indent=2).replace(",\n", " \t,\n").replace("\n", "\r\n")  # outside strings
    assert _same(_write(tmp_path, text), monkeypatch)[0] == "ok"


# Edits of the first thread's histogram (rtgate layout) as text: each is refused, or read, alike.
HISTOGRAM_EDITS = {
    "leading zero": lambda h: h.replace("[", "[0", 2).replace("[0[0", "[[0", 1),
    "float count": lambda h: re.sub(r"(\d+)\]", r"\1.0]", h, count=1),
    "negative count": lambda h: re.sub(r", (\d+)\]", r", -\1]", h, count=1),
    "exponent": lambda h: re.sub(r", (\d+)\]", r", \1e0]", h, count=1),
    "count 2^63": lambda h: re.sub(r", (\d+)\]", ", 9223372036854775808]", h, count=1),
    "count of 20 digits": lambda h: re.sub(r", (\d+)\]", ", 12345678901234567890]", h, count=1),
    "count of 5000 digits": lambda h: re.sub(r", (\d+)\]", ", " + "9" * 5000 + "]", h, count=1),
    "null inside": lambda h: re.sub(r"\[(\d+), (\d+),", r"[\1, null,", h, count=1),
    "null as a low": lambda h: re.sub(r"\[(\d+),", "[null,", h, count=1),
    "two values": lambda h: re.sub(r", (\d+)\]", "]", h, count=1),
    "four values": lambda h: re.sub(r"(\d+)\]", r"\1, 1]", h, count=1),
    # lows still increasing, so lifted: the buckets' own checks (core/validate) must still run on them
    "empty bucket": lambda h: re.sub(r"\[(\d+), (\d+),", r"[\1, \1,", h, count=1),
    "reversed bucket": lambda h: re.sub(r"\[(\d+), (\d+),", lambda m: f"[{m[1]}, {int(m[1]) // 2},", h, count=1),
    "overlapping buckets": lambda h: re.sub(
        r"\[(\d+), (\d+), (\d+)\], \[(\d+),", lambda m: f"[{m[1]}, {int(m[4]) + 1}, {m[3]}], [{m[4]},", h, count=1
    ),
    "last bucket empty": lambda h: re.sub(r"\[(\d+), (\d+), (\d+)\]\]$", r"[\1, \1, \3]]", h),
    "last bucket open": lambda h: re.sub(r"\[(\d+), (\d+), (\d+)\]\]$", r"[\1, null, \3]]", h),
    "bucket repeated": lambda h: h.replace("[[", "[" + re.search(r"\[\d+, \d+, \d+\]", h).group() + ", [", 1),  # type: ignore[union-attr]
    "empty slot": lambda h: re.sub(r", (\d+)\]", ", ]", h, count=1),
    "true": lambda h: re.sub(r", (\d+)\]", ", true]", h, count=1),
    "nbsp": lambda h: h.replace(", ", ",\u00a0", 1),
    "vertical tab": lambda h: h.replace(", ", ",\x0b", 1),
    "empty": lambda h: "[]",
    "spaced empty": lambda h: "[ \n ]",
    "nested deeper": lambda h: h.replace("[[", "[[[", 1),
    "an object": lambda h: "{}",
    "a string": lambda h: '"[[1, 2, 3]]"',
    "a tag": lambda h: f'"{json_lift.Lift("", 1).tag}0"',
    "a guessed tag": lambda h: '"rtgate-lifted-0000000000000000-0"',
}


MALFORMED_BUCKETS = ("empty bucket", "reversed bucket", "overlapping buckets", "last bucket empty")


def _rtgate_text(edit: Any = None, indent: int | None = None) -> str:
    """The recorded sampler JSON with its first rtgate thread's histogram as `edit` makes it."""
    doc = _sampler_doc()
    marker = "@@HIST@@"
    original = json.dumps(doc["rtgate"]["threads"][0]["histogram"])
    doc["rtgate"]["threads"][0]["histogram"] = marker
    text = json.dumps(doc, indent=indent)
    return text.replace(f'"{marker}"', edit(original) if edit else original)


@pytest.mark.parametrize("name", sorted(HISTOGRAM_EDITS))
def test_edited_histograms_are_judged_alike(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _rtgate_text(HISTOGRAM_EDITS[name])
    assert text != _rtgate_text()
    kind, _ = _same(_write(tmp_path, text), monkeypatch)
    if name in ("two values", "four values", "negative count", "float count", "null as a low", "count 2^63"):
        assert kind == "error"  # what the tree path refused is still refused
    if name in MALFORMED_BUCKETS:  # lifted, marked for core/validate to walk and name the bad bucket
        assert kind == "error"
        assert [a.well_formed for a in json_lift.Lift(text, 10**6).arrays if a.kind == "buckets"].count(False) == 1


def test_truncated_anywhere_gives_the_same_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _rtgate_text()
    for cut in range(len(text) // 3, len(text), max(1, len(text) // 40)):
        kind, message = _same(_write(tmp_path, text[:cut]), monkeypatch)
        assert kind == "error" and ("truncated" in message or "JSON" in message)


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d["sysinfo"].update(histogram=[[1, 2, 3]]),  # a lifted shape where no histogram belongs
        lambda d: d["sysinfo"].update(values=[1, 2, 3]),
        lambda d: d["thread"]["0"].update(histogram=[[18, 19, 2]]),  # buckets where counts belong
        lambda d: d["rtgate"]["threads"][0].update(histogram={"18": 2}),  # and the other way round
        lambda d: d["rtgate"]["threads"][0]["block_maxima"].update(values=[1, 2.5]),
        lambda d: d["rtgate"]["threads"][0]["block_maxima"].update(values=[]),
        lambda d: d["rtgate"]["threads"][0]["block_maxima"].update(values=[[1]]),
        lambda d: d["rtgate"]["threads"][0].update(block_maxima={"values": [3, 1, 2]}),
        lambda d: d["rtgate"]["threads"].reverse(),
        lambda d: d.update(cmdline=d["cmdline:"]),
    ],
)
def test_lifted_shapes_anywhere_else_read_alike(tmp_path: Path, edit: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _sampler_doc()
    doc["rtgate"]["threads"][0].setdefault(
        "block_maxima", {"block_cycles": 100, "block_seconds": 0.05, "values": [2746, 90, 80, 70]}
    )
    edit(doc)
    _same(_write(tmp_path, json.dumps(doc, indent=1)), monkeypatch)


@pytest.mark.parametrize(
    "edit",
    [
        lambda h: h.replace('"14":', '"014":', 1),  # leading zero: not lifted, read as before
        lambda h: h.replace('"14":', '" 14":', 1),
        lambda h: h.replace('"14":', '"14 ":', 1),
        lambda h: re.sub(r'"(\d+)": (\d+),\s*"(\d+)"', r'"\3": \2, "\1"', h, count=1),  # out of order
        lambda h: re.sub(r'("\d+": \d+)', r"\1, \1", h, count=1),  # a key twice
        lambda h: re.sub(r'": (\d+)', '": -1', h, count=1),
        lambda h: re.sub(r'": (\d+)', '": 1.5', h, count=1),
        lambda h: re.sub(r'": (\d+)', '": 99999999999999999999', h, count=1),
        lambda h: h.replace('"avg": ', '"avg": -nan, "x": ', 1),
    ],
)
def test_cyclictest_histograms_read_alike(tmp_path: Path, edit: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    text = CT_JSON.read_text()
    edited = edit(text)
    assert edited != text
    _same(_write(tmp_path, edited), monkeypatch)


def test_buckets_read_as_the_tuples_they_hold() -> None:
    b = Buckets(array("i", [1, 2, 5]), array("i", [2, 4, 0]), array("i", [3, 0, 7]), open_top=True)
    assert list(b) == [(1, 2, 3), (2, 4, 0), (5, None, 7)] == b
    assert list(reversed(b)) == [(5, None, 7), (2, 4, 0), (1, 2, 3)]
    assert b[0] == (1, 2, 3) and b[-1] == (5, None, 7) and b[1:] == [(2, 4, 0), (5, None, 7)] and len(b) == 3
    unit = Buckets(array("i", [7, 9]), None, array("q", [2**40, 1]))
    assert list(unit) == [(7, 8, 2**40), (9, 10, 1)]
    tuples = Histogram(unit="us", buckets=list(b))
    arrays = Histogram(unit="us", buckets=b)
    assert arrays.total == tuples.total == 10
    for limit in (0, 1, 3, 5, 100):
        assert arrays.count_above(limit, 9) == tuples.count_above(limit, 9)
        assert arrays.count_range(limit, None) == tuples.count_range(limit, None)
    for q in (50, 99, 99.99):
        assert arrays.percentile(q, None) == tuples.percentile(q, None)
        assert arrays.percentile_range(q, 9) == tuples.percentile_range(q, 9)


def test_too_many_threads_are_refused(tmp_path: Path) -> None:
    doc = json.loads(CT_JSON.read_text())
    one = doc["thread"]["0"]
    doc["thread"] = {str(i): one for i in range(1026)}
    doc["num_threads"] = 1026
    with pytest.raises(ResultsError, match="1026 threads: more than"):
        load_results(_write(tmp_path, json.dumps(doc)))


def _random_histograms(seed: int) -> list[tuple[list[tuple[int, int | None, int]], Buckets]]:
    """Valid histograms as both forms: 1-unit buckets, wide ones, an open top, empty buckets."""
    import random

    rng = random.Random(seed)
    out = []
    for case in range(60):
        lo, rows = rng.randrange(0, 50), []
        for _ in range(rng.randrange(1, 80)):
            width = 1 if case % 3 == 0 else rng.choice((1, 1, 2, 8, 64))
            rows.append((lo, lo + width, rng.choice((0, 1, 1, 3, 1000))))
            lo += width + rng.choice((0, 0, 1, 5))
        open_top = case % 4 == 1
        if open_top:
            rows[-1] = (rows[-1][0], None, rows[-1][2])
        lows = array("q", [r[0] for r in rows])
        counts = array("q", [r[2] for r in rows])
        if case % 3 == 0 and not open_top:
            b = Buckets(lows, None, counts)
        else:
            b = Buckets(lows, array("q", [r[1] or 0 for r in rows]), counts, open_top)
        assert list(b) == rows
        out.append((rows, b))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("large", [False, True])
def test_gates_read_arrays_as_they_read_tuples(seed: int, large: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bisection over arrays (model.Buckets) answers every question the loop over tuples does; `large`: as
    histograms of more than RUNNING_SUMS_FROM buckets are read (running sums, numpy's missed-period bounds)."""
    from rtgate.core import model, periods
    from rtgate.core.model import ThreadResult
    from rtgate.core.periods import latency_bounds

    if large:
        monkeypatch.setattr(model, "RUNNING_SUMS_FROM", 0)
        monkeypatch.setattr(periods, "RUNNING_SUMS_FROM", 0)

    for rows, b in _random_histograms(seed):
        filled = [(lo, hi) for lo, hi, c in rows if c]
        assert b.filled_ends() == ((filled[0], filled[-1]) if filled else (None, None))
        for overflow, range_end in ((0, None), (5, (rows[-1][1] or rows[-1][0] + 1) + 3)):
            tuples = Histogram(unit="us", buckets=list(rows), overflow=overflow, range_end=range_end)
            arrays = Histogram(unit="us", buckets=b, overflow=overflow, range_end=range_end)
            top = rows[-1][0] + 10
            for limit in (-1, 0, 0.5, 3, 17, 49.9, 50, 100, 1e6, *(r[0] for r in rows[::7])):
                for known in (None, limit, top):
                    assert arrays.count_above(limit, known) == tuples.count_above(limit, known)
                    assert arrays.count_range(limit, known) == tuples.count_range(limit, known)
            for q in (1, 50, 90, 99, 99.9, 99.99, 99.9999):
                for known in (None, float(top)):
                    assert arrays.percentile(q, known) == tuples.percentile(q, known)
                    assert arrays.percentile_range(q, known) == tuples.percentile_range(q, known)
            run = RunResult(source="x", format="rt-tests-json", unit="us", threads=[])
            for iv in (1, 2, 7, 40, 1000):
                t_tuples = ThreadResult(0, tuples.total, rows[0][0], top, None, histogram=tuples)
                t_arrays = ThreadResult(0, arrays.total, rows[0][0], top, None, histogram=arrays)
                assert latency_bounds(run, t_arrays, iv) == latency_bounds(run, t_tuples, iv)


def test_too_many_histogram_values_are_refused_without_reading_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(json_results, "MAX_JSON_HISTOGRAM_VALUES", 50)
    with pytest.raises(ResultsError, match="more than 50 histogram values"):
        load_results(SAMPLER_JSON)
    lift = json_lift.Lift(SAMPLER_JSON.read_text(), 50)
    assert 50 < lift.values and len(lift.arrays) < len(json_lift.Lift(SAMPLER_JSON.read_text(), 10**6).arrays)


def test_a_file_of_many_threads_is_refused_before_it_is_all_read(tmp_path: Path) -> None:
    """Lifting stops after three arrays a thread of the most threads a file may hold."""
    doc = json.loads(CT_JSON.read_text())
    one = doc["thread"]["0"]
    doc["thread"] = {str(i): one for i in range(5000)}
    text = json.dumps(doc)
    assert len(json_lift.Lift(text, 10**7, 30).arrays) == 30
    with pytest.raises(ResultsError, match="5000 threads: more than"):
        load_results(_write(tmp_path, text))


@pytest.mark.parametrize("seed", [4, 5])
def test_buckets_marked_well_formed_are_judged_as_the_full_walk_judges_them(seed: int) -> None:
    """json_lift checks lifted buckets once, on json's numbers (Lifted.well_formed), and check_run then skips
    its own walk over the arrays: with the mark or without it, and as tuples, every outcome is the same."""
    import random

    from rtgate.core.model import ThreadResult
    from rtgate.core.validate import check_run

    rng = random.Random(seed)
    marked = lifted = 0
    for _ in range(300):
        rows: list[list[int | None]] = []
        lo = rng.randrange(0, 5)
        for _ in range(rng.randrange(1, 12)):
            width = rng.choice((1, 2, 5))
            rows.append([lo, lo + width, rng.choice((0, 1, 7))])
            lo += width + rng.choice((0, 0, 1))
        i, mistake = rng.randrange(len(rows)), rng.choice(("none", "empty", "reversed", "overlap", "open"))
        low = rows[i][0]
        assert isinstance(low, int)
        if mistake == "empty":
            rows[i][1] = low
        elif mistake == "reversed":
            rows[i][1] = low // 2
        elif mistake == "overlap" and i + 1 < len(rows):
            rows[i][1] = int(rows[i + 1][0] or 0) + 1
        elif mistake == "open":
            rows[-1][1] = None
        lift = json_lift.Lift(json.dumps({"histogram": rows}), 10**6)
        if not lift.arrays:
            continue  # not lifted: json's tree and the parser's checks, as before
        a = lift.arrays[0]
        assert isinstance(a.a, array) and a.b is not None and a.c is not None
        marked, lifted = marked + a.well_formed, lifted + 1
        forms = (
            Buckets(a.a, a.b, a.c, a.open_top, a.well_formed),
            Buckets(a.a, a.b, a.c, a.open_top),
            [(r[0], r[1], r[2]) for r in rows],
        )
        outcomes = []
        for buckets in forms:
            h = Histogram(unit="us", buckets=buckets)  # type: ignore[arg-type]
            run = RunResult(source="r.json", format="rtgate-json", unit="us", threads=[])
            run.threads.append(ThreadResult(0, h.total, None, None, None, histogram=h))
            try:
                check_run(run)
                outcomes.append("ok")
            except ResultsError as e:
                outcomes.append(str(e))
        assert outcomes[0] == outcomes[1] == outcomes[2], (rows, outcomes)
    assert 0 < marked < lifted  # both kinds were met


@pytest.mark.parametrize("blocks", [4096, 4097])
def test_block_maxima_beyond_the_samplers_are_left_to_json(
    tmp_path: Path, blocks: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sampler keeps 4096 block maxima however long it runs: more is no array it wrote, so it is not
    lifted (json's tree, under its own limit, reads it), and reads as it always did."""
    doc = _sampler_doc()
    top = doc["rtgate"]["threads"][0]["max"]
    doc["rtgate"]["threads"][0]["block_maxima"] = {
        "block_cycles": 1,
        "block_seconds": 0.001,
        "partial_cycles": 0,
        "partial_max": None,
        "values": [top] * blocks,
    }
    text = json.dumps(doc)
    before = [a.kind for a in json_lift.Lift(SAMPLER_JSON.read_text(), 10**6).arrays].count("ints")
    kinds = [a.kind for a in json_lift.Lift(text, 10**6).arrays]
    assert kinds.count("ints") == before - (blocks > 4096)
    kind, run = _same(_write(tmp_path, text), monkeypatch)
    assert kind == "ok" and len(run.threads[0].block_maxima.values) == blocks


@pytest.mark.parametrize(
    "recorded", [[], [[3, 250, 1700000000123456], [9, 180, 1700000000124456]], [[3, 250, -1]], [[3, None, 1]]]
)
def test_overflow_cycles_and_spikes_read_alike(tmp_path: Path, recorded: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _sampler_doc()
    t = doc["rtgate"]["threads"][0]
    t["overflow_cycles"] = [5, 9, 12]
    t["spikes"] = {"total": len(recorded), "recorded": recorded}
    text = json.dumps(doc, indent=1)
    before = [a.kind for a in json_lift.Lift(SAMPLER_JSON.read_text(), 10**6).arrays]
    kinds = [a.kind for a in json_lift.Lift(text, 10**6).arrays]
    whole = all(None not in r and min(r) >= 0 for r in recorded)  # else json's tree reads them, as before
    lifted = whole and bool(recorded)  # an empty list stays in json's tree: nothing to gain
    assert kinds.count("cycles") == before.count("cycles") and kinds.count("rows") == before.count("rows") + lifted
    _same(_write(tmp_path, text), monkeypatch)


def test_1024_threads_of_overflow_cycles_and_spikes_are_read(tmp_path: Path) -> None:
    """A failing run of 1024 threads with -h 800 and --spike: 800 overflow cycles and 10 spikes a thread hold
    850,000 values, more than json's tree may (MAX_JSON_VALUES); they are read into arrays."""
    import dense_results

    path = tmp_path / "r.json"
    dense_results.write(path, 1024 * 7, sep=",")
    cycles = "[" + ", ".join(str(1000 + i) for i in range(800)) + "]"
    spikes = "[" + ", ".join(f"[{1000 + i}, 250, {1700000000000000 + i}]" for i in range(10)) + "]"
    text = path.read_text().replace('"overflow_cycles": []', f'"overflow_cycles": {cycles}')
    path.write_text(text.replace('"recorded": []', f'"recorded": {spikes}'))
    assert 1024 * 830 > json_results.MAX_JSON_VALUES
    run = load_results(path)
    assert len(run.threads) == 1024
