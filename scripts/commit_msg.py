#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Check commit messages against CONTRIBUTING.rst: a subject of at most 72 characters, a blank line,
and a body that says why, except for a trivial change (a subject starting with one of TRIVIAL).

.venv/bin/python scripts/commit_msg.py FILE         # one message (pre-commit's commit-msg stage)
.venv/bin/python scripts/commit_msg.py --since REV  # every non-merge commit after REV in HEAD's history
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SUBJECT_MAX = 72
# Subjects that need no body: what they change says all there is to say.
TRIVIAL = ("Fix typo", "Typo", "Merge ", "Revert ", "fixup!", "squash!")


def problems(message: str) -> list[str]:
    """What is wrong with one commit message ('#' lines are git's comments and do not count)."""
    lines = [line for line in message.splitlines() if not line.startswith("#")]
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines or not lines[0].strip():
        return ["empty subject"]
    subject, found = lines[0], []
    if len(subject) > SUBJECT_MAX:
        found.append(f"subject has {len(subject)} characters (at most {SUBJECT_MAX})")
    if len(lines) > 1 and lines[1].strip():
        found.append("no blank line after the subject")
    if not subject.startswith(TRIVIAL) and not any(line.strip() for line in lines[2:]):
        found.append("no body saying why")
    return found


def _since(rev: str) -> int:
    out = subprocess.run(
        ["git", "log", "--no-merges", "--format=%H%x00%B%x01", f"{rev}..HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    bad = 0
    for entry in out.split("\x01"):
        sha, sep, message = entry.strip("\n").partition("\x00")
        if not sep:
            continue
        for problem in problems(message):
            print(f"{sha[:10]} {message.splitlines()[0][:60]!r}: {problem}")
            bad += 1
    return 1 if bad else 0


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--since":
        return _since(argv[1])
    if len(argv) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    found = problems(Path(argv[0]).read_text(errors="replace"))
    for problem in found:
        print(f"commit message: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
