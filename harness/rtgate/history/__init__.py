# SPDX-License-Identifier: GPL-2.0-or-later
"""Latency history across kernel releases: a SQLite store, and noise-robust comparisons."""
