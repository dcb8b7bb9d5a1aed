"""rtgate-sampler against Debian's real cyclictest: same options, same histogram text, same JSON keys."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import RT_OPTS, load_json, run_tool
from rtgate.parsers import histtext

# Option lines taken from cyclictest guides and CI jobs (short, so the test stays quick).
OPTION_LINES = [
    ["-t", "1", "-i", "1000", "-l", "100", "-q"],
    ["-S", "-i", "500", "-l", "100", "-q"],
    ["-t", "2", "-d", "100", "-i", "1000", "-l", "100", "-q", "-n"],
    ["-a", "0", "-t", "1", "-i", "1000", "-l", "100", "-q", "--policy=fifo"],
    ["-t", "1", "-i", "1000", "-l", "100", "-q", "-N"],
    ["-t", "1", "-i", "1000", "-D", "1", "-q"],
    ["-t", "1", "-i", "1000", "-l", "100", "-q", "-x"],
    ["-t", "1", "-i", "1000", "-l", "100", "-q", "-r", "--priospread"],
    ["-t", "2", "-i", "1000", "-l", "100", "-q", "-A", "50"],
    ["-t", "1", "-i", "1000", "-l", "100", "-q", "--secaligned"],
    ["-t", "1", "-i", "1000", "-l", "100", "-q", "--latency=0", "-c", "0"],
    ["-t", "1", "-i", "1000", "-l", "100", "-q", "--spike=5000", "--spike-nodes=10"],
    ["-t", "1", "-i", "1000", "-l", "100", "-q", "-u", "--mainaffinity=0"],
]


def _t_lines(stdout: str) -> list[str]:
    return [ln for ln in stdout.splitlines() if ln.startswith("T:")]


@pytest.mark.parametrize("argv", OPTION_LINES, ids=lambda a: " ".join(a))
def test_same_option_lines_accepted_by_both(sampler: str, cyclictest: str, argv: list[str]) -> None:
    if "-n" in argv:
        # Today's cyclictest answers -n with its help text and exit 0: it measures nothing.
        ours = run_tool([sampler, *RT_OPTS, *argv])
        assert ours.returncode == 0 and len(_t_lines(ours.stdout)) == 2
        theirs = run_tool([cyclictest, *RT_OPTS, *argv])
        assert _t_lines(theirs.stdout) == [], "cyclictest now measures with -n: drop this special case"
        return
    ours = run_tool([sampler, *RT_OPTS, *argv])
    theirs = run_tool([cyclictest, *RT_OPTS, *argv])
    assert ours.returncode == 0, ours.stderr
    assert theirs.returncode == 0, theirs.stderr
    assert len(_t_lines(ours.stdout)) == len(_t_lines(theirs.stdout)) >= 1
    assert "Usage" not in theirs.stdout, "cyclictest rejected the line (printed its help)"


def test_histogram_text_parses_identically(sampler: str, cyclictest: str, tmp_path: Path) -> None:
    argv = [*RT_OPTS, "-t", "2", "-i", "500", "-l", "1000", "-q", "-H", "50"]
    parsed = {}
    raw = {}
    for name, prog in (("ours", sampler), ("theirs", cyclictest)):
        path = tmp_path / f"{name}.hist"
        r = run_tool([prog, *argv, f"--histfile={path}"])
        assert r.returncode == 0, r.stderr
        parsed[name] = histtext.parse(path)
        raw[name] = path.read_text().splitlines()
    assert [t.cycles for t in parsed["ours"].threads] == [1000, 1000]  # -l counts per thread
    # cyclictest stops every thread once any one has its -l cycles: one that missed periods has fewer.
    theirs = [t.cycles for t in parsed["theirs"].threads]
    assert max(theirs) == 1000 and min(theirs) > 0, theirs
    for run in parsed.values():
        assert all(t.histogram is not None and t.histogram.range_end == 50 for t in run.threads)
    # Same skeleton line by line: 50 rows of 2 threads + sum column, then the same footer lines.
    def shape(lines: list[str]) -> list[str]:
        out = []
        for ln in lines:
            if ln and ln[0].isdigit():
                out.append(f"row {ln.split()[0]} cols {len(ln.split())}")
            else:
                out.append(ln.split(":")[0] + (f" {len(ln.split(':')[1].split())}" if ":" in ln and
                                                  not ln.startswith("# Thread") else ""))
        return out
    assert shape(raw["ours"]) == shape(raw["theirs"])


def _key_paths(obj: Any, prefix: str = "") -> set[str]:
    paths: set[str] = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            key = "N" if prefix.endswith("thread") and k.isdigit() else k
            if prefix.endswith("histogram"):
                continue  # bucket keys are data
            paths.add(f"{prefix}.{key}")
            paths |= _key_paths(v, f"{prefix}.{key}")
    return paths


@pytest.mark.parametrize("hist", [[], ["-h", "100"]], ids=["no-histogram", "histogram"])
def test_json_has_every_key_cyclictest_writes(sampler: str, cyclictest: str, tmp_path: Path,
                                               hist: list[str]) -> None:
    docs = {}
    for name, prog in (("ours", sampler), ("theirs", cyclictest)):
        path = tmp_path / f"{name}.json"
        r = run_tool([prog, *RT_OPTS, "-t", "2", "-i", "1000", "-l", "100", "-q", *hist, f"--json={path}"])
        assert r.returncode == 0, r.stderr
        docs[name] = load_json(path)
    missing = _key_paths(docs["theirs"]) - _key_paths(docs["ours"])
    assert not missing, f"keys cyclictest writes that we do not: {sorted(missing)}"
    for name in docs:
        for t in docs[name]["thread"].values():
            assert isinstance(t["cycles"], int) and isinstance(t["avg"], float)
    assert json.dumps(docs["ours"]["thread"]["0"]["histogram"] == {}) == json.dumps(hist == [])
