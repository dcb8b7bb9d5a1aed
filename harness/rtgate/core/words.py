# SPDX-License-Identifier: GPL-2.0-or-later
"""How counts read in messages; a leaf, so that light commands (validate) need not load the reports."""

from __future__ import annotations


def plural(n: int, noun: str) -> str:
    """'1 error', '2 errors'."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
