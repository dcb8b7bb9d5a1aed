# SPDX-License-Identifier: GPL-2.0-or-later
"""The rtgate command in-process on recorded results: exit codes, reports, JUnit read back by junitparser.
The console script itself (exit status of the process, usage errors, show): tests/system/test_cli.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml, Skipped

from cli_specs import SMP, write
from conftest import ROOT, RT_TESTS, junit_figures
from in_process import rtgate


def test_check_inconclusive_exit_3_and_allowed(tmp_path: Path) -> None:
    res = str(RT_TESTS / "ct-24-S-h300.json")
    t = str(write(tmp_path, SMP.format(max=1000, rate="0.01%")))
    r = rtgate("check", t, res)
    assert r.returncode in (1, 3)
    t2 = str(write(tmp_path, SMP.format(max=1000, rate="0.1%").replace("above_us: 100", "above_us: 900"), "t2.yaml"))
    r = rtgate("check", t2, res)
    # thread 0: none above 900 us, but its 894 us wake-up skipped 4 periods of 200 us: 4 of 5004, whose
    # bound 5004 samples cannot prove under 0.1 %
    assert r.returncode == 3, r.stdout
    assert "INCONCLUSIVE" in r.stdout
    assert rtgate("check", "--allow-inconclusive", t2, res).returncode == 0


def test_junit_read_back(tmp_path: Path) -> None:
    res = str(RT_TESTS / "ct-new-t2-H200.json")  # thread 0 max 1547 us with 3 overflows, thread 1 max 145
    t = write(
        tmp_path,
        SMP.format(max=1000, rate="1%")
        .replace("cpus: all", "count: 2")
        .replace("interval_us: 200", "interval_us: 500")
        .replace("loops: 5000", "loops: 3000"),
    )
    junit = tmp_path / "out.xml"
    verdicts = tmp_path / "v.json"
    r = rtgate("check", "--junit", str(junit), "--json", str(verdicts), str(t), res)
    assert r.returncode == 1
    xml = JUnitXml.fromfile(str(junit))
    cases = {c.name: c for suite in xml for c in suite}
    assert set(cases) == {"max[t0]", "max[t1]", "over-100[t0]", "over-100[t1]"}
    assert isinstance(cases["max[t0]"].result[0], Failure)
    assert cases["max[t0]"].result[0].message == "max 1547 us > 1000 us on thread 0 (prio 80)"
    assert cases["max[t1]"].is_passed
    props = junit_figures(junit)["max[t0]"]
    assert props["value"] == "1547.0" and props["limit"] == "1000.0" and props["cycles"] == "3000"
    assert props["overflows"] == "3" and props["status"] == "FAIL"
    suite = next(iter(xml))
    # over-100[t0]: its 3 overflows (max 1547 us at -i 500) skipped 3 to 9 periods: PASS at 3, not at 9
    assert suite.name == "rtgate.vm.smp" and suite.tests == 4 and suite.failures == 2
    doc = json.loads(verdicts.read_text())
    assert doc["exit_code"] == 1
    assert [v["status"] for v in doc["verdicts"]] == ["FAIL", "PASS", "INCONCLUSIVE", "PASS"]


def test_junit_inconclusive_is_failure_or_skipped(tmp_path: Path) -> None:
    res = str(RT_TESTS / "ct-24-S-h300.json")
    t = str(write(tmp_path, SMP.format(max=1000, rate="0.1%").replace("above_us: 100", "above_us: 900")))
    for allow, kind, status in ((False, Failure, 3), (True, Skipped, 0)):
        junit = tmp_path / f"j{allow}.xml"
        r = rtgate("check", *(["--allow-inconclusive"] if allow else []), "--junit", str(junit), t, res)
        assert r.returncode == status, r.stdout + r.stderr
        case = next(c for s in JUnitXml.fromfile(str(junit)) for c in s if c.name == "over-100[cpu0]")
        assert isinstance(case.result[0], kind)
        assert case.result[0].message.startswith("INCONCLUSIVE: 4 of 5004 samples above 900 us or missed")


def test_zero_cycles_is_an_error_verdict(tmp_path: Path) -> None:
    src = json.loads((RT_TESTS / "ct-new-nohist.json").read_text())
    src["thread"]["0"].update(cycles=0, min=1000000, max=0)
    res = tmp_path / "zero.json"
    res.write_text(json.dumps(src))
    t = write(tmp_path, SMP.format(max=1000, rate="1%").replace("cpus: all", "count: 1"))
    r = rtgate("check", str(t), str(res))
    assert r.returncode == 1 and "ERROR: smp::max[t0]: no samples (0 cycles)" in r.stdout


def test_validate_shipped() -> None:
    r = rtgate("validate", *map(str, sorted((ROOT / "thresholds").rglob("*.yaml"))))
    assert r.returncode == 0 and r.stdout.count("OK:") >= 4


def test_own_verdicts_and_environment_files_are_named_not_parsed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """rtgate's verdicts JSON and run's environment file given as results: one line saying what they are
    and which results to give instead (was: "thread: missing key 'thread'")."""
    from rtgate.cli import main

    spec = tmp_path / "t.yaml"
    spec.write_text(
        "platform: p\nmeasurements:\n  m:\n"
        "    sampler: {interval_us: 500, loops: 400, threads: [{name: all, count: 2}]}\n"
        "    gates: [{name: g, kind: max, limit_us: 1000000}]\n"
    )
    shutil.copy(ROOT / "tests" / "fixtures" / "rtgate-sampler" / "rs-t2-h200.json", tmp_path / "m.json")
    assert main(["check", str(spec), str(tmp_path / "m.json"), "--json", str(tmp_path / "v.json")]) == 0
    capsys.readouterr()
    doc = json.loads((tmp_path / "v.json").read_text())
    doc["results_dir"] = "rtgate-results"  # as rtgate run writes it
    (tmp_path / "v.json").write_text(json.dumps(doc))
    assert main(["check", str(spec), str(tmp_path / "v.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"rtgate: error: {tmp_path / 'v.json'}: this is rtgate's verdicts JSON (--json of run or check), not results: "
        "give the results it judged (its results are in rtgate-results/<measurement>.json)"
    )
    env = tmp_path / "m.environment.json"
    env.write_text(json.dumps({"results": "m.json", "state": "done", "system": {}}))
    assert main(["report", str(spec), str(env), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(
        f"this is rtgate run's environment file, not results: give the results it describes, {tmp_path / 'm.json'}"
    )
    assert len(err.splitlines()) == 1


def test_a_ctrl_c_wrapped_in_another_exception_is_an_interruption(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python wraps a KeyboardInterrupt raised in a class's __set_name__ (e.g. while a command imports
    ipaddress) in a RuntimeError: still a Ctrl-C, exit 130, never an internal error."""
    from rtgate import cli

    def interrupted(name: str) -> None:
        raise RuntimeError("Error calling __set_name__") from KeyboardInterrupt()

    monkeypatch.setattr(cli.importlib, "import_module", interrupted)
    r = rtgate("validate", "x.yaml")
    assert (r.returncode, r.stderr) == (130, "rtgate: interrupted\n")
    monkeypatch.setattr(cli.importlib, "import_module", lambda name: 1 / 0)
    assert "internal error" in rtgate("validate", "x.yaml").stderr  # a bug stays one


def test_an_error_a_ctrl_c_caused_is_an_interruption(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C that cuts a read short can surface as the read's own error; with the KeyboardInterrupt
    among its causes it is the Ctrl-C (exit 130), not 'cannot read' (exit 2)."""
    from rtgate.core import checker
    from rtgate.errors import ThresholdsError

    def bad_read(path: object) -> None:
        raise ThresholdsError("cannot read: Bad file descriptor", path=str(path))

    def cut_short(path: object, *args: object) -> None:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            bad_read(path)

    (tmp_path / "t.yaml").write_text("platform: x\n")
    monkeypatch.setattr(checker, "open_input", cut_short)
    r = rtgate("validate", str(tmp_path / "t.yaml"))
    assert (r.returncode, r.stderr) == (130, "rtgate: interrupted\n")
    monkeypatch.setattr(checker, "open_input", lambda path, *args: bad_read(path))
    r = rtgate("validate", str(tmp_path / "t.yaml"))  # the same error, no Ctrl-C: still the error
    assert (r.returncode, r.stderr.split(": ")[-2:]) == (2, ["cannot read", "Bad file descriptor\n"]), r.stderr


@pytest.mark.parametrize(
    "argv, command, named",
    [
        (["run", "t.yaml", "-o", "out"], "rtgate run", "-o out"),
        (["check", "--bogus", "t.yaml"], "rtgate check", "--bogus"),  # before the missing results
        (["history", "add", "--nope", "x.json"], "rtgate history add", "--nope"),
        (["--frob"], "rtgate", "--frob"),
    ],
)
def test_an_unknown_option_is_one_line_naming_it_and_its_command(argv: list[str], command: str, named: str) -> None:
    r = rtgate(*argv)
    assert r.returncode == 2
    assert r.stderr == f"rtgate: error: unrecognized arguments: {named} (see {command} --help)\n"


def test_a_prefix_of_a_long_option_is_not_unknown(tmp_path: Path) -> None:
    t = str(write(tmp_path, SMP.format(max=1000, rate="1%")))
    r = rtgate("check", t, str(RT_TESTS / "ct-24-S-h300.json"), "--jso=" + str(tmp_path / "v.json"))
    assert r.returncode in (0, 1, 3) and (tmp_path / "v.json").exists(), r.stderr
    r = rtgate("check", "--no-such", t)
    assert r.stderr == "rtgate: error: unrecognized arguments: --no-such (see rtgate check --help)\n"
