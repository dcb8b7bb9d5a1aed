# SPDX-License-Identifier: GPL-2.0-or-later
"""The threshold-file reference is the loader's own declarations (rtgate/core/keys.py): every key the loader
reads is declared, every declared range is the one the loader enforces, and doc/thresholds.rst and
doc/rtgate-thresholds.5 are what scripts/manpage.py writes from them."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import ROOT
from rtgate.core import keys
from rtgate.core.gate_kinds import KINDS
from rtgate.core.thresholds import load_thresholds
from rtgate.errors import ThresholdsError

ALL = [(title, k) for title, table in keys.SECTIONS.items() for k in table.values()]


def _manpage() -> Any:
    spec = importlib.util.spec_from_file_location("manpage", ROOT / "scripts" / "manpage.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("title,k", ALL, ids=[f"{t}:{k.name}" for t, k in ALL])
def test_every_key_is_declared_in_full(title: str, k: keys.Key) -> None:
    assert k.doc and k.type in keys.TYPES
    if k.type in ("int", "float"):
        assert k.lo is not None and k.hi is not None and k.lo < k.hi, f"{title} {k.name}: declare its range"
    if k.type == "choice":
        assert k.choices


def test_every_key_the_loader_reads_is_declared() -> None:
    """A key read from a parsed mapping (m["x"], "x" in m, m.get("x")) must be in a table."""
    declared = {k.name for _, k in ALL}
    read: set[str] = set()
    for name in ("thresholds.py", "timerlat_spec.py"):
        tree = ast.parse((ROOT / "harness" / "rtgate" / "core" / name).read_text())
        tuples = {  # module-level tuples of names, such as the keys handed to Checker.fields
            n.targets[0].id: n.value
            for n in tree.body
            if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name) and isinstance(n.value, ast.Tuple)
        }
        for node in ast.walk(tree):
            target = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "fields":
                names = node.args[3]  # Checker.fields(table, m, key, names, out): each of names read from m
                names = tuples[names.id] if isinstance(names, ast.Name) else names
                assert isinstance(names, ast.Tuple)
                read.update(e.value for e in names.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.value, ast.Name)
                and node.value.id in ("m", "gm", "top")
            ):
                target = node.slice
            elif isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In):
                if isinstance(node.comparators[0], ast.Name) and node.comparators[0].id in ("m", "gm", "top"):
                    target = node.left
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
                if isinstance(node.func.value, ast.Name) and node.func.value.id in ("m", "gm", "top") and node.args:
                    target = node.args[0]
            if isinstance(target, ast.Constant) and isinstance(target.value, str):
                read.add(target.value)
    assert len(read) > 40
    assert sorted(read - declared) == []


def _file(section: str, k: keys.Key, value: Any) -> dict[str, Any]:
    """A minimal valid file with key k of section set to value."""
    gate = {"name": "g", "kind": "max", "limit_us": 10}
    sampler: dict[str, Any] = {"duration": "1s"}
    m: dict[str, Any] = {"sampler": sampler, "gates": [gate]}
    top: dict[str, Any] = {"platform": "p", "measurements": {"m": m}}
    if section == "measurements.<name>.sampler":
        sampler[k.name] = value
    elif section == "measurements.<name>.sampler.threads[]":
        sampler["threads"] = [{"name": "a", k.name: value}]
    elif section == "measurements.<name>.gates[]":
        kind = KINDS[keys.gate_kinds_taking(k.name)[0]]
        gate.clear()
        gate.update(name="g", kind=kind.name, **{n: 10 if n.endswith("_us") else 99 for n in kind.needs})
        if "rate" in kind.needs:
            gate["rate"] = "10%"
        if kind.one_of and k.name not in kind.one_of:
            gate[kind.one_of[0]] = 1
        gate[k.name] = value
    elif section == "measurements.<name>.load":
        m["load"] = {"kind": "io" if k.name == "min_ops_per_second" else "cpu", k.name: value}
    elif section == "require (top level or measurement)":
        top["require"] = {k.name: value}
    elif section == "history":
        top["history"] = {k.name: value}
    elif section == "measurements.<name>.timerlat":
        del m["sampler"]
        m["backend"] = "timerlat"
        m["timerlat"] = {"duration": "1s", k.name: value}
    return top


RANGED = [
    (t, k)
    for t, k in ALL
    if k.type in ("int", "float", "duration", "rate") and t not in ("(top level)", "measurements.<name>")
]


@pytest.mark.parametrize("section,k", RANGED, ids=[f"{t}:{k.name}" for t, k in RANGED])
def test_the_declared_range_is_the_one_the_loader_enforces(tmp_path: Path, section: str, k: keys.Key) -> None:
    assert k.lo is not None and k.hi is not None
    path = tmp_path / "t.yaml"
    if k.type == "rate":
        above: Any = f"{k.hi * 100:g}%"  # written with its unit: a bare number is refused whatever its size
    elif k.type == "duration":
        above = f"{int(k.hi) + 1}s"
    else:
        above = int(k.hi) + 1 if k.type == "int" else k.hi * 1.001
    path.write_text(yaml.safe_dump(_file(section, k, above)))
    with pytest.raises(ThresholdsError) as e:
        load_thresholds(path)
    assert k.name in str(e.value)
    if k.type == "int":
        assert f"to {int(k.hi)}" in str(e.value)
    elif k.type == "float":
        assert f"to {k.hi:g}" in str(e.value)
    # The upper bound itself is accepted wherever no other rule of the section forbids it.
    inside: Any = {"rate": "50%", "duration": f"{int(k.hi)}s"}.get(k.type, k.hi)
    inside = {"percentile": 99.9, "histogram_us": 100_000}.get(k.name, inside)  # below 100; at most 1e5 buckets
    path.write_text(yaml.safe_dump(_file(section, k, inside)))
    load_thresholds(path)


def test_the_generated_reference_is_current() -> None:
    mp = _manpage()
    assert (ROOT / "doc" / "thresholds.rst").read_text() == mp.generate_thresholds_rst(), (
        "doc/thresholds.rst is out of date: run scripts/manpage.py"
    )
    assert (ROOT / "doc" / "rtgate-thresholds.5").read_text() == mp.generate_thresholds_man(), (
        "doc/rtgate-thresholds.5 is out of date: run scripts/manpage.py"
    )


def test_every_key_is_in_the_reference() -> None:
    page = (ROOT / "doc" / "thresholds.rst").read_text()
    man = (ROOT / "doc" / "rtgate-thresholds.5").read_text().replace("\\-", "-")
    for title, k in ALL:
        assert f"``{k.name}``" in page.split(title + "\n", 1)[1], f"{title}: {k.name} missing from thresholds.rst"
        assert f"\\fB{k.name.replace('-', '-')}\\fR" in man.replace("\\-", "-"), k.name


def test_null_removes_an_inherited_key_and_an_empty_string_is_refused(tmp_path: Path) -> None:
    (tmp_path / "family.yaml").write_text(
        "platform: fam\nrequire: {architecture: x86_64, compatible: 'acme,board'}\n"
        "measurements:\n  idle:\n    sampler: {duration: 1s, latency_us: 5}\n"
        "    gates: [{name: max, kind: max, limit_us: 100}]\n"
        "  loaded:\n    sampler: {duration: 1s}\n    gates: [{name: max, kind: max, limit_us: 100}]\n"
    )
    (tmp_path / "board.yaml").write_text(
        "extends: family.yaml\nplatform: board\nrequire: {architecture: null, compatible: ~}\n"
        "measurements:\n  idle: {sampler: {latency_us: null}}\n  loaded: ~\n"
    )
    tf = load_thresholds(tmp_path / "board.yaml")
    assert list(tf.measurements) == ["idle"]
    assert tf.measurements["idle"].require == {}
    assert tf.measurements["idle"].sampler.latency_us is None  # null is latency_us's own value: leave it alone
    (tmp_path / "empty.yaml").write_text("extends: family.yaml\nplatform: board\nrequire: {compatible: ''}\n")
    with pytest.raises(ThresholdsError, match=r"empty\.yaml:3: require\.compatible: must be a non-empty string"):
        load_thresholds(tmp_path / "empty.yaml")
    # Without a parent there is nothing to remove: null is still a wrong type.
    (tmp_path / "alone.yaml").write_text(
        "platform: b\nrequire: {architecture: null}\nmeasurements:\n  i:\n    sampler: {duration: 1s}\n"
        "    gates: [{name: max, kind: max, limit_us: 100}]\n"
    )
    with pytest.raises(ThresholdsError, match="must be a string, not None"):
        load_thresholds(tmp_path / "alone.yaml")


@pytest.mark.parametrize(
    "edit,message",
    [
        (("kind: max", "kind: maxx"), "unknown gate kind 'maxx'; did you mean 'max'?"),
        (("limit_us: 100", "limit: 100"), "unknown key; did you mean 'limit_us'?"),
        (("duration: 1s", "duraton: 1s"), "unknown key; did you mean 'duration'?"),
        (("policy: fifo", "policy: fif0"), "unknown policy 'fif0'; did you mean 'fifo'?"),
        (("load: cpu", "load: cpus"), "unknown load 'cpus'; did you mean 'cpu'?"),
    ],
)
def test_a_near_miss_gets_a_suggestion(tmp_path: Path, edit: tuple[str, str], message: str) -> None:
    text = (
        "platform: p\nmeasurements:\n  m:\n    sampler: {duration: 1s, policy: fifo}\n    load: cpu\n"
        "    gates: [{name: g, kind: max, limit_us: 100}]\n"
    )
    assert edit[0] in text
    (tmp_path / "t.yaml").write_text(text.replace(*edit))
    with pytest.raises(ThresholdsError) as e:
        load_thresholds(tmp_path / "t.yaml")
    assert message in str(e.value)


def test_far_misses_get_no_suggestion() -> None:
    assert keys.did_you_mean("zzz", ["max", "avg"]) == ""


def test_history_defaults_are_the_comparisons() -> None:
    from rtgate.history.compare import Settings

    defaults = Settings()
    for name in ("alpha", "min_runs"):
        assert keys.HISTORY[name].default == f"{getattr(defaults, name):g}", name
    assert keys.HISTORY["min_effect"].default == f"{defaults.min_effect * 100:g}%"  # a share: written in %


@pytest.mark.parametrize(
    "load,kinds",
    [
        ("cpu", ["cpu"]),
        ("none", []),
        ("[cpu, memory]", ["cpu", "memory"]),
        ("[{kind: cpu, workers: 2}, {kind: memory, size: 16M}]", ["cpu", "memory"]),
        ("[none]", []),
    ],
)
def test_load_takes_one_or_a_list(tmp_path: Path, load: str, kinds: list[str]) -> None:
    (tmp_path / "t.yaml").write_text(
        f"platform: p\nmeasurements:\n  m:\n    sampler: {{duration: 1s}}\n    load: {load}\n"
        "    gates: [{name: g, kind: max, limit_us: 100}]\n"
    )
    assert [s.kind for s in load_thresholds(tmp_path / "t.yaml").measurements["m"].loads] == kinds


@pytest.mark.parametrize(
    "load,message",
    [
        ("[]", "t.yaml:5: measurements.m.load: must be a load or a non-empty list of loads"),
        ("[cpu, {kind: memory, workers: 0}]", "measurements.m.load[1].workers: must be a whole number from 1"),
        ("[cpu, none]", "measurements.m.load[1]: none in a list of loads"),
        ("[cpu, [memory]]", "measurements.m.load[1]: must be a mapping"),
        ("[cpu, {kind: memory, min_ops_per_second: 5}]", "load[1].min_ops_per_second: a memory load"),
        ("[cpu, {kind: memry}]", "unknown load 'memry'; did you mean 'memory'?"),
        ("{kind: [cpu, memory]}", "load.kind: one kind per load: several loads are a list, load: [cpu, memory]"),
    ],
)
def test_each_load_of_a_list_is_checked(tmp_path: Path, load: str, message: str) -> None:
    (tmp_path / "t.yaml").write_text(
        f"platform: p\nmeasurements:\n  m:\n    sampler: {{duration: 1s}}\n    load: {load}\n"
        "    gates: [{name: g, kind: max, limit_us: 100}]\n"
    )
    with pytest.raises(ThresholdsError) as e:
        load_thresholds(tmp_path / "t.yaml")
    assert message in str(e.value)
