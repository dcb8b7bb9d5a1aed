# SPDX-License-Identifier: GPL-2.0-or-later
"""Threshold files: the shipped ones load, and every mistake is named by file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT
from rtgate.core.thresholds import load_thresholds
from rtgate.errors import ThresholdsError
from rtgate.measure.sampler_args import sampler_args

SHIPPED = sorted((ROOT / "thresholds").rglob("*.yaml"))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(ROOT)))
def test_shipped_files_load_and_say_where_numbers_come_from(path: Path) -> None:
    tf = load_thresholds(path)
    assert tf.measurements
    assert "come from" in path.read_text(), f"{path} must say where its numbers come from"


def test_two_thread_example_is_expressed_directly() -> None:
    tf = load_thresholds(ROOT / "thresholds" / "two-thread-example.yaml")
    m = tf.measurements["app"]
    a, b = m.sampler.threads
    assert (a.name, a.priority, a.cpus) == ("A", 51, [0])
    assert (b.name, b.priority, b.cpus) == ("B", 48, [1])
    ga, gb = m.gates
    assert (ga.kind, ga.threads, ga.limit_us, ga.critical) == ("max", ["A"], 80.0, True)
    assert (gb.kind, gb.threads, gb.above_us, gb.rate) == ("miss_rate", ["B"], 100.0, 0.001)
    args = sampler_args(m, "/tmp/r.json", duration_s=5)
    assert "--thread-cpus=0,1" in args and "--thread-priorities=51,48" in args
    assert args[args.index("-D") + 1] == "5s"


def test_board_extends_family() -> None:
    board = load_thresholds(ROOT / "thresholds" / "boards" / "imx8mp-evk.yaml")
    family = load_thresholds(ROOT / "thresholds" / "families" / "arm64-cortex-a53-rt.yaml")
    bg = {g.name: g for g in board.measurements["idle"].gates}
    fg = {g.name: g for g in family.measurements["idle"].gates}
    assert bg["max"].limit_us == 100 and fg["max"].limit_us == 150
    assert bg["max"].kind == "max" and bg["max"].critical  # inherited fields stay
    assert bg["p99.99"].limit_us == fg["p99.99"].limit_us
    assert board.measurements["idle"].sampler.interval_us == 200
    assert board.platform == "imx8mp-evk" and len(board.files) == 2
    assert bg["max"].where[0].endswith("imx8mp-evk.yaml")  # the override is located in the board file


GOOD = """\
platform: p
measurements:
  m:
    sampler:
      duration: 10s
    gates:
      - name: g
        kind: max
        limit_us: 80
"""


def expect(tmp_path: Path, text: str, line: int | None, *needles: str, name: str = "t.yaml") -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ThresholdsError) as e:
        load_thresholds(path)
    msg = str(e.value)
    assert str(path) in msg, msg
    if line is not None:
        assert e.value.line == line, msg
    for n in needles:
        assert n in msg, msg


def test_good_file_loads(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(GOOD)
    assert load_thresholds(tmp_path / "t.yaml").measurements["m"].gates[0].limit_us == 80


def test_unknown_key(tmp_path: Path) -> None:
    expect(
        tmp_path,
        GOOD.replace("limit_us: 80", "limit_us: 80\n        limt: 3"),
        10,
        "measurements.m.gates[0].limt",
        "unknown key",
    )


def test_bad_number(tmp_path: Path) -> None:
    expect(tmp_path, GOOD.replace("limit_us: 80", "limit_us: eighty"), 9, "limit_us", "'eighty'")


@pytest.mark.parametrize(
    "old,new,line,hint",
    [
        (
            "limit_us: 80",
            "limit_us: 100us",
            9,
            "limit_us: must be a number from 0 to 1e+09, not '100us': write 100 (the key is in us)",
        ),
        ("limit_us: 80", "limit_us: 0.1 ms", 9, "not '0.1 ms': write 100 (the key is in us)"),
        ("duration: 10s", "duration: 10s\n      interval_us: 0.25ms", 6, "not '0.25ms': write 250 (the key is in us)"),
    ],
)
def test_a_number_with_a_unit_says_the_number_to_write(
    tmp_path: Path, old: str, new: str, line: int, hint: str
) -> None:
    expect(tmp_path, GOOD.replace(old, new), line, hint)


def test_a_tab_is_named(tmp_path: Path) -> None:
    """PyYAML says "found character that cannot start any token": the message says it is a tab."""
    expect(
        tmp_path,
        "platform: p\nmeasurements:\n\tm: {}\n",
        3,
        "invalid YAML: found character that cannot start any token (a tab at column 1: YAML indents with spaces only)",
    )
    # where PyYAML names the tab itself, it is not said twice
    expect(tmp_path, GOOD.replace("    gates:", "\tgates:"), 6, "found a tab character that violates indentation")
    with pytest.raises(ThresholdsError) as e:
        load_thresholds(tmp_path / "t.yaml")
    assert "YAML indents" not in str(e.value)


def test_bad_duration(tmp_path: Path) -> None:
    expect(tmp_path, GOOD.replace("duration: 10s", "duration: 1.5h"), 5, "sampler.duration", "1.5h")


def test_no_duration_nor_loops(tmp_path: Path) -> None:
    expect(tmp_path, GOOD.replace("      duration: 10s\n", "      interval_us: 100\n"), 4, "duration or loops")


def test_missing_gates(tmp_path: Path) -> None:
    expect(tmp_path, GOOD.split("    gates:")[0], 3, "gates")


def test_yaml_syntax_error(tmp_path: Path) -> None:
    expect(tmp_path, GOOD.replace("kind: max", "kind: [max"), None, "invalid YAML")


def test_bad_rate(tmp_path: Path) -> None:
    expect(
        tmp_path,
        GOOD.replace("kind: max\n        limit_us: 80", "kind: miss_rate\n        above_us: 100\n        rate: 5"),
        10,
        "rate",
    )


RATE_GATE = "kind: miss_rate\n        above_us: 100\n        rate: {}"


@pytest.mark.parametrize("bare", ["0.1", "'0.1'", "1", "0.001"])
def test_a_bare_rate_is_refused_with_both_readings(tmp_path: Path, bare: str) -> None:
    """rate: 0.1 meant as 0.1 % was a 10 % gate: a bare number means two things, so neither is taken."""
    value = float(bare.strip("'"))
    expect(
        tmp_path,
        GOOD.replace("kind: max\n        limit_us: 80", RATE_GATE.format(bare)),
        10,
        "measurements.m.gates[0].rate",
        "means two things",
        f"'{value:g}%'",
        f"'{value * 100:g}%'",
    )


@pytest.mark.parametrize("command", ["validate", "check"])
def test_validate_and_check_refuse_a_bare_rate_on_one_line(tmp_path: Path, command: str) -> None:
    """The issue's case: `rate: 0.1` meant as 0.1 % was validated OK and checked as a 10 % gate."""
    from in_process import rtgate

    path = tmp_path / "t.yaml"
    path.write_text(GOOD.replace("kind: max\n        limit_us: 80", RATE_GATE.format("0.1")))
    results = [str(ROOT / "tests" / "fixtures" / "rt-tests" / "ct-24-S-h300.json")] if command == "check" else []
    r = rtgate(command, str(path), *results)
    assert r.returncode == 2 and r.stdout == "", r.stdout
    assert r.stderr.strip().splitlines() == [
        f"rtgate: error: {path}:10: measurements.m.gates[0].rate: a bare 0.1 means two things: 0.1 % or the "
        "fraction 0.1 (10 %); write the unit: '0.1%' for the first, '10%' for the second (or ppm)"
    ]


def test_a_bare_max_rate_is_refused(tmp_path: Path) -> None:
    expect(
        tmp_path,
        GOOD.replace("kind: max\n        limit_us: 80", "kind: missed\n        max_rate: 0.01"),
        9,
        "measurements.m.gates[0].max_rate",
        "0.01 %",
        "(1 %)",
    )


@pytest.mark.parametrize("written,fraction", [("0.1%", 0.001), ("'5 %'", 0.05), ("100ppm", 1e-4), ("0", 0.0)])
def test_a_rate_with_its_unit_is_read(tmp_path: Path, written: str, fraction: float) -> None:
    (tmp_path / "t.yaml").write_text(GOOD.replace("kind: max\n        limit_us: 80", RATE_GATE.format(written)))
    assert load_thresholds(tmp_path / "t.yaml").measurements["m"].gates[0].rate == pytest.approx(fraction)


def test_a_bare_min_effect_is_refused(tmp_path: Path) -> None:
    expect(tmp_path, GOOD + "history: {min_effect: 0.05}\n", 10, "history.min_effect", "means two things")
    (tmp_path / "ok.yaml").write_text(GOOD + "history: {min_effect: 5%}\n")
    assert load_thresholds(tmp_path / "ok.yaml").history["min_effect"] == pytest.approx(0.05)


def test_a_percentile_below_one_is_refused_with_both_readings(tmp_path: Path) -> None:
    gate = "kind: percentile\n        percentile: 0.999\n        limit_us: 80"
    expect(tmp_path, GOOD.replace("kind: max\n        limit_us: 80", gate), 9, "percentile", "write 99.9")


@pytest.mark.parametrize("written", ["95", "'95%'"])
def test_a_confidence_written_as_a_percentage_says_the_fraction(tmp_path: Path, written: str) -> None:
    gate = f"kind: miss_rate\n        above_us: 100\n        rate: 1%\n        confidence: {written}"
    expect(tmp_path, GOOD.replace("kind: max\n        limit_us: 80", gate), 11, "write 0.95 for 95 %")


def test_gate_kind_needs_its_keys(tmp_path: Path) -> None:
    expect(tmp_path, GOOD.replace("kind: max", "kind: percentile"), 7, "needs 'percentile'")
    expect(tmp_path, GOOD.replace("kind: max", "kind: fastest"), 8, "unknown gate kind")


def test_gate_names_unknown_group(tmp_path: Path) -> None:
    expect(tmp_path, GOOD.replace("limit_us: 80", "limit_us: 80\n        threads: [Z]"), 10, "no thread group 'Z'")


def test_duplicate_gate(tmp_path: Path) -> None:
    expect(tmp_path, GOOD + "      - {name: g, kind: avg, limit_us: 5}\n", 10, "defined twice")


def test_priority_out_of_range(tmp_path: Path) -> None:
    expect(tmp_path, GOOD.replace("duration: 10s", "duration: 10s\n      priority: 120"), 6, "priority")


def test_extends_missing_file(tmp_path: Path) -> None:
    expect(tmp_path, "extends: nowhere.yaml\n" + GOOD, 1, "extends", "nowhere.yaml")


def test_extends_cycle(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("extends: b.yaml\n" + GOOD)
    (tmp_path / "b.yaml").write_text("extends: a.yaml\n" + GOOD)
    with pytest.raises(ThresholdsError, match="cycle"):
        load_thresholds(tmp_path / "a.yaml")


def test_error_in_parent_names_the_parent(tmp_path: Path) -> None:
    (tmp_path / "family.yaml").write_text(GOOD.replace("limit_us: 80", "limit_us: -1"))
    (tmp_path / "board.yaml").write_text("extends: family.yaml\nplatform: board\n")
    with pytest.raises(ThresholdsError) as e:
        load_thresholds(tmp_path / "board.yaml")
    assert str(e.value).startswith(f"{tmp_path / 'family.yaml'}:9: measurements.m.gates[0].limit_us")


def test_error_in_override_names_the_board(tmp_path: Path) -> None:
    (tmp_path / "family.yaml").write_text(GOOD)
    (tmp_path / "board.yaml").write_text(
        "extends: family.yaml\nmeasurements:\n  m:\n    gates:\n      - {name: g, limit_us: fast}\n"
    )
    with pytest.raises(ThresholdsError) as e:
        load_thresholds(tmp_path / "board.yaml")
    assert str(e.value).startswith(f"{tmp_path / 'board.yaml'}:5: measurements.m.gates[0].limit_us")


def test_empty_and_non_mapping(tmp_path: Path) -> None:
    expect(tmp_path, "", None, "empty")
    expect(tmp_path, "- a\n- b\n", 1, "mapping")


def test_unsafe_yaml_tags_are_refused(tmp_path: Path) -> None:
    expect(
        tmp_path, "platform: !!python/object/apply:os.system ['true']\n" + GOOD.split("\n", 1)[1], None, "invalid YAML"
    )


BOARD_FILES = sorted((ROOT / "thresholds").glob("boards/*.yaml")) + sorted(
    (ROOT / "thresholds").glob("families/*.yaml")
)


@pytest.mark.parametrize("path", BOARD_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_shipped_board_file_names_its_machine(path: Path) -> None:
    """A board or family budget runs only on the machine it is for, and on PREEMPT_RT when it assumes it."""
    tf = load_thresholds(path)
    for m in tf.measurements.values():
        assert m.require.get("architecture") and isinstance(m.require.get("cpu_count"), int), m.name
        if path.parent.name == "boards":  # a board also names itself: devicetree compatible or DMI product
            assert m.require.get("compatible") or m.require.get("dmi_product"), m.name
        # Whether the budget assumes PREEMPT_RT is said, not guessed from a name: a board file that leaves it
        # out would be judged on whatever kernel the board boots.
        assert isinstance(m.require.get("preempt_rt"), bool), m.name
        if "PREEMPT_RT" in tf.description:
            assert m.require["preempt_rt"] is True, m.name


def test_the_default_platform_runs_anywhere() -> None:
    for m in load_thresholds(ROOT / "thresholds" / "default.yaml").measurements.values():
        assert not {"architecture", "compatible", "dmi_product", "cpu_count", "preempt_rt"} & set(m.require)


def test_a_key_given_twice_is_refused_where_the_second_is(tmp_path: Path) -> None:
    """With the last one winning, a second limit_us loosened a gate silently (issue 36 item 5)."""
    expect(
        tmp_path, GOOD.replace("limit_us: 80", "limit_us: 80\n        limit_us: 100000"), 10, "'limit_us' given twice"
    )
    flow = GOOD.replace("    gates:\n      - name: g\n        kind: max\n        limit_us: 80\n", "")
    flow += "    gates: [{name: g, kind: max, limit_us: 5, limit_us: 100000}]\n"
    expect(tmp_path, flow, 6, "'limit_us' given twice", "first on line 6")


def test_a_repeated_top_level_block_is_refused(tmp_path: Path) -> None:
    expect(tmp_path, GOOD + GOOD.split("\n", 1)[1], 10, "'measurements' given twice", "first on line 2")


@pytest.mark.parametrize(
    ("old", "new", "line"),
    [
        ("duration: 10s", "duration: ١٠s", 5),  # Arabic-Indic digits
        ("limit_us: 80", "limit_us: ٨٠", 9),
        ("kind: max", "kind: max\n        cpus: '٠-٣'", 9),
    ],
)
def test_numbers_are_ascii_digits_only(tmp_path: Path, old: str, new: str, line: int) -> None:
    expect(tmp_path, GOOD.replace(old, new), line)


def test_a_long_list_is_refused_while_it_is_read(tmp_path: Path) -> None:
    """1 MiB of list: refused at the 100,001st value, before the rest is composed (the count is the
    loader's; time and memory are in benchmarks/bounded_inputs.py)."""
    text = GOOD + "extra: [" + ",".join(["1"] * 500_000) + "]\n"
    expect(tmp_path, text, 10, "more than 100000 values")
