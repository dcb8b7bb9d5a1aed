# SPDX-License-Identifier: GPL-2.0-or-later
"""Threshold files: per-platform measurements and gates, validated with file, line and key."""

from __future__ import annotations

import re
from pathlib import Path

from rtgate.core import keys
from rtgate.core.checker import MAX_CPUS as MAX_CPUS  # re-exported: the loader's CPU limit
from rtgate.core.checker import Checker, Key, Where, load_yaml_lines, parse_duration, parse_rate
from rtgate.core.gate_kinds import KINDS
from rtgate.core.load_spec import KINDS as LOAD_KINDS
from rtgate.core.load_spec import LoadSpec
from rtgate.core.spec import GateSpec, Measurement, SamplerSettings, ThreadGroup, ThresholdFile, TimerlatSettings
from rtgate.core.timerlat_spec import as_sampler, parse_settings
from rtgate.errors import ThresholdsError

TYPE_CHECKING = False  # typing's constant without importing typing: `rtgate validate` need not load it
if TYPE_CHECKING:
    from typing import Any

# What the loader makes, for the modules that read a threshold file through it.
__all__ = [
    "GateSpec",
    "Measurement",
    "SamplerSettings",
    "ThreadGroup",
    "ThresholdFile",
    "find_thresholds",
    "load_thresholds",
    "parse_duration",
    "parse_rate",
]

GATE_KINDS = tuple(KINDS)
BACKENDS = keys.MEASUREMENT["backend"].choices
POLICIES = keys.POLICIES


def _copy_lines(src: dict[Key, Where], src_key: Key, dst: dict[Key, Where], dst_key: Key) -> None:
    """Point every location under dst_key at src's locations under src_key."""
    for k in [k for k in dst if k[: len(dst_key)] == dst_key]:
        del dst[k]
    n = len(src_key)
    for k, where in src.items():
        if k[:n] == src_key:
            dst[dst_key + k[n:]] = where


def _merge(base: Any, over: Any, over_lines: dict[Key, Where], key: Key, out_lines: dict[Key, Where]) -> Any:
    """`over` wins; mappings merge key by key, gate lists merge by gate name.

    out_lines starts as the base file's locations and ends pointing at whichever file won.
    """
    if isinstance(base, dict) and isinstance(over, dict):
        if key in over_lines:
            out_lines[key] = over_lines[key]  # an overridden item is located where it was overridden
        merged = dict(base)
        for k, v in over.items():
            if v is None and k in base and k not in keys.NULLABLE:  # `key: null` (or ~) removes an inherited key
                del merged[k]
                _copy_lines({}, (), out_lines, key + (k,))
            elif k in base:
                merged[k] = _merge(base[k], v, over_lines, key + (k,), out_lines)
            else:
                merged[k] = v
                _copy_lines(over_lines, key + (k,), out_lines, key + (k,))
        return merged
    if key and key[-1] == "gates" and isinstance(base, list) and isinstance(over, list):
        by_name = {_gate_name(g): i for i, g in enumerate(base) if _gate_name(g) is not None}
        merged_list = list(base)
        for oi, g in enumerate(over):
            name = _gate_name(g)
            if name in by_name:
                mi = by_name[name]
                merged_list[mi] = _merge(
                    base[mi], g, _shift(over_lines, key + (oi,), key + (mi,)), key + (mi,), out_lines
                )
            else:
                _copy_lines(over_lines, key + (oi,), out_lines, key + (len(merged_list),))
                merged_list.append(g)
        return merged_list
    _copy_lines(over_lines, key, out_lines, key)
    return over


def _gate_name(gate: Any) -> str | None:
    """A gate's name when it is one (a list or mapping there is reported by validation, not here)."""
    name = gate.get("name") if isinstance(gate, dict) else None
    return name if isinstance(name, str) else None


def _shift(lines: dict[Key, Where], old: Key, new: Key) -> dict[Key, Where]:
    n = len(old)
    return {new + k[n:]: w for k, w in lines.items() if k[:n] == old}


def _load_chain(path: Path, seen: list[str]) -> tuple[dict[str, Any], dict[Key, Where], list[str]]:
    resolved = str(path.resolve())
    if resolved in seen:
        raise ThresholdsError("extends itself (cycle: " + " -> ".join(seen + [resolved]) + ")", path=str(path))
    data, lines = load_yaml_lines(path)
    if data is None:
        raise ThresholdsError("file is empty", path=str(path))
    if not isinstance(data, dict):
        raise ThresholdsError("must be a mapping with platform and measurements", path=str(path), line=1)
    parent = data.get("extends")
    if parent is None:
        return data, lines, [str(path)]
    if not isinstance(parent, str) or not parent:
        raise ThresholdsError("must name a threshold file", path=str(path), line=lines[("extends",)][1], key="extends")
    if len(seen) >= 16:
        raise ThresholdsError(
            "extends chain longer than 16 files", path=str(path), line=lines[("extends",)][1], key="extends"
        )
    parent_path = path.parent / parent
    try:
        found = parent_path.is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        found = False
    if not found:
        shown = parent if len(parent) <= 80 else parent[:77] + "..."
        raise ThresholdsError(
            f"file {shown!r} not found (looked in {path.parent})",
            path=str(path),
            line=lines[("extends",)][1],
            key="extends",
        )
    base, merged_lines, files = _load_chain(parent_path, seen + [resolved])
    merged = _merge(base, {k: v for k, v in data.items() if k != "extends"}, lines, (), merged_lines)
    return merged, merged_lines, files + [str(path)]


# ---------------------------------------------------------------- validation


_KIND_KEYS = sorted(set().union(*(k.takes for k in KINDS.values())))  # keys that only some kinds take


# Plain keys, each checked against its declaration in core/keys.py and set on the attribute of its name; in
# the order they are checked (the first mistake in a file is the one named).
_SAMPLER_TIMING = ("interval_us", "distance_us", "duration", "loops")
_SAMPLER_OPTIONS = (
    "mlockall",
    "latency_us",
    "histogram_us",
    "clock",
    "posix_timers",
    "relative",
    "nsecs",
    "breaktrace_us",
    "block_seconds",
    "checkpoint_seconds",
)


def _sampler(c: Checker, raw: Any, key: Key) -> SamplerSettings:
    m = c.mapping(raw if raw is not None else {}, key, set(keys.SAMPLER))
    s = SamplerSettings()
    c.fields(keys.SAMPLER, m, key, _SAMPLER_TIMING, s, {"duration": "duration_s"})
    if s.duration_s is None and s.loops is None:
        raise c.fail(key, "set duration or loops: an endless measurement is never a gate")
    policy = m.get("policy", "fifo")
    if policy not in POLICIES:
        raise c.fail(
            key + ("policy",),
            f"unknown policy {policy!r}{keys.did_you_mean(policy, POLICIES)} (one of {', '.join(POLICIES)})",
        )
    default_prio = m.get("priority", 80 if policy in ("fifo", "rr") else 0)
    c.checked(keys.SAMPLER["priority"], default_prio, key + ("priority",))
    c.fields(keys.SAMPLER, m, key, _SAMPLER_OPTIONS, s)
    groups = m.get("threads", [{"name": "all", "cpus": "all"}])
    if not isinstance(groups, list) or not groups:
        raise c.fail(key + ("threads",), "must be a non-empty list of thread groups")
    names: set[str] = set()
    for i, g in enumerate(groups):
        s.threads.append(_thread_group(c, g, key + ("threads", i), names, policy, default_prio, len(groups)))
    return s


def _thread_group(
    c: Checker, g: Any, gk: Key, names: set[str], policy: str, default_prio: int, ngroups: int
) -> ThreadGroup:
    """One of the sampler's thread groups; `names`: the groups' names so far (this one is added)."""
    gm = c.mapping(g, gk, set(keys.THREAD_GROUP), {"name"})
    name = c.field(keys.THREAD_GROUP, gm, gk, "name")
    if name in names:
        raise c.fail(gk + ("name",), f"thread group {name!r} is defined twice")
    names.add(name)
    gpolicy = gm.get("policy", policy)
    if gpolicy != policy:
        raise c.fail(gk + ("policy",), "all thread groups of one measurement share its policy")
    prio = c.checked(keys.THREAD_GROUP["priority"], gm.get("priority", default_prio), gk + ("priority",))
    if policy in ("fifo", "rr") and prio < 1:
        raise c.fail(gk + ("priority",), f"SCHED_{policy.upper()} needs a priority from 1 to 99")
    if policy not in ("fifo", "rr") and prio != 0:
        raise c.fail(gk + ("priority",), f"policy {policy} takes no real-time priority")
    cpus = c.cpus(gm["cpus"], gk + ("cpus",)) if "cpus" in gm else None
    count = c.field(keys.THREAD_GROUP, gm, gk, "count") if "count" in gm else None
    if cpus == "all" and count is not None:
        raise c.fail(gk + ("count",), "cpus: all runs one thread per CPU; drop count")
    if cpus == "all" and ngroups > 1:
        raise c.fail(gk + ("cpus",), "cpus: all is only for a measurement with one thread group")
    if cpus is None and count is None:
        count = 1
    return ThreadGroup(name=name, count=count, cpus=cpus, priority=prio, policy=gpolicy)


# What a measurement needs of the system. architecture, compatible (a devicetree compatible string), dmi_product
# and cpu_count name the machine a board file is for: elsewhere its budget means nothing.
REQUIREMENTS = {k.name: {"bool": bool, "str": str, "int": int}[k.type] for k in keys.REQUIRE.values()}


def _loads(c: Checker, raw: Any, key: Key) -> list[LoadSpec]:
    """`load:` is one load (a kind's name or a mapping) or a list of them, run together."""
    if not isinstance(raw, list):
        spec = _load(c, raw, key)
        return [] if spec.kind == "none" else [spec]
    if not raw:
        raise c.fail(key, "must be a load or a non-empty list of loads")
    specs = [_load(c, item, key + (i,)) for i, item in enumerate(raw)]
    for i, spec in enumerate(specs):
        if spec.kind == "none" and len(specs) > 1:
            raise c.fail(key + (i,), "none in a list of loads: drop it")
    return [s for s in specs if s.kind != "none"]


def _load(c: Checker, raw: Any, key: Key) -> LoadSpec:
    if isinstance(raw, str):
        raw = {"kind": raw}
    m = c.mapping(raw, key, set(keys.LOAD), {"kind"})
    if isinstance(m["kind"], list):
        raise c.fail(key + ("kind",), "one kind per load: several loads are a list, load: [cpu, memory]")
    if m["kind"] not in LOAD_KINDS:
        raise c.fail(
            key + ("kind",),
            f"unknown load {m['kind']!r}{keys.did_you_mean(m['kind'], LOAD_KINDS)} (one of {', '.join(LOAD_KINDS)})",
        )
    spec = LoadSpec(kind=m["kind"])
    c.fields(keys.LOAD, m, key, ("workers",), spec)
    if "cpus" in m:
        spec.cpus = m["cpus"] if m["cpus"] in ("measured", "others", "all") else c.cpus(m["cpus"], key + ("cpus",))
    if "size" in m:
        spec.size = _load_size(c, m["size"], key + ("size",))
    if "command" in m:
        spec.command = _load_command(c, m["command"], key + ("command",))
    if spec.kind == "custom" and not spec.command:
        raise c.fail(key, "a custom load needs command: [program, arg, ...]")
    # CPU use can be asked of any load; an operation rate only of stress-ng's io, network and timer,
    # whose figures stress-ng reports (elsewhere the level would never be checked).
    c.fields(keys.LOAD, m, key, ("warmup_seconds", "min_cpu_percent"), spec)
    if "min_ops_per_second" in m:
        if spec.kind not in ("io", "network", "timer"):
            raise c.fail(key + ("min_ops_per_second",), f"a {spec.kind} load's level is min_cpu_percent")
        spec.min_ops_per_second = c.field(keys.LOAD, m, key, "min_ops_per_second")
    if "tree" in m:
        if spec.kind != "kcompile" or not isinstance(m["tree"], str) or not m["tree"]:
            raise c.fail(key + ("tree",), "tree: a kernel source tree's path, for kind: kcompile only")
        spec.tree = m["tree"]
    return spec


def _load_size(c: Checker, value: Any, key: Key) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"\d+[KMG]?", value):
        raise c.fail(key, f"must be a size such as 64M or 1G, not {value!r}")
    return value


def _load_command(c: Checker, value: Any, key: Key) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(w, str) and w for w in value):
        raise c.fail(key, "must be a list of words (the program and its arguments; no shell)")
    return list(value)


def _require(c: Checker, raw: Any, key: Key) -> dict[str, Any]:
    m = c.mapping(raw, key, set(REQUIREMENTS))
    words = {bool: "true or false", str: "a string", int: "a whole number"}
    for k, kind in REQUIREMENTS.items():
        if k in m and (not isinstance(m[k], kind) or (kind is int and isinstance(m[k], bool))):
            raise c.fail(key + (k,), f"must be {words[kind]}, not {m[k]!r}")
        if kind is str and k in m:
            c.checked(keys.REQUIRE[k], m[k], key + (k,))  # an empty string would turn the check off
    if "cpu_count" in m:
        c.field(keys.REQUIRE, m, key, "cpu_count")
    return dict(m)


def _history(c: Checker, raw: Any, key: Key) -> dict[str, Any]:
    """Regression-detection settings for `rtgate history compare`."""
    m = c.mapping(raw, key, set(keys.HISTORY))
    out: dict[str, Any] = {}
    if "alpha" in m:
        out["alpha"] = c.field(keys.HISTORY, m, key, "alpha")
    if "min_effect" in m:
        out["min_effect"] = c.field(keys.HISTORY, m, key, "min_effect")
    if "min_runs" in m:
        out["min_runs"] = c.field(keys.HISTORY, m, key, "min_runs")
    if "metrics" in m:
        metrics = m["metrics"]
        if not isinstance(metrics, list) or not all(
            isinstance(x, str) and re.fullmatch(r"tail|max|min|avg|p99|p99\.9|above_\d+(\.\d+)?", x) for x in metrics
        ):
            raise c.fail(key + ("metrics",), "must list tail, max, min, avg, p99, p99.9 or above_<us>")
        out["metrics"] = list(metrics)
    return out


# A gate's plain keys, in the order they are checked (threads and cpus come between counts and options).
_GATE_LIMITS = ("limit_us", "above_us", "rate", "percentile")
_GATE_COUNTS = ("max_count", "max_rate", "confidence")
_GATE_OPTIONS = ("scope", "min_samples", "critical", "description")


def _gate(c: Checker, raw: Any, key: Key, groups: set[str]) -> GateSpec:
    m = c.mapping(raw, key, set(keys.GATE), {"name", "kind"})
    kind = m["kind"]
    if kind not in GATE_KINDS:
        raise c.fail(
            key + ("kind",),
            f"unknown gate kind {kind!r}{keys.did_you_mean(kind, GATE_KINDS)} (one of {', '.join(GATE_KINDS)})",
        )
    spec = KINDS[kind]
    for k in sorted(spec.needs):
        if k not in m:
            raise c.fail(key, f"a {kind} gate needs {k!r}")
    for k in _KIND_KEYS:
        if k in m and k not in spec.takes:
            raise c.fail(key + (k,), f"a {kind} gate does not take {k!r}")
    if spec.one_of and sum(k in m for k in spec.one_of) != 1:
        raise c.fail(key, f"a {kind} gate needs exactly one of {' or '.join(spec.one_of)}")
    g = GateSpec(name=c.field(keys.GATE, m, key, "name"), kind=kind, where=c.where(key))
    c.fields(keys.GATE, m, key, _GATE_LIMITS, g)
    if g.percentile is not None and g.percentile >= 100.0:
        raise c.fail(key + ("percentile",), "percentile must be below 100 (use a max gate)")
    if g.percentile is not None and g.percentile < 1.0:
        # 0.999 is the 0.999th percentile to the loader and the 99.9th to a reader who writes quantiles
        raise c.fail(
            key + ("percentile",),
            f"a percentile of {g.percentile:g} means two things: the {g.percentile:g}th percentile (nearly the "
            f"fastest wake-up) or the quantile {g.percentile:g} (the {g.percentile * 100:g}th percentile); "
            f"a percentile is in %: write {g.percentile * 100:g} for the second",
        )
    c.fields(keys.GATE, m, key, _GATE_COUNTS, g)
    if "threads" in m:
        g.threads = _gate_threads(c, m["threads"], key + ("threads",), groups)
    if "cpus" in m:
        cpus = c.cpus(m["cpus"], key + ("cpus",))
        if cpus == "all":
            raise c.fail(key + ("cpus",), "name CPUs, or leave cpus out to gate every thread")
        g.cpus = [int(x) for x in cpus]
    c.fields(keys.GATE, m, key, _GATE_OPTIONS, g)
    return g


def _gate_threads(c: Checker, t: Any, key: Key, groups: set[str]) -> list[str]:
    if isinstance(t, str):
        t = [t]
    if not isinstance(t, list) or not t:
        raise c.fail(key, "must be a thread group name or a list of them")
    for name in t:
        if not isinstance(name, str) or name not in groups:
            raise c.fail(key, f"no thread group {name!r} in this measurement (groups: {', '.join(sorted(groups))})")
    return list(t)


def _measurement(
    c: Checker, name: Any, raw: Any, file_require: dict[str, Any], file_strict: bool, gates_required: bool = True
) -> Measurement:
    """One measurement of the file: its backend's settings, gates, loads and requirements."""
    key: Key = ("measurements", name)
    c.name(name, key)
    m = c.mapping(raw, key, set(keys.MEASUREMENT), {"gates"} if gates_required else ())
    backend = m.get("backend", "sampler")
    if backend not in BACKENDS:
        raise c.fail(
            key + ("backend",),
            f"unknown backend {backend!r}{keys.did_you_mean(backend, BACKENDS)} (one of {', '.join(BACKENDS)})",
        )
    if backend != "sampler" and "sampler" in m:
        raise c.fail(key + ("sampler",), f"a {backend} measurement takes {backend}:, not sampler:")
    if backend != "timerlat" and "timerlat" in m:
        raise c.fail(key + ("timerlat",), "timerlat: needs backend: timerlat")
    timerlat = TimerlatSettings()
    if backend == "timerlat":
        timerlat = parse_settings(c, m.get("timerlat"), key + ("timerlat",))
        sampler = as_sampler(timerlat)
    else:
        sampler = _sampler(c, m.get("sampler"), key + ("sampler",))
    groups = {g.name for g in sampler.threads}
    raw_gates = m.get("gates", [])
    if not isinstance(raw_gates, list) or (gates_required and not raw_gates):
        raise c.fail(key + ("gates",), "must be a non-empty list of gates")
    gates = [_gate(c, g, key + ("gates", i), groups) for i, g in enumerate(raw_gates)]
    for i, g in enumerate(gates):
        if backend == "timerlat" and g.kind == "missed":
            raise c.fail(
                key + ("gates", i, "kind"),
                "rtla does not count missed periods: a missed gate needs backend: sampler",
            )
    seen: set[str] = set()
    for i, g in enumerate(gates):
        if g.name in seen:
            raise c.fail(key + ("gates", i, "name"), f"gate {g.name!r} is defined twice")
        seen.add(g.name)
    desc = c.field(keys.MEASUREMENT, m, key, "description") if "description" in m else ""
    loads = _loads(c, m["load"], key + ("load",)) if "load" in m else []
    require = {**file_require, **(_require(c, m["require"], key + ("require",)) if "require" in m else {})}
    return Measurement(
        name=name,
        description=desc,
        sampler=sampler,
        gates=gates,
        where=c.where(key),
        loads=loads,
        require=require,
        backend=backend,
        timerlat=timerlat,
        strict=c.field(keys.MEASUREMENT, m, key, "strict") if "strict" in m else file_strict,
    )


def load_thresholds(path: str | Path) -> ThresholdFile:
    """A threshold file by path, or by the name of one shipped with rtgate (every command takes both)."""
    try:
        p = find_thresholds(str(path))
        found = p.is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        p, found = Path(path), False
    if not found:
        shipped = ", ".join(shipped_names()[:6])
        raise ThresholdsError(f"no such threshold file (nor a shipped one such as {shipped})", path=str(p))
    data, lines, files = _load_chain(p, [])
    c = Checker(p, lines)
    top = c.mapping(
        data,
        (),
        set(keys.TOP) - {"extends"},  # extends is gone once the chain is merged
        {"platform", "measurements"},
    )
    history = _history(c, top["history"], ("history",)) if "history" in top else {}
    file_require = _require(c, top["require"], ("require",)) if "require" in top else {}
    platform = c.field(keys.TOP, top, (), "platform")
    description = c.field(keys.TOP, top, (), "description") if "description" in top else ""
    allow = c.field(keys.TOP, top, (), "allow_inconclusive") if "allow_inconclusive" in top else False
    file_strict = c.field(keys.TOP, top, (), "strict") if "strict" in top else False
    ms = top["measurements"]
    if not isinstance(ms, dict) or not ms:
        raise c.fail(("measurements",), "must be a non-empty mapping of measurement names")
    measurements: dict[str, Measurement] = {}
    for name, raw in ms.items():
        measurements[name] = _measurement(c, name, raw, file_require, file_strict)
    return ThresholdFile(
        path=str(p),
        platform=platform,
        description=description,
        measurements=measurements,
        files=files,
        allow_inconclusive=allow,
        history=history,
    )


def measurement_in_code(name: str, raw: dict[str, Any], source: str) -> Measurement:
    """A measurement written as a mapping in code (the pytest plugin's rt_latency), held to a threshold
    file's checks: a mistake is a ThresholdsError naming `source` and the key. Gates may be left out
    (the code judges the results itself)."""
    return _measurement(Checker(Path(source), {}), name, raw, {}, False, gates_required=False)


def _shipped_dirs() -> list[Path]:
    package = Path(__file__).resolve().parent.parent
    return [package / "thresholds", package.parent.parent / "thresholds"]  # installed, or the source tree


def default_thresholds_path() -> Path:
    """The built-in default platform: installed with the package, or the source tree's copy."""
    for d in _shipped_dirs():
        if (d / "default.yaml").is_file():
            return d / "default.yaml"
    raise ThresholdsError(
        "the built-in default threshold file is missing from this installation",
        path=str(_shipped_dirs()[0] / "default.yaml"),
    )


def shipped_names() -> list[str]:
    """Threshold files shipped with rtgate, by the names every command accepts."""
    for d in _shipped_dirs():
        if d.is_dir():
            return sorted(str(f.relative_to(d)) for f in d.rglob("*.yaml"))
    return []


def find_thresholds(name: str) -> Path:
    """A path as given, or else the name of a threshold file shipped with rtgate."""
    given = Path(name)
    if given.is_file() or given.is_absolute():
        return given
    for d in _shipped_dirs():
        if (d / name).is_file():
            return d / name
    return given
