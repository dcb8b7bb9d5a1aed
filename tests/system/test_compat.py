# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate-sampler against Debian's real cyclictest: same options, same histogram text, same JSON keys."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import IS_ROOT, RT_OPTS, load_json, run_tool
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
    ["-t", "1", "-i", "1000", "-l", "100", "-q", "--spike=1", "--spike-nodes=10"],  # every sample a spike
    ["-t", "1", "-i", "1000", "-l", "100", "-q", "-u", "--mainaffinity=0"],
]


def _t_lines(stdout: str) -> list[str]:
    """The per-thread statistics lines; --spike trace lines ("T: 0 Spike: ...") are not among them."""
    return [ln for ln in stdout.splitlines() if ln.startswith("T:") and " Spike:" not in ln]


def _check_spikes(stdout: str, spike_us: int, nodes: int) -> None:
    """As cyclictest: a spike is a latency above --spike; "spikes = N" counts them all, and the
    first --spike-nodes of them are listed (no count line when there is none)."""
    listed = [int(m.group(1)) for m in re.finditer(r"^T:\s*\d+ Spike:\s*(\d+):", stdout, re.M)]
    count = re.search(r"^spikes = (\d+)$", stdout, re.M)
    total = int(count.group(1)) if count else 0
    assert all(v > spike_us for v in listed), listed
    assert len(listed) == min(total, nodes), stdout


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
    # A busy machine may give either tool a spike above --spike; it is a line of its own, checked apart.
    assert len(_t_lines(ours.stdout)) == len(_t_lines(theirs.stdout)) >= 1
    opts = dict(a[2:].split("=", 1) for a in argv if a.startswith("--spike"))
    if opts:
        for out in (ours.stdout, theirs.stdout):
            _check_spikes(out, int(opts["spike"]), int(opts["spike-nodes"]))
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
    # Both stop every thread once the first is through its -l: one that missed periods has fewer,
    # and one pinned to a CPU that another real-time task holds (a shared machine) may have none.
    for name in parsed:
        counts = [t.cycles for t in parsed[name].threads]
        assert max(counts) <= 1000 and max(counts) > 0, (name, counts)
    for run in parsed.values():
        assert all(t.histogram is not None and t.histogram.range_end == 50 for t in run.threads)

    # Same skeleton line by line: 50 rows of 2 threads + sum column, then the same footer lines.
    def shape(lines: list[str]) -> list[str]:
        out = []
        for ln in lines:
            if ln and ln[0].isdigit():
                out.append(f"row {ln.split()[0]} cols {len(ln.split())}")
            else:
                out.append(
                    ln.split(":")[0]
                    + (f" {len(ln.split(':')[1].split())}" if ":" in ln and not ln.startswith("# Thread") else "")
                )
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
def test_json_has_every_key_cyclictest_writes(sampler: str, cyclictest: str, tmp_path: Path, hist: list[str]) -> None:
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


# Argument lists real harnesses pass, word for word (issue 15), shortened to a quick run:
# rteval's cyclictest module ('-h 3500' is one word, the interval word may be empty),
# Linaro test-definitions' cyclictest.sh (THREADS=0 -> '-t 0', '-a all' as its affinity
# parameter), and the -S combinations the rt-tests manual documents as warnings.
HARNESS_LINES = [
    pytest.param(["-i100", "-qmu", "-h 3500", "-p95", "-t2", "-a0-1", "-l", "200"], 2, id="rteval"),
    pytest.param(
        [
            "-i100",
            "-qmu",
            "-h 3500",
            "-p95",
            "-t2",
            "-a0-1",
            "--default-system",
            "-b100000",
            "--tracemark",
            "-l",
            "200",
        ],
        2,
        id="rteval-breaktrace",
    ),
    pytest.param(["", "-qmu", "-h 3500", "-p95", "-t1", "-a0", "-l", "200"], 1, id="rteval-no-interval"),
    pytest.param(["-p", "98", "-i", "1000", "-t", "1", "-a", "0", "-D", "1s", "-m"], 1, id="linaro-defaults"),
    pytest.param(["-p", "98", "-i", "1000", "-t", "0", "-a", "all", "-D", "1s", "-m"], None, id="linaro-threads-0"),
    pytest.param(["-S", "-a", "1", "-i", "1000", "-l", "100", "-q"], None, id="smp-with-a"),
    pytest.param(["-S", "-t", "3", "-i", "1000", "-l", "100", "-q"], None, id="smp-with-t"),
    pytest.param(["-t", "-i", "1000", "-l", "100", "-q"], None, id="t-without-value"),
]


@pytest.mark.parametrize("argv, threads", HARNESS_LINES)
def test_harness_argument_lists_run_unchanged(
    sampler: str, cyclictest: str, argv: list[str], threads: int | None, tmp_path: Path
) -> None:
    if not IS_ROOT:
        pytest.skip("these lines ask for SCHED_FIFO and mlockall")
    ncpu = len(os.sched_getaffinity(0))
    if any(a in ("-a0-1", "-t2") for a in argv) and ncpu < 2:
        pytest.skip("needs two CPUs")
    want = threads or ncpu
    counts = {}
    for name, prog in (("ours", sampler), ("theirs", cyclictest)):
        path = tmp_path / f"{name}.json"
        r = run_tool([prog, *argv, f"--json={path}"])
        assert r.returncode == 0, (name, r.stderr)
        assert "Usage" not in r.stdout, (name, "rejected the line")
        counts[name] = load_json(path)["num_threads"]
        if "-S" in argv and ("-a" in argv or "-t" in argv):
            assert "ignored" in r.stderr, (name, r.stderr)  # both warn about the ignored option
    assert counts["ours"] == counts["theirs"] == want, counts


@pytest.mark.parametrize(
    "argv", [["-h", "35x"], ["-i", "1 000"], ["-t", "2", "stray"], ["-a", "zz"], ["-D", "1.5h"], ["-p", " "]]
)
def test_garbage_is_still_refused(sampler: str, argv: list[str]) -> None:
    r = run_tool([sampler, *argv, "-l", "10", "-q"])
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_verbose_header_and_live_policy_line_match_cyclictest(sampler: str, cyclictest: str) -> None:
    def head(prog: str, argv: list[str]) -> list[str]:
        r = run_tool([prog, *argv])
        assert r.returncode == 0, r.stderr
        return [
            ln.split("=")[0].split(":")[0].strip() for ln in r.stdout.splitlines() if not re.match(r"^\s+\d+:", ln)
        ][:4]

    v = ["-t", "1", "-i", "1000", "-l", "5", "-v"]
    assert head(sampler, v) == head(cyclictest, v)
    # The interval headers say what cyclictest's say: the interval after -d is added (none with -h), so that
    # parsers/verbose.py reads both tools' -v output one way.
    for argv in (
        ["-t", "2", "-i", "1000", "-l", "5", "-v"],
        ["-t", "2", "-i", "700", "-d", "50", "-h", "9", "-l", "5", "-v"],
    ):
        said = {}
        for name, prog in (("ours", sampler), ("theirs", cyclictest)):
            r = run_tool([prog, *argv])
            said[name] = re.findall(r"^Thread \d+ Interval: \d+$", r.stdout, re.M)
        assert said["ours"] == said["theirs"] and len(said["ours"]) == 2, said
    for policy in (["--policy=other"], ["--policy=batch"], *([["-p", "80"]] if IS_ROOT else [])):
        lines = {}
        for name, prog in (("ours", sampler), ("theirs", cyclictest)):
            r = run_tool(["timeout", "-s", "INT", "1", prog, *policy, "-t", "1", "-i", "1000", "-D", "3"])
            lines[name] = re.findall(r"policy: (\S+): loadavg", r.stdout)[:1]
        assert lines["ours"] == lines["theirs"] and lines["ours"], lines


def _placement(argv: list[str], json_path: Path) -> tuple[list[str], list[tuple[int, int]]]:
    """Each measurement thread's allowed CPUs while it runs (/proc), and cpu/node from the JSON."""
    p = subprocess.Popen([*argv, f"--json={json_path}"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    allowed: list[str] = []
    try:
        deadline = time.monotonic() + 10
        # Watched for the whole run, the fullest view kept: on a busy machine the first look can come
        # between one thread's creation and the next's.
        while time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.2)
            try:
                tasks = [t for t in Path(f"/proc/{p.pid}/task").iterdir() if t.name != str(p.pid)]
                status = [(t / "status").read_text() for t in sorted(tasks, key=lambda t: int(t.name))]
            except OSError:  # the run ended while being read
                continue
            seen = [re.search(r"Cpus_allowed_list:\s*(\S+)", s).group(1) for s in status]  # type: ignore[union-attr]
            if len(seen) > len(allowed):
                allowed = seen
        _out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(timeout=10)
    assert p.returncode == 0, err
    doc = load_json(json_path)
    return allowed, [(t["cpu"], t["node"]) for _k, t in sorted(doc["thread"].items(), key=lambda kv: int(kv[0]))]


PLACEMENTS = [
    ["-t", "3"],
    ["-t", "3", "-a", "1"],
    ["-t", "2", "-a", "0,1"],
    ["-S"],
    ["-t", "2", "--mainaffinity=1"],
    ["taskset", "-c", "1", "-t", "3"],
]


@pytest.mark.parametrize("argv", PLACEMENTS, ids=lambda a: " ".join(a))
def test_thread_placement_matches_cyclictest(sampler: str, cyclictest: str, tmp_path: Path, argv: list[str]) -> None:
    """cyclictest 2.x pins every thread round-robin over -a's CPUs, or without -a over the CPUs
    the process may use (taskset); JSON cpu/node as it writes them (node -1 with -S)."""
    if len(os.sched_getaffinity(0)) < 2 or not {0, 1} <= os.sched_getaffinity(0):
        pytest.skip("needs CPUs 0 and 1")
    prefix = argv[:3] if argv[0] == "taskset" else []
    opts = argv[3:] if prefix else argv
    run = ["-i", "10000", "-D", "2", "-q"]
    ours = _placement([*prefix, sampler, *RT_OPTS, *opts, *run], tmp_path / "ours.json")
    theirs = _placement([*prefix, cyclictest, *RT_OPTS, *opts, *run], tmp_path / "theirs.json")
    assert ours == theirs
    assert all(c >= 0 for c, _n in ours[1]), "every thread pinned"
