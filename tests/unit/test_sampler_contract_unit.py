# SPDX-License-Identifier: GPL-2.0-or-later
"""The sampler contract in-process: thread labels survive the readers."""

from __future__ import annotations

from rtgate.parsers.cmdline import split_options


def test_thread_labels_are_not_dropped() -> None:
    assert split_options("rtgate-sampler --thread-labels A,B -i 200").values == {
        "thread-labels": "A,B",
        "interval": "200",
    }
