# SPDX-License-Identifier: GPL-2.0-or-later
"""How `rtgate lab` paces its polling (issue 32): the poll interval, backoff while LAVA does not
answer, and a ceiling on requests a minute whatever the number of boards. The polling itself, on a
real server: tests/system/test_lava_lab_scale.py."""

from __future__ import annotations

import pytest

from rtgate.lava.lab import MAX_BACKOFF_S, MAX_POLLS_PER_MINUTE, _pause


def test_one_request_a_tick_keeps_the_poll_interval() -> None:
    assert _pause(5.0, 1, 0) == 5.0
    assert _pause(1.0, 0, 0) == 1.0


@pytest.mark.parametrize("requests", [1, 2, 3, 10, 100, 5000])
@pytest.mark.parametrize("poll_s", [0.5, 1.0, 5.0, 60.0])
def test_requests_a_minute_stay_under_the_ceiling(requests: int, poll_s: float) -> None:
    """A tick that made n requests (a list query per 100 jobs, or one per job a server does not list)
    waits long enough that n in that time is at most MAX_POLLS_PER_MINUTE a minute."""
    assert requests * 60.0 / _pause(poll_s, requests, 0) <= MAX_POLLS_PER_MINUTE + 1e-9


def test_failed_ticks_back_off_to_a_ceiling() -> None:
    assert [_pause(5.0, 1, f) for f in range(5)] == [5.0, 10.0, 20.0, 40.0, 80.0]
    assert _pause(5.0, 1, 30) == MAX_BACKOFF_S
    assert _pause(600.0, 1, 3) == 600.0  # never more often than asked
