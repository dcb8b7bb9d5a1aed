# SPDX-License-Identifier: GPL-2.0-or-later
"""Damaged results never turn a verdict PASS; honest results are never refused.

Damage that the data itself reveals (a max below a filled bucket, NaN, a wrong JSON type, a thread announced
without data, rows out of order, ...) must end as exit 2 with a one-line error naming the file and the field or
line. Verdicts are computed through the real CLI (rtgate.cli.main) and its gates. Property-based: hypothesis
chooses the fixture, the thread, the field and the damage, and generates results of its own.
The tests of this topic that start no process: tests/unit/test_damage_unit.py.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from conftest import RT_OPTS, RT_TESTS
from damaged import INJECT, SAMPLER_FIX, SETTINGS, check, gates_file

# ---------------------------------------------------------------- honest data is read


@pytest.mark.slow
@pytest.mark.parametrize(
    "opts",
    [
        ["-t", "2", "-i", "200", "-l", "1500", "-h", "30"],
        ["-t", "2", "-i", "300", "-l", "1000", "-H", "40"],
        ["-t", "1", "-i", "200", "-l", "1000", "-h", "20000"],
    ],
    ids=["h30", "H40", "h20000"],
)
@pytest.mark.parametrize("tool_name", ["cyclictest", "rtgate-sampler"])
def test_live_runs_are_accepted_in_every_format(
    tool_name: str, opts: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], cyclictest: str, sampler: str
) -> None:
    """Real runs on this machine, with small -h ranges so that samples overflow: never refused."""
    exe = cyclictest if tool_name == "cyclictest" else sampler
    hist, js = tmp_path / "r.hist", tmp_path / "r.json"
    run = subprocess.run(
        [exe, *RT_OPTS, *opts, "-q", f"--histfile={hist}", f"--json={js}"], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    quiet = subprocess.run([exe, *RT_OPTS, *opts[:-2], "-q"], capture_output=True, text=True, timeout=120)
    verbose = subprocess.run([exe, *RT_OPTS, *opts[:-2], "-v"], capture_output=True, text=True, timeout=120)
    (tmp_path / "q.stdout").write_text(quiet.stdout)
    (tmp_path / "v.stdout").write_text(verbose.stdout)
    gates = gates_file(tmp_path, 10**7)
    for path in (hist, js, tmp_path / "q.stdout", tmp_path / "v.stdout"):
        code, err = check(gates, path, capsys)
        # a verdict (a median in a 30 us -h overflow FAILs), never a refusal
        assert code in (0, 1, 3) and "error" not in err, f"{path.name}: {err}"


# ---------------------------------------------------------------- unit flips and cut -v output

# (file, how its run was asked for) for cut -v output; cyclictest's -v header prints the next thread's interval
VERBOSE_RUNS = [
    (RT_TESTS / "ct-24-verbose.stdout", "{interval_us: 1000, distance_us: 500, loops: 2000}"),
    (SAMPLER_FIX / "rs-t2-verbose.stdout", "{interval_us: 1000, distance_us: 500, loops: 200}"),
    (INJECT / "ct-v" / "v.txt", "{interval_us: 1000, duration: 4s}"),
    (INJECT / "rs-v" / "v.txt", "{interval_us: 1000, duration: 4s}"),
]


def as_run_gates(directory: Path, sampler: str) -> Path:
    """Gates the whole recorded run PASSes (its stalls miss 8 % of periods: the rate allows 50 %), asked as it
    was run: a cut file can only fail them by being short."""
    path = directory / "as-run.yaml"
    path.write_text(f"""platform: damage
measurements:
  m:
    sampler: {sampler}
    gates:
      - {{name: max, kind: max, limit_us: 1000000}}
      - {{name: p50, kind: percentile, percentile: 50, limit_us: 1000000, min_samples: 1}}
      - {{name: rate, kind: miss_rate, above_us: 1000000, rate: 50%}}
""")
    return path


@SETTINGS
@given(run=st.sampled_from(VERBOSE_RUNS), data=st.data())
def test_cut_verbose_output_never_passes(
    run: tuple[Path, str], data: st.DataObject, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """88 of 135 damaged-file PASSes were -v output cut at a line or a byte: a cut at a byte leaves a last line
    without its newline (refused); a cut at a line leaves fewer periods than the run asked (never PASS). A cut
    within the start-up slack (core/periods.py: 0.5 s or 5 % of the periods) cannot be told from a late start."""
    fixture, length = run
    text = fixture.read_text()
    at = data.draw(st.integers(min_value=len(text) // 20, max_value=len(text) * 85 // 100))
    on_line = data.draw(st.booleans())
    cut = text[: text.rindex("\n", 0, at) + 1] if on_line else text[:at]
    assume(not cut.endswith("\n") or on_line)
    path = tmp_path / "v.stdout"
    gates = as_run_gates(tmp_path, length)
    path.write_text(text)
    assert check(gates, path, capsys, "verbose")[0] == 0  # the whole file PASSes
    path.write_text(cut)
    code, err = check(gates, path, capsys, "verbose")
    assert code != 0, f"a cut -v file PASSed: {err}"
