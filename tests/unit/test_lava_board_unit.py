# SPDX-License-Identifier: GPL-2.0-or-later
"""The board parameters a threshold file compiles to (lava/board.py): what rtgate.sh reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from rtgate.core.thresholds import Measurement, load_thresholds
from rtgate.errors import RtgateError
from rtgate.lava.board import STRICT_CHECKS, board_params, load_param, require_param
from rtgate.measure.conditions import CHECK_IDS


def measurement(tmp_path: Path, body: str) -> Measurement:
    spec = tmp_path / "t.yaml"
    spec.write_text(
        "platform: p\nmeasurements:\n  m:\n" + body + "    gates: [{name: max, kind: max, limit_us: 100}]\n"
    )
    return load_thresholds(spec).measurements["m"]


def test_one_load_keeps_the_format_old_jobs_use(tmp_path: Path) -> None:
    m = measurement(
        tmp_path, "    sampler: {duration: 5s, threads: [{name: a, cpus: [0]}]}\n    load: {kind: cpu, workers: 2}\n"
    )
    assert load_param(m) == "kind=cpu;cpus=others;warmup=2;workers=2;per_worker=25"


def test_several_loads_follow_one_another_each_from_its_kind(tmp_path: Path) -> None:
    m = measurement(
        tmp_path,
        "    sampler: {duration: 5s, threads: [{name: a, cpus: [0]}]}\n"
        "    load: [cpu, {kind: memory, size: 128M, warmup_seconds: 3},"
        " {kind: custom, command: [md5sum, /dev/zero], min_cpu_percent: 20}]\n",
    )
    value = load_param(m)
    assert value == (
        "kind=cpu;cpus=others;warmup=2;per_worker=25;"
        "kind=+memory;cpus=others;warmup=3;size=128M;per_worker=25;"
        "kind=+custom;cpus=others;warmup=2;min_cpu=20;command=md5sum /dev/zero"
    )
    # Nothing LAVA's NAME='value' or Fuego's quoting would break: no quote, backslash, '$' or newline.
    assert not set(value) & set("'\"\\$`\n")
    assert [f for f in value.split(";") if f.startswith("kind=")] == ["kind=cpu", "kind=+memory", "kind=+custom"]


@pytest.mark.parametrize(
    "threads, value",
    [
        ("threads: [{name: a, cpus: [0], priority: 80}]", "0:80"),
        ("threads: [{name: a, cpus: [0], priority: 80}, {name: b, cpus: [1, 2], priority: 70}]", "0:80,1:70,2:70"),
        ("threads: [{name: a, cpus: [1, 2, 3], count: 2, priority: 60}]", "1:60,2:60"),  # two threads: two CPUs
        ("threads: [{name: a, priority: 90}]", "all:90"),  # not pinned: any CPU
        ("threads: [{name: a, cpus: all, priority: 95}]", "all:95"),
        ("policy: other, threads: [{name: a, cpus: [0]}]", "0:0"),  # every RT task preempts it
    ],
)
def test_no_competing_rt_carries_the_samplers_priority_per_cpu(tmp_path: Path, threads: str, value: str) -> None:
    body = f"    require: {{no_competing_rt: true, preempt_rt: true}}\n    sampler: {{duration: 5s, {threads}}}\n"
    m = measurement(tmp_path, body)
    assert require_param(m) == f"no_competing_rt={value};preempt_rt=true"


def test_no_competing_rt_judges_at_the_priority_the_sampler_runs_at(tmp_path: Path) -> None:
    """--rt-priority lowers the sampler's priority: a task between the two competes on the board."""
    body = (
        "    require: {no_competing_rt: true}\n"
        "    sampler: {duration: 5s, threads: [{name: a, cpus: [0], priority: 90}]}\n"
    )
    m = measurement(tmp_path, body)
    params = board_params(m, None, rt_priority=40)
    assert params["RTGATE_REQUIRE"] == "no_competing_rt=0:40" and params["PRIORITY"] == "40"
    assert board_params(m, None)["RTGATE_REQUIRE"] == "no_competing_rt=0:90"


def test_no_competing_rt_false_is_no_requirement(tmp_path: Path) -> None:
    m = measurement(tmp_path, "    require: {no_competing_rt: false}\n    sampler: {duration: 5s}\n")
    assert require_param(m) == ""


def test_strict_is_refused_naming_every_check_and_what_to_do(tmp_path: Path) -> None:
    m = measurement(tmp_path, "    strict: true\n    sampler: {duration: 5s}\n")
    with pytest.raises(RtgateError) as e:
        board_params(m, None)
    text = str(e.value)
    assert set(STRICT_CHECKS) == set(CHECK_IDS) - {"expected_rt"}
    assert all(c in text for c in STRICT_CHECKS), text
    assert "replace strict with the require: keys" in text and "no_competing_rt" in text
    assert "rtgate doctor --strict" in text and "\n" not in text
