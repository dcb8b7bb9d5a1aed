# SPDX-License-Identifier: GPL-2.0-or-later
"""One contract between sampler and harness: the sampler's option table (--dump-contract) against
what the threshold loader accepts. A value the harness accepts must be one the sampler accepts, and
both must end at the same maximum; the RTGATE-GATE fields must be the ones every reader splits."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT
from rtgate.core.thresholds import load_thresholds
from rtgate.measure.native_gates import GATE_LINE_FIELDS


@pytest.fixture(scope="module")
def contract(sampler: str) -> dict[str, Any]:
    r = subprocess.run([sampler, "--dump-contract"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _option(contract: dict[str, Any], name: str) -> dict[str, Any]:
    return next(o for o in contract["options"] if o["name"] == name)


def _gate_key(contract: dict[str, Any], key: str) -> dict[str, Any]:
    return next(k for k in contract["gate_keys"] if k["key"] == key)


class Loader:
    """Does the threshold loader accept one value in one place?"""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.n = 0

    def accepts(
        self,
        sampler: dict[str, Any] | None = None,
        gate: dict[str, Any] | None = None,
        group: dict[str, Any] | None = None,
    ) -> bool:
        s: dict[str, Any] = {"interval_us": 1000, "duration": "10s", **(sampler or {})}
        if group is not None:
            s["threads"] = [{"name": "a", **group}]
        g = gate or {"name": "g", "kind": "max", "limit_us": 100}
        doc = {"platform": "contract", "measurements": {"m": {"sampler": s, "gates": [g]}}}
        self.n += 1
        path = self.tmp / f"t{self.n}.yaml"
        path.write_text(json.dumps(doc))  # JSON is YAML
        try:
            load_thresholds(path)
        except Exception:
            return False
        return True


# sampler option -> threshold-file key under sampler:
SAMPLER_KEYS = {
    "interval": "interval_us",
    "distance": "distance_us",
    "loops": "loops",
    "latency": "latency_us",
    "histogram": "histogram_us",
    "breaktrace": "breaktrace_us",
    "checkpoint": "checkpoint_seconds",
    "priority": "priority",
}
GATE_KEYS = {
    "limit": ("max", "limit_us"),
    "above": ("miss_rate", "above_us"),
    "rate": ("miss_rate", "rate"),
    "percentile": ("percentile", "percentile"),
    "max_count": ("missed", "max_count"),
    "max_rate": ("missed", "max_rate"),
    "confidence": ("miss_rate", "confidence"),
    "min_samples": ("max", "min_samples"),
}
GATE_BASE = {
    "max": {"limit_us": 100},
    "miss_rate": {"above_us": 100, "rate": 0.001},
    "percentile": {"percentile": 99, "limit_us": 100},
    "missed": {},
}


@pytest.mark.parametrize("option", sorted(SAMPLER_KEYS))
def test_integer_option_ranges_agree(contract: dict[str, Any], option: str, tmp_path: Path) -> None:
    o = _option(contract, option)
    key = SAMPLER_KEYS[option]
    ld = Loader(tmp_path)
    extra = {"policy": "fifo"} if option == "priority" else {}
    top = o["max"]
    assert ld.accepts({key: top, **extra}), f"{key}: the sampler accepts {top}, the threshold loader refuses it"
    assert not ld.accepts({key: top + 1, **extra}), f"{key}: the loader accepts {top + 1}, beyond the sampler's max"
    if o["min"] > 0:
        assert not ld.accepts({key: o["min"] - 1, **extra}), f"{key}: the loader accepts a value the sampler refuses"


def test_duration_ranges_agree(contract: dict[str, Any], tmp_path: Path) -> None:
    o = _option(contract, "duration")
    ld = Loader(tmp_path)
    assert ld.accepts({"duration": f"{o['max']}s"})
    assert not ld.accepts({"duration": f"{o['max'] + 1}s"}), "thresholds.py accepts a duration the sampler refuses"
    assert not ld.accepts({"duration": "106752d"})


def test_block_seconds_range_agrees(contract: dict[str, Any], tmp_path: Path) -> None:
    o = _option(contract, "block")
    ld = Loader(tmp_path)
    assert ld.accepts({"block_seconds": o["min"]}) and ld.accepts({"block_seconds": o["max"]})
    assert not ld.accepts({"block_seconds": o["min"] / 2}) and not ld.accepts({"block_seconds": o["max"] * 1.001})


def test_thread_count_agrees(contract: dict[str, Any], tmp_path: Path) -> None:
    ld = Loader(tmp_path)
    n = contract["max_threads"]
    assert ld.accepts(group={"count": n}) and not ld.accepts(group={"count": n + 1})


@pytest.mark.parametrize("key", sorted(GATE_KEYS))
def test_gate_key_ranges_agree(contract: dict[str, Any], key: str, tmp_path: Path) -> None:
    k = _gate_key(contract, key)
    kind, yaml_key = GATE_KEYS[key]
    ld = Loader(tmp_path)

    def accepts(v: float) -> bool:
        g = {"name": "g", "kind": kind, **GATE_BASE[kind], yaml_key: v}
        if kind == "missed" and yaml_key == "max_count":
            g.pop("max_rate", None)
        if kind == "missed" and yaml_key == "max_rate":
            g.pop("max_count", None)
        return ld.accepts(gate=g)

    lo, hi = k["min"], k["max"]
    if k["type"] == "integer":
        lo, hi = int(lo), int(hi)
        assert accepts(hi) and not accepts(hi + 1), f"{key}: max differs"
        assert not accepts(lo - 1) if lo > 0 else True
        return
    eps = max(abs(hi), 1.0) * 1e-6
    assert accepts(hi) != k["max_open"], (
        f"{key}: the maximum {hi} is {'excluded' if k['max_open'] else 'included'} by the sampler, not by the loader"
    )
    assert not accepts(hi + eps), f"{key}: the loader accepts {hi + eps}, beyond the sampler's max"
    assert accepts(lo) != k["min_open"], f"{key}: the minimum {lo} differs"
    if lo > 0:
        assert not accepts(lo - min(eps, lo / 2)), f"{key}: the loader accepts below the sampler's min"


def test_gate_line_fields_are_the_readers_fields(contract: dict[str, Any]) -> None:
    line = contract["gate_line"]
    assert line["prefix"] == "RTGATE-GATE"
    assert tuple(line["fields"]) == GATE_LINE_FIELDS
    # lava-defs/rtgate.sh splits the line with `read -r _tag f1 f2 ...`: one name per field, after the tag
    script = (ROOT / "lava-defs" / "rtgate.sh").read_text()
    m = re.search(r"while read -r (_tag [^;]+);", script)
    assert m and len(m.group(1).split()) == len(line["fields"]) + 1, m and m.group(1)


def test_every_option_is_declared_with_its_type(contract: dict[str, Any]) -> None:
    names = [o["name"] for o in contract["options"]]
    assert len(names) == len(set(names))
    shorts = [o["short"] for o in contract["options"] if o["short"]]
    assert len(shorts) == len(set(shorts))
    for o in contract["options"]:
        assert o["type"] in ("flag", "integer", "duration", "decimal", "cpuset", "text", "refused"), o
        if o["type"] in ("integer", "duration", "decimal"):
            assert o["min"] is not None and o["max"] is not None and o["min"] <= o["max"], o


def test_cpu_limit_is_the_samplers(contract: dict[str, Any], tmp_path: Path) -> None:
    """One limit on CPU numbers: the loader's MAX_CPUS is the sampler's; a huge range is refused before
    it is made (its cost is in benchmarks/bounded_inputs.py)."""
    from rtgate.core.thresholds import MAX_CPUS

    assert contract["max_cpus"] == MAX_CPUS
    loader = Loader(tmp_path)
    assert loader.accepts(group={"cpus": f"0-{MAX_CPUS - 1}"})
    assert not loader.accepts(group={"cpus": f"0-{MAX_CPUS}"})
    assert not loader.accepts(group={"cpus": [MAX_CPUS]})
    assert not loader.accepts(group={"cpus": "0-99999999"})
    assert not loader.accepts(gate={"name": "g", "kind": "max", "limit_us": 100, "cpus": "0-99999999"})
    assert not loader.accepts(group={"cpus": ",".join(["0-1023"] * 2000)})
