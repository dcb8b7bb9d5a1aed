# SPDX-License-Identifier: GPL-2.0-or-later
"""The board parameters a threshold file compiles to (lava/board.py): the plan the engine runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from rtgate.core.thresholds import Measurement, load_thresholds
from rtgate.errors import RtgateError
from rtgate.lava.board import STRICT_CHECKS, board_params
from rtgate.measure.conditions import CHECK_IDS
from rtgate.measure.sampler_args import engine_args, plan_text


def measurement(tmp_path: Path, body: str) -> Measurement:
    spec = tmp_path / "t.yaml"
    spec.write_text(
        "platform: p\nmeasurements:\n  m:\n" + body + "    gates: [{name: max, kind: max, limit_us: 100}]\n"
    )
    return load_thresholds(spec).measurements["m"]


def plan_words(m: Measurement, **kw: object) -> list[str]:
    return board_params(m, None, **kw)["RTGATE_PLAN"].split(" ")  # type: ignore[arg-type]


def test_the_plan_is_the_engine_run_rtgate_run_makes(tmp_path: Path) -> None:
    """One set of words for the board and for `rtgate run` (engine_args), with the outputs left to each."""
    m = measurement(
        tmp_path,
        "    require: {preempt_rt: true, no_competing_rt: true}\n"
        "    sampler: {duration: 5s, threads: [{name: a, cpus: [0], priority: 80}]}\n"
        "    load: {kind: cpu, workers: 2}\n",
    )
    words = plan_words(m)
    assert words == engine_args(m)
    assert "--measurement=m" in words and "--require=preempt_rt" in words and "--require=no_competing_rt" in words
    assert "--load=kind=cpu,cpus=others,warmup=2,workers=2" in words
    assert not [w for w in words if w.startswith(("--json", "--histfile", "--output-dir"))]


def test_several_loads_each_one_option_and_a_custom_command_word_by_word(tmp_path: Path) -> None:
    m = measurement(
        tmp_path,
        "    sampler: {duration: 5s, threads: [{name: a, cpus: [0]}]}\n"
        "    load: [cpu, {kind: memory, size: 128M, warmup_seconds: 3},"
        " {kind: custom, command: [md5sum, /dev/zero], min_cpu_percent: 20, cpus: [1, 2]}]\n",
    )
    loads = [w for w in plan_words(m) if w.startswith("--load")]
    assert loads == [
        "--load=kind=cpu,cpus=others,warmup=2",
        "--load=kind=memory,cpus=others,warmup=3,size=128M",
        "--load=kind=custom,cpus=1,2,warmup=2,min=20",
        "--load-arg=md5sum",
        "--load-arg=/dev/zero",
    ]
    # Nothing LAVA's NAME='value' or Fuego's quoting would break: no quote, backslash, '$' or newline.
    assert not set(board_params(m, None)["RTGATE_PLAN"]) & set("'\"\\$`\n")


def test_a_space_in_a_value_travels_encoded_and_a_quote_is_refused(tmp_path: Path) -> None:
    m = measurement(tmp_path, "    require: {dmi_product: 'Standard PC 100%'}\n    sampler: {duration: 5s}\n")
    assert "--require=dmi_product=Standard%20PC%20100%25" in plan_words(m)
    assert plan_text(["a b%"]) == "a%20b%25"
    with pytest.raises(RtgateError, match="cannot travel"):
        plan_text(["--require=dmi_product=it's"])


def test_rt_priority_replaces_the_files_and_is_named_rt_priority(tmp_path: Path) -> None:
    """--rt-priority lowers the sampler's priority: the engine judges competitors at the one it runs at."""
    m = measurement(tmp_path, "    sampler: {duration: 5s, threads: [{name: a, cpus: [0], priority: 90}]}\n")
    params = board_params(m, None, rt_priority=40)
    assert params["RT_PRIORITY"] == "40" and "PRIORITY" not in params
    assert params["RTGATE_PLAN"].split(" ")[params["RTGATE_PLAN"].split(" ").index("-p") + 1] == "40"
    assert board_params(m, None)["RT_PRIORITY"] == "90"


def test_no_competing_rt_false_is_no_requirement(tmp_path: Path) -> None:
    m = measurement(tmp_path, "    require: {no_competing_rt: false}\n    sampler: {duration: 5s}\n")
    assert not [w for w in plan_words(m) if w.startswith("--require")]


def test_strict_is_refused_naming_every_check_and_what_to_do(tmp_path: Path) -> None:
    m = measurement(tmp_path, "    strict: true\n    sampler: {duration: 5s}\n")
    with pytest.raises(RtgateError) as e:
        board_params(m, None)
    text = str(e.value)
    assert set(STRICT_CHECKS) == set(CHECK_IDS) - {"expected_rt"}
    assert all(c in text for c in STRICT_CHECKS), text
    assert "replace strict with the require: keys" in text and "no_competing_rt" in text
    assert "rtgate doctor --strict" in text and "\n" not in text
