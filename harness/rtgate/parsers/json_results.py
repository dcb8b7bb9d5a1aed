# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate-sampler JSON and rt-tests JSON (every version cyclictest has written)."""

from __future__ import annotations

import json
import math
import operator
import re
from array import array
from itertools import compress
from pathlib import Path
from typing import Any

from rtgate.core.model import (
    BlockMaxima,
    Buckets,
    Histogram,
    MeasuredSetup,
    RunResult,
    ThreadResult,
    WholeNumbers,
    compact_ints,
)
from rtgate.core.periods import derive_missed
from rtgate.core.validate import check_run
from rtgate.core.validity import rtla_measured
from rtgate.errors import ResultsError
from rtgate.parsers import foreign
from rtgate.parsers.cmdline import command_setup, parse_cmdline
from rtgate.parsers.common import MAX_COLUMNS, read_results_bytes
from rtgate.parsers.json_lift import Lift, Lifted

# cyclictest prints avg of a thread without samples as nan or -nan: not JSON.
_NAN = re.compile(r"(?<=[:\[,\s])-?nan(?=\s*[,}\]\n])")
_SENTINEL_MIN = 1000000
# Values (commas) in one JSON file outside its lifted histograms: each costs ~400 bytes in json's tree
# (and the checks), so this keeps a file under ~400 MB.
MAX_JSON_VALUES = 800_000
# Values in histograms, block maxima, overflow cycles and spikes read into arrays (4 or 8 bytes each): the most a
# real result holds.
# rtgate-sampler (sampler/histogram.c, maxima.c, out_json.c), per thread, for any duration:
# - histogram: its non-zero buckets, [lo, hi, count] each. 1-unit buckets up to 2^14 us (2^17 ns; with -h N up
#   to N <= 1,000,000: 2^20), then 128 a power of two up to 2^24 us (2^34 ns), then one open bucket: 17,665
#   buckets in us by default, 1,050,881 at most (-N -h 1000000), 3 values each;
# - the rt-tests view (only with -h N): one "latency": count per non-zero bucket below N, 2 values each;
# - block maxima: at most BLOCK_CAP = 4096 however long the run (full, neighbours merge and blocks double);
# - overflow cycles (with -h N): the cycle numbers of samples >= N, at most N; spikes (with --spike): at most
#   --spike-nodes <= 1,000,000 records [cycle, latency, time], 3 values each.
# A run longer than ~18 s (17,665 cycles of 1 ms) can fill every bucket, so duration does not bound it: 1024
# threads of 17,665 buckets and 4096 maxima are 58.5 million values, ~350 MB of JSON. What bounds a real file
# is the 64 MiB every result is held to (parsers/__init__.py): in the sampler's printf formats, the densest
# real file gives each thread 4096 one-digit maxima ("7, ": 3 bytes a value), then its cheapest buckets from 0 up
# ("[12, 13, 1], ": 13 bytes for 3 values), overflow cycles ("12, ": 4 bytes) and spikes ("[12, 7, 5], ", its
# time taken as one digit), the costliest last (the -h view costs more a value than its bucket): 16,164,716
# values in 64 MiB, 14,217,154 without overflow cycles and spikes (benchmarks/README.md; upper bounds: a
# thread's ~0.6 KB of other fields is not counted, nor that a spike's time has 7 digits or more). A 7-day run
# at -i 1000 has 605 million cycles a thread: duration never binds. cyclictest's JSON ("12": 1 on a line of its
# own, 2 values in >= 16 bytes) holds fewer. Above this the input is no result (denser JSON than the sampler
# writes): refused when the arrays read reach it (each array's commas are counted before it is read).
MAX_JSON_HISTOGRAM_VALUES = 16_170_000


def parse(path: Path) -> RunResult:
    try:
        text = read_results_bytes(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ResultsError(f"cannot read: {e}", path=str(path)) from e
    doc = _read_document(path, text)
    del text  # 1.4 MB for a 24 h, 64-thread result: not kept beside the model
    if not isinstance(doc, dict):
        raise ResultsError("JSON results must be an object", path=str(path))
    foreign.check_json(path, doc)
    _check_thread_count(path, doc)
    if "rtgate" in doc:
        _check_rtgate_types(path, doc)
        run = check_run(_parse_rtgate(path, doc), _json_locator(path, doc))
        if run.threads:  # else the engine measured nothing: no stop or count to hold to the file
            _check_stop(path, doc["rtgate"], run.threads)  # once each field alone is known sound
            _check_command_line(path, doc, doc["rtgate"], run.threads)
        return run
    _check_rt_tests_types(path, doc)
    return check_run(_parse_rt_tests(path, doc), _json_locator(path, doc))


def _read_document(path: Path, text: str) -> Any:
    """The decoded document, its histograms and block maxima lifted into arrays when well-formed.

    json's object tree costs ~40 bytes a value; a 24 h, 64-thread result holds 600,000 of them,
    nearly all in histograms. Those are read as arrays of 4 or 8 bytes a value; anything the
    lift does not recognise stays in the tree and is checked as it always was. When the lifted
    document cannot be decoded or a lifted array sits where no histogram belongs, the whole text is
    decoded as before, so errors name the same column and key.
    """
    # a thread: two histograms, block maxima, overflow cycles, spikes
    lifted = Lift(text, MAX_JSON_HISTOGRAM_VALUES, 5 * MAX_COLUMNS)
    _check_size(path, lifted.rest.count(","), lifted.values)
    if lifted.arrays:
        try:
            doc = _decode(path, lifted.rest)
        except ResultsError:
            doc = None  # decoded again from the text below: the error names the text's column
        if doc is not None and lifted.attach(doc):
            return doc
    del lifted
    _check_size(path, text.count(","), 0)
    return _decode(path, text)


def _check_thread_count(path: Path, doc: dict[str, Any]) -> None:
    """As many threads as the text formats allow (MAX_COLUMNS): the sampler runs at most 1024, and
    cyclictest pins threads in a 1024-CPU set. Every thread costs its gates and report lines."""
    rg = doc.get("rtgate")
    for key, threads in (
        ("rtgate.threads", rg.get("threads") if isinstance(rg, dict) else None),
        ("thread", doc.get("thread")),
    ):
        if isinstance(threads, (list, dict)) and len(threads) > MAX_COLUMNS:
            raise ResultsError(
                f"{len(threads)} threads: more than cyclictest or rtgate-sampler runs ({MAX_COLUMNS} at most)",
                path=str(path),
                key=key,
            )


def _check_size(path: Path, values: int, lifted: int) -> None:
    if lifted > MAX_JSON_HISTOGRAM_VALUES:  # first: the lift stops there, leaving the rest in the text
        raise ResultsError(
            f"more than {MAX_JSON_HISTOGRAM_VALUES} histogram values (with block maxima, overflow cycles and "
            "spikes): more than a real run's JSON of 64 MiB holds",
            path=str(path),
        )
    if values > MAX_JSON_VALUES:
        raise ResultsError(
            f"{values} values: more than the {MAX_JSON_VALUES} a real run's JSON holds outside its histograms",
            path=str(path),
        )


# ---------------------------------------------------------------- validation (types and structure)


class _Constant(Exception):
    pass


def _refuse_constant(name: str) -> Any:
    raise _Constant(name)  # NaN, Infinity, -Infinity: Python's json accepts them, JSON does not


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    doc = dict(pairs)
    if len(doc) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise _Constant(f"key {dup!r} twice in one object")
    return doc


# A 64-bit integer has at most 20 digits, a finite double's exponent at most 3: only a text with more
# checks each number (an honest file pays one regex scan).
_WIDE = re.compile(r"\d{20}|[eE]\+?\d{3}")


def _short(text: str) -> str:
    return f"{text[:24]}{'...' if len(text) > 24 else ''}"


def _int64(text: str) -> int:
    """Sums of integers of thousands of digits outgrow what str() prints (4,300 digits): refused here."""
    if len(text.lstrip("-")) > 20 or not -(2**63) <= (value := int(text)) < 2**64:
        raise ValueError(f"the integer {_short(text)} is beyond 64 bits")
    return value


def _finite(text: str) -> float:
    """1e999 is valid JSON that Python reads as inf: an elapsed time of inf overflowed JUnit's arithmetic."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {_short(text)} is beyond a double")
    return value


def _decode(path: Path, text: str) -> Any:
    def load(t: str) -> Any:
        wide = _WIDE.search(t) is not None
        return json.loads(
            t,
            parse_constant=_refuse_constant,
            object_pairs_hook=_unique_keys,
            parse_int=_int64 if wide else None,
            parse_float=_finite if wide else None,
        )

    try:
        try:
            return load(text)
        except json.JSONDecodeError:
            return load(_NAN.sub("null", text))  # only cyclictest's nan needs the rewrite
    except json.JSONDecodeError as e:
        raise ResultsError(
            f"invalid or truncated JSON: {e.msg} (column {e.colno})", path=str(path), line=e.lineno
        ) from None
    except _Constant as e:
        what = str(e)
        raise ResultsError(
            what if " twice " in what else f"{what} is not a number JSON allows", path=str(path)
        ) from None
    except RecursionError:
        raise ResultsError("invalid JSON: nested too deeply", path=str(path)) from None
    except ValueError as e:  # e.g. an integer of more than 4300 digits
        raise ResultsError(f"invalid JSON: {' '.join(str(e).split())[:120]}", path=str(path)) from None


_NUM = (int, float)
_HIGH = {int, type(None)}  # a bucket's high edge: open (null) for the last one


def _type_error(path: Path, key: str, value: Any, expected: str) -> ResultsError:
    shown = (
        type(value).__name__
        if not isinstance(value, (str, int, float)) or isinstance(value, bool)
        else repr(value)[:40]
    )
    return ResultsError(f"must be {expected}, not {shown}", path=str(path), key=key)


def _expect(
    path: Path,
    obj: dict[str, Any],
    key: str,
    where: str,
    kinds: tuple[type, ...],
    expected: str,
    optional: bool = True,
    nullable: bool = True,
) -> None:
    """`obj[key]` has one of `kinds` (bool never counts as a number), or is absent/null when allowed."""
    if key not in obj:
        if not optional:
            raise ResultsError(f"missing key {key!r}", path=str(path), key=where)
        return
    value = obj[key]
    if value is None and nullable:
        return
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise _type_error(
            path, f"{where}.{key}" if where else (repr(key) if key.endswith(":") else key), value, expected
        )


def _check_top_types(path: Path, doc: dict[str, Any]) -> None:
    for key in ("cmdline:", "cmdline", "start_time", "end_time", "rt_test_version:", "rt_test_version"):
        _expect(path, doc, key, "", (str,), "a string")
    _expect(path, doc, "sysinfo", "", (dict,), "an object")
    for key in ("num_threads", "resolution_in_ns", "file_version", "return_code"):
        _expect(path, doc, key, "", (int,), "a whole number")
    for key in ("cmdline:", "cmdline"):
        if isinstance(doc.get(key), str) and re.search(r"[0-9]{20}", doc[key]):
            raise ResultsError("a number beyond 64 bits", path=str(path), key=key)


def _check_counts(path: Path, hist: dict[str, Any], where: str) -> None:
    for b, c in hist.items():
        if not (b.isascii() and b.isdigit() and len(b) <= 19) or type(c) is not int or not 0 <= c < 2**63:
            raise ResultsError(
                f'bad histogram entry {b[:24]!r}: {str(c)[:24]} (want "latency": count)',
                path=str(path),
                key=where + ".histogram",
            )


def _check_rt_tests_types(path: Path, doc: dict[str, Any]) -> None:
    _check_top_types(path, doc)
    threads = doc.get("thread")
    if not isinstance(threads, dict):
        return  # the parser names the missing or mistyped 'thread'
    for key, t in threads.items():
        where = f"thread.{key[:24]}"
        if not (key.isascii() and key.isdigit() and len(key) <= 6):
            raise ResultsError("thread keys must be thread numbers", path=str(path), key=where)
        if not isinstance(t, dict):
            continue
        if isinstance(t.get("histogram"), dict):
            _check_counts(path, t["histogram"], where)
        _expect(path, t, "cycles", where, (int,), "a whole number", optional=False, nullable=False)
        zero = t.get("cycles") == 0
        for name in ("min", "max"):  # cyclictest writes its 1000000 sentinel for a thread without samples
            _expect(path, t, name, where, _NUM, "a number", optional=zero, nullable=zero)
        _expect(path, t, "avg", where, _NUM, "a number or nan")
        for name in ("cpu", "node"):
            _expect(path, t, name, where, (int,), "a whole number")
        _expect(path, t, "histogram", where, (dict, Lifted), "an object")
    announced = doc.get("num_threads")
    if isinstance(announced, int) and announced != len(threads):
        raise ResultsError(
            f"num_threads says {announced} but {len(threads)} threads have data", path=str(path), key="num_threads"
        )


def _check_rtgate_types(path: Path, doc: dict[str, Any]) -> None:
    _check_top_types(path, doc)
    rg = doc.get("rtgate")
    if not isinstance(rg, dict):
        return
    _expect(path, rg, "complete", "rtgate", (bool,), "true or false")
    for key in ("stop_reason", "signal", "sampler", "unit", "clock", "timer"):
        _expect(path, rg, key, "rtgate", (str,), "a string")
    _expect(path, rg, "elapsed_s", "rtgate", _NUM, "a number")
    _expect(path, rg, "latency_target_us", "rtgate", (int,), "a whole number")
    _expect(path, rg, "mlockall", "rtgate", (bool,), "true or false")
    threads = rg.get("threads")
    if not isinstance(threads, list):
        return
    for i, t in enumerate(threads):
        if isinstance(t, dict):
            _check_rtgate_thread(path, t, f"rtgate.threads[{i}]")
    _check_sections_agree(path, doc, threads)


def _check_rtgate_thread(path: Path, t: dict[str, Any], where: str) -> None:
    zero = t.get("cycles") == 0
    for name in ("index", "cycles", "missed_periods"):
        _expect(path, t, name, where, (int,), "a whole number", optional=False, nullable=False)
    for name in ("min", "max"):
        _expect(path, t, name, where, _NUM, "a number", optional=zero, nullable=zero)
    for name in ("cpu", "priority", "interval_us", "sum", "overflows"):
        _expect(path, t, name, where, (int,), "a whole number")
    _expect(path, t, "avg", where, _NUM, "a number")
    _expect(path, t, "span_s", where, _NUM, "a number")
    _expect(path, t, "policy", where, (str,), "a string")
    _check_sum_and_avg(path, t, where)
    _expect(path, t, "block_maxima", where, (dict,), "an object")
    _check_lows_increase(path, t.get("histogram"), where + ".histogram")
    bm = t.get("block_maxima")
    if isinstance(bm, dict):
        bw = where + ".block_maxima"
        for name in ("block_cycles", "partial_cycles"):
            _expect(path, bm, name, bw, (int,), "a whole number", nullable=False)
        _expect(path, bm, "partial_max", bw, (int,), "a whole number")
        _expect(path, bm, "block_seconds", bw, _NUM, "a number", nullable=False)
        _expect(path, bm, "values", bw, (list, Lifted), "a list", nullable=False)
        if isinstance(bm.get("values"), list) and not set(map(type, bm["values"])) <= {int}:
            raise ResultsError("must be whole numbers", path=str(path), key=bw + ".values")


def _check_sum_and_avg(path: Path, t: dict[str, Any], where: str) -> None:
    total, avg, cycles = t.get("sum"), t.get("avg"), t.get("cycles")
    if type(total) is int and not 0 <= total < 2**64:
        raise ResultsError("must be a whole number from 0 to 2^64-1", path=str(path), key=where + ".sum")
    if not isinstance(avg, _NUM) or isinstance(avg, bool):
        return
    if not 0 <= avg < 2**64:
        raise ResultsError(
            f"must be a finite, non-negative latency, not {str(avg)[:24]}", path=str(path), key=where + ".avg"
        )
    if not (type(total) is int and type(cycles) is int and cycles > 0):
        return
    if abs(total / cycles - avg) > 0.005 + 1e-6 * abs(avg):  # a 400-digit avg: check_run
        raise ResultsError(
            f"avg {avg!r} is not sum / cycles ({total / cycles:.2f})", path=str(path), key=where + ".avg"
        )


def _check_lows_increase(path: Path, raw: Any, key: str) -> None:
    if isinstance(raw, Lifted):
        return  # lifted only when its lows increase
    if isinstance(raw, list) and set(map(type, raw)) == {list} and all(raw):  # builtins: 40,000 buckets in 24 h x 64
        lows = list(map(operator.itemgetter(0), raw))
        if set(map(type, lows)) == {int} and not all(map(operator.lt, lows, lows[1:])):
            raise ResultsError("histogram buckets must be strictly increasing", path=str(path), key=key)


def _check_sections_agree(path: Path, doc: dict[str, Any], threads: list[Any]) -> None:
    """rtgate-sampler writes every thread twice (rt-tests layout and its own): both must say the same."""
    announced = doc.get("num_threads")
    if isinstance(announced, int) and announced != len(threads):
        raise ResultsError(
            f"num_threads says {announced} but {len(threads)} threads have data", path=str(path), key="num_threads"
        )
    rt = doc.get("thread")
    if not isinstance(rt, dict):
        return
    for i, t in enumerate(threads):
        other = rt.get(str(t.get("index"))) if isinstance(t, dict) else None
        if not isinstance(other, dict):
            continue
        for name in ("cycles", "min", "max"):
            a, b = t.get(name), other.get(name)
            if a is not None and b is not None and a != b:
                raise ResultsError(
                    f"{name} is {a!r} here but {b!r} in thread.{t.get('index')}",
                    path=str(path),
                    key=f"rtgate.threads[{i}].{name}",
                )


def _json_locator(path: Path, doc: dict[str, Any]):  # type: ignore[no-untyped-def]
    """check_run names fields by their JSON key: rtgate.threads[0].max, thread.1.cycles."""
    rtgate = "rtgate" in doc

    def locate(pos: int, name: str) -> tuple[int | None, str | None]:
        if rtgate:
            base = f"rtgate.threads[{pos}]"
        else:
            keys = sorted((k for k in doc.get("thread", {}) if str(k).isdigit()), key=int)
            base = f"thread.{keys[pos]}" if pos < len(keys) else "thread"
        return None, f"{base}.{name}" if name else base

    return locate


def _need(obj: dict[str, Any], key: str, path: Path, where: str, kind: type | tuple[type, ...]) -> Any:
    if key not in obj:
        raise ResultsError(f"missing key {key!r}", path=str(path), key=where)
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ResultsError(f"{key!r} has the wrong type ({type(value).__name__})", path=str(path), key=where)
    return value


def _cmdline_hist_limit(cmdline: str | None) -> int | None:
    """The -h/-H N of a cyclictest command line, if it had one."""
    if not cmdline:
        return None
    import shlex  # rt-tests JSON only: rtgate-sampler JSON states its histogram

    try:
        words = shlex.split(cmdline)
    except ValueError:
        words = cmdline.split()
    for i, w in enumerate(words):
        for opt in ("--histogram=", "--histofall="):
            if w.startswith(opt) and w[len(opt) :].isascii() and w[len(opt) :].isdigit():
                return int(w[len(opt) :])
        if (
            w in ("-h", "-H", "--histogram", "--histofall")
            and i + 1 < len(words)
            and words[i + 1].isascii()
            and words[i + 1].isdigit()
        ):
            return int(words[i + 1])
        if re.fullmatch(r"-[hH][0-9]+", w):
            return int(w[2:])
    return None


def _environment(doc: dict[str, Any]) -> dict[str, Any]:
    env: dict[str, Any] = {}
    if isinstance(doc.get("sysinfo"), dict):
        env["sysinfo"] = doc["sysinfo"]
    for key in ("rt_test_version:", "rt_test_version"):
        if key in doc:
            env["rt_test_version"] = doc[key]
    return env


def _rt_tests_unit(path: Path, doc: dict[str, Any], command: Any) -> str:
    resolution = doc.get("resolution_in_ns")
    if resolution not in (0, 1):
        return "ns" if command is not None and command.nsecs else "us"
    unit = "ns" if resolution == 1 else "us"
    if command is not None and command.nsecs != (unit == "ns"):
        raise ResultsError(
            f"contradicts itself: resolution_in_ns is {resolution} but the command line "
            f"{'has' if command.nsecs else 'has no'} -N",
            path=str(path),
            key="resolution_in_ns",
        )
    return unit


def _rt_tests_histogram(
    path: Path, raw: Any, where: str, unit: str, cycles: int, limit: int | None
) -> Histogram | None:
    if raw is not None and not isinstance(raw, (dict, Lifted)):
        raise ResultsError("histogram must be an object", path=str(path), key=where)
    if not raw and limit is None:
        return None
    if isinstance(raw, Lifted):  # latencies increase strictly and counts are whole: json_lift
        assert isinstance(raw.a, array) and raw.c is not None
        in_range, highest = raw.samples if raw.samples is not None else sum(raw.c), raw.a[-1] if len(raw.a) else -1
        filled = raw.c if all(raw.c) else compact_ints(compress(raw.c, raw.c))
        buckets: list[tuple[int, int | None, int]] | Buckets = Buckets(
            raw.a if filled is raw.c else compact_ints(compress(raw.a, raw.c)),
            None,
            filled,
            well_formed=raw.well_formed,
            samples=in_range,
        )
    else:
        counts = []
        for b, c in (raw or {}).items():
            if not str(b).isdigit() or not isinstance(c, int) or c < 0:
                raise ResultsError(f"bad histogram entry {b!r}: {c!r}", path=str(path), key=where + ".histogram")
            counts.append((int(b), c))
        in_range = sum(c for _, c in counts)
        highest = max((b for b, _ in counts), default=-1)
        buckets = [(b, b + 1, c) for b, c in sorted(counts) if c]
    return Histogram(
        unit=unit,
        buckets=buckets,
        overflow=max(0, cycles - in_range),
        range_end=limit if limit is not None else highest + 1,
    )


def _rt_tests_thread(
    path: Path, key: str, t: Any, unit: str, limit: int | None, command: Any, setting: tuple[Any, Any]
) -> ThreadResult:
    where = f"thread.{key}"
    if not str(key).isdigit():
        raise ResultsError("thread keys must be numbers", path=str(path), key=where)
    if not isinstance(t, dict):
        raise ResultsError("must be an object", path=str(path), key=where)
    cycles = _need(t, "cycles", path, where, int)
    if cycles == 0:
        tmin = tmax = avg = None  # cyclictest's 1000000 sentinel and nan mean "no sample"
    else:
        tmin = _need(t, "min", path, where, (int, float))
        tmax = _need(t, "max", path, where, (int, float))
        avg = t.get("avg")
        avg = avg if isinstance(avg, (int, float)) and not isinstance(avg, bool) else None
    return ThreadResult(
        index=int(key),
        cycles=cycles,
        min=tmin,
        max=tmax,
        avg=avg,
        cpu=t.get("cpu") if isinstance(t.get("cpu"), int) else None,
        priority=setting[0],
        policy=command.effective_policy() if command else None,
        interval_us=setting[1],
        missed=None,
        histogram=_rt_tests_histogram(path, t.get("histogram"), where, unit, cycles, limit),
    )


def _parse_rt_tests(path: Path, doc: dict[str, Any]) -> RunResult:
    threads_obj = _need(doc, "thread", path, "thread", dict)
    cmdline = doc.get("cmdline:", doc.get("cmdline"))
    command = parse_cmdline(cmdline) if isinstance(cmdline, str) and cmdline.strip() else None
    unit = _rt_tests_unit(path, doc, command)
    limit = _cmdline_hist_limit(cmdline)
    nthreads = len(threads_obj)
    priorities = command.priorities(nthreads) if command else [None] * nthreads
    intervals: list[int | None] = list(command.intervals(nthreads)) if command else [None] * nthreads
    keys = sorted(threads_obj, key=lambda k: int(k) if str(k).isdigit() else -1)
    threads = [
        _rt_tests_thread(
            path,
            key,
            threads_obj[key],
            unit,
            limit,
            command,
            (priorities[i] if i < len(priorities) else None, intervals[i] if i < len(intervals) else None),
        )
        for i, key in enumerate(keys)
    ]
    if not threads:
        raise ResultsError("no threads in results", path=str(path), key="thread")
    run = RunResult(
        source=str(path),
        format="rt-tests-json",
        unit=unit,
        threads=threads,
        complete=True,
        cmdline=cmdline,
        start_time=doc.get("start_time"),
        end_time=doc.get("end_time"),
        environment=_environment(doc),
    )
    check_run(run, _json_locator(path, doc))  # before deriving anything from the figures
    elapsed = _elapsed_bounds(doc.get("start_time"), doc.get("end_time"))
    if command is None:
        for t in threads:
            t.missed_derivation = "rt-tests JSON without a command line: missed periods cannot be known"
        return run
    run.measured_setup = command_setup(command, threads, unit, "rt-tests command line", elapsed)
    derive_missed(run, run.measured_setup, "rt-tests JSON")
    return run


def _elapsed_bounds(start: Any, end: Any) -> tuple[float, float] | None:
    """Wall-clock bounds of a run from rt-tests' whole-second RFC 2822 start and end times."""
    if not isinstance(start, str) or not isinstance(end, str):
        return None
    from email.utils import parsedate_to_datetime  # 30 ms of imports (socket...): only rt-tests JSON has times

    try:
        seconds = (parsedate_to_datetime(end) - parsedate_to_datetime(start)).total_seconds()
    except (TypeError, ValueError, IndexError, OverflowError):  # OverflowError: a year beyond datetime's
        return None
    if seconds < 0:
        return None
    return max(0.0, seconds - 1.0), seconds + 1.0


def _parse_rtgate(path: Path, doc: dict[str, Any]) -> RunResult:
    rg = _need(doc, "rtgate", path, "rtgate", dict)
    if rg.get("format") != 1:
        raise ResultsError(f"unsupported rtgate format {rg.get('format')!r}", path=str(path), key="rtgate.format")
    unit = rg.get("unit")
    if unit not in ("us", "ns"):
        raise ResultsError(f"unit must be us or ns, not {unit!r}", path=str(path), key="rtgate.unit")
    _check_stated_unit(path, doc, unit)
    threads = []
    for i, t in enumerate(_need(rg, "threads", path, "rtgate", list)):
        where = f"rtgate.threads[{i}]"
        if not isinstance(t, dict):
            raise ResultsError("must be an object", path=str(path), key=where)
        cycles = _need(t, "cycles", path, where, int)
        hist = _rtgate_histogram(path, _need(t, "histogram", path, where, (list, Lifted)), where, unit)
        if hist.total != cycles:
            raise ResultsError(
                f"histogram holds {hist.total} samples but cycles is {cycles}", path=str(path), key=where
            )
        bm = t.get("block_maxima")
        blocks = None
        if isinstance(bm, dict):
            values = bm.get("values", [])
            if isinstance(values, Lifted):
                values = values.a  # whole numbers, checked as json_lift read them (model.WholeNumbers)
            blocks = BlockMaxima(
                block_cycles=int(bm.get("block_cycles", 0)),
                block_seconds=float(bm.get("block_seconds", 0.0)),
                values=values if isinstance(values, WholeNumbers) else list(values),
                partial_cycles=int(bm.get("partial_cycles", 0)),
                partial_max=bm.get("partial_max"),
            )
        threads.append(
            ThreadResult(
                index=_need(t, "index", path, where, int),
                cycles=cycles,
                min=t.get("min"),
                max=t.get("max"),
                # the exact sum beats the printed two decimals: the C gates use it too
                avg=t["sum"] / cycles if isinstance(t.get("sum"), int) and cycles else t.get("avg"),
                cpu=t.get("cpu"),
                priority=t.get("priority"),
                policy=t.get("policy"),
                interval_us=t.get("interval_us"),
                missed=_need(t, "missed_periods", path, where, int),
                span_s=t.get("span_s"),
                histogram=hist,
                block_maxima=blocks,
            )
        )
    if not threads and rtla_measured(doc.get("rtgate_run")):
        raise ResultsError(
            f"rtla measured this run (the timerlat backend): its figures are in {path.name[:-5]}.rtla.txt beside it",
            path=str(path),
        )
    if not threads and not _engine_measured_nothing(doc):
        raise ResultsError("no threads in results", path=str(path), key="rtgate.threads")
    env = _environment(doc)
    env["sampler"] = rg.get("sampler")
    env["latency_target_us"] = rg.get("latency_target_us")
    env["mlockall"] = rg.get("mlockall")
    if "rtgate_run" in doc:  # the validity record rtgate run adds (core/validity.py checks it)
        env["rtgate_run"] = doc["rtgate_run"]
    run = RunResult(
        source=str(path),
        format="rtgate-json",
        unit=unit,
        threads=threads,
        complete=bool(rg.get("complete")),
        stop_reason=rg.get("stop_reason"),
        signal=rg.get("signal"),
        cmdline=doc.get("cmdline:"),
        start_time=doc.get("start_time"),
        end_time=doc.get("end_time"),
        elapsed_s=rg.get("elapsed_s"),
        environment=env,
    )
    run.measured_setup = _rtgate_setup(rg, threads) if threads else None  # nothing measured, nothing set up
    return run


def _engine_measured_nothing(doc: dict[str, Any]) -> bool:
    """The engine's results of a measurement it did not make (an unmet requirement, a load that could
    not start, a stop before measuring): no thread, and its record says why (core/validity.py)."""
    rec = doc.get("rtgate_run")
    return isinstance(rec, dict) and rec.get("format") == 2 and rec.get("measured") is False


_STOPS = ("loops", "duration", "signal", "breaktrace", "error")


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _check_stop(path: Path, rg: dict[str, Any], threads: list[ThreadResult]) -> None:
    """How the run ended decides whether a PASS stands (a signal makes it INCONCLUSIVE): the reason
    is held to what the rest of the file proves. rtgate-sampler ends a -l run when a thread has
    accounted for its loops (cycles + missed == loops; every thread with --loops-per-thread), and
    calls a -D run ended by its duration only once every thread accounted for its periods (main.c).
    Only the fields that can loosen a verdict are held: a signal or a checkpoint never passes."""
    reason, complete, signal = rg.get("stop_reason"), rg.get("complete"), rg.get("signal")

    def fail(message: str, key: str = "rtgate.stop_reason") -> ResultsError:
        return ResultsError(f"contradicts itself: {message}", path=str(path), key=key)

    if complete is True and reason not in _STOPS:
        raise fail(f"complete is true but stop_reason is {reason!r} (one of {', '.join(_STOPS)})")
    if complete is False and reason != "running":
        raise fail(f"complete is false (a checkpoint) but stop_reason is {reason!r}, not 'running'")
    if complete is True and (reason == "signal") != (signal is not None):
        raise fail(f"stop_reason is {reason!r} but signal is {signal!r}")
    if reason == "breaktrace" and rg.get("break_thread") is None:
        raise fail("stop_reason is 'breaktrace' but break_thread is null")
    done = [t.cycles + (t.missed or 0) for t in threads]
    loops = _count(rg.get("loops"))
    if reason == "loops":
        # Every version counts a sample against -l (the first also counted missed periods), none runs past it.
        every = rg.get("loops_per_thread") is True
        short = min(done) if every else max(done)
        if not loops or short < loops or max(t.cycles for t in threads) > loops:
            i = done.index(short)
            raise fail(
                f"stop_reason is 'loops' but thread {threads[i].index} accounted for {done[i]} periods "
                f"(cycles + missed) of loops {loops or 'none'}"
                + ("" if every else ": a -l run ends when its first thread has them all")
            )
    duration = _count(rg.get("duration_s"))
    if reason == "duration":
        for t, n in zip(threads, done):
            iv = _count(t.interval_us)
            expected = (duration * 1_000_000 - iv) // iv + 1 if duration and iv else None
            if expected is None or n + 1 < expected:
                raise fail(
                    f"stop_reason is 'duration' but thread {t.index} accounted for {n} periods "
                    f"(cycles + missed) of the {expected if expected else 'unknown number'} that "
                    f"duration_s {duration or 'none'} at {iv or '?'} us holds"
                )


def _check_command_line(path: Path, doc: dict[str, Any], rg: dict[str, Any], threads: list[ThreadResult]) -> None:
    """rtgate-sampler records how it ran twice, on its command line and in its rtgate section: the
    interval, loops and duration that decide a set-up difference or a short run must agree."""
    cmdline = doc.get("cmdline:")
    if not isinstance(cmdline, str) or not cmdline.strip():
        return
    command = parse_cmdline(cmdline)
    if not command.program.startswith("rtgate-sampler"):
        return
    said = {"loops": command.loops or 0, "duration_s": command.duration_s or 0}
    for key, value in said.items():
        if key in rg and _count(rg.get(key)) != value:
            raise ResultsError(
                f"contradicts itself: rtgate.{key} is {rg.get(key)!r} but the command line says {value or 'none'}",
                path=str(path),
                key=f"rtgate.{key}",
            )
    if command.threads is not None and command.threads != len(threads):
        raise ResultsError(
            f"contradicts itself: {len(threads)} threads but the command line runs {command.threads}",
            path=str(path),
            key="rtgate.threads",
        )
    for i, (t, want) in enumerate(zip(threads, command.intervals(len(threads)))):
        if t.interval_us is not None and t.interval_us != want:
            raise ResultsError(
                f"contradicts itself: interval_us is {t.interval_us} but the command line gives thread "
                f"{t.index} {want} (-i {command.interval_us} -d {command.distance_us})",
                path=str(path),
                key=f"rtgate.threads[{i}].interval_us",
            )


def _rtgate_histogram(path: Path, raw: list[Any] | Lifted, where: str, unit: str) -> Histogram:
    if isinstance(raw, Lifted):  # [low, high or null, count] in 64 bits, lows increasing: json_lift
        assert isinstance(raw.a, array) and raw.b is not None and raw.c is not None
        arrays = Buckets(raw.a, raw.b, raw.c, raw.open_top, raw.well_formed, raw.samples)
        return Histogram(unit=unit, buckets=arrays, overflow=0, range_end=None)
    buckets = list(map(tuple, raw)) if set(map(type, raw)) <= {list} and set(map(len, raw)) <= {3} else []
    lows, highs, counts = zip(*buckets) if buckets else ((), (), ())
    ok = len(buckets) == len(raw) and set(map(type, lows + counts)) <= {int} and set(map(type, highs)) <= _HIGH
    if not ok:
        raise ResultsError(
            "histogram buckets must be [low, high or null, count] integers",
            path=str(path),
            key=where + ".histogram",
        )
    return Histogram(unit=unit, buckets=buckets, overflow=0, range_end=None)


def _check_stated_unit(path: Path, doc: dict[str, Any], unit: str) -> None:
    """rtgate-sampler states its unit three times (rtgate.unit, resolution_in_ns, -N on its command line):
    an edit of one leaves the others contradicting it, and values read in the wrong unit are 1000x off."""
    resolution = doc.get("resolution_in_ns")
    if resolution in (0, 1) and (resolution == 1) != (unit == "ns"):
        raise ResultsError(
            f"contradicts itself: rtgate.unit is {unit} but resolution_in_ns is {resolution}",
            path=str(path),
            key="rtgate.unit",
        )
    cmdline = doc.get("cmdline:")
    if isinstance(cmdline, str) and cmdline.strip():
        nsecs = parse_cmdline(cmdline).nsecs
        if nsecs != (unit == "ns"):
            raise ResultsError(
                f"contradicts itself: rtgate.unit is {unit} but the command line {'has' if nsecs else 'has no'} -N",
                path=str(path),
                key="rtgate.unit",
            )


def _positive(value: Any) -> Any:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def _rtgate_setup(rg: dict[str, Any], threads: list[ThreadResult]) -> MeasuredSetup:
    """rtgate-sampler records every parameter it ran with: the set-up is exact."""
    elapsed = _positive(rg.get("elapsed_s"))
    first = threads[0]
    return MeasuredSetup(
        source="rtgate JSON",
        tool=str(rg.get("sampler") or "rtgate-sampler"),
        interval_us=first.interval_us,
        duration_s=_positive(rg.get("duration_s")),
        loops=_positive(rg.get("loops")),
        policy=first.policy,
        priority=first.priority,
        threads=len(threads),
        nsecs=rg.get("unit") == "ns",
        relative=bool(rg.get("relative")),
        elapsed_s=(elapsed, elapsed) if elapsed else None,
    )
