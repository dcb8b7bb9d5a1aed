# SPDX-License-Identifier: GPL-2.0-or-later
"""Parsers on recorded outputs of cyclictest and rtgate-sampler: one model, and bad input refused naming the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import RT_TESTS
from rtgate.core.model import RunResult
from rtgate.errors import ResultsError
from rtgate.parsers import load_results


def figures(run: RunResult) -> list[tuple[int, float | None, float | None]]:
    return [(t.cycles, t.min, t.max) for t in run.threads]


@pytest.mark.parametrize(
    "stem, threads, cycles", [("ct-24-S-h300", 2, 5000), ("ct-new-S-h300", 2, 5000), ("ct-new-t2-H200", 2, 3000)]
)
def test_recorded_json_and_histogram_agree(stem: str, threads: int, cycles: int) -> None:
    js = load_results(RT_TESTS / f"{stem}.json")
    hist = load_results(RT_TESTS / f"{stem}.hist")
    assert js.format == "rt-tests-json" and hist.format == "histogram-text"
    assert len(js.threads) == len(hist.threads) == threads
    assert figures(js) == figures(hist)
    for a, b in zip(js.threads, hist.threads):
        assert a.cycles == cycles
        assert a.histogram is not None and b.histogram is not None
        assert a.histogram.overflow == b.histogram.overflow
        assert sorted(a.histogram.buckets) == sorted(b.histogram.buckets)
        # cyclictest does not count them: derived from its command line and latencies (JSON), unknowable
        # from histogram text alone
        assert a.missed is not None and a.missed_derivation and b.missed is None and b.missed_derivation


def test_rt_tests_overflow_is_derived_from_cycles() -> None:
    run = load_results(RT_TESTS / "ct-24-S-h300.json")
    t0 = run.threads[0]
    assert t0.histogram is not None
    assert t0.histogram.overflow == 1 and t0.histogram.range_end == 300 and t0.max == 894


def test_json_without_histogram() -> None:
    run = load_results(RT_TESTS / "ct-new-nohist.json")
    assert run.threads[0].histogram is None
    assert figures(run) == [(2000, 12, 111)]
    assert figures(run) == figures(load_results(RT_TESTS / "ct-new-nohist.stdout"))


def test_live_output_with_ansi_codes_takes_the_last_state() -> None:
    run = load_results(RT_TESTS / "ct-new-live.stdout")
    assert run.format == "summary-text"
    assert figures(run) == [(2000, 10, 136)]
    assert run.threads[0].priority == 80 and run.threads[0].interval_us == 1000


def test_verbose_samples() -> None:
    run = load_results(RT_TESTS / "ct-24-verbose.stdout")
    t = run.threads[0]
    assert run.format == "verbose-text"
    assert t.cycles == 2000 and t.histogram is not None and t.histogram.total == 2000
    assert t.min == 11 and t.max == 448


@pytest.mark.parametrize("name", ["ct-24-unknown.stdout", "ct-24-S-h300.stdout"])
def test_help_text_and_banner_only_are_refused(name: str) -> None:
    with pytest.raises(ResultsError, match=name):
        load_results(RT_TESTS / name)


def test_nan_and_sentinel_min_mean_no_samples(tmp_path: Path) -> None:
    src = (RT_TESTS / "ct-new-nohist.json").read_text()
    src = (
        src.replace('"cycles": 2000', '"cycles": 0')
        .replace('"min": 12', '"min": 1000000')
        .replace('"avg": 18.00', '"avg": -nan')
    )
    path = tmp_path / "empty.json"
    path.write_text(src)
    t = load_results(path).threads[0]
    assert (t.cycles, t.min, t.max, t.avg) == (0, None, None, None)


def _cut(src: Path, dst: Path, fraction: float) -> Path:
    data = src.read_bytes()
    dst.write_bytes(data[: int(len(data) * fraction)])
    return dst


@pytest.mark.parametrize(
    "name, fraction",
    [
        ("ct-24-S-h300.json", 0.5),
        ("ct-24-S-h300.hist", 0.5),
        ("ct-24-S-h300.hist", 0.97),
        ("ct-24-verbose.stdout", 0.5),
        ("ct-new-live.stdout", 0.5),
    ],
)
def test_truncated_files_are_errors_naming_file_and_line(tmp_path: Path, name: str, fraction: float) -> None:
    cut = _cut(RT_TESTS / name, tmp_path / name, fraction)
    with pytest.raises(ResultsError) as e:
        load_results(cut)
    assert str(cut) in str(e.value)
    assert e.value.line is not None or "truncated" in str(e.value)


def test_garbage_line_in_histogram_names_the_line(tmp_path: Path) -> None:
    lines = (RT_TESTS / "ct-24-S-h300.hist").read_text().splitlines(keepends=True)
    lines[10] = "000009 garbage\n"
    bad = tmp_path / "bad.hist"
    bad.write_text("".join(lines))
    with pytest.raises(ResultsError) as e:
        load_results(bad)
    assert e.value.line == 11


def test_inconsistent_total_is_an_error(tmp_path: Path) -> None:
    text = (RT_TESTS / "ct-24-S-h300.hist").read_text().replace("# Total: 000004999", "# Total: 000004000")
    bad = tmp_path / "bad.hist"
    bad.write_text(text)
    with pytest.raises(ResultsError, match="Total"):
        load_results(bad)


def test_verbose_gap_is_an_error(tmp_path: Path) -> None:
    lines = (RT_TESTS / "ct-24-verbose.stdout").read_text().splitlines(keepends=True)
    del lines[100]
    bad = tmp_path / "gap.txt"
    bad.write_text("".join(lines))
    with pytest.raises(ResultsError, match="missing"):
        load_results(bad)


def test_binary_garbage_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "x.bin"
    bad.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ResultsError):
        load_results(bad)


def test_inputs_beyond_the_limits_are_refused_before_they_cost(tmp_path: Path) -> None:
    """A 6 MB histogram row of 3M columns took 546 MB, 107 MB of -v 1.33 GB: refused while reading now."""
    from rtgate.parsers.common import MAX_COLUMNS, MAX_LINE

    big = tmp_path / "big.txt"
    with big.open("wb") as f:
        f.truncate(65 * 2**20)  # sparse: its size is what is refused
    with pytest.raises(ResultsError, match="65 MiB is larger than any result"):
        load_results(big)
    row = tmp_path / "row.hist"
    row.write_text("# Histogram\n000000 " + "\t".join(["000001"] * (MAX_LINE // 6)) + "\n")
    with pytest.raises(ResultsError, match=f"longer than {MAX_LINE}"):
        load_results(row)
    cols = tmp_path / "cols.hist"
    cols.write_text("# Histogram\n000000 " + "\t".join(["1"] * (MAX_COLUMNS + 1)) + "\n")
    with pytest.raises(ResultsError, match=f"more than {MAX_COLUMNS} columns"):
        load_results(cols)


@pytest.mark.parametrize("digit", ["\u0663", "\uff13", "\u09e9"])
def test_digits_of_other_scripts_are_refused_in_every_text_format(tmp_path: Path, digit: str) -> None:
    """int() and regex \\d read '٣' as 3: a histogram count, a T: field, a -v sample or an rtla count in
    another script's digits is refused, not read."""
    hist = (RT_TESTS / "ct-new-S-h300.hist").read_text().replace("# Max Latencies: 0", f"# Max Latencies: {digit}", 1)
    summary = (RT_TESTS / "ct-new-nohist.stdout").read_text().replace("C:", f"C:{digit}", 1)
    verbose = (RT_TESTS / "ct-24-verbose.stdout").read_text().replace(":      ", f":      {digit}", 1)
    rtla = (RT_TESTS.parent / "rtla" / "basic.txt").read_text().replace("count:     ", f"count:     {digit}", 1)
    for name, text in (("h.hist", hist), ("s.stdout", summary), ("v.stdout", verbose), ("r.txt", rtla)):
        p = tmp_path / name
        p.write_text(text)
        with pytest.raises(ResultsError, match=r"not a number in ASCII digits|not a verbose sample|malformed"):
            load_results(p)


@pytest.mark.parametrize(
    "old, new",
    [
        ("[21, 22, 79]", "[21, 22, " + "9" * 4300 + "]"),  # its sum outgrew what str() prints: "internal error"
        ("[21, 22, 79]", f"[21, 22, {2**64}]"),
        ('"cycles": 400, "min": 18', f'"cycles": {2**64 + 400}, "min": 18'),
        ('"elapsed_s": 0.203537', '"elapsed_s": 1e999'),  # inf: `check --junit` overflowed on its duration
        ('"elapsed_s": 0.203537', '"elapsed_s": ' + "1" * 400 + ".5"),
    ],
)
def test_json_numbers_beyond_64_bits_or_a_double_are_refused(tmp_path: Path, old: str, new: str) -> None:
    """Found by tests/fuzz.py (issue 37): no parser reads a number wider than the programs print."""
    text = (RT_TESTS.parent / "rtgate-sampler" / "rs-t2-h200.json").read_text()
    assert old in text
    p = tmp_path / "wide.json"
    p.write_text(text.replace(old, new, 1))
    with pytest.raises(
        ResultsError, match=r"wide\.json: invalid JSON: the (integer|number) [\d.e]+ is beyond (64 bits|a double)"
    ):
        load_results(p)
