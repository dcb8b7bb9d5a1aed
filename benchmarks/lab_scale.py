# SPDX-License-Identifier: GPL-2.0-or-later
"""`rtgate lab` following N boards on a real lava-server: its CPU against the jobs' wall time, and
how many API requests a minute it makes.

    sudo .venv/bin/python benchmarks/lab_scale.py [--boards 50] [--seconds 60] [--baseline DIR]

The server is Debian's lava-server started as the test suite starts it (tests/lava/server.py:
PostgreSQL 15, gunicorn, lava-publisher, lava-scheduler, one lava-worker; stopped by PID), with N devices of the
stock qemu type whose dictionary connects to a shell on the worker itself: no emulation. Each
board's job boots "minimal" into that shell and runs the real rtgate.sh with the real sampler as
an interactive test (one measurement, one gate), so LAVA records one case per board.

Figures: rtgate lab's CPU (user + system of its process, from wait4) against its own wall time and
against the jobs' wall time (LAVA's start to end, summed); and the requests rtgate made, read from
gunicorn's access log by rtgate's user agent: the job polls (per minute, and the most in any 60 s),
submissions and result reads. --baseline DIR runs another rtgate (PYTHONPATH=DIR) on the same
server afterwards. Goal: CPU <= 1 % of the jobs' wall time, polls a minute bounded whatever N.
--smoke: 2 boards, 2 s jobs, workers pinging every 2 s (about 20 s; the first run on a machine also
builds lava-server's template database, half a minute). Without --smoke the worker pings every 20 s,
LAVA's default, so the jobs' wall time is a lab's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "lava"))
from local_shell import kind, local_lab, most_in_a_minute, requests_of  # noqa: E402  (the suite's own tooling)
from server import LavaSetupError, LocalLava  # noqa: E402


def jobs_wall(lava: LocalLava, ids: list[int]) -> float:
    total = 0.0
    for i in ids:
        job = lava.api(f"jobs/{i}/")
        if job.get("start_time") and job.get("end_time"):
            start = datetime.fromisoformat(job["start_time"].replace("Z", "+00:00"))
            end = datetime.fromisoformat(job["end_time"].replace("Z", "+00:00"))
            total += (end - start).total_seconds()
    return total


def run_child(argv: list[str], env: dict[str, str]) -> tuple[float, float, int, str]:
    """Wall, CPU (user + system, wait4), exit status and stderr of one child; killed if we are stopped."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env)
        try:
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here
        finally:
            if proc.returncode is None:
                proc.kill()
                proc.wait()
        err.seek(0)
        text = err.read().decode(errors="replace")
    return time.monotonic() - start, usage.ru_utime + usage.ru_stime, proc.returncode, text


def follow(lava: LocalLava, lab: Path, work: Path, label: str, pythonpath: str | None) -> dict[str, Any]:
    env = {**os.environ, "RTGATE_LAVA_URL": lava.url, "RTGATE_LAVA_TOKEN": lava.token}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    verdicts = work / f"{label}.json"
    lava.wait_idle()
    time.sleep(1)  # gunicorn writes a request's line after its answer: the last of ours first
    access = lava.base / "logs" / "access.log"
    since = access.stat().st_size
    wall, cpu, status, err = run_child(
        [sys.executable, "-m", "rtgate", "lab", str(lab), "--timeout", "30m", "--json", str(verdicts)], env
    )
    time.sleep(1)
    reqs = requests_of(access, since)
    if status != 0 or not verdicts.is_file():
        sys.exit(f"rtgate lab ({label}) exited {status}:\n{err[-4000:]}\n{lava.logs()}")
    doc = json.loads(verdicts.read_text())
    statuses = sorted({v["status"] for v in doc["verdicts"]})
    ids = sorted({int(x) for x in re.findall(r"job (\d+) submitted", err)})
    polls = [t for t, m, p in reqs if kind(m, p) == "poll"]
    return {
        "label": label,
        "wall": wall,
        "cpu": cpu,
        "jobs_wall": jobs_wall(lava, ids),
        "jobs": len(ids),
        "verdicts": f"{len(doc['verdicts'])} {'/'.join(statuses)}",
        "polls": len(polls),
        "polls_per_min": len(polls) / (wall / 60),
        "polls_max_min": most_in_a_minute(polls),
        "submits": sum(kind(m, p) == "submit" for _, m, p in reqs),
        "reads": sum(kind(m, p) == "read" for _, m, p in reqs),
    }


def show(r: dict[str, Any]) -> None:
    print(
        f"  {r['label']:<9} wall {r['wall']:7.1f} s  CPU {r['cpu']:6.2f} s = {100 * r['cpu'] / r['wall']:5.2f} % of its"
        f" wall, {100 * r['cpu'] / r['jobs_wall']:5.2f} % of the jobs' {r['jobs_wall']:.0f} s;"
        f" polls {r['polls']} ({r['polls_per_min']:.1f}/min, at most {r['polls_max_min']} in 60 s),"
        f" {r['submits']} submits, {r['reads']} reads; verdicts {r['verdicts']}"
    )


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextmanager
def started(lava: LocalLava) -> Iterator[LocalLava]:
    previous = signal.signal(signal.SIGTERM, _interrupt)  # a SIGTERM still stops every daemon below
    try:
        t0 = time.monotonic()
        lava.start()
        print(f"lava-server up in {time.monotonic() - t0:.0f} s with {len(lava.devices)} devices", flush=True)
        yield lava
    except LavaSetupError as e:
        sys.exit(f"the LAVA instance did not come up: {e}\n{lava.logs()}")
    finally:
        lava.stop()
        signal.signal(signal.SIGTERM, previous)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--boards", type=int, default=50)
    ap.add_argument("--seconds", type=int, default=60, help="each board's measurement")
    ap.add_argument("--baseline", metavar="DIR", help="another rtgate (PYTHONPATH=DIR), run after this one")
    ap.add_argument(
        "--baseline-first", action="store_true", help="run the baseline first (the first run's jobs are slower)"
    )
    ap.add_argument("--smoke", action="store_true", help="2 boards, 2 s: that the script still runs")
    args = ap.parse_args()
    if args.smoke:
        args.boards, args.seconds = 2, 2
    if os.geteuid() != 0:
        sys.exit("lava-server and lava-run need root: run with sudo")
    for tool in ("lava-server", "lava-worker", "gunicorn3", "pg_ctlcluster"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found: apt-get install lava-server lava-dispatcher postgresql")
    sampler = shutil.which("rtgate-sampler", path=str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
    if not sampler:
        sys.exit("rtgate-sampler not found: pip install . (it installs beside this Python)")
    with tempfile.TemporaryDirectory(prefix="rtgate-lab-scale-") as tmp:
        base = Path(tmp)
        lava, lab = local_lab(base, args.boards, args.seconds, sampler, ROOT / "lava-defs" / "rtgate.sh")
        if not args.smoke:
            lava.ping_interval = 20  # as a lab's workers ping (LAVA's default): the jobs' wall time as there
        results = []
        runs = [("this", None)] + ([("baseline", args.baseline)] if args.baseline else [])
        with started(lava):
            for label, pythonpath in reversed(runs) if args.baseline_first else runs:
                results.append(follow(lava, lab, base, label, pythonpath))
    load = os.getloadavg()
    print(f"rtgate lab, {args.boards} boards, {args.seconds} s measurements (load {load[0]:.1f} after):")
    for r in results:
        show(r)


if __name__ == "__main__":
    main()
