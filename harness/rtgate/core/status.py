# SPDX-License-Identifier: GPL-2.0-or-later
"""The verdict statuses, worst last."""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    INCONCLUSIVE = "INCONCLUSIVE"
    ERROR = "ERROR"


SEVERITY = {Status.PASS: 0, Status.INCONCLUSIVE: 1, Status.FAIL: 2, Status.ERROR: 3}
