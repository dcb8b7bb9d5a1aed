# SPDX-License-Identifier: GPL-2.0-or-later
"""One measurement at a time on a machine. Two samplers at once (pytest-xdist workers, two CI jobs,
a user's `rtgate run` beside a test session) compete for the same CPUs at real-time priority and
each measures the other. Every measurement takes an exclusive flock on one machine-wide file
around its load and sampler; a second one waits, and says for whom.

flock is released by the kernel when its holder dies, however it dies: a crashed run never leaves
the machine locked. The file holds who has it (pid, measurement, since) for the waiting side."""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from rtgate.errors import RtgateError
from rtgate.measure.stop import STOP

ENV = "RTGATE_LOCK_FILE"
NAME = "rtgate-measurement.lock"


def lock_path() -> Path:
    """$RTGATE_LOCK_FILE, else /run/lock (where Debian keeps machine-wide locks), else /tmp."""
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    run_lock = Path("/run/lock")
    if run_lock.is_dir() and os.access(run_lock, os.W_OK):
        return run_lock / NAME
    return Path("/tmp") / NAME


class StoppedWhileWaiting(RtgateError):
    pass


def _holder(fd: int) -> str:
    try:
        doc = json.loads(os.pread(fd, 4096, 0).decode("utf-8", errors="replace") or "{}")
    except (OSError, ValueError):
        doc = {}
    if not isinstance(doc, dict) or "pid" not in doc:
        return "another measurement"
    since = time.strftime("%H:%M:%S", time.localtime(doc.get("since", 0)))
    return f"pid {doc['pid']} ({doc.get('program', '?')}, measurement {doc.get('measurement', '?')}, since {since})"


def _try_write(fd: int, data: bytes) -> bool:
    try:
        os.ftruncate(fd, 0)
        if data:
            os.pwrite(fd, data, 0)
        return True
    except OSError:
        return False


@contextmanager
def measurement_lock(measurement: str, out: TextIO | None = None) -> Iterator[Path]:
    """Hold the machine's measurement lock for the block; wait for it (saying so) when taken. A stop
    signal while waiting raises StoppedWhileWaiting."""
    path = lock_path()
    flags = os.O_NOFOLLOW | os.O_CLOEXEC  # a link planted in a shared folder never redirects a root write
    try:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | flags, 0o644)
        except PermissionError:  # another user's lock file: flock works on a read-only descriptor too
            fd = os.open(path, os.O_RDONLY | flags)
    except OSError as e:
        raise RtgateError(
            f"cannot open the measurement lock: {e.strerror} (set {ENV} to another file)", path=str(path)
        ) from e
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            stream = out or sys.stderr
            print(
                f"rtgate: {measurement}: waiting for the machine's measurement lock ({path}), held by "
                f"{_holder(fd)}: one measurement at a time",
                file=stream,
                flush=True,
            )
            while True:
                if STOP.requested:
                    raise StoppedWhileWaiting(
                        f"stopped by {STOP.signal} while waiting for another measurement"
                    ) from None
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    time.sleep(0.1)
        info = json.dumps(
            {
                "pid": os.getpid(),
                "measurement": measurement,
                "since": time.time(),
                "program": " ".join(os.path.basename(a) for a in sys.argv[:2]) or "python",
            }
        )
        writable = os.access(f"/proc/self/fd/{fd}", os.W_OK) and _try_write(fd, info.encode() + b"\n")
        try:
            yield path
        finally:
            if writable:
                _try_write(fd, b"")
    finally:
        os.close(fd)  # releases the flock
