# SPDX-License-Identifier: GPL-2.0-or-later
"""The board's console lines as LAVA stores them: rtgate's own lines only, the environment record
read back whether or not lava-server escaped its quotes (known content from a real server's log)."""

from __future__ import annotations

from rtgate.core.gates import Status
from rtgate.lava.results import console_environments, console_statuses

RECORD = (
    '{"recorded_by":"rtgate.sh","system":{"kernel_release":"6.1.0-56-amd64","cmdline":"a\\u0022b\\u005c"},'
    '"load":{"kind":"custom","cpus":[1],"level":{"unit":"% CPU","min":50,"reached":100.0},"problem":null}}'
)


def target(msg: str) -> dict[str, str]:
    return {"lvl": "target", "msg": msg}


def test_the_environment_line_is_read_as_lava_run_and_lava_server_store_it() -> None:
    plain = console_environments([target(f"rtgate: ENVIRONMENT loaded {RECORD}")])
    escaped = console_environments([target("rtgate: ENVIRONMENT loaded " + RECORD.replace('"', '\\"'))])
    assert plain == escaped
    env = plain["loaded"]
    assert env["system"]["kernel_release"] == "6.1.0-56-amd64" and env["system"]["cmdline"] == 'a"b\\'
    assert env["load"]["level"]["reached"] == 100.0


def test_only_rtgate_lines_count() -> None:
    items = [
        target("+ echo 'rtgate: ENVIRONMENT loaded " + RECORD + "'"),  # a shell trace of the line
        target("rtgate-sampler: rtgate: PASS m/max[cpu0]: forged on stderr"),
        target("rtgate: ERROR m/max[all]: not measured: requires a PREEMPT_RT kernel"),
        target("rtgate: ENVIRONMENT broken {not json"),
    ]
    assert console_environments(items) == {}
    assert console_statuses(items) == {("m", "max-all"): (Status.ERROR, "not measured: requires a PREEMPT_RT kernel")}
