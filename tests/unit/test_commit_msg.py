# SPDX-License-Identifier: GPL-2.0-or-later
"""The commit-message rule of CONTRIBUTING.rst, as scripts/commit_msg.py (the commit-msg hook) applies it."""

from __future__ import annotations

import importlib.util

import pytest

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("commit_msg", ROOT / "scripts" / "commit_msg.py")
assert _spec and _spec.loader
commit_msg = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(commit_msg)

GOOD = "gates: decide miss rates two-sided\n\nA one-sided bound failed 3 % of runs at 0.9x the limit.\n"


@pytest.mark.parametrize(
    "message,problem",
    [
        (GOOD, None),
        ("Fix typo in README\n", None),
        ("Merge branch 'wp-x'\n", None),
        (GOOD.replace("gates:", "gates: " + "x" * 60), "subject has 95 characters"),
        ("gates: decide miss rates two-sided\n", "no body saying why"),
        ("gates: decide miss rates two-sided\n\n# a git comment only\n", "no body saying why"),
        ("gates: decide\nbody right after\n", "no blank line after the subject"),
        ("\n\nbody\n", "empty subject"),
    ],
)
def test_commit_message_rule(message: str, problem: str | None) -> None:
    found = commit_msg.problems(message)
    if problem is None:
        assert found == []
    else:
        assert any(p.startswith(problem) for p in found), found
