# SPDX-License-Identifier: GPL-2.0-or-later
"""A lab of boards that need no emulation, on the suite's real LAVA instance (server.py): N devices of
the stock qemu type (it has LAVA's "minimal" boot method) whose dictionary connects to a shell on the
worker itself. Each board's job, rendered by `rtgate lab` from TEMPLATE, boots "minimal" into that
shell and runs the real rtgate.sh with the real sampler as an interactive test: one measurement,
one gate, one LAVA case per board. And gunicorn's access log read back: which requests a client
made. Used by benchmarks/lab_scale.py and tests/system/test_lava_lab_scale.py. Test tooling, not
shipped."""

from __future__ import annotations

import json
import re
import shlex
from datetime import datetime
from pathlib import Path

from server import LocalLava

PROMPT = "rtgate-local# "

# The device: the stock qemu type (it has the "minimal" boot method) connected to a shell on the worker.
DEVICE_DICT = """{{% extends 'qemu.jinja2' %}}
{{% set connection_command = 'bash --noprofile --rcfile {rc} -i' %}}
"""
# The shell each job connects to: its own working directory, a prompt the job waits for.
RC = """PS1='{prompt}'
cd "$(mktemp -d -p {shells})" || exit 1
"""

SPEC = """\
platform: lab-scale
measurements:
  bench:
    sampler:
      interval_us: 10000
      duration: {seconds}s
      priority: 1
      threads: [{{name: all, count: 1}}]
    gates:
      - {{name: max, kind: max, limit_us: 10000000}}
"""

# The job rtgate lab renders for each board (the lab's `template`): the board's parameters as the
# environment of rtgate.sh, one LAVA case from rtgate.sh's own console line.
TEMPLATE = """\
device_type: {{ device_type | tojson }}
job_name: {{ job_name | tojson }}
priority: medium
visibility: public
{% if tags %}
tags:
{% for tag in tags %}
- {{ tag | tojson }}
{% endfor %}
{% endif %}
timeouts:
  job: {minutes: {{ job_minutes }}}
  action: {minutes: 10}
  connection: {minutes: 2}
actions:
- boot:
    method: minimal
    reset: false
    parameters: {kernel-start-message: ""}
    timeout: {minutes: 5}
    prompts: [{{ prompt | tojson }}]
- test:
    timeout: {minutes: {{ test_minutes }}}
    interactive:
{% for t in tests %}
{% set env = namespace(line="env") %}
{% for name, value in t.parameters.items() %}
{% set env.line = env.line ~ " " ~ name ~ "='" ~ value ~ "'" %}
{% endfor %}
    - name: {{ ("rtgate-" ~ t.measurement) | tojson }}
      prompts: [{{ prompt | tojson }}]
      script:
      - name: max-t0
        command: {{ (env.line ~ " OUTPUT_DIR=$PWD sh @SCRIPT@") | tojson }}
        successes: [{message: {{ ("rtgate: PASS " ~ t.measurement ~ "/max\\\\[t0\\\\]") | tojson }}}]
        failures: [{message: {{ ("rtgate: (FAIL|INCONCLUSIVE|ERROR) " ~ t.measurement ~ "/") | tojson }}}]
{% endfor %}
"""

_ACCESS = re.compile(
    r'\[(?P<t>[^\]]+)\] "(?P<method>[A-Z]+) (?P<path>\S+) [^"]*" (?P<status>\d+) .*"(?P<agent>[^"]*)"$'
)


def requests_of(log: Path, start: int) -> list[tuple[float, str, str]]:
    """(time, method, path) of each API request rtgate made (urllib's user agent) from byte `start` of
    the access log on: the benchmark itself asks nothing while rtgate lab runs."""
    out = []
    with log.open("rb") as f:
        f.seek(start)
        lines = f.read().decode(errors="replace").splitlines()
    for line in lines:
        m = _ACCESS.search(line)
        if not m or not m.group("agent").startswith("Python-urllib") or "/api/v0.2/" not in m.group("path"):
            continue
        t = datetime.strptime(m.group("t"), "%d/%b/%Y:%H:%M:%S %z").timestamp()
        out.append((t, m.group("method"), m.group("path")))
    return out


def kind(method: str, path: str) -> str:
    path = path.split("/api/v0.2/", 1)[1]
    if method == "POST":
        return "submit"
    if path.startswith("jobs/?") or re.fullmatch(r"jobs/\d+/", path):
        return "poll"
    return "read"  # results, logs, cancel


def most_in_a_minute(times: list[float]) -> int:
    times = sorted(times)
    best, lo = 0, 0
    for hi, t in enumerate(times):
        while t - times[lo] >= 60:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


def local_lab(base: Path, boards: int, seconds: int, sampler: str, rtgate_sh: Path) -> tuple[LocalLava, Path]:
    """The LAVA instance (not started yet) with `boards` devices, and a lab file with one board per
    device, each measuring `seconds`."""
    devices = shell_devices(base, boards)
    lava = LocalLava(base=base / "server", devices=list(devices), device_dicts=devices, access_log=True)
    return lava, lab_file(base, boards, seconds, sampler, rtgate_sh)


def shell_devices(base: Path, boards: int) -> dict[str, str]:
    """`boards` devices lab-000, lab-001... that are shells on the worker: {name: device dictionary}.
    The shells' working directories go under `base`."""
    shells = base / "shells"
    shells.mkdir(parents=True)
    rc = base / "shell.rc"
    rc.write_text(RC.format(prompt=PROMPT, shells=shells))
    return {f"lab-{i:03d}": DEVICE_DICT.format(rc=rc) for i in range(boards)}


def lab_file(base: Path, boards: int, seconds: int, sampler: str, rtgate_sh: Path) -> Path:
    """A lab file with one board per device of shell_devices(), each measuring `seconds`."""
    base.mkdir(parents=True, exist_ok=True)
    (base / "bench.yaml").write_text(SPEC.format(seconds=seconds))
    # Quoted: the checkout's path may hold a blank.
    (base / "local-shell.jinja2").write_text(TEMPLATE.replace("@SCRIPT@", shlex.quote(str(rtgate_sh))))
    lab = {
        "name": "local-shell",
        "defaults": {
            "device_type": "qemu",
            "template": str(base / "local-shell.jinja2"),
            "thresholds": str(base / "bench.yaml"),
            "inline": True,
            "prompt": PROMPT,
            "sampler": sampler,
        },
        "boards": [{"name": f"board-{i:03d}", "device": f"lab-{i:03d}"} for i in range(boards)],
    }
    path = base / "lab.yaml"
    path.write_text(json.dumps(lab))
    return path
