# SPDX-License-Identifier: GPL-2.0-or-later
"""The board's console lines as LAVA stores them: rtgate's own lines only, the environment record
read back whether or not lava-server escaped its quotes (known content from a real server's log)."""

from __future__ import annotations

from pathlib import Path

from junit_views import jenkins_view
from rtgate.core.gates import Status, Verdict
from rtgate.lava.results import board_runs, console_environments, console_statuses, run_durations
from rtgate.reports.junit import UNKNOWN_DURATION, build_junit, write_junit

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


def test_junit_times_are_what_the_board_recorded_or_said_unknown(tmp_path: Path) -> None:
    """rtgate.sh records the sampler's wall time in its environment line: the JUnit time of the gates.
    A board that recorded none (an older rtgate.sh, or nothing measured) leaves time 0, said unknown."""
    timed = RECORD.replace('"recorded_by":"rtgate.sh",', '"recorded_by":"rtgate.sh","elapsed_s":12.345678,')
    untimed = RECORD.replace('"recorded_by":"rtgate.sh",', '"recorded_by":"rtgate.sh","elapsed_s":null,')
    environments = console_environments(
        [target(f"rtgate: ENVIRONMENT timed {timed}"), target(f"rtgate: ENVIRONMENT untimed {untimed}")]
    )
    verdicts = [
        Verdict(m, "max", "max", "cpu0", Status.PASS, "max 10 us <= 80 us", value=10.0, limit=80.0, unit="us")
        for m in ("timed", "untimed", "silent")  # silent: no environment line at all
    ]
    durations = run_durations(verdicts, board_runs(environments, "log"))
    assert durations == {"timed": 12.345678, "untimed": None, "silent": None}
    path = tmp_path / "j.xml"
    write_junit(str(path), build_junit("lava", verdicts, "summary", durations=durations))
    suites = {s.name: s for s in jenkins_view(path)}
    assert suites["rtgate.lava.timed"].duration == 12.346 and suites["rtgate.lava.timed"].cases[0].duration == 12.346
    assert "duration" not in suites["rtgate.lava.timed"].properties
    for name in ("untimed", "silent"):
        suite = suites[f"rtgate.lava.{name}"]
        assert suite.duration == 0 and suite.properties["duration"] == UNKNOWN_DURATION
