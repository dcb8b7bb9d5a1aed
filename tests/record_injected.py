# SPDX-License-Identifier: GPL-2.0-or-later
"""Record cyclictest runs under the injector as fixtures (tests/fixtures/rt-tests/ct-inject-*).

Run as root from the repository: python tests/record_injected.py. Writes, per run, cyclictest's JSON,
the injector's log of its busy windows and the time span the truth is counted over.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # conftest
sys.path.insert(0, str(Path(__file__).resolve().parent / "system"))  # the known-answer test's helpers

from conftest import RT_TESTS
from test_cyclictest_known_answers import CPU, run_cyclictest_under_injection

RUNS = {"ct-inject-D6": ["-D", "6", "-h", "2000"], "ct-inject-l5000-h100": ["-l", "5000", "-h", "100"]}

if __name__ == "__main__":
    ct = shutil.which("cyclictest") or sys.exit("cyclictest not installed")
    for stem, args in RUNS.items():
        with tempfile.TemporaryDirectory() as d:
            out, since, until, log = run_cyclictest_under_injection(ct, Path(d), args, 6)
            shutil.copy(out, RT_TESTS / f"{stem}.json")  # as cyclictest wrote it (its --json path included)
            shutil.copy(log, RT_TESTS / f"{stem}.injector.json")
            (RT_TESTS / f"{stem}.truth.json").write_text(
                json.dumps({"cpu": CPU, "since_ns": since, "until_ns": until}) + "\n"
            )
            print(stem, "recorded")
