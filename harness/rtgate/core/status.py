# SPDX-License-Identifier: GPL-2.0-or-later
"""The verdict statuses, in rank order, worst last (as the sampler's gate.h and --dump-contract)."""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    PASS = "PASS"
    INCONCLUSIVE = "INCONCLUSIVE"
    FAIL = "FAIL"
    ERROR = "ERROR"


SEVERITY = {s: rank for rank, s in enumerate(Status)}
