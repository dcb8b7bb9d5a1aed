# SPDX-License-Identifier: GPL-2.0-or-later
"""One contract between sampler and harness: the sampler's option table (--dump-contract) against
what the threshold loader accepts. A value the harness accepts must be one the sampler accepts, and
both must end at the same maximum; the RTGATE-GATE fields must be the ones every reader splits.
The tests of this topic that start no process: tests/unit/test_sampler_contract_unit.py."""

from __future__ import annotations

import ast
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT
from rtgate.core.gate_kinds import KINDS, figure_unit
from rtgate.core.status import SEVERITY, Status
from rtgate.core.thresholds import load_thresholds
from rtgate.lava.results import _CONSOLE as CONSOLE_LINE
from rtgate.measure.native_gates import GATE_LINE_FIELDS, parse_gate_arg, parse_gate_line
from rtgate.parsers.cmdline import split_options


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
    "miss_rate": {"above_us": 100, "rate": "0.1%"},
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
        # a share is written with its unit in a threshold file, and compiled to a fraction for the sampler
        written: float | str = f"{v * 100:.12g}%" if yaml_key in ("rate", "max_rate") else v
        g = {"name": "g", "kind": kind, **GATE_BASE[kind], yaml_key: written}
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


# ---------------------------------------------------------------- every copy of a shared fact, against the contract


def test_cmdline_reads_every_option_as_the_sampler_does(contract: dict[str, Any]) -> None:
    """A recorded command line is split as the sampler's getopt splits it: an option that takes a value
    takes the next word, a flag never does, an optional value is taken when it is a number."""
    for o in contract["options"]:
        forms = [f"--{o['name']}"] + ([f"-{o['short']}"] if o["short"] else [])
        for form in forms:
            got = split_options(f"rtgate-sampler {form} 7").values
            want = {"required": "7", "optional": "7", "none": None}[o["arg"]]
            assert got.get(o["name"], "absent") == want, f"{form} ({o['arg']} value): cmdline.py read {got}"


def test_gate_kinds_are_the_registrys(contract: dict[str, Any]) -> None:
    """gate.c's kind table and core/gate_kinds.py KINDS: the same kinds, keys, rules and units."""
    assert {k["name"] for k in contract["gate_kinds"]} == set(KINDS)
    # the threshold-file key of each --gate key, from the registry's own native table
    to_native = {attr: key for kind in KINDS.values() for key, attr, _ in kind.native} | {"confidence": "confidence"}
    for k in contract["gate_kinds"]:
        kind = KINDS[k["name"]]
        assert {to_native[a] for a in kind.needs} == set(k["needs"]), k["name"]
        assert {to_native[a] for a in kind.takes} == set(k["takes"]), k["name"]
        assert {to_native[a] for a in kind.one_of} == set(k["one_of"]), k["name"]
        assert kind.unit == k["unit"], k["name"]
        assert (to_native[kind.share_key] if kind.share_key else None) == k["share_key"], k["name"]


def test_statuses_rank_alike_everywhere(contract: dict[str, Any]) -> None:
    """status.py, the sampler, Fuego's parser and the LAVA console reader: the same statuses, in rank order."""
    statuses = contract["gate_line"]["statuses"]
    assert [s.value for s in Status] == statuses
    assert [SEVERITY[Status(s)] for s in statuses] == list(range(len(statuses)))
    fuego = _fuego_parser_constants()
    assert fuego["VERDICT"] == {s: i for i, s in enumerate(statuses)}
    for s in statuses:
        assert CONSOLE_LINE.fullmatch(f"rtgate: {s} m/g[cpu0]: why"), f"lava/results.py does not read {s}"


def _fuego_parser_constants() -> dict[str, Any]:
    """The parser's module-level constants, read without running it (it needs Fuego's own modules):
    literals, and strings joined with + from literals and constants defined before them."""
    tree = ast.parse((ROOT / "fuego" / "tests" / "Benchmark.rtgate" / "parser.py").read_text())
    out: dict[str, Any] = {}

    def value(node: ast.expr) -> Any:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return value(node.left) + value(node.right)
        if isinstance(node, ast.Name) and node.id in out:
            return out[node.id]
        return ast.literal_eval(node)

    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = value(node.value)
            except (ValueError, TypeError):
                pass
    return out


def _gate_args(contract: dict[str, Any]) -> list[str]:
    """One --gate per kind (and per choice of a one_of key), with values the contract says are in range."""
    values = {
        "limit": "100000",
        "above": "100000",
        "rate": "0.5",
        "percentile": "50",
        "max_count": "1000000",
        "max_rate": "0.5",
        "confidence": "0.9",
    }
    args = []
    for k in contract["gate_kinds"]:
        for choice in k["one_of"] or [None]:
            keys = [*k["needs"], *([choice] if choice else [])]
            name = k["name"] + (f"-{choice}" if choice else "")
            args.append(",".join([f"name={name}", f"kind={k['name']}", *(f"{key}={values[key]}" for key in keys)]))
    return args


def test_real_gate_lines_read_alike_by_every_reader(sampler: str, contract: dict[str, Any]) -> None:
    """The sampler's real RTGATE-GATE lines, not examples: the harness, Fuego's regex and the contract's
    field list split them alike, and each line's unit is the one Python gives the same gate."""
    line_spec = contract["gate_line"]
    args = _gate_args(contract)
    r = subprocess.run(
        [sampler, "-q", "-l", "50", "-i", "500", *(f"--gate={a}" for a in args)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith(line_spec["prefix"] + " ")]
    assert len(lines) == len(args), r.stdout
    fuego_line = re.compile(_fuego_parser_constants()["LINE"])
    for arg, ln in zip(args, lines):
        fields = parse_gate_line(ln)
        assert fields is not None and list(fields) == line_spec["fields"], ln
        m = fuego_line.match(ln)
        assert m and list(m.groups()) == list(fields.values()), f"Fuego's parser splits {ln!r} otherwise"
        assert fields["gate"] == arg.split(",")[0].removeprefix("name=")
        assert fields["status"] in line_spec["statuses"], ln
        for f in ("value", "limit", "bound"):
            assert fields[f] == line_spec["no_value"] or float(fields[f]) >= 0, ln
        assert int(fields["samples"]) > 0, ln
        assert fields["units"] == figure_unit(parse_gate_arg(arg, [None])), f"{arg}: the sampler prints {ln!r}"
    assert _split_as_rtgate_sh(lines) == [list(f.values()) for f in map(parse_gate_line, lines) if f]


def _split_as_rtgate_sh(lines: list[str]) -> list[list[str]]:
    """The lines split by lava-defs/rtgate.sh's own `read -r` variable list, in a real shell."""
    script = (ROOT / "lava-defs" / "rtgate.sh").read_text()
    m = re.search(r"while read -r (_tag [^;]+);", script)
    assert m, "rtgate.sh no longer reads RTGATE-GATE lines with `while read -r _tag ...`"
    names = m.group(1).split()
    body = "printf '%s\\037' " + " ".join(f'"${n}"' for n in names[1:]) + "; echo"
    r = subprocess.run(
        ["sh", "-c", f"while read -r {' '.join(names)}; do {body}; done"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return [row.split("\x1f")[:-1] for row in r.stdout.splitlines()]


def test_readme_names_every_option(contract: dict[str, Any]) -> None:
    readme = (ROOT / "doc" / "sampler.rst").read_text()  # the sampler's page (its option list is generated)
    missing = [
        o["name"]
        for o in contract["options"]
        if f"--{o['name']}" not in readme and not (o["short"] and f"-{o['short']}/" in readme)
    ]
    assert missing == [], "doc/sampler.rst never names these sampler options"
