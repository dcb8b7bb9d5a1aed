# SPDX-License-Identifier: GPL-2.0-or-later
"""Other tools' results judged as strictly as our own: how they were measured, derived from what they say.

Hand-made rt-tests JSON documents with known content (cyclictest's layout, its command-line rules) give
exact answers; real runs of both tools check the same paths end to end.
The tests of this topic that start no process: tests/unit/test_foreign_results_unit.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import RT_OPTS, RT_TESTS, run_tool
from foreign_docs import judge, thresholds
from rtgate.core.gates import Status
from rtgate.errors import RtgateError
from rtgate.parsers import load_results


def test_our_sampler_never_trips_reconciliation(sampler: str, tmp_path: Path) -> None:
    """rtgate-sampler's results carry every parameter: matching thresholds give no set-up difference."""
    out = tmp_path / "ours.json"
    r = run_tool(
        [
            sampler,
            *RT_OPTS[2:],
            "--thread-cpus=0,1",
            "--thread-priorities=51,48",
            "-i",
            "500",
            "-d",
            "0",
            "-D",
            "1s",
            "-q",
            f"--json={out}",
        ]
    )
    assert r.returncode == 0, r.stderr
    a, b, policy = ("51", "48", "") if RT_OPTS else ("0", "0", ", policy: other")
    t = thresholds(
        tmp_path,
        f"{{interval_us: 500, duration: 1s, threads: [{{name: A, priority: {a}, cpus: [0]}}, "
        f"{{name: B, priority: {b}, cpus: [1]}}]{policy}}}",
        "      - {name: max, kind: max, limit_us: 10000000}\n",
    )
    for v in judge(t, out).values():
        assert v.status != Status.ERROR and "setup_accepted" not in v.properties, v.reason


FOREIGN = RT_TESTS / "foreign"


@pytest.mark.parametrize("name", sorted(p.name for p in FOREIGN.iterdir() if p.suffix in (".json", ".stdout")))
def test_other_rt_tests_programs_are_named_not_judged(name: str) -> None:
    """signaltest's JSON has cyclictest's very keys (it was judged as timer wake-ups); oslat's said only
    "missing key 'cycles'". Each of them, as JSON and as its stdout, is refused naming the program."""
    tool = name.split(".")[0]
    with pytest.raises(RtgateError, match=r"results of [^:]*\b" + re.escape(tool) + r"\b") as e:
        load_results(FOREIGN / name)
    assert "rtgate judges timer wake-up latency" in str(e.value)


def test_other_programs_without_a_command_line_are_named_by_their_shape(tmp_path: Path) -> None:
    for name, tool in (("ptsematest.json", "ptsematest"), ("oslat.json", "oslat"), ("pi_stress.json", "pi_stress")):
        doc = json.loads((FOREIGN / name).read_text())
        doc.pop("cmdline:")
        p = tmp_path / name
        p.write_text(json.dumps(doc))
        with pytest.raises(RtgateError, match=f"results of [^:]*{tool}.*by its shape"):
            load_results(p)
