# SPDX-License-Identifier: GPL-2.0-or-later
"""`rtgate lab` on the real LAVA server at scale (issue 32): it follows every board with one job
list query per tick, not one request per board, and each board still gets its own verdict. The
boards need no emulation: each is a shell on the worker (tests/lava/local_shell.py) running the real
rtgate.sh and sampler. The figures at 50 boards are benchmarks/lab_scale.py's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from conftest import IS_ROOT, LAVA_SHELL_BOARDS, ROOT

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lava"))
from local_shell import kind, lab_file, requests_of
from server import LocalLava

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not IS_ROOT, reason="lava-server and lava-run need root")]

BOARDS = LAVA_SHELL_BOARDS


@pytest.fixture(scope="module")
def lab(lava_server: LocalLava, tmp_path_factory: pytest.TempPathFactory) -> tuple[LocalLava, Path]:
    """The suite's LAVA instance (tests/conftest.py) and a lab file with one board per shell device."""
    sampler = shutil.which("rtgate-sampler", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    assert sampler, "rtgate-sampler is installed with the package"
    path = lab_file(tmp_path_factory.mktemp("lab-scale"), BOARDS, 2, sampler, ROOT / "lava-defs" / "rtgate.sh")
    return lava_server, path


def test_one_list_query_per_tick_follows_every_board(lab: tuple[LocalLava, Path], tmp_path: Path) -> None:
    lava, path = lab
    access = lava.base / "logs" / "access.log"
    since = access.stat().st_size
    verdicts = tmp_path / "v.json"
    env = {**os.environ, "RTGATE_LAVA_URL": lava.url, "RTGATE_LAVA_TOKEN": lava.token}
    started = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "rtgate", "lab", str(path), "--poll", "1", "--timeout", "15m", "--json", str(verdicts)],
        capture_output=True,
        text=True,
        env=env,
        timeout=1200,
    )
    wall = time.monotonic() - started
    assert r.returncode == 0, r.stderr[-4000:] + lava.logs()
    # Every board its own verdict, from its own job, as when each job was asked for alone.
    got = {(v["measurement"], v["gate"], v["thread"]): v for v in json.loads(verdicts.read_text())["verdicts"]}
    boards = [f"board-{i:03d}" for i in range(BOARDS)]
    assert set(got) == {(f"{b}/bench", "max", "t0") for b in boards}, sorted(got)
    assert {v["status"] for v in got.values()} == {"PASS"}, got
    assert len({v["properties"]["lava_job"] for v in got.values()}) == BOARDS
    for b in boards:
        mine = [line for line in r.stderr.splitlines() if line.startswith(f"rtgate lab: {b}: job ")]
        assert any(" Running on lab-" in line for line in mine) and "submitted" in mine[0], r.stderr
    assert r.stderr.count(", Complete") == BOARDS, r.stderr

    reqs = requests_of(access, since)
    polls = [p for _, m, p in reqs if kind(m, p) == "poll"]
    assert polls and all(p.startswith("/api/v0.2/jobs/?id__in=") for p in polls), polls
    first = parse_qs(urlsplit(polls[0]).query)["id__in"][0].split(",")
    assert sorted(int(i) for i in first) == sorted(v["properties"]["lava_job"] for v in got.values())
    # At most one list query per tick of 1 s (and one before the first sleep): never one per board.
    assert len(polls) <= wall / 1.0 + 1, (len(polls), wall)
    assert sum(kind(m, p) == "submit" for _, m, p in reqs) == BOARDS


def test_many_jobs_take_one_request_per_hundred(lab: tuple[LocalLava, Path]) -> None:
    """A list query carries at most 100 ids (the URL stays far below gunicorn's 4094-byte request line):
    250 jobs are three requests, and the jobs the server does not know are simply absent."""
    from rtgate.lava.client import LavaServer

    lava, _ = lab
    listed = lava.api("jobs/?limit=100")["results"]
    real = sorted(int(j["id"]) for j in listed)
    assert real, "the first test submitted jobs"
    unknown = [max(real) + 1000 + i for i in range(250 - len(real))]
    server = LavaServer(lava.url, lava.token)
    found = server.jobs(real + unknown)
    assert sorted(found) == real
    assert {found[i]["state"] for i in real} == {"Finished"}
    assert server.requests == 3
