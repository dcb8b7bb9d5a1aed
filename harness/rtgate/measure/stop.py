# SPDX-License-Identifier: GPL-2.0-or-later
"""Stopping a run from outside. SIGINT, SIGTERM and SIGHUP all ask for the same orderly stop (stop the
sampler so it writes everything, stop the load, judge what was measured, report); and the children
started here die with us even when we cannot stop them ourselves (SIGKILL, the OOM killer).

The handler only records the request: the code that waits (warm-up, measurement) polls it, so no
exception ever lands half-way through starting or stopping a process."""

from __future__ import annotations

import ctypes
import os
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_PR_SET_PDEATHSIG = 1


class StopRequest:
    def __init__(self) -> None:
        self.signal: str | None = None  # the first stop signal received, e.g. "SIGTERM"
        self._depth = 0
        self._saved: dict[int, Any] = {}

    @property
    def requested(self) -> bool:
        return self.signal is not None

    def _handler(self, signum: int, frame: object) -> None:
        if self.signal is None:
            self.signal = signal.Signals(signum).name

    @contextmanager
    def handling(self, ignore_after: bool = False) -> Iterator[StopRequest]:
        """Turn the stop signals into a request for the duration of the block (nests; main thread only:
        elsewhere the caller's handlers stay).

        ignore_after: the block is a process's whole command (`rtgate run`). When it ends, the reports
        are written: a stop signal while the interpreter exits (a CI runner's SIGTERM, sent again) is
        ignored, so that it cannot turn the command's exit status into a kill by that signal."""
        if self._depth == 0:
            self.signal = None
            try:
                for s in STOP_SIGNALS:
                    if signal.getsignal(s) != signal.SIG_IGN:  # nohup, or a background job's SIGINT: keep
                        self._saved[s] = signal.signal(s, self._handler)
            except ValueError:  # not the main thread
                pass
        self._depth += 1
        try:
            yield self
        finally:
            self._depth -= 1
            if self._depth == 0:
                for saved, previous in self._saved.items():
                    ends = previous in (signal.SIG_DFL, signal.default_int_handler)
                    signal.signal(saved, signal.SIG_IGN if ignore_after and ends else previous)
                self._saved = {}

    def sleep(self, seconds: float) -> bool:
        """Sleep unless a stop is asked for: True when the whole time passed, False on a stop."""
        deadline = time.monotonic() + seconds
        while not self.requested:
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            time.sleep(min(left, 0.05))
        return False


STOP = StopRequest()


def die_with_parent(sig: int = signal.SIGKILL) -> Callable[[], None]:
    """A preexec_fn: the child gets `sig` when rtgate dies, however it dies.

    PR_SET_PDEATHSIG fires when the thread that forked the child ends, so start children from the
    thread that waits for them (rtgate starts them from its main thread)."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here: the child only calls it
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return preexec
