# SPDX-License-Identifier: GPL-2.0-or-later
"""The time units results are kept in: a module of its own, so the history reads stored
histograms without loading the results model."""

from __future__ import annotations

UNIT_SCALE = {"us": 1, "ns": 1000}  # units per microsecond
