"""rtgate-sampler JSON and rt-tests JSON (every version cyclictest has written)."""

from __future__ import annotations

import json
import re
import shlex
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

from rtgate.core.model import BlockMaxima, Histogram, RunResult, ThreadResult
from rtgate.core.setup import MeasuredSetup
from rtgate.errors import ResultsError
from rtgate.parsers.cmdline import parse_cmdline
from rtgate.parsers.periods import derive_missed

# cyclictest prints avg of a thread without samples as nan or -nan: not JSON.
_NAN = re.compile(r'(?<=[:\[,\s])-?nan(?=\s*[,}\]\n])')
_SENTINEL_MIN = 1000000


def parse(path: Path) -> RunResult:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ResultsError(f"cannot read: {e}", path=str(path)) from e
    try:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            doc = json.loads(_NAN.sub("null", text))  # only cyclictest's nan needs the rewrite
    except json.JSONDecodeError as e:
        raise ResultsError(f"invalid or truncated JSON: {e.msg} (column {e.colno})",
                           path=str(path), line=e.lineno) from e
    if not isinstance(doc, dict):
        raise ResultsError("JSON results must be an object", path=str(path))
    if "rtgate" in doc:
        return _parse_rtgate(path, doc)
    return _parse_rt_tests(path, doc)


def _need(obj: dict[str, Any], key: str, path: Path, where: str, kind: type | tuple[type, ...]) -> Any:
    if key not in obj:
        raise ResultsError(f"missing key {key!r}", path=str(path), key=where)
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ResultsError(f"{key!r} has the wrong type ({type(value).__name__})",
                           path=str(path), key=where)
    return value


def _cmdline_hist_limit(cmdline: str | None) -> int | None:
    """The -h/-H N of a cyclictest command line, if it had one."""
    if not cmdline:
        return None
    try:
        words = shlex.split(cmdline)
    except ValueError:
        words = cmdline.split()
    for i, w in enumerate(words):
        for opt in ("--histogram=", "--histofall="):
            if w.startswith(opt) and w[len(opt):].isdigit():
                return int(w[len(opt):])
        if w in ("-h", "-H", "--histogram", "--histofall") and i + 1 < len(words) and words[i + 1].isdigit():
            return int(words[i + 1])
        if re.fullmatch(r"-[hH]\d+", w):
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


def _parse_rt_tests(path: Path, doc: dict[str, Any]) -> RunResult:
    threads_obj = _need(doc, "thread", path, "thread", dict)
    cmdline = doc.get("cmdline:", doc.get("cmdline"))
    command = parse_cmdline(cmdline) if isinstance(cmdline, str) and cmdline.strip() else None
    resolution = doc.get("resolution_in_ns")
    if resolution in (0, 1):
        unit = "ns" if resolution == 1 else "us"
        if command is not None and command.nsecs != (unit == "ns"):
            raise ResultsError(f"contradicts itself: resolution_in_ns is {resolution} but the command line "
                               f"{'has' if command.nsecs else 'has no'} -N", path=str(path), key="resolution_in_ns")
    else:
        unit = "ns" if command is not None and command.nsecs else "us"
    limit = _cmdline_hist_limit(cmdline)
    nthreads = len(threads_obj)
    priorities = command.priorities(nthreads) if command else [None] * nthreads
    intervals: list[int | None] = list(command.intervals(nthreads)) if command else [None] * nthreads
    threads: list[ThreadResult] = []
    for key in sorted(threads_obj, key=lambda k: int(k) if str(k).isdigit() else -1):
        where = f"thread.{key}"
        if not str(key).isdigit():
            raise ResultsError("thread keys must be numbers", path=str(path), key=where)
        t = threads_obj[key]
        if not isinstance(t, dict):
            raise ResultsError("must be an object", path=str(path), key=where)
        cycles = _need(t, "cycles", path, where, int)
        tmin = t.get("min")
        tmax = t.get("max")
        avg = t.get("avg")
        if cycles == 0:
            tmin = tmax = avg = None  # cyclictest's 1000000 sentinel and nan mean "no sample"
        else:
            tmin = _need(t, "min", path, where, (int, float))
            tmax = _need(t, "max", path, where, (int, float))
            avg = avg if isinstance(avg, (int, float)) and not isinstance(avg, bool) else None
        hist = None
        raw = t.get("histogram")
        if raw is not None and not isinstance(raw, dict):
            raise ResultsError("histogram must be an object", path=str(path), key=where)
        if raw or limit is not None:
            counts = []
            for b, c in (raw or {}).items():
                if not str(b).isdigit() or not isinstance(c, int) or c < 0:
                    raise ResultsError(f"bad histogram entry {b!r}: {c!r}", path=str(path),
                                       key=where + ".histogram")
                counts.append((int(b), c))
            in_range = sum(c for _, c in counts)
            highest = max((b for b, _ in counts), default=-1)
            hist = Histogram(unit=unit, buckets=[(b, b + 1, c) for b, c in sorted(counts) if c],
                             overflow=max(0, cycles - in_range),
                             range_end=limit if limit is not None else highest + 1)
        threads.append(ThreadResult(
            index=int(key), cycles=cycles, min=tmin, max=tmax, avg=avg,
            cpu=t.get("cpu") if isinstance(t.get("cpu"), int) else None,
            priority=priorities[len(threads)] if len(threads) < nthreads else None,
            policy=command.effective_policy() if command else None,
            interval_us=intervals[len(threads)] if len(threads) < nthreads else None,
            missed=None, histogram=hist))
    if not threads:
        raise ResultsError("no threads in results", path=str(path), key="thread")
    run = RunResult(source=str(path), format="rt-tests-json", unit=unit, threads=threads,
                    complete=True, cmdline=cmdline, start_time=doc.get("start_time"),
                    end_time=doc.get("end_time"), environment=_environment(doc))
    elapsed = _elapsed_bounds(doc.get("start_time"), doc.get("end_time"))
    if command is None:
        for t in threads:
            t.missed_derivation = "rt-tests JSON without a command line: missed periods cannot be known"
        return run
    run.measured_setup = MeasuredSetup(
        source="rt-tests command line", tool=command.program, interval_us=command.interval_us,
        distance_us=command.distance_us, duration_s=command.duration_s, loops=command.loops,
        policy=command.effective_policy(), priority=threads[0].priority, priospread=command.priospread,
        threads=len(threads), nsecs=unit == "ns", relative=command.relative, breaktrace=command.breaktrace,
        elapsed_s=elapsed, notes=list(command.problems))
    derive_missed(run, run.measured_setup, "rt-tests JSON")
    return run


def _elapsed_bounds(start: Any, end: Any) -> tuple[float, float] | None:
    """Wall-clock bounds of a run from rt-tests' whole-second RFC 2822 start and end times."""
    if not isinstance(start, str) or not isinstance(end, str):
        return None
    try:
        seconds = (parsedate_to_datetime(end) - parsedate_to_datetime(start)).total_seconds()
    except (TypeError, ValueError, IndexError):
        return None
    if seconds < 0:
        return None
    return max(0.0, seconds - 1.0), seconds + 1.0


def _parse_rtgate(path: Path, doc: dict[str, Any]) -> RunResult:
    rg = _need(doc, "rtgate", path, "rtgate", dict)
    if rg.get("format") != 1:
        raise ResultsError(f"unsupported rtgate format {rg.get('format')!r}", path=str(path),
                           key="rtgate.format")
    unit = rg.get("unit")
    if unit not in ("us", "ns"):
        raise ResultsError(f"unit must be us or ns, not {unit!r}", path=str(path), key="rtgate.unit")
    threads = []
    for i, t in enumerate(_need(rg, "threads", path, "rtgate", list)):
        where = f"rtgate.threads[{i}]"
        if not isinstance(t, dict):
            raise ResultsError("must be an object", path=str(path), key=where)
        cycles = _need(t, "cycles", path, where, int)
        raw = _need(t, "histogram", path, where, list)
        try:
            buckets = [(lo, hi, c) for lo, hi, c in raw]
            ok = all(type(lo) is int and type(c) is int and (hi is None or type(hi) is int)
                     for lo, hi, c in buckets)
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ResultsError("histogram buckets must be [low, high or null, count] integers",
                               path=str(path), key=where + ".histogram")
        hist = Histogram(unit=unit, buckets=buckets, overflow=0, range_end=None)
        if hist.total != cycles:
            raise ResultsError(f"histogram holds {hist.total} samples but cycles is {cycles}",
                               path=str(path), key=where)
        bm = t.get("block_maxima")
        blocks = None
        if isinstance(bm, dict):
            blocks = BlockMaxima(block_cycles=int(bm.get("block_cycles", 0)),
                                 block_seconds=float(bm.get("block_seconds", 0.0)),
                                 values=[int(v) for v in bm.get("values", [])],
                                 partial_cycles=int(bm.get("partial_cycles", 0)),
                                 partial_max=bm.get("partial_max"))
        threads.append(ThreadResult(
            index=_need(t, "index", path, where, int), cycles=cycles,
            min=t.get("min"), max=t.get("max"),
            # the exact sum beats the printed two decimals: the C gates use it too
            avg=t["sum"] / cycles if isinstance(t.get("sum"), int) and cycles else t.get("avg"),
            cpu=t.get("cpu"), priority=t.get("priority"), policy=t.get("policy"),
            interval_us=t.get("interval_us"), missed=_need(t, "missed_periods", path, where, int),
            histogram=hist, block_maxima=blocks))
    if not threads:
        raise ResultsError("no threads in results", path=str(path), key="rtgate.threads")
    env = _environment(doc)
    env["sampler"] = rg.get("sampler")
    env["latency_target_us"] = rg.get("latency_target_us")
    env["mlockall"] = rg.get("mlockall")
    if "rtgate_run" in doc:  # the validity record rtgate run adds (core/validity.py checks it)
        env["rtgate_run"] = doc["rtgate_run"]
    run = RunResult(source=str(path), format="rtgate-json", unit=unit, threads=threads,
                    complete=bool(rg.get("complete")), stop_reason=rg.get("stop_reason"),
                    signal=rg.get("signal"), cmdline=doc.get("cmdline:"),
                    start_time=doc.get("start_time"), end_time=doc.get("end_time"),
                    elapsed_s=rg.get("elapsed_s"), environment=env)
    run.measured_setup = _rtgate_setup(rg, threads)
    return run


def _positive(value: Any) -> Any:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def _rtgate_setup(rg: dict[str, Any], threads: list[ThreadResult]) -> MeasuredSetup:
    """rtgate-sampler records every parameter it ran with: the set-up is exact."""
    elapsed = _positive(rg.get("elapsed_s"))
    first = threads[0]
    return MeasuredSetup(
        source="rtgate JSON", tool=str(rg.get("sampler") or "rtgate-sampler"), interval_us=first.interval_us,
        duration_s=_positive(rg.get("duration_s")), loops=_positive(rg.get("loops")), policy=first.policy,
        priority=first.priority, threads=len(threads), nsecs=rg.get("unit") == "ns",
        relative=bool(rg.get("relative")), elapsed_s=(elapsed, elapsed) if elapsed else None)
