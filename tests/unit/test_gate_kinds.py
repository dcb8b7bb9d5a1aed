# SPDX-License-Identifier: GPL-2.0-or-later
"""The gate-kind registry: every kind has every part, and the rest of rtgate follows it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from conftest import ROOT
from rtgate.core.gate_kinds import KINDS, GateKind
from rtgate.core.gates import Status, evaluate
from rtgate.core.model import Histogram, RunResult, ThreadResult
from rtgate.core.thread_plan import plan_for_results
from rtgate.core.thresholds import GATE_KINDS, GateSpec, load_thresholds
from rtgate.measure.native_gates import gate_arg, parse_gate_arg

GATE_FIELDS = {f.name for f in dataclasses.fields(GateSpec)}

# One threshold-file gate per kind, with the keys it needs (a test fails when a kind is added without one).
EXAMPLES = {
    "max": "{name: g, kind: max, limit_us: 80}",
    "miss_rate": "{name: g, kind: miss_rate, above_us: 100, rate: 1%, confidence: 0.99}",
    "percentile": "{name: g, kind: percentile, percentile: 99, limit_us: 100, confidence: 0.9}",
    "avg": "{name: g, kind: avg, limit_us: 50}",
    "missed": "{name: g, kind: missed, max_rate: 1%}",
}


@pytest.mark.parametrize("name", list(KINDS))
def test_every_kind_has_every_part(name: str) -> None:
    kind = KINDS[name]
    assert isinstance(kind, GateKind) and kind.name == name
    optional = {"share_key", "latency_key"}  # None: the kind has no such figure
    for f in dataclasses.fields(GateKind):
        assert f.name in optional or getattr(kind, f.name) is not None, f.name
    assert kind.share_key is None or kind.share_key in kind.takes
    assert kind.latency_key is None or kind.latency_key in kind.takes
    assert (kind.unit == "%") <= (kind.share_key in kind.needs), "a share-valued kind must require its share"
    assert kind.needs <= kind.takes <= GATE_FIELDS, "threshold keys must be GateSpec fields"
    assert set(kind.one_of) <= kind.takes
    assert kind.needs or kind.one_of, "a kind must require something to compare with"
    assert callable(kind.judge) and callable(kind.min_samples)
    assert kind.native and all(attr in kind.takes and typ in (int, float) for _, attr, typ in kind.native)
    assert kind.figure and kind.unit in ("us", "%", "periods")


def test_thresholds_accept_exactly_the_registered_kinds() -> None:
    assert GATE_KINDS == tuple(KINDS)
    assert set(EXAMPLES) == set(KINDS), "add an example for the new kind"


@pytest.mark.parametrize("name", list(KINDS))
def test_each_kind_loads_judges_and_compiles_for_the_sampler(name: str, tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(
        f"platform: t\nmeasurements:\n  m:\n    sampler: {{loops: 100}}\n    gates:\n      - {EXAMPLES[name]}\n"
    )
    m = load_thresholds(path).measurements["m"]
    gate = m.gates[0]
    t = ThreadResult(
        index=0,
        cycles=5000,
        min=10,
        max=30,
        avg=20.0,
        cpu=0,
        priority=80,
        missed=0,
        histogram=Histogram("us", [(10, 11, 2500), (30, 31, 2500)]),
    )
    (v,) = evaluate(m, RunResult(source="x", format="rtgate-json", unit="us", threads=[t]))
    assert v.status in (Status.PASS, Status.INCONCLUSIVE), v.reason
    arg = gate_arg(gate, m, plan_for_results(m, 1))
    assert parse_gate_arg(arg, ["all"]) == dataclasses.replace(
        gate, where=("--gate", 0), critical=False, description="", threads=None
    )
    for key, attr, _ in KINDS[name].native:
        assert (f",{key}=" in arg) == (getattr(gate, attr) is not None), arg


@pytest.mark.parametrize("name", list(KINDS))
def test_a_key_of_another_kind_is_refused(name: str, tmp_path: Path) -> None:
    other = sorted(set().union(*(k.takes for k in KINDS.values())) - KINDS[name].takes)
    if not other:
        pytest.skip("this kind takes every kind-specific key")
    path = tmp_path / "t.yaml"
    path.write_text(
        f"platform: t\nmeasurements:\n  m:\n    sampler: {{loops: 100}}\n    gates:\n"
        f"      - {EXAMPLES[name][:-1]}, {other[0]}: 1}}\n"
    )
    from rtgate.errors import RtgateError

    with pytest.raises(RtgateError, match=f"does not take '{other[0]}'"):
        load_thresholds(path)


def test_the_sampler_knows_every_kind_and_key() -> None:
    """The sampler (sampler/gate.c and what it parses with) names the same kinds and --gate keys."""
    source = "".join(p.read_text() for p in sorted((ROOT / "sampler").glob("*.c")))
    for name, kind in KINDS.items():
        assert re.search(rf'"{name}"', source), f"the sampler has no gate kind {name}"
        for key, _, _ in kind.native:
            assert f'"{key}"' in source, f"the sampler does not parse {key}="


# The unit each example's figure is reported in, and its limit as people read it.
UNITS = {
    "max": ("us", "80 us"),
    "miss_rate": ("%", "1 %"),
    "percentile": ("us", "100 us"),
    "avg": ("us", "50 us"),
    "missed": ("%", "1 %"),
}


@pytest.mark.parametrize("name", [*KINDS, "missed-count"])
def test_every_report_takes_the_unit_from_the_verdict(name: str, tmp_path: Path) -> None:
    """The unit is decided once, at evaluation; text, SQUAD, KCIDB and Fuego all follow it (before, a missed-count
    figure went to KCIDB as 5e-06 s)."""
    from rtgate.fuego.criteria import fuego_files
    from rtgate.reports.kcidb import kcidb_document
    from rtgate.reports.squad import squad_documents
    from rtgate.reports.text import limit_text

    example = "{name: g, kind: missed, max_count: 5}" if name == "missed-count" else EXAMPLES[name]
    unit, limit = ("periods", "5 periods") if name == "missed-count" else UNITS[name]
    path = tmp_path / "t.yaml"
    path.write_text(f"platform: t\nmeasurements:\n  m:\n    sampler: {{loops: 5000}}\n    gates:\n      - {example}\n")
    tf = load_thresholds(path)
    t = ThreadResult(
        index=0, cycles=5000, min=10, max=30, avg=20.0, cpu=0, priority=80, missed=7,
        histogram=Histogram("us", [(10, 11, 2500), (30, 31, 2500)]),
    )  # fmt: skip
    run = RunResult(source="x", format="rtgate-json", unit="us", threads=[t])
    (v,) = evaluate(tf.measurements["m"], run)
    assert v.value is not None and v.unit == unit and limit_text(v) == limit
    (test,) = [x for x in kcidb_document("o", "o:1", "t", "m", run, [v])["tests"] if x["path"].endswith(".g.cpu0")]
    assert test["number"]["unit"] == {"us": "s", "%": "%", "periods": "periods"}[unit]
    _, metrics = squad_documents("t", [("m", run, [v])])
    assert metrics["rtgate/t/m/g-cpu0"]["unit"] == unit
    fuego = fuego_files(tf, ["m"], 1)
    assert unit in {m["unit"] for f in fuego.values() for s in f.get("test_sets", []) for c in s["test_cases"]
                    for m in c["measurements"]}  # fmt: skip
