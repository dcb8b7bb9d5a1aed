# SPDX-License-Identifier: GPL-2.0-or-later
"""The sampler's system record (sampler/sysinfo.c, `rtgate-sampler --dump-system`) against the harness's
the Python reference (tests/reference_environment.py capture()), key by key, on this machine and on every fixture tree.

Temporary: it holds the C port to the Python it replaces while both exist (issue 44). When the Python capture
goes, the known answers stay in sampler/tests/test_sysinfo.c on the same fixture trees."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, ROOT
from reference_environment import capture

TREES = sorted(p.name for p in (FIXTURES / "systems").iterdir() if p.is_dir())

# What changes from one reading of a live machine to the next: compared by shape only.
MOVING = {("loadavg",), ("machine", "memory", "available_kib")}
# What other processes on a shared machine change (a sampler holding /dev/cpu_dma_latency): the C reading
# must equal one of the two Python readings taken around it.
BETWEEN = {("machine", "pm_qos_latency_us"), ("machine", "pm_qos_holders"), ("machine", "rt_kernel_threads")}


def dump(sampler: str, root: str) -> dict[str, Any]:
    r = subprocess.run(
        [sampler, "--dump-system", f"--sysroot={root}"], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.isascii() and "<LAVA_" not in r.stdout
    doc: dict[str, Any] = json.loads(r.stdout)
    return doc


def python(root: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(json.dumps(capture(Path(root))))  # int keys become strings, as in a record
    return doc


def differences(py: Any, c: Any, path: tuple[str, ...] = ()) -> list[str]:
    """Every key path where the two records differ, in value or in JSON type (1 vs 1.0, list vs null)."""
    if isinstance(py, dict) and isinstance(c, dict):
        found = [f"{'/'.join(path + (k,))}: missing from the sampler's" for k in py if k not in c]
        found += [f"{'/'.join(path + (k,))}: only in the sampler's" for k in c if k not in py]
        for k in py:
            if k in c:
                found += differences(py[k], c[k], path + (k,))
        return found
    if isinstance(py, list) and isinstance(c, list) and len(py) == len(c):
        return [d for i, (a, b) in enumerate(zip(py, c)) for d in differences(a, b, path + (str(i),))]
    if py != c or type(py) is not type(c):
        return [f"{'/'.join(path)}: harness {py!r}, sampler {c!r}"]
    return []


def at(doc: dict[str, Any], path: tuple[str, ...]) -> Any:
    for k in path:
        doc = doc[k]
    return doc


@pytest.mark.parametrize("tree", TREES)
def test_fixture_tree_reads_the_same(sampler: str, tree: str) -> None:
    root = str(FIXTURES / "systems" / tree)
    c = dump(sampler, root)
    assert differences(python(root), c) == []
    assert list(c) == list(python(root))  # the same keys in the same order


RELATIVE = ["./tests/fixtures/systems/odd-text/", "tests/fixtures/./systems//rt-arm64"]


@pytest.mark.parametrize("root", RELATIVE + ["//", "///"])
def test_root_is_written_as_the_harness_writes_it(sampler: str, root: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fixture root as pathlib writes it; "//" is another root to POSIX and pathlib, "///" is this machine."""
    monkeypatch.chdir(ROOT)
    c, py = dump(sampler, root), python(root)
    assert (c["root"], c["euid"]) == (py["root"], py["euid"])
    if root in RELATIVE:
        assert differences(py, c) == []


def test_missing_root_reads_the_same(sampler: str, tmp_path: Path) -> None:
    root = str(tmp_path / "no-such-root")
    assert differences(python(root), dump(sampler, root)) == []


def test_this_machine_reads_the_same(sampler: str) -> None:
    before = python("/")
    c = dump(sampler, "/")
    after = python("/")
    for path in MOVING:
        assert type(at(c, path)) is type(at(before, path)), path
        if isinstance(at(c, path), list):
            assert len(at(c, path)) == len(at(before, path)) and all(isinstance(x, float) for x in at(c, path))
    for path in BETWEEN:
        assert at(c, path) in (at(before, path), at(after, path)), path
    skip = {"/".join(p) for p in MOVING | BETWEEN}
    found = [d for d in differences(before, c) if not any(d.startswith(s + ":") or d.startswith(s + "/") for s in skip)]
    assert found == []
    assert c["root"] is None and c["euid"] == before["euid"] and c["machine"]["architecture"] is not None


def test_dump_system_is_hidden_and_strict(sampler: str) -> None:
    usage = subprocess.run([sampler, "--help"], capture_output=True, text=True, timeout=30).stdout
    assert "--dump-system" not in usage and "--sysroot" not in usage
    contract = json.loads(subprocess.run([sampler, "--dump-contract"], capture_output=True, text=True).stdout)
    names = {o["name"]: o for o in contract["options"]}
    assert names["dump-system"]["extension"] and names["sysroot"]["extension"]
    r = subprocess.run([sampler, "--dump-system", "--sysroot="], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "sysroot" in r.stderr
