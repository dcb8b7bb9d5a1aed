# SPDX-License-Identifier: GPL-2.0-or-later
"""Results of the other rt-tests programs, named instead of judged as timer wake-ups.

rt-tests' programs share cyclictest's JSON frame (cmdline:, thread.N) and, some, its T: lines; what
they measure is not a timer wake-up one period after another, so no gate of rtgate means anything on
them (signaltest's "latency" is a signal round trip through a chain of threads). They are recognised
from their command line, or from a shape no cyclictest output has, and refused with what they are.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rtgate.errors import ResultsError

# program -> what it measures
TOOLS = {
    "signaltest": "signal round-trip latency through a chain of threads",
    "oslat": "OS noise seen by a busy-polling loop",
    "pi_stress": "priority-inheritance mutex inversions",
    "pip_stress": "priority-inheritance between processes",
    "ptsematest": "POSIX mutex wake-up latency between two threads",
    "svsematest": "System V semaphore wake-up latency between two threads",
    "pmqtest": "POSIX message-queue wake-up latency between two threads",
    "sigwaittest": "sigwait() wake-up latency between two threads",
    "cyclicdeadline": "SCHED_DEADLINE wake-up latency",
    "deadline_test": "SCHED_DEADLINE scheduling",
    "rt-migrate-test": "real-time task migration",
    "hackbench": "scheduler throughput",
    "queuelat": "queue latency of a simulated packet load",
    "ssdd": "ptrace single-stepping",
    "hwlatdetect": "hardware (SMI) latency",
    "get_cyclictest_snapshot": "a snapshot of a running cyclictest",
}
_PROGRAM = re.compile(r"^\s*(?:\S*/)?([A-Za-z_][\w.-]*)")
# Text shapes: ptsematest & co. print "#1 -> #0, Min ..."; signaltest's T: lines have no I: field;
# oslat and pi_stress print their own banners.
_SHAPES = (
    (re.compile(r"^#\d+ -> #\d+, Min ", re.M), "ptsematest, svsematest, pmqtest or sigwaittest"),
    (re.compile(r"^T:\s*\d+\s+\(\s*\d+\)\s+P:\s*\d+\s+C:", re.M), "signaltest"),
    (re.compile(r"^oslat V ", re.M), "oslat"),
    (re.compile(r"^Starting PI Stress Test", re.M), "pi_stress"),
)


def _refuse(path: Path, tool: str, where: str) -> ResultsError:
    what = TOOLS.get(tool)
    about = f" ({what})" if what else ""
    return ResultsError(
        f"results of {tool}{about}, {where}: rtgate judges timer wake-up latency, from cyclictest, "
        "rtgate-sampler or rtla timerlat only",
        path=str(path),
    )


def program(cmdline: Any) -> str | None:
    """The program name of a command line (its basename), or None."""
    if not isinstance(cmdline, str):
        return None
    m = _PROGRAM.match(cmdline)
    return m.group(1) if m else None


def check_json(path: Path, doc: dict[str, Any]) -> None:
    """Refuse rt-tests JSON written by another program than cyclictest (or rtgate-sampler)."""
    tool = program(doc.get("cmdline:", doc.get("cmdline")))
    if tool in TOOLS:
        raise _refuse(path, tool, "by its command line")
    if "rtgate" in doc:
        return
    if "inversion" in doc and "thread" not in doc:
        raise _refuse(path, "pi_stress", "by its shape (inversion count, no threads)")
    threads = doc.get("thread")
    if isinstance(threads, dict):
        for t in threads.values():
            if isinstance(t, dict) and "sender" in t and "receiver" in t:
                raise _refuse(path, "ptsematest, svsematest, pmqtest or sigwaittest", "by its shape (sender/receiver)")
            if isinstance(t, dict) and "freq" in t and "duration" in t and "cycles" not in t:
                raise _refuse(path, "oslat", "by its shape (freq, duration, no cycles)")


def check_text(path: Path, head: str) -> None:
    """Refuse text output of another rt-tests program, recognised by a shape cyclictest never prints."""
    for shape, tool in _SHAPES:
        if shape.search(head):
            raise _refuse(path, tool, "by its output's shape")
