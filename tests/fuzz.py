# SPDX-License-Identifier: GPL-2.0-or-later
"""A mutational fuzzer over every results parser, `rtgate check` and the threshold loader.

Seeds are real outputs (tests/fixtures: cyclictest of two rt-tests versions, rtgate-sampler, rtla timerlat hist) and
the shipped threshold files. Each input is a seed damaged one to three times: numbers replaced by NaN, Infinity, -1,
thousands of digits, other scripts' digits, values beyond 64 bits, overflowing floats, wrong JSON types; counts near
2^63; lines deleted, duplicated, swapped, cut; the file truncated at a line start, a line end, inside a number,
after a separator, inside a UTF-8 sequence or CRLF; bytes flipped; NUL and control characters; deep nesting; YAML
aliases, anchors and tags. The only acceptable outcomes are a result (evaluated against gates of every kind,
reported as text and JSON, then checked again by `rtgate check` in-process with JSON and JUnit written) or an
RtgateError whose message is one line and names the file. Anything else is a crash: its place is recorded and its
input saved. A damaged input that passes gates every seed fails "turned PASS": counted and saved too.

The suite runs a few hundred seeded inputs per target (tests/system/test_fuzz_parsers.py). The campaign
(figures in benchmarks/README.md):

    .venv/bin/python -m tests.fuzz --count 100000 --target all --jobs 2 --save /tmp/rtgate-crashes
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import functools
import io
import json
import random
import re
import shutil
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import rtgate.commands.check as check_command
from rtgate.cli import build_parser
from rtgate.core.gates import Status, evaluate
from rtgate.core.thresholds import load_thresholds
from rtgate.errors import RtgateError
from rtgate.parsers import load_results
from rtgate.reports.text import summary_table
from rtgate.reports.verdicts_json import verdicts_document

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RT_TESTS = HERE / "fixtures" / "rt-tests"
SAMPLER = HERE / "fixtures" / "rtgate-sampler"
RTLA = HERE / "fixtures" / "rtla"

# Gates of every kind, so a damaged result reaches every piece of gate arithmetic: `m` at limits the seeds
# partly meet, `strict` at limits every seed fails. A damaged input that PASSes `strict` turned a FAIL into a PASS
# (counted, and kept with --save). rtla's results only meet a timerlat measurement: `tl` and `tl_strict`.
_GATES = """\
      - {{name: max, kind: max, limit_us: {limit}}}
      - {{name: p99, kind: percentile, percentile: 99.9, limit_us: {limit}, min_samples: 1}}
      - {{name: rate, kind: miss_rate, above_us: {above}, rate: 1%}}
      - {{name: avg, kind: avg, limit_us: {avg}}}
      - {{name: worst, kind: max, limit_us: {limit}, scope: worst}}
"""
_MISSED_GATE = "      - {name: missed, kind: missed, max_count: 0}\n"
GATES_YAML = (
    "platform: fuzz\nmeasurements:\n"
    "  m:\n    sampler: {interval_us: 1000, loops: 1000}\n    gates:\n"
    + _GATES.format(limit=100, above=50, avg=40)
    + _MISSED_GATE
    + "  strict:\n    sampler: {interval_us: 1000, loops: 1000}\n    gates:\n"
    + _GATES.format(limit=1, above=1, avg=1)
    + "  tl:\n    backend: timerlat\n    timerlat: {duration: 5s}\n    gates:\n"
    + _GATES.format(limit=100, above=50, avg=40)
    + "  tl_strict:\n    backend: timerlat\n    timerlat: {duration: 5s}\n    gates:\n"
    + _GATES.format(limit=1, above=1, avg=1)
)

SPECIAL = [
    "NaN",
    "Infinity",
    "-Infinity",
    "nan",
    "-nan",
    "-1",
    "0",
    "1",
    "1e400",
    "-0",
    "1.5",
    "1e19",
    "9" * 400,
    "9" * 5000,
    "18446744073709551616",
    "9223372036854775808",
    "null",
    "true",
    '"x"',
    "[]",
    "{}",
    "[1, 2]",
    '"12"',
    "0x10",
    "1_000",
    "'",
    "\x00",
    "\u0085",
    "\u2028",
    "\u0663",  # ARABIC-INDIC DIGIT THREE: int() and regex \d read it as 3
    "\uff15\uff10",  # FULLWIDTH 50
    "1" + "\u0660" * 3,
]
YAML_SPECIAL = [
    "&a [1, 2]",
    "*a",
    "!!python/object:os.system",
    "!!binary x",
    "[" * 3000,
    "{" * 200,
    "? [a, b]\n: 1",
    "<<: *a",
    "~",
    ".inf",
    ".nan",
    "-.inf",
    "0o777",
    "1e999",
    "9" * 5000,
]
NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


@dataclass
class Target:
    name: str
    seeds: list[tuple[str, bytes]]  # (file name to write, content)
    run: Callable[[Path], Status | None]  # the status of the worst verdict, None for thresholds
    extra_files: dict[str, bytes] = field(default_factory=dict)  # beside the input (an extends parent)


def _read(path: Path, max_lines: int | None = None, comments: bool = True, ends: int | None = None) -> bytes:
    data = path.read_bytes()
    if ends is not None:  # a live output's first and last updates: the ones between cost time and show nothing new
        lines = data.splitlines(keepends=True)
        data = b"".join(lines[:ends] + lines[-ends:]) if len(lines) > 2 * ends else data
    if not comments:  # PyYAML scans comments a character at a time: they only slow the fuzzer down
        data = b"".join(ln for ln in data.splitlines(keepends=True) if not ln.lstrip().startswith(b"#"))
    if max_lines is not None:
        data = b"".join(data.splitlines(keepends=True)[:max_lines])
    return data


def _results_runner(workdir: Path, fmt: str) -> Callable[[Path], Status | None]:
    gates = workdir / "gates.yaml"
    gates.write_text(GATES_YAML)
    tf = load_thresholds(gates)
    normal, strict = ("tl", "tl_strict") if fmt == "rtla" else ("m", "strict")
    out = workdir / f"check-{fmt}"
    out.mkdir(exist_ok=True)
    argv = ["check", str(gates), "", "--format", fmt, "--json", str(out / "v.json"), "--junit", str(out / "v.xml")]
    parser = build_parser(argv)  # once: argparse's set-up costs more than a check
    # The gates file is the same for every input (the loader has its own target): loaded once, not per check,
    # and only while this runner's check runs (a process-wide cache would serve other callers stale files).
    cached = functools.lru_cache(maxsize=8)(load_thresholds)

    def run(path: Path) -> Status | None:
        result = load_results(path, fmt)
        verdicts = evaluate(tf.measurements[normal], result)
        summary_table(tf.platform, verdicts, False)
        json.dumps(verdicts_document(tf.platform, tf.files, verdicts, False), allow_nan=False)
        # Then `rtgate check` in-process against the gates every seed fails, as a user runs it (reports, JUnit and
        # JSON written): its exit status is the verdict users see.
        argv[2] = f"{strict}={path}"
        args = parser.parse_args(argv)
        real, check_command.load_thresholds = check_command.load_thresholds, cached
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                code = int(args.handler(args))
        finally:
            check_command.load_thresholds = real
        return {0: Status.PASS, 1: Status.FAIL, 3: Status.INCONCLUSIVE}.get(code, Status.ERROR)

    return run


def _thresholds_runner(path: Path) -> Status | None:
    load_thresholds(path)
    return None


def targets(workdir: Path) -> dict[str, Target]:
    thresholds = ROOT / "thresholds"
    return {
        "json": Target(
            "json",
            [
                (p.name, _read(p))
                for p in (
                    RT_TESTS / "ct-new-S-h300.json",
                    RT_TESTS / "ct-24-S-h300.json",
                    RT_TESTS / "ct-new-t2-H200.json",
                    RT_TESTS / "ct-new-nohist.json",
                    RT_TESTS / "ct-inject-l5000-h100.json",
                    SAMPLER / "rs-t2-h200.json",
                    SAMPLER / "rs-sigint-l3000.json",
                )
            ],
            _results_runner(workdir, "json"),
        ),
        "histogram": Target(
            "histogram",
            [
                (p.name, _read(p))
                for p in (
                    RT_TESTS / "ct-new-S-h300.hist",
                    RT_TESTS / "ct-new-t2-H200.hist",
                    SAMPLER / "rs-t2-h200.hist",
                )
            ]
            + [("ct-24-S-h300.hist", _read(RT_TESTS / "ct-24-S-h300.hist"))],
            _results_runner(workdir, "histogram"),
        ),
        "summary": Target(
            "summary",
            [
                (p.name, _read(p, ends=30 if "live" in p.name else None))
                for p in (
                    RT_TESTS / "ct-new-nohist.stdout",
                    RT_TESTS / "ct-new-live.stdout",
                    SAMPLER / "rs-t2-q.stdout",
                )
            ],
            _results_runner(workdir, "summary"),
        ),
        "verbose": Target(
            "verbose",
            [
                ("ct-24-verbose.stdout", _read(RT_TESTS / "ct-24-verbose.stdout", 120)),
                ("rs-t2-verbose.stdout", _read(SAMPLER / "rs-t2-verbose.stdout", 160)),
                ("ct-vq-t2-l100.stdout", _read(RT_TESTS / "as-made" / "ct-vq-t2-l100.stdout")),
            ],
            _results_runner(workdir, "verbose"),
        ),
        "rtla": Target(
            "rtla",
            [(p.name, _read(p)) for p in sorted(RTLA.glob("*.txt")) if not p.name.endswith(".trace.txt")],
            _results_runner(workdir, "rtla"),
        ),
        "auto": Target(
            "auto",
            [
                (p.name, _read(p, 120 if "verbose" in p.name else None, ends=30 if "live" in p.name else None))
                for p in sorted(RT_TESTS.iterdir())
                if p.name.startswith(("ct-24-", "ct-new-"))
                and (
                    p.suffix in (".json", ".hist")
                    or p.name in ("ct-new-live.stdout", "ct-new-nohist.stdout", "ct-24-verbose.stdout")
                )
            ],
            _results_runner(workdir, "auto"),
        ),
        "thresholds": Target(
            "thresholds",
            [
                ("default.yaml", _read(thresholds / "default.yaml", comments=False)),
                ("two-thread-example.yaml", _read(thresholds / "two-thread-example.yaml", comments=False)),
                (
                    "board.yaml",
                    _read(thresholds / "boards" / "imx8mp-evk.yaml", comments=False).replace(
                        b"../families/", b"families/"
                    ),
                ),
                ("gates.yaml", GATES_YAML.encode()),
            ],
            _thresholds_runner,
            {
                "families/arm64-cortex-a53-rt.yaml": _read(
                    thresholds / "families" / "arm64-cortex-a53-rt.yaml", comments=False
                )
            },
        ),
    }


# ---------------------------------------------------------------- mutations


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]


def m_number(rng: random.Random, data: bytes, yaml: bool) -> bytes:
    spots = list(NUMBER.finditer(data))
    if not spots:
        return data
    s = rng.choice(spots)
    if rng.random() < 0.5:
        value = rng.choice(YAML_SPECIAL + SPECIAL if yaml else SPECIAL).encode("utf-8", "surrogatepass")
    else:  # plausible damage: a nearby or far number
        text = s.group()
        try:
            n = int(float(text)) if len(text) < 30 else 10**30
        except (ValueError, OverflowError):
            n = 10**30
        value = str(
            rng.choice([n + 1, n - 1, n * 10, n // 10, 0, n + rng.randint(1, 10**6), -n, 2**63 - 1, 2**63, 2**64])
        ).encode()
    return data[: s.start()] + value + data[s.end() :]


def m_line(rng: random.Random, data: bytes, yaml: bool) -> bytes:
    lines = _lines(data)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    op = rng.randrange(5)
    if op == 0:
        del lines[i]
    elif op == 1:
        lines.insert(j, lines[i])
    elif op == 2:
        lines[i], lines[j] = lines[j], lines[i]
    elif op == 3:
        lines = lines[: max(1, i)]  # cut at a line end
    else:
        lines.insert(j, lines.pop(i))
    return b"".join(lines)


def m_bytes(rng: random.Random, data: bytes, yaml: bool) -> bytes:
    if not data:
        return b"\x00"
    i = rng.randrange(len(data))
    op = rng.randrange(6)
    if op == 0:
        return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1 :]
    if op == 1:
        return data[:i] + bytes([rng.randrange(256)]) + data[i:]
    if op == 2:
        return data[:i] + data[i + rng.randint(1, 16) :]
    if op == 3:
        return data[:i]  # cut anywhere
    if op == 4:
        return (
            data[:i] + rng.choice([b"\x00", b"\r", b"\t", b"\x1b[3A", b"\xff\xfe", b"\xc3", b"\x85", b"#"]) + data[i:]
        )
    j = rng.randrange(len(data))
    return data[:i] + data[j : j + rng.randint(1, 64)] + data[i:]  # duplicate a chunk


def m_nest(rng: random.Random, data: bytes, yaml: bool) -> bytes:
    i = rng.randrange(len(data) + 1)
    depth = rng.choice([70, 1000, 3000] if yaml else [70, 1000, 3000, 100_000])
    opener = rng.choice([b"[", b'{"a":', b"- "] if not yaml else [b"[", b"{a: ", b"- "])
    return data[:i] + opener * depth + data[i:]


def m_yaml(rng: random.Random, data: bytes, yaml: bool) -> bytes:
    """Aliases, anchors, tags and long values where a YAML scalar was."""
    lines = _lines(data)
    i = rng.randrange(len(lines))
    line = lines[i]
    m = re.match(rb"^(\s*(?:- )?[A-Za-z_]+:)\s*(.*?)(\r?\n)?$", line)
    if not m:
        return m_line(rng, data, yaml)
    choice = rng.randrange(5)
    if choice == 0:  # an alias bomb of a few hundred bytes
        bomb = b"".join(
            b"%s: &%s [%s]\n"
            % (bytes([97 + k]), bytes([97 + k]), b",".join([b"*" + bytes([96 + k])] * 9) if k else b"x,x,x,x,x,x,x,x,x")
            for k in range(10)
        )
        return bomb + data
    if choice == 1:
        return (
            b"".join(lines[:i])
            + m.group(1)
            + b" "
            + rng.choice(YAML_SPECIAL).encode()
            + b"\n"
            + b"".join(lines[i + 1 :])
        )
    if choice == 2:
        return (
            b"".join(lines[:i])
            + m.group(1)
            + b" "
            + b"x" * rng.choice([300, 300, 5000, 5000, 70_000])
            + b"\n"
            + b"".join(lines[i + 1 :])
        )
    if choice == 3:
        return (
            b"".join(lines[:i])
            + m.group(1)
            + b" ["
            + m.group(2)
            + b", "
            + m.group(2)
            + b"]\n"
            + b"".join(lines[i + 1 :])
        )
    return b"".join(lines[:i]) + m.group(1) + b" {" + m.group(2) + b": 1}\n" + b"".join(lines[i + 1 :])


def m_json_type(rng: random.Random, data: bytes, yaml: bool) -> bytes:
    """A JSON value of the wrong type where a number, list or object was."""
    spots = [m for m in re.finditer(rb'": (-?\d+(?:\.\d+)?|null|true|false|"[^"]*"|\[[^\[\]]*\])', data)]
    if not spots:
        return m_number(rng, data, yaml)
    s = rng.choice(spots)
    value = rng.choice([b'"7"', b"[]", b"[7]", b"{}", b"null", b"true", b"NaN", b"-Infinity", b"1e999", b"1.25"])
    return data[: s.start(1)] + value + data[s.end(1) :]


# Numbers no parser should read as numbers, or that overflow what reads them (issue 37): thousands of digits
# (Python refuses int() past 4,300), other scripts' digits (str.isdigit, int() and regex \\d accept them), beyond 64
# bits, floats that overflow to inf or underflow to 0, and NaN/Inf as C, Python, JSON and YAML spell them.
def _extreme_numbers() -> list[str]:
    digits = ["9" * k for k in (20, 309, 4300, 4301, 10_000, 70_000)] + ["1" + "0" * 4300, "0" * 5000 + "7"]
    scripts = [
        "\u0663\u0664",  # ARABIC-INDIC 34
        "\u06f5\u06f0",  # EXTENDED ARABIC-INDIC 50
        "\u0968\u0966",  # DEVANAGARI 20
        "\uff19\uff19\uff19",  # FULLWIDTH 999
        "\u00b2",  # SUPERSCRIPT TWO: isdigit() but not int()
        "\u2460",  # CIRCLED DIGIT ONE
        "\U0001d7d3",  # MATHEMATICAL BOLD DIGIT FIVE
        "1\u0e51",  # 1 and THAI ONE
        "\u09e7\u09e6\u09e6",  # BENGALI 100
        "\u00bd",  # VULGAR FRACTION ONE HALF: isnumeric() only
    ]
    wide = [str(v) for v in (2**63 - 1, 2**63, 2**64 - 1, 2**64, 2**128, -(2**63) - 1, 10**400, 2**53 + 1)]
    floats = ["1e309", "-1e309", "1.8e308", "4.9e-325", "1" + "0" * 400 + ".5", "0." + "0" * 400 + "1", "1e-400"]
    nan_inf = (
        "nan NaN NAN -nan +nan nan(0x7ff) -nan(ind) inf Inf INF +inf -inf infinity Infinity -Infinity INFINITY "
        "1.#INF -1.#IND 1.#QNAN .inf -.inf .NaN"
    ).split()
    odd = ["+5", "--5", "5-", "1 000", "1,000", "0b11", "1e3", "1.0", "٫5", " 7", "7\t"]
    return digits + scripts + wide + floats + nan_inf + odd


EXTREME = _extreme_numbers()
# Counts where rtgate reads a count: a percentile or rate over 2^63 samples must not overflow a float or a C long.
COUNT = re.compile(
    rb'(?:\bC:\s*|"cycles":\s*|"count":\s*|"samples":\s*|count:\s*|over:\s*|# Total:\s*|Overflows:\s*'
    rb"|# Histogram Overflows:\s*|\bN:\s*)(\d+)"
)
HUGE = [2**63 - 1, 2**63, 2**64 - 1, 2**64, 2**53 + 1, 10**18, 10**30]


def m_extreme(rng: random.Random, data: bytes, yaml: bool) -> bytes:
    """One number, or every number on a line, replaced by one of EXTREME."""
    spots = list(NUMBER.finditer(data))
    if not spots:
        return data
    value = rng.choice(EXTREME).encode("utf-8")
    if rng.random() < 0.2:  # a whole line: every column of a histogram row or a footer
        s = rng.choice(spots)
        start = data.rfind(b"\n", 0, s.start()) + 1
        end = data.find(b"\n", s.end())
        end = len(data) if end < 0 else end
        return data[:start] + NUMBER.sub(lambda _: value, data[start:end]) + data[end:]
    s = rng.choice(spots)
    return data[: s.start()] + value + data[s.end() :]


def m_huge_count(rng: random.Random, data: bytes, yaml: bool) -> bytes:
    """A count (T: line C:, cycles, rtla count:/over:, footers) near or beyond 2^63 (issue 37: stats.py:47)."""
    spots = list(COUNT.finditer(data))
    if not spots:
        return m_extreme(rng, data, yaml)
    s = rng.choice(spots)
    return data[: s.start(1)] + str(rng.choice(HUGE)).encode() + data[s.end(1) :]


def _offsets(data: bytes, kind: int) -> list[int]:
    if kind == 0:  # at a line start
        return [0] + [i + 1 for i, c in enumerate(data) if c == 10]
    if kind == 1:  # just before a newline (the last line loses its end)
        return [i for i, c in enumerate(data) if c == 10]
    if kind == 2:  # inside a number
        return [m.start() + k for m in NUMBER.finditer(data) for k in range(1, len(m.group()))]
    if kind == 3:  # just after a separator: colon, comma, space, tab, bracket, quote
        return [i + 1 for i, c in enumerate(data) if c in b':, \t[{"=']
    if kind == 4:  # inside a UTF-8 sequence or a CRLF
        return [i for i, c in enumerate(data) if 0x80 <= c < 0xC0 or (c == 10 and i and data[i - 1] == 13)]
    return [len(data) - k for k in (1, 2, 3) if len(data) >= k]  # the last bytes


def m_truncate(rng: random.Random, data: bytes, yaml: bool) -> bytes:
    """Cut the file at an offset of each class (a crash, a full disk or a copy cut short leaves any of them)."""
    offsets = _offsets(data, rng.randrange(6)) or [len(data) // 2]
    return data[: rng.choice(offsets)]


# Edits of a field that, believed, loosens a verdict (issue 46): each must be caught by another field of the same
# file that contradicts it, or leave the results ERROR (a JSON without its command line has an unknown set-up).
FIELD_EDITS: list[tuple[bytes, list[bytes]]] = [
    (rb'"stop_reason": "[a-z]+"', [b'"stop_reason": "%s"' % r for r in (b"loops", b"duration", b"signal")]),
    (rb'"signal": "SIG[A-Z]+"', [b'"signal": null']),
    (rb'"complete": false', [b'"complete": true']),
    (rb'"missed_periods": \d+', [b'"missed_periods": 0']),
    (rb'"(loops|duration_s|interval_us)": \d+', [b'"\\1": 1', b'"\\1": 100000']),
    (rb'  "cmdline:": "[^"\n]*",\n', [b""]),
    (rb"# Time unit is microseconds \(us\)", [b"# Time unit is nanoseconds (ns)"]),
    (rb"# Time unit is nanoseconds \(ns\)", [b"# Time unit is microseconds (us)"]),
    (rb"Thread (\d+) Interval: \d+", [b"Thread \\1 Interval: 250", b"Thread \\1 Interval: 100000"]),
    (rb"I:\s*\d+", [b"I:250", b"I:100000"]),
    (rb"( -i ?)\d+", [b"\\g<1>5000"]),  # the interval of a command line ("cmdline:")
]


def m_field(rng: random.Random, data: bytes, yaml: bool) -> bytes:
    """A field edited to a value that would loosen a verdict, the rest of the file left as it was."""
    found = [(m, values) for pattern, values in FIELD_EDITS for m in re.finditer(pattern, data)]
    if not found:
        return m_number(rng, data, yaml)
    m, values = rng.choice(found)
    return data[: m.start()] + m.expand(rng.choice(values)) + data[m.end() :]


MUTATORS = [
    m_number,
    m_number,
    m_line,
    m_line,
    m_bytes,
    m_nest,
    m_json_type,
    m_extreme,
    m_huge_count,
    m_truncate,
    m_field,
    m_field,
]
YAML_MUTATORS = [m_number, m_line, m_bytes, m_nest, m_yaml, m_yaml, m_extreme, m_truncate]


def mutate(rng: random.Random, data: bytes, yaml: bool) -> bytes:
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        data = rng.choice(YAML_MUTATORS if yaml else MUTATORS)(rng, data, yaml)
    return data


# ---------------------------------------------------------------- the run


@dataclass
class Report:
    target: str
    inputs: int = 0
    accepted: int = 0
    refused: int = 0
    crashes: Counter[str] = field(default_factory=Counter)
    turned_pass: int = 0  # a seed that does not PASS became PASS after damage (see run_target)
    seconds: float = 0.0

    def line(self) -> str:
        return (
            f"{self.target:10} {self.inputs:8d} inputs in {self.seconds:6.1f} s: {self.accepted} evaluated, "
            f"{self.refused} refused cleanly, {sum(self.crashes.values())} crashes at "
            f"{len(self.crashes)} places, {self.turned_pass} turned PASS"
        )


def _signature(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    inner = [f for f in frames if "/rtgate/" in f.filename] or frames
    f = inner[-1]
    return f"{type(exc).__name__} at {Path(f.filename).name}:{f.lineno}"


def run_target(
    t: Target,
    workdir: Path,
    seconds: float | None = None,
    inputs: int | None = None,
    seed: int = 0,
    save: Path | None = None,
    progress: int = 0,
) -> Report:
    """`progress`: print a line every that many inputs (a long campaign's counts survive its interruption)."""
    rng = random.Random(seed)
    report = Report(t.name)
    base: dict[str, Status | None] = {}
    d = workdir / t.name
    d.mkdir(parents=True, exist_ok=True)
    for rel, content in t.extra_files.items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_bytes(content)
    for name, content in t.seeds:
        (d / name).write_bytes(content)
        base[name] = t.run(d / name)  # an undamaged seed must load: a failure here is a bug of the seed list
        if base[name] == Status.PASS:
            raise AssertionError(f"seed {name} passes the strict gates: it cannot show a FAIL turned PASS")
    yaml = t.name == "thresholds"
    start = time.monotonic()
    while True:
        if inputs is not None and report.inputs >= inputs:
            break
        if seconds is not None and time.monotonic() - start >= seconds:
            break
        name, content = rng.choice(t.seeds)
        data = mutate(rng, content, yaml)
        path = d / name
        path.write_bytes(data)
        report.inputs += 1
        if progress and report.inputs % progress == 0:
            print(f"  seed {seed}: {report.line()}", flush=True)
        try:
            status = t.run(path)
        except RtgateError as e:
            if "\n" in str(e) or str(d) not in str(e):  # one line, naming the file (or its extends parent)
                sig = "multi-line RtgateError" if "\n" in str(e) else f"RtgateError without the file: {_signature(e)}"
                report.crashes[sig] += 1
                _save(save, t.name, sig, report.inputs, name, data)
            else:
                report.refused += 1
            continue
        except (Exception, RecursionError) as e:
            sig = _signature(e)
            report.crashes[sig] += 1
            if report.crashes[sig] <= 3:
                _save(save, t.name, sig, report.inputs, name, data)
            continue
        report.accepted += 1
        if status == Status.PASS and base[name] not in (Status.PASS, None):
            report.turned_pass += 1
            _save(save, t.name, "turned-PASS", report.inputs, name, data)
    report.seconds = time.monotonic() - start
    return report


def _save(save: Path | None, target: str, sig: str, n: int, name: str, data: bytes) -> None:
    if save is None:
        return
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", sig)[:80]
    out = save / target / f"{slug}-{n}-{name}"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)


def _one(name: str, seconds: float | None, inputs: int | None, seed: int, save: Path | None) -> Report:
    shm = Path("/dev/shm")  # an in-memory file system when there is one: most of the time is file I/O
    workdir = Path(tempfile.mkdtemp(prefix="rtgate-fuzz-", dir=shm if shm.is_dir() else None))
    try:
        return run_target(targets(workdir)[name], workdir, seconds, inputs, seed, save, progress=5000)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n\n")[0])
    p.add_argument("--target", default="all", help="json, histogram, summary, verbose, rtla, auto, thresholds or all")
    p.add_argument("--seconds", type=float, help="per target (per shard)")
    p.add_argument("--count", "--inputs", dest="inputs", type=int, help="inputs per target, shared by its shards")
    p.add_argument("--seed", type=int, default=0, help="shard k of a target uses seed + k")
    p.add_argument("--shards", type=int, default=1, help="processes per target, each with its own seed")
    p.add_argument("--jobs", type=int, default=1, help="shards fuzzed at once, each in its own process")
    p.add_argument("--save", type=Path, help="keep crashing and PASS-turning inputs here")
    args = p.parse_args(argv)
    if args.seconds is None and args.inputs is None:
        args.seconds = 60.0
    with tempfile.TemporaryDirectory() as tmp:
        names = list(targets(Path(tmp))) if args.target == "all" else args.target.split(",")
    shards = max(1, args.shards)
    start = time.monotonic()
    merged: dict[str, Report] = {}
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {
            pool.submit(
                _one,
                name,
                args.seconds,
                None if args.inputs is None else args.inputs // shards + (k < args.inputs % shards),
                args.seed + k,
                args.save,
            ): name
            for name in names
            for k in range(shards)
        }
        left = {name: shards for name in names}
        for f in concurrent.futures.as_completed(futures):
            r, name = f.result(), futures[f]
            m = merged.setdefault(name, Report(name))
            m.inputs, m.accepted, m.refused = m.inputs + r.inputs, m.accepted + r.accepted, m.refused + r.refused
            m.crashes.update(r.crashes)
            m.turned_pass += r.turned_pass
            m.seconds = max(m.seconds, r.seconds)
            left[name] -= 1
            if not left[name]:
                print(m.line(), flush=True)
                for sig, n in m.crashes.most_common():
                    print(f"    {n:6d}  {sig}", flush=True)
    total = sum(r.inputs for r in merged.values())
    crashes = sum(sum(r.crashes.values()) for r in merged.values())
    turned = sum(r.turned_pass for r in merged.values())
    print(
        f"all {len(merged)} targets: {total} inputs in {time.monotonic() - start:.0f} s, {crashes} crashes, "
        f"{turned} turned PASS (seeds {args.seed}..{args.seed + shards - 1})"
    )
    return 1 if crashes or turned else 0


if __name__ == "__main__":
    sys.exit(main())
