# SPDX-License-Identifier: GPL-2.0-or-later
"""YAML files read with the line of every key, and the one checker of their values: threshold files
(thresholds.py, timerlat_spec.py) and lab files (lava/lab.py) name each mistake by file, line and key."""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path

import yaml

from rtgate.core import keys
from rtgate.core.yamlload import THRESHOLDS, Limits, load_yaml
from rtgate.errors import RtgateError, ThresholdsError
from rtgate.safe_io import open_input

TYPE_CHECKING = False  # typing's constant without importing typing: `rtgate validate` need not load it
if TYPE_CHECKING:
    from typing import Any, TypeAlias

MAX_CPUS = 1024  # the sampler's MAX_CPUS (sampler/params.h, in its --dump-contract): CPUs 0 to 1023
Key: TypeAlias = "tuple[Any, ...]"
Where = tuple[str, int]  # file, line


def load_yaml_lines(
    path: Path, limits: Limits = THRESHOLDS, error: type[RtgateError] = ThresholdsError, what: str = "threshold"
) -> tuple[Any, dict[Key, Where]]:
    """A YAML file (bounded: limits), with the file and line of every key and item."""
    try:
        with open_input(path, error, f"a {what} file") as f:  # a FIFO or device: refused, never waited on
            raw = f.read(limits.max_bytes + 1)  # never read more than the cap
        if len(raw) > limits.max_bytes:
            raise error(f"larger than {limits.max_bytes} bytes: not a {what} file", path=str(path))
        text = raw.decode("utf-8")
    except OSError as e:
        raise error(f"cannot read: {e.strerror}", path=str(path)) from e
    except UnicodeDecodeError as e:
        raise error(f"not UTF-8 text: {e}", path=str(path)) from e
    data, node = load_yaml(text, str(path), ThresholdsError, limits, "threshold")
    lines: dict[Key, Where] = {}

    def walk(n: yaml.Node, key: Key) -> None:
        lines[key] = (str(path), n.start_mark.line + 1)
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                child = key + (k.value,)
                walk(v, child)
                lines[child] = (str(path), k.start_mark.line + 1)
        elif isinstance(n, yaml.SequenceNode):
            for i, v in enumerate(n.value):
                walk(v, key + (i,))

    if node is not None:
        walk(node, ())
    return data, lines


_RATE_UNITS = {"%": 1e-2, "ppm": 1e-6}


def parse_rate(value: Any, hi: float = 1.0) -> float:
    """A share written with its unit, '0.1%' or '100ppm', as a fraction below `hi` (1: below 100 %).

    A bare number means two things (rate: 0.1 is 0.1 % to one reader and the fraction 0.1, 10 %, to
    another: a gate 100x looser than meant), so it is refused with both readings; only 0 reads one way."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"must be a percentage such as '0.1%' or a rate in ppm such as '100ppm', not {value!r}")
    if isinstance(value, (int, float)):
        if value == 0:
            return 0.0
        raise ValueError(bare_rate_message(value))
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(%|ppm)\s*", value)
    if not m:
        bare = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*", value)
        if bare:
            raise ValueError(bare_rate_message(float(bare.group(1))))
        raise ValueError(f"must be a percentage such as '0.1%' or a rate in ppm such as '100ppm', not {value!r}")
    r = float(m.group(1)) * _RATE_UNITS[m.group(2)]
    if not 0.0 <= r < hi:
        raise ValueError(f"must be below {hi * 100:g} %, not {value!r}")
    return r


def bare_rate_message(value: float) -> str:
    """Both readings of a bare number where a share is meant, and how to write each."""
    return (
        f"a bare {value:g} means two things: {value:g} % or the fraction {value:g} ({value * 100:g} %); "
        f"write the unit: '{value:g}%' for the first, '{value * 100:g}%' for the second (or ppm)"
    )


def parse_duration(value: Any) -> int:
    """Whole seconds from 30, '30s', '10m', '2h' or '1d'."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 315_360_000:  # the sampler's -D max
        return value
    if isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9]{1,12})\s*([smhd]?)\s*", value)  # ASCII digits only
        if m and 0 < int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)] <= 315_360_000:
            return int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]  # <= 3650 d
    raise ValueError(f"must be a whole duration such as 30s, 10m, 2h or 1d, not {value!r}")


_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}


def unit_hint(value: Any, unit: str) -> str:
    """': write 250 (the key is in us)' for '0.25ms' given to a key in us; '' for anything else."""
    if not isinstance(value, str) or unit not in _TIME_UNITS:
        return ""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(ns|us|µs|ms|s)\s*", value)
    if not m:
        return ""
    number = float(m.group(1)) * _TIME_UNITS[m.group(2)] / _TIME_UNITS[unit]
    return f": write {number:.6g} (the key is in {unit})"


def fraction_hint(value: Any, spec: keys.Key) -> str | None:
    """For confidence: 95 or alpha: '5%', where a fraction below 1 is meant: the fraction to write."""
    if spec.unit or spec.hi is None or spec.hi > 1:
        return None
    text = value.strip() if isinstance(value, str) else None
    if text is not None and re.fullmatch(r"[0-9]*\.?[0-9]+\s*%", text):
        share = float(text.rstrip("%"))
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and 1 < value <= 100:
        share = float(value)
    else:
        return None
    lo = spec.lo or 0.0
    if not lo <= share / 100 <= spec.hi:
        return None
    return (
        f"must be a number from {lo:g} to {spec.hi:g}, not {value!r}; "
        f"write {share / 100:g} for {share:g} %: {spec.name} is a fraction"
    )


class Checker:
    """Checks values read from a YAML file and names the file, line and key of any mistake (error: the
    exception raised, ThresholdsError unless given)."""

    def __init__(self, path: Path, lines: dict[Key, Where], error: type[RtgateError] = ThresholdsError) -> None:
        self.path = path
        self.lines = lines
        self.error = error

    def fail(self, key: Key, message: str) -> RtgateError:
        where = None
        k = key
        while where is None:
            where = self.lines.get(k)
            if not k:
                break
            k = k[:-1]
        file, line = where if where else (str(self.path), None)
        dotted = "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(key))
        return self.error(message, path=file, line=line, key=dotted or None)

    def where(self, key: Key) -> Where:
        return self.lines.get(key, (str(self.path), 0))

    def mapping(self, value: Any, key: Key, allowed: set[str], required: Collection[str] = ()) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(key, "must be a mapping")
        for k in value:
            if k not in allowed:
                near = keys.did_you_mean(k, allowed)
                raise self.fail(key + (k,), f"unknown key{near} (expected one of: {', '.join(sorted(allowed))})")
        for k in sorted(required):
            if k not in value:
                raise self.fail(key, f"missing required key {k!r}")
        return value

    def field(self, table: dict[str, keys.Key], m: dict[str, Any], key: Key, name: str) -> Any:
        """m[name] checked against table[name]."""
        return self.checked(table[name], m[name], key + (name,))

    def fields(
        self,
        table: dict[str, keys.Key],
        m: dict[str, Any],
        key: Key,
        names: Collection[str],
        out: object,
        attributes: dict[str, str] | None = None,
    ) -> None:
        """Each of `names` that m has, in order, checked against table[name] and set on `out` (on the
        attribute of its name, or the one `attributes` gives). A nullable key's null is kept as None;
        a choice must be one of its choices."""
        for name in names:
            if name not in m:
                continue
            spec, value = table[name], m[name]
            if spec.nullable and value is None:
                pass  # null is a value here: latency_us: null leaves the DMA latency alone
            elif spec.type == "choice":
                if value not in spec.choices:
                    raise self.fail(key + (name,), "must be " + " or ".join(spec.choices))
            else:
                value = self.checked(spec, value, key + (name,))
            setattr(out, (attributes or {}).get(name, name), value)

    def checked(self, spec: keys.Key, value: Any, key: Key) -> Any:
        """A value checked against its declaration: type and range from core/keys.py. A number written
        with a unit (limit_us: 100us, interval_us: 0.25ms) is refused with the number to write."""
        try:
            return self._checked(spec, value, key)
        except RtgateError as e:
            hint = unit_hint(value, spec.unit) if spec.type in ("int", "float") else ""
            if not hint:
                raise
            raise self.fail(key, e.message + hint) from None

    def _checked(self, spec: keys.Key, value: Any, key: Key) -> Any:
        if spec.type == "int":
            assert spec.lo is not None and spec.hi is not None
            return self.integer(value, key, int(spec.lo), int(spec.hi))
        if spec.type == "float":
            assert spec.lo is not None and spec.hi is not None
            hint = fraction_hint(value, spec)
            if hint:
                raise self.fail(key, hint)
            return self.number(value, key, spec.lo, spec.hi, lo_open=spec.lo_open)
        if spec.type == "bool":
            return self.boolean(value, key)
        if spec.type == "duration":
            return self.duration(value, key)
        if spec.type == "rate":
            return self.rate(value, key, spec.hi if spec.hi is not None else 1.0)
        if spec.type == "str":
            return self.string(value, key)
        if spec.type == "name":
            return self.name(value, key)
        raise AssertionError(f"{spec.name}: a {spec.type} is checked by its section")

    def string(self, value: Any, key: Key) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"must be a non-empty string, not {value!r}")
        return value

    def name(self, value: Any, key: Key) -> str:
        s = self.string(value, key)
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", s):
            raise self.fail(key, f"{s!r}: use letters, digits, '-', '_' and '.' only")
        return s

    def integer(self, value: Any, key: Key, lo: int, hi: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise self.fail(key, f"must be a whole number from {lo} to {hi}, not {value!r}")
        return value

    def number(self, value: Any, key: Key, lo: float, hi: float, lo_open: bool = False) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not ((lo < value if lo_open else lo <= value) and value <= hi)
        ):
            bound = f"above {lo:g}" if lo_open else f"from {lo:g}"
            raise self.fail(key, f"must be a number {bound} to {hi:g}, not {value!r}")
        return float(value)

    def boolean(self, value: Any, key: Key) -> bool:
        if not isinstance(value, bool):
            raise self.fail(key, f"must be true or false, not {value!r}")
        return value

    def rate(self, value: Any, key: Key, hi: float = 1.0) -> float:
        try:
            return parse_rate(value, hi)
        except ValueError as e:
            raise self.fail(key, str(e)) from None

    def duration(self, value: Any, key: Key) -> int:
        try:
            return parse_duration(value)
        except ValueError as e:
            raise self.fail(key, str(e)) from None

    def cpus(self, value: Any, key: Key) -> list[int] | str:
        if value == "all":
            return "all"
        if isinstance(value, int) and not isinstance(value, bool):
            value = [value]
        if isinstance(value, str):
            out: list[int] = []
            for part in value.split(","):
                m = re.fullmatch(r"\s*([0-9]{1,9})\s*(?:-\s*([0-9]{1,9})\s*)?", part)  # ASCII digits only
                if not m:
                    raise self.fail(key, f"bad CPU list {value!r} (use 'all', 3, [0, 2] or '0-3')")
                lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
                if hi < lo:
                    raise self.fail(key, f"bad CPU range {part.strip()!r}")
                if hi >= MAX_CPUS:  # checked before the range is made: '0-99999999' costs nothing
                    raise self.fail(key, f"CPU {hi} is beyond the sampler's {MAX_CPUS} CPUs")
                out.extend(range(lo, hi + 1))
                if len(out) > MAX_CPUS:
                    raise self.fail(key, f"more than the sampler's {MAX_CPUS} CPUs listed")
            return out
        if (
            isinstance(value, list)
            and value
            and len(value) <= MAX_CPUS
            and all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c < MAX_CPUS for c in value)
        ):
            return list(value)
        raise self.fail(key, f"bad CPU list {value!r} (use 'all', 3, [0, 2] or '0-3')")
