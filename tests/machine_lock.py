# SPDX-License-Identifier: GPL-2.0-or-later
"""The machine to a test itself while it makes real-time trouble on purpose (a SCHED_FIFO busy loop, an
injected latency): no other measurement, of another pytest-xdist worker or a user's `rtgate run`, may see the
trouble, and no other measurement may add to a known answer.

The block holds the machine's measurement lock, the one every `rtgate run` takes. Inside it, $RTGATE_LOCK_FILE
names a private lock, so that what the test itself measures (an `rtgate run` it starts, the pytest plugin in
this process) does not wait for the test."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rtgate.measure.lock import ENV, measurement_lock


@contextmanager
def machine_to_itself(why: str) -> Iterator[None]:
    with measurement_lock(why), tempfile.TemporaryDirectory(prefix="rtgate-inner-lock-") as folder:
        before = os.environ.get(ENV)
        os.environ[ENV] = str(Path(folder) / "inner.lock")
        try:
            yield
        finally:
            if before is None:
                os.environ.pop(ENV, None)
            else:
                os.environ[ENV] = before
