# SPDX-License-Identifier: GPL-2.0-or-later
"""`rtgate lab` without a server: the lab file, where the server and token come from, and the
one-line errors. The run against a real LAVA server is in test_lava_server.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT

SPEC = str(ROOT / "thresholds" / "two-thread-example.yaml")


def rtgate(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rtgate", *args], capture_output=True, text=True, env=env, timeout=120)


def write_lab(tmp_path: Path, doc: object) -> Path:
    p = tmp_path / "lab.yaml"
    p.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False))
    return p


BOARDS = {
    "defaults": {
        "device_type": "qemu",
        "thresholds": SPEC,
        "inline": True,
        "kernel": "https://lab.example/bzImage",
        "ramdisk": "https://lab.example/initrd.gz",
    },
    "boards": [{"name": "a", "device": "qemu-01"}, {"name": "b", "tags": ["rack-2"], "duration": "30s"}],
}


def test_dry_run_renders_every_board(tmp_path: Path) -> None:
    r = rtgate("lab", str(write_lab(tmp_path, BOARDS)), "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "rtgate lab: a: qemu" in r.stdout and "rtgate lab: b: qemu" in r.stdout


def test_each_board_job_carries_its_own_options(tmp_path: Path) -> None:
    """A board's own device, tags and duration reach its job; the defaults fill the rest."""
    from rtgate.lava.job import render_job
    from rtgate.lava.lab import load_lab

    lab = load_lab(write_lab(tmp_path, BOARDS))
    jobs = {b.name: yaml.safe_load(render_job(b.thresholds, b.options)) for b in lab.boards}
    assert sorted(jobs) == ["a", "b"]
    assert jobs["a"]["tags"] == ["qemu-01"] and jobs["b"]["tags"] == ["rack-2"]
    assert {j["device_type"] for j in jobs.values()} == {"qemu"}
    assert jobs["a"]["job_name"].endswith(" a") and jobs["b"]["job_name"].endswith(" b")
    # b measures 30 s per measurement, a the file's durations: b's job is the shorter one
    test_minutes = {
        n: next(a["test"]["timeout"]["minutes"] for a in j["actions"] if "test" in a) for n, j in jobs.items()
    }
    assert test_minutes["b"] < test_minutes["a"], test_minutes


@pytest.mark.parametrize(
    "doc,message",
    [
        (
            {"boards": [{"name": "a", "device_type": "qemu", "thresholds": SPEC, "inline": True, "colour": 1}]},
            "lab.yaml:6: boards[0].colour: unknown key",
        ),
        ({"boards": [{"name": "a", "device_type": "qemu", "inline": True}]}, "needs a threshold file"),
        ({"boards": [{"name": "a", "thresholds": SPEC, "inline": True}]}, "needs a device_type"),
        ({"boards": [{"name": "a", "device_type": "qemu", "thresholds": SPEC}]}, "testdef_repo"),
        (
            {
                "boards": [
                    {"name": "a", "device_type": "qemu", "thresholds": SPEC, "inline": True, "measurements": ["x"]}
                ]
            },
            "no measurement 'x'",
        ),
        (
            {
                "boards": [
                    {"name": "a", "device_type": "qemu", "thresholds": SPEC, "inline": True},
                    {"name": "a", "device_type": "qemu", "thresholds": SPEC, "inline": True},
                ]
            },
            "two boards named 'a'",
        ),
        ({"boards": []}, "boards is a non-empty list"),
        ({"board": []}, "unknown key"),
        ("boards: [\n", "invalid YAML"),
    ],
)
def test_a_bad_lab_file_is_one_line_and_exit_2(tmp_path: Path, doc: object, message: str) -> None:
    r = rtgate("lab", str(write_lab(tmp_path, doc)), "--dry-run")
    assert r.returncode == 2, r.stdout + r.stderr
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_no_server_given_is_one_line(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    lab = str(write_lab(tmp_path, BOARDS))
    r = rtgate("lab", lab, env=env)
    assert r.returncode == 2 and "RTGATE_LAVA_URL" in r.stderr, r.stderr
    r = rtgate("lab", lab, "--identity", "nope", env=env)
    assert r.returncode == 2 and "lavacli.yaml" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_identity_from_lavacli_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rtgate.lava.client import LavaServer

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "lavacli.yaml").write_text(
        yaml.safe_dump(
            {
                "lab": {"uri": "https://lava.example.org/RPC2", "username": "ci", "token": "s3cret"},
                "inuri": {"uri": "http://ci:tok@10.0.0.2:8080/RPC2/"},
                "notoken": {"uri": "https://lava.example.org/RPC2"},
            }
        )
    )
    s = LavaServer.from_identity("lab")
    assert (s.url, s.token) == ("https://lava.example.org/", "s3cret")
    s = LavaServer.from_identity("inuri")
    assert (s.url, s.token) == ("http://10.0.0.2:8080/", "tok")  # credentials never stay in the URL
    from rtgate.errors import RtgateError

    with pytest.raises(RtgateError, match="no token"):
        LavaServer.from_identity("notoken")
    monkeypatch.setenv("RTGATE_LAVA_URL", "http://127.0.0.1:9/")
    monkeypatch.setenv("RTGATE_LAVA_TOKEN", "t")
    assert LavaServer.from_environment().url == "http://127.0.0.1:9/"


def test_an_unreachable_server_is_one_line(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {"PATH": "/usr/bin:/bin", "RTGATE_LAVA_URL": f"http://127.0.0.1:{port}/", "RTGATE_LAVA_TOKEN": "t"}
    r = rtgate("lab", str(write_lab(tmp_path, BOARDS)), "--json", str(tmp_path / "v.json"), env=env)
    # Nothing could be submitted: every gate of every board is an ERROR, and the reports are written.
    assert r.returncode == 1, r.stdout + r.stderr
    import json

    doc = json.loads((tmp_path / "v.json").read_text())
    statuses = {(v["measurement"], v["gate"], v["status"]) for v in doc["verdicts"]}
    assert statuses == {(f"{b}/app", g, "ERROR") for b in ("a", "b") for g in ("a-max", "b-over-100us")}, statuses
    assert "cannot reach LAVA" in r.stderr and "Traceback" not in r.stderr
