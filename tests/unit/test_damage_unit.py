# SPDX-License-Identifier: GPL-2.0-or-later
"""Damaged results never turn a verdict PASS; honest results are never refused: recorded and generated
documents through the parsers and `rtgate check` in-process (live runs in every format: tests/system)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from conftest import RT_TESTS
from damaged import INJECT, SAMPLER_FIX, SETTINGS, check, gates_file
from rtgate.cli import main as rtgate_main

JSON_FIXTURES = [
    RT_TESTS / n
    for n in (
        "ct-new-S-h300.json",
        "ct-24-S-h300.json",
        "ct-new-t2-H200.json",
        "ct-new-nohist.json",
        "ct-inject-D6.json",
        "ct-inject-l5000-h100.json",
    )
] + [SAMPLER_FIX / "rs-t2-h200.json"]


HIST_FIXTURES = [RT_TESTS / n for n in ("ct-new-S-h300.hist", "ct-24-S-h300.hist", "ct-new-t2-H200.hist")] + [
    SAMPLER_FIX / "rs-t2-h200.hist"
]


SUMMARY_FIXTURES = [RT_TESTS / "ct-new-nohist.stdout", RT_TESTS / "ct-new-live.stdout", SAMPLER_FIX / "rs-t2-q.stdout"]


VERBOSE_FIXTURES = [RT_TESTS / "ct-24-verbose.stdout", SAMPLER_FIX / "rs-t2-verbose.stdout"]


ALL_FIXTURES = JSON_FIXTURES + HIST_FIXTURES + SUMMARY_FIXTURES + VERBOSE_FIXTURES


def assert_refused(code: int, err: str, path: Path) -> None:
    assert code == 2, f"damaged input was evaluated (exit {code}): {err}"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rtgate: error: ") and str(path) in lines[0], err
    assert "internal error" not in err and "Traceback" not in err, err


def first_max(path: Path) -> float:
    from rtgate.parsers import load_results

    return max(t.max for t in load_results(path).threads if t.max is not None)


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.name)
def test_every_recorded_output_is_accepted(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = check(gates_file(tmp_path, 10**6), path, capsys)
    assert code in (0, 1, 3) and "error" not in err, err  # a verdict (missed periods can FAIL), never refused


def test_rtgate_json_with_negative_max_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads((SAMPLER_FIX / "rs-t2-h200.json").read_text())
    t = doc["rtgate"]["threads"][0]
    t.update(cycles=100, min=5000, max=-1, avg=5000.0, sum=500000, histogram=[[5000, 5001, 100]])
    doc["rtgate"]["threads"] = [t]
    doc["num_threads"] = 1
    doc["thread"] = {"0": {"histogram": {}, "cycles": 100, "min": 5000, "max": -1, "avg": 5000.0}}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    code, err = check(gates_file(tmp_path, 100), path, capsys)
    assert_refused(code, err, path)
    assert "max" in err


def test_rt_tests_json_with_nan_max_and_overflow_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads((RT_TESTS / "ct-new-S-h300.json").read_text())
    t = doc["thread"]["0"]
    left = t["cycles"] // 10  # 10 % of the samples leave the histogram: the overflow
    for key in sorted(t["histogram"], key=int):
        take = min(left, t["histogram"][key])
        t["histogram"][key] -= take
        left -= take
    t["histogram"] = {k: v for k, v in t["histogram"].items() if v}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc).replace(f'"max": {t["max"]}', '"max": NaN', 1))
    assert '"max": NaN' in path.read_text()
    code, err = check(gates_file(tmp_path, 100), path, capsys)
    assert_refused(code, err, path)


BAD_NUMBERS = [
    "NaN",
    "Infinity",
    "-Infinity",
    "-1",
    "1.5",
    "1e400",
    "9" * 400,
    "9" * 5000,
    '"12"',
    "null",
    "[]",
    "{}",
    "true",
]


def _threads(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc["rtgate"]["threads"] if "rtgate" in doc else list(doc["thread"].values())


def hist_limit(doc: dict[str, Any]) -> int:
    return int(re.search(r"-[hH] (\d+)", doc["cmdline:"]).group(1))  # type: ignore[union-attr]


def _set_raw(text: str, value: str) -> str:
    return text.replace('"__DAMAGE__"', value)


@SETTINGS
@given(
    fixture=st.sampled_from(JSON_FIXTURES),
    field=st.sampled_from(["min", "max", "avg", "cycles", "cpu"]),
    bad=st.sampled_from(BAD_NUMBERS),
    which=st.integers(0, 1),
)
def test_json_bad_numbers_are_refused(
    fixture: Path, field: str, bad: str, which: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(re.sub(r"-?nan", "null", fixture.read_text()))
    threads = _threads(doc)
    t = threads[which % len(threads)]
    assume(not (field == "avg" and bad == "null"))  # an unknown average is honest (cyclictest's nan)
    assume(not (field == "cpu" and bad in ("-1", "null")))  # cpu -1: not pinned
    t[field] = "__DAMAGE__"
    path = tmp_path / "r.json"
    path.write_text(_set_raw(json.dumps(doc), bad))
    code, err = check(gates_file(tmp_path, first_max(fixture) - 1), path, capsys)
    assert_refused(code, err, path)


@SETTINGS
@given(fixture=st.sampled_from(JSON_FIXTURES), which=st.integers(0, 1), data=st.data())
def test_json_contradictions_are_refused(
    fixture: Path, which: int, data: st.DataObject, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(re.sub(r"-?nan", "null", fixture.read_text()))
    rtgate = "rtgate" in doc
    threads = _threads(doc)
    t = threads[which % len(threads)]
    hist = t.get("histogram")
    filled = sorted(b[0] for b in hist) if rtgate else sorted(int(k) for k, v in (hist or {}).items() if v)
    in_hist = sum(b[2] for b in hist) if rtgate else sum((hist or {}).values())
    damages: list[str] = ["avg_above_max", "avg_below_min", "min_above_max", "missing_thread", "num_threads"]
    if filled:
        damages += ["max_below_bucket", "min_above_bucket"]
    if not rtgate and hist:
        damages += ["cycles_below_sum"]
        if t["cycles"] > in_hist:
            damages += ["max_inside_range"]
        elif t["max"] < hist_limit(doc):
            damages += ["max_beyond_range"]
    if rtgate:
        damages += ["block_maxima_list", "sum_string", "duplicate_bucket", "sections_disagree"]
    damage = data.draw(st.sampled_from(damages))
    if damage == "avg_above_max":
        t["avg"] = t["max"] + data.draw(st.integers(1, 10**6))
        t.pop("sum", None)
    elif damage == "avg_below_min":
        assume(t["min"] >= 1)
        t["avg"] = t["min"] - data.draw(st.integers(1, t["min"]))
        t.pop("sum", None)
    elif damage == "min_above_max":
        t["min"] = t["max"] + 1
    elif damage == "missing_thread":
        if rtgate:
            doc["rtgate"]["threads"] = [x for x in threads if x is not t] or [dict(t, index=1)]
        else:
            key = next(k for k, v in doc["thread"].items() if v is t)
            doc["thread"].pop(key)
            doc["thread"] = doc["thread"] or {"1": t}
    elif damage == "num_threads":
        doc["num_threads"] = len(threads) + data.draw(st.integers(1, 3))
    elif damage == "max_below_bucket":
        t["max"] = filled[-1] - data.draw(st.integers(1, max(1, filled[-1])))
        assume(t["max"] >= t["min"])
    elif damage == "min_above_bucket":
        if rtgate:  # the lowest bucket may be wider than one unit: go past its top (hi is exclusive)
            _, hi, _ = min(t["histogram"])
            assume(hi is not None)
            t["min"] = hi + data.draw(st.integers(0, 1000))
        else:
            t["min"] = filled[0] + data.draw(st.integers(1, 1000))
        assume(t["min"] <= t["max"])
    elif damage == "cycles_below_sum":
        t["cycles"] = in_hist - data.draw(st.integers(1, max(1, in_hist)))
    elif damage == "max_inside_range":
        t["max"] = data.draw(st.integers(filled[-1] if filled else 0, hist_limit(doc) - 1))
    elif damage == "max_beyond_range":
        t["max"] = data.draw(st.integers(hist_limit(doc), 10**6))
    elif damage == "block_maxima_list":
        t["block_maxima"] = [1, 2, 3]
    elif damage == "sum_string":
        t["sum"] = str(t.get("sum", 1))
    elif damage == "duplicate_bucket":
        t["histogram"].insert(0, list(t["histogram"][0]))
        t["cycles"] += t["histogram"][0][2]
    elif damage == "sections_disagree":
        t["max"] = t["max"] + data.draw(st.integers(1, 10**6))
        top = t["histogram"][-1]
        t["histogram"][-1] = [top[0], None, top[2]]  # keep it consistent inside the rtgate section
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    limit = first_max(fixture) - 1
    code, err = check(gates_file(tmp_path, limit), path, capsys)
    assert_refused(code, err, path)


def _hist_lines(path: Path) -> list[str]:
    return path.read_text().splitlines(keepends=True)


@SETTINGS
@given(fixture=st.sampled_from(HIST_FIXTURES), data=st.data())
def test_histogram_text_contradictions_are_refused(
    fixture: Path, data: st.DataObject, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _hist_lines(fixture)
    rows = [i for i, ln in enumerate(lines) if re.match(r"^\d+ \d+", ln)]
    filled_rows = [i for i in rows if any(int(c) for c in lines[i].split()[1:])]
    foot = {m.group(1): i for i, ln in enumerate(lines) if (m := re.match(r"^# ([A-Za-z ]+):", ln))}
    damage = data.draw(
        st.sampled_from(
            [
                "swap_rows",
                "duplicate_row",
                "max_below_bucket",
                "avg_above_max",
                "min_above_avg",
                "bad_number",
                "overflow_list",
                "duplicate_footer",
            ]
        )
    )
    maxes = lines[foot["Max Latencies"]].split(":")[1].split()
    if damage == "swap_rows":
        i = data.draw(st.integers(0, len(rows) - 2))
        lines[rows[i]], lines[rows[i + 1]] = lines[rows[i + 1]], lines[rows[i]]
    elif damage == "duplicate_row":
        i = data.draw(st.sampled_from(rows))
        lines.insert(i, lines[i])
    elif damage == "max_below_bucket":
        top = int(lines[filled_rows[-1]].split()[0])
        assume(top > 0)
        cols = lines[filled_rows[-1]].split()[1:]
        j = next(k for k, c in enumerate(cols[: len(maxes)]) if int(c))
        j = min(j, len(maxes) - 1)
        maxes[j] = f"{data.draw(st.integers(0, top - 1)):05d}"
        lines[foot["Max Latencies"]] = "# Max Latencies: " + " ".join(maxes) + "\n"
    elif damage == "avg_above_max":
        avgs = lines[foot["Avg Latencies"]].split(":")[1].split()
        avgs[0] = f"{int(maxes[0]) + data.draw(st.integers(1, 1000)):05d}"
        lines[foot["Avg Latencies"]] = "# Avg Latencies: " + " ".join(avgs) + "\n"
    elif damage == "min_above_avg":
        mins = lines[foot["Min Latencies"]].split(":")[1].split()
        avgs = lines[foot["Avg Latencies"]].split(":")[1].split()
        mins[0] = f"{int(avgs[0]) + data.draw(st.integers(1, 5)):05d}"
        lines[foot["Min Latencies"]] = "# Min Latencies: " + " ".join(mins) + "\n"
    elif damage == "bad_number":
        key = data.draw(st.sampled_from(["Max Latencies", "Min Latencies", "Histogram Overflows"]))
        values = lines[foot[key]].split(":")[1].split()
        values[0] = data.draw(st.sampled_from(["9" * 400, "9" * 5000, "99999999999999999999"]))
        lines[foot[key]] = f"# {key}: " + " ".join(values) + "\n"
    elif damage == "overflow_list":
        ovf = lines[foot["Histogram Overflows"]].split(":")[1].split()
        assume(int(ovf[0]) > 0)
        ovf[0] = "00000"
        if len(ovf) == len(lines[foot["Min Latencies"]].split(":")[1].split()) + 1:  # -H: the sum column
            ovf[-1] = f"{sum(int(x) for x in ovf[:-1]):05d}"
        lines[foot["Histogram Overflows"]] = "# Histogram Overflows: " + " ".join(ovf) + "\n"
    elif damage == "duplicate_footer":
        key = data.draw(st.sampled_from(["Max Latencies", "Min Latencies", "Avg Latencies"]))
        lines.insert(foot[key] + 1, lines[foot[key]].replace(" 0", " 1", 1))
    path = tmp_path / "r.hist"
    path.write_text("".join(lines))
    code, err = check(gates_file(tmp_path, first_max(fixture) - 1), path, capsys)
    assert_refused(code, err, path)


@SETTINGS
@given(fixture=st.sampled_from(SUMMARY_FIXTURES), data=st.data())
def test_summary_contradictions_are_refused(
    fixture: Path, data: st.DataObject, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _hist_lines(fixture)
    t_lines = [i for i, ln in enumerate(lines) if "T:" in ln and "C:      0" not in ln]
    i = t_lines[-1]
    line = lines[i]
    damage = data.draw(
        st.sampled_from(["avg_above_max", "min_above_max", "huge_max", "earlier_line_last", "missing_middle_thread"])
    )
    fields = {k: int(v) for k, v in re.findall(r"(Min|Avg|Max):\s*(\d+)", line)}
    if damage == "avg_above_max":
        line = re.sub(r"Avg:\s*\d+", f"Avg: {fields['Max'] * 2 + 2}", line)
    elif damage == "min_above_max":
        line = re.sub(r"Min:\s*\d+", f"Min: {fields['Max'] + 1}", line)
    elif damage == "huge_max":
        line = re.sub(r"Max:\s*\d+", "Max: " + "9" * data.draw(st.sampled_from([20, 400, 5000])), line)
    elif damage == "earlier_line_last":
        assume(len(t_lines) >= 3 and "live" in fixture.name)
        thread = line.split()[1]
        earlier = [j for j in t_lines[:-1] if lines[j].split("T:")[1].split()[0] == thread]
        first = re.findall(r"C:\s*(\d+)", lines[earlier[0]])[0]
        assume(int(first) < int(re.findall(r"C:\s*(\d+)", line)[0]))
        lines.append(lines[earlier[0]])
    elif damage == "missing_middle_thread":
        assume("rs-t2" in fixture.name)
        lines = [ln for ln in lines if not ln.startswith("T: 0")]
    if damage not in ("earlier_line_last", "missing_middle_thread"):
        lines[i] = line
    path = tmp_path / "r.stdout"
    path.write_text("".join(lines))
    code, err = check(gates_file(tmp_path, max(first_max(fixture) - 1, 1)), path, capsys, "summary")
    assert_refused(code, err, path)


@SETTINGS
@given(fixture=st.sampled_from(VERBOSE_FIXTURES), data=st.data())
def test_verbose_contradictions_are_refused(
    fixture: Path, data: st.DataObject, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _hist_lines(fixture)
    samples = [i for i, ln in enumerate(lines) if re.match(r"^\s*\d+:\s*\d+:\s*\d+", ln)]
    damage = data.draw(st.sampled_from(["drop_line", "duplicate_line", "huge_value", "announced_thread"]))
    if damage == "drop_line":
        i = data.draw(st.sampled_from(samples[:-2]))
        idx = lines[i].split(":")[0].strip()
        assume(any(lines[j].split(":")[0].strip() == idx for j in samples if j > i))
        del lines[i]
    elif damage == "duplicate_line":
        i = data.draw(st.sampled_from(samples))
        lines.insert(i, lines[i])
    elif damage == "huge_value":
        i = data.draw(st.sampled_from(samples))
        parts = lines[i].rstrip("\n").split(":")
        lines[i] = ":".join(parts[:2] + ["9" * data.draw(st.sampled_from([20, 400, 5000]))]) + "\n"
    elif damage == "announced_thread":
        lines.insert(samples[0], "Thread 7 Interval: 1000\n")
    path = tmp_path / "v.stdout"
    path.write_text("".join(lines))
    code, err = check(gates_file(tmp_path, first_max(fixture) - 1), path, capsys, "verbose")
    assert_refused(code, err, path)


@st.composite
def sample_sets(draw: Callable[..., Any]) -> list[list[int]]:
    nthreads = draw(st.integers(1, 3))
    return [draw(st.lists(st.integers(0, 3000), min_size=1, max_size=300)) for _ in range(nthreads)]


def rt_tests_doc(samples: list[list[int]], limit: int) -> dict[str, Any]:
    threads = {}
    for i, s in enumerate(samples):
        hist: dict[str, int] = {}
        for v in s:
            if v < limit:
                hist[str(v)] = hist.get(str(v), 0) + 1
        threads[str(i)] = {
            "histogram": dict(sorted(hist.items(), key=lambda kv: int(kv[0]))),
            "cycles": len(s),
            "min": min(s),
            "max": max(s),
            "avg": round(sum(s) / len(s), 2),
            "cpu": i,
            "node": 0,
        }
    return {
        "file_version": 1,
        "cmdline:": f"cyclictest -t {len(samples)} -q -h {limit} --json=r.json",
        "rt_test_version:": "2.4",
        "num_threads": len(samples),
        "resolution_in_ns": 0,
        "thread": threads,
    }


@SETTINGS
@given(samples=sample_sets(), limit=st.sampled_from([50, 300, 5000]), data=st.data())
def test_generated_rt_tests_json_never_turns_pass(
    samples: list[list[int]], limit: int, data: st.DataObject, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Honest generated results are evaluated; damaged copies are refused or keep a non-PASS verdict."""
    doc = rt_tests_doc(samples, limit)
    worst = max(max(s) for s in samples)
    assume(worst >= 1)
    gates = gates_file(tmp_path, worst - 1)  # the undamaged data FAILs its max gate
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    code, err = check(gates, path, capsys)
    assert code == 1, err
    t = doc["thread"][str(data.draw(st.integers(0, len(samples) - 1)))]
    damage = data.draw(st.sampled_from(["max", "cycles", "histogram", "avg", "min"]))
    if damage == "max":
        # Only damage the data reveals: below every possible sample's place (a max between the -h range and
        # the true max, with samples in the overflow, is an edit no format can show; see doc/gates-and-statistics.rst).
        t["max"] = data.draw(
            st.one_of(st.integers(-10, min(worst, limit) - 1), st.sampled_from([float("nan"), float("inf"), -1.0, 0.5]))
        )
    elif damage == "cycles":
        t["cycles"] = data.draw(st.integers(-5, t["cycles"] * 2))
    elif damage == "histogram":
        key = str(data.draw(st.integers(0, limit - 1)))
        t["histogram"][key] = data.draw(st.integers(0, 10))
    elif damage == "avg":
        t["avg"] = data.draw(st.floats(allow_nan=True, allow_infinity=True))
    else:
        t["min"] = data.draw(st.integers(-5, 4000))
    path.write_text(json.dumps(doc))
    code, err = check(gates, path, capsys)
    assert code != 0, "damaged data that FAILs undamaged came back PASS"
    assert code in (1, 2), err
    if code == 2:
        assert_refused(code, err, path)


def test_a_running_checkpoint_may_hold_one_sample_beyond_its_counters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """rtgate-sampler reads min, max and sum a moment before the histogram while threads run (result.c):
    one sample per thread may be in the histogram and not in max. Such a checkpoint is read (its gates are
    ERROR: not finished); two such samples are damage."""
    doc = json.loads((SAMPLER_FIX / "rs-t2-h200.json").read_text())
    doc["rtgate"].update(complete=False, stop_reason="running")
    t = doc["rtgate"]["threads"][1]
    for extra in (1, 2):
        t2 = json.loads(json.dumps(t))
        t2["histogram"].append([t["max"] + 50, t["max"] + 51, extra])
        t2["cycles"] += extra
        t2["avg"] = round(t2["sum"] / t2["cycles"], 2)
        doc["rtgate"]["threads"][1] = t2
        doc["thread"]["1"]["cycles"] = t2["cycles"]
        path = tmp_path / f"checkpoint{extra}.json"
        path.write_text(json.dumps(doc))
        code, err = check(gates_file(tmp_path, 10**6), path, capsys)
        if extra == 1:
            assert code == 1 and "error" not in err, err  # ERROR verdicts: the run did not finish
        else:
            assert_refused(code, err, path)


@SETTINGS
@given(
    fixture=st.sampled_from(JSON_FIXTURES + [INJECT / d / "r.json" for d in ("ct-t", "rs-t")]),
    strip_cmdline=st.booleans(),
)
def test_json_unit_flipped_to_ns_never_passes(
    fixture: Path, strip_cmdline: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """47 of 135 damaged-file PASSes were a unit edited to ns (values read 1000x smaller). Flipped with or
    without the command line that contradicts it, a file whose data FAILs is refused, never PASS."""
    doc = json.loads(fixture.read_text())
    if "rtgate" in doc:
        doc["rtgate"]["unit"] = "ns"
    doc["resolution_in_ns"] = 1
    if strip_cmdline:
        doc.pop("cmdline:", None)
        doc.pop("resolution_in_ns", None) if "rtgate" in doc else None
    path = tmp_path / "flipped.json"
    path.write_text(json.dumps(doc))
    code, err = check(gates_file(tmp_path, first_max(fixture) - 1), path, capsys)
    assert_refused(code, err, path)


@pytest.mark.parametrize("fixture", HIST_FIXTURES + SUMMARY_FIXTURES + VERBOSE_FIXTURES, ids=lambda p: p.name)
def test_text_read_as_ns_never_passes(fixture: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--unit ns on microsecond text: refused (its fastest wake-ups would be faster than a timer interrupt)."""
    code = rtgate_main(["check", str(gates_file(tmp_path, first_max(fixture) - 1)), str(fixture), "--unit", "ns"])
    err = capsys.readouterr().err
    assert_refused(code, err, fixture)


# Results whose own set-up the thresholds ask, judged by gates the data fails only through what a field edit could
# hide: a stop by SIGINT (INCONCLUSIVE at best), missed periods derived from the command line (FAIL).
LOOSENING = [
    (SAMPLER_FIX / "rs-sigint-l3000.json", "interval_us: 1000, loops: 3000, threads: [{name: a, count: 1}]"),
    (RT_TESTS / "ct-24-S-h300.json", "interval_us: 200, loops: 5000, threads: [{name: a, cpus: all}]"),
    (INJECT / "rs-t" / "r.json", "interval_us: 1000, duration: 4s, threads: [{name: a, cpus: [1]}]"),
]


def _loosening_gates(directory: Path, settings: str) -> Path:
    path = directory / "loose.yaml"
    path.write_text(
        f"platform: damage\nmeasurements:\n  m:\n    sampler: {{{settings}}}\n    gates:\n"
        "      - {name: max, kind: max, limit_us: 1000000}\n      - {name: missed, kind: missed, max_count: 0}\n"
    )
    return path


@SETTINGS
@given(case=st.sampled_from(LOOSENING), data=st.data())
def test_a_field_edited_to_loosen_the_verdict_never_passes(
    case: tuple[Path, str], data: st.DataObject, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 46: a stop_reason edited from signal, a missing "cmdline:", a unit header, an interval, loops or
    duration edited: each is caught by another field of the file, or leaves the gates ERROR, never PASS."""
    from fuzz import FIELD_EDITS

    fixture, settings = case
    gates = _loosening_gates(tmp_path, settings)
    code, err = check(gates, fixture, capsys)
    assert code in (1, 3), err  # the honest file: judged, and not PASS
    text = fixture.read_bytes()
    spots = [(m, values) for pattern, values in FIELD_EDITS for m in re.finditer(pattern, text)]
    m, values = data.draw(st.sampled_from(spots))
    edited = text[: m.start()] + m.expand(data.draw(st.sampled_from(values))) + text[m.end() :]
    assume(edited != text)
    path = tmp_path / "edited.json"
    path.write_bytes(edited)
    code, err = check(gates, path, capsys)
    assert code != 0, f"{m.group(0)!r} edited: PASS"
