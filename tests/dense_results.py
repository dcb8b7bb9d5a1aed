# SPDX-License-Identifier: GPL-2.0-or-later
"""The densest result rtgate-sampler can write: 1024 threads, each with its 4096 block maxima of one digit and
its cheapest buckets (1 unit wide from 0 up, one sample each), in the sampler's own printf layout
(sampler/out_json.c). parsers/json_results.py's MAX_JSON_HISTOGRAM_VALUES is derived from it."""

from __future__ import annotations

from pathlib import Path

MAX_BLOCKS = 4096  # the sampler's BLOCK_CAP (sampler/main.c)

THRESHOLDS = """\
platform: dense
measurements:
  smp:
    sampler: {{interval_us: 1000, duration: 10s, threads: [{{name: all, count: {threads}}}]}}
    gates:
      - {{name: max, kind: max, limit_us: 100000}}
      - {{name: p99, kind: percentile, percentile: 99, limit_us: 100000}}
      - {{name: over-50, kind: miss_rate, above_us: 50, rate: 50%}}
"""


def _thread(i: int, buckets: int, maxima: int, sep: str) -> tuple[str, str]:
    """The rt-tests view and the rtgate record of thread i: buckets [v, v + 1) holding one sample each."""
    cycles, total, top = buckets, buckets * (buckets - 1) // 2, buckets - 1
    avg = f"{total / cycles:.2f}"
    view = (
        f'    "{i}": {{\n      "histogram": {{}},\n      "cycles": {cycles},\n      "min": 0,\n'
        f'      "max": {top},\n      "avg": {avg},\n      "cpu": {i},\n      "node": 0\n    }}'
    )
    hist = sep.join(f"[{v},{sep[1:]}{v + 1},{sep[1:]}1]" for v in range(buckets))
    values = sep.join(["0"] * maxima)  # one digit, never above the thread's max
    rec = (
        f'      {{\n        "index": {i}, "tid": {1000 + i}, "cpu": {i}, "policy": "fifo", "priority": 80, '
        f'"interval_us": 1000,\n        "cycles": {cycles}, "min": 0, "max": {top}, "avg": {avg}, '
        f'"sum": {total},\n        "missed_periods": 0, "overflows": 0, "stop_reason": "signal",\n'
        f'        "first_wake_ns": 0, "last_wake_ns": 0,\n        "overflow_cycles": [],\n'
        f'        "histogram": [{hist}],\n        "block_maxima": {{"block_cycles": 1, "block_seconds": 0.001000, '
        f'"partial_cycles": 0, "partial_max": null, "values": [{values}]}},\n'
        f'        "spikes": {{"total": 0, "recorded": []}}\n      }}'
    )
    return view, rec


def write(path: Path, values: int, threads: int = 1024, sep: str = ", ") -> int:
    """A self-consistent rtgate-sampler JSON of `threads` threads holding exactly `values` histogram values
    (buckets 3 each, block maxima 1 each), spread evenly; `sep` ", " as the sampler writes, "," denser.
    Returns its size in bytes."""
    maxima = min(MAX_BLOCKS, values // threads - 3)  # the cheapest values first, as the densest real file
    buckets_total, extra = divmod(values - maxima * threads, 3)
    per, more = divmod(buckets_total, threads)
    views, recs = [], []
    for i in range(threads):
        last = extra and i == threads - 1  # 1 or 2 values more: 3 - extra maxima fewer, one bucket more
        view, rec = _thread(i, per + (i < more) + bool(last), maxima - (3 - extra if last else 0), sep)
        views.append(view)
        recs.append(rec)
    text = (
        '{\n  "file_version": 1,\n  "cmdline:": "rtgate-sampler -m -t ' + str(threads) + ' -p 80 -i 1000 -d 0 -q",\n'
        '  "rt_test_version:": "0.1.0",\n  "return_code": 0,\n'
        f'  "num_threads": {threads},\n  "resolution_in_ns": 0,\n  "thread": {{\n'
        + ",\n".join(views)
        + '\n  },\n  "rtgate": {\n    "format": 1,\n    "sampler": "rtgate-sampler 0.1.0",\n'
        '    "complete": true,\n    "stop_reason": "signal",\n    "signal": "SIGINT",\n    "unit": "us",\n'
        '    "elapsed_s": 4.096,\n    "threads": [\n' + ",\n".join(recs) + "\n    ]\n  }\n}\n"
    )
    path.write_text(text)
    return len(text)


def thresholds(path: Path, threads: int = 1024) -> None:
    path.write_text(THRESHOLDS.format(threads=threads))
