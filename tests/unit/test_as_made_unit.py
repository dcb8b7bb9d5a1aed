# SPDX-License-Identifier: GPL-2.0-or-later
"""Results read as the tool that made them meant them, and edited or incomplete files that cannot pass (issue
46): real cyclictest -v output with its default -d, -v -q with its T: line, text told its command line (--cmdline
or NAME.cmdline), one run's thread ids in every format, rtla's unit header, rtgate-sampler's stop_reason and
rt-tests JSON without its command line. Fixtures: tests/fixtures/rt-tests/as-made/README.md."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, RT_TESTS
from in_process import rtgate
from rtgate.errors import ResultsError
from rtgate.parsers import load_results

AS_MADE = RT_TESTS / "as-made"
SAMPLER_FIX = FIXTURES / "rtgate-sampler"


def thresholds(directory: Path, settings: str, gates: str = "") -> Path:
    path = directory / "t.yaml"
    path.write_text(
        f"platform: p\nmeasurements:\n  m:\n    sampler: {{{settings}}}\n    gates:\n"
        "      - {name: max, kind: max, limit_us: 100000}\n" + gates
    )
    return path


def verdicts(directory: Path, *args: str) -> tuple[int, list[dict[str, object]], str]:
    out = directory / "v.json"
    r = rtgate("check", *args, "--json", str(out))
    assert r.returncode != 2 and "error:" not in r.stderr, r.stderr
    return r.returncode, json.loads(out.read_text())["verdicts"], r.stdout


# ---------------------------------------------------------------- cyclictest -v and -v -q


def test_v_header_with_the_default_distance_is_the_next_threads_interval(tmp_path: Path) -> None:
    """`cyclictest -i 1000 -v` prints 'Thread 0 Interval: 1500' (the default -d 500 already added): a run
    as asked is judged, not ERROR as run at -i 1500; a file asking more than 1500 is still told apart."""
    run = load_results(AS_MADE / "ct-v-d500.stdout")
    assert run.measured_setup is not None and run.measured_setup.announced_intervals == {0: 1500}
    assert run.threads[0].interval_us is None  # one header leaves d open: not read as 1500
    spec = thresholds(tmp_path, "interval_us: 1000, loops: 2000, priority: 80, threads: [{name: all, count: 1}]")
    code, vs, _ = verdicts(tmp_path, str(spec), str(AS_MADE / "ct-v-d500.stdout"))
    assert code == 0 and [v["status"] for v in vs] == ["PASS"]
    asked_more = thresholds(tmp_path, "interval_us: 2000, loops: 2000, threads: [{name: all, count: 1}]")
    _, vs, _ = verdicts(tmp_path, str(asked_more), str(AS_MADE / "ct-v-d500.stdout"))
    assert vs[0]["status"] == "ERROR" and "'Interval: 1500'" in str(vs[0]["reason"])


def test_two_v_headers_give_each_threads_interval() -> None:
    """Headers 1500 and 2000 of `-t 2 -i 1000` (d = 500): the threads ran at 1000 and 1500 us."""
    run = load_results(AS_MADE / "ct-v-t2.stdout")
    assert [t.interval_us for t in run.threads] == [1000, 1500]


def test_v_q_output_is_read_with_its_t_line(tmp_path: Path) -> None:
    """-v -q ends with a T: line: it was refused as 'not a verbose sample'; its I: and P: are the run's."""
    run = load_results(AS_MADE / "ct-vq.stdout")
    assert run.format == "verbose-text" and run.threads[0].cycles == 2000
    assert (run.threads[0].interval_us, run.threads[0].priority, run.threads[0].max) == (1000, 80, 626)
    spec = thresholds(tmp_path, "interval_us: 1000, loops: 2000, priority: 80, threads: [{name: all, count: 1}]")
    code, vs, _ = verdicts(tmp_path, str(spec), str(AS_MADE / "ct-vq.stdout"))
    assert code == 0 and vs[0]["status"] == "PASS"


def test_a_thread_whose_last_samples_were_not_printed_is_judged_by_its_t_line() -> None:
    """Honest -v -q output of two threads: thread 1's T: line counts 75 cycles, 67 samples were printed."""
    run = load_results(AS_MADE / "ct-vq-t2-l100.stdout")
    t0, t1 = run.threads
    assert (t0.cycles, t0.interval_us, t0.histogram is not None) == (100, 1000, True)
    assert (t1.cycles, t1.min, t1.max, t1.interval_us, t1.histogram) == (75, 4, 21, 1500, None)


@pytest.mark.parametrize(
    "edit,needle",
    [
        ("Max:     626", "Max:     100"),
        ("C:   2000", "C:   1999"),
        ("I:1000", "I:2000"),
    ],
)
def test_a_t_line_that_disagrees_with_its_samples_is_refused(tmp_path: Path, edit: str, needle: str) -> None:
    text = (AS_MADE / "ct-vq.stdout").read_text()
    assert edit in text
    path = tmp_path / "vq.txt"
    path.write_text(text.replace(edit, needle))
    if edit.startswith("I:"):  # one thread: the I: is what says the interval; the header bounds it (<= 1500)
        spec = thresholds(tmp_path, "interval_us: 1000, loops: 2000, threads: [{name: all, count: 1}]")
        _, vs, _ = verdicts(tmp_path, str(spec), str(path))
        assert vs[0]["status"] == "ERROR" and "-i 2000" in str(vs[0]["reason"])
        return
    with pytest.raises(ResultsError, match=r"thread 0: (C:|Max:)"):
        load_results(path)


# ---------------------------------------------------------------- text told how it was made


def _lone(tmp_path: Path, name: str) -> Path:
    """A copy without the NAME.cmdline beside it."""
    shutil.copy(AS_MADE / name, tmp_path / name)
    return tmp_path / name


ASKS_250 = "interval_us: 250, duration: 60s, priority: 80, threads: [{name: all, count: 1}]"
MISSED = "      - {name: missed, kind: missed, max_count: 100000}\n"


def test_histogram_text_is_read_at_the_runs_command_line(tmp_path: Path) -> None:
    """A -i 1000 -l 5000 run judged by a file asking -i 250 for 60 s: told its command line (--cmdline, or the
    ct-l5000-h400.cmdline beside it), the text gives the missed periods its JSON gives and the set-up
    difference, never the thresholds' reading (hundreds of periods 'missed' at 250 us) nor 'stopped early'."""
    spec = thresholds(tmp_path, ASKS_250, MISSED)
    lone = _lone(tmp_path, "ct-l5000-h400.hist")
    cmdline = (AS_MADE / "ct-l5000-h400.cmdline").read_text().strip()
    _, from_json, _ = verdicts(tmp_path, str(spec), str(AS_MADE / "ct-l5000-h400.json"), "--accept-setup", "interval")
    for args in ([str(lone), "--cmdline", cmdline], [str(AS_MADE / "ct-l5000-h400.hist")]):
        _, told, _ = verdicts(tmp_path, str(spec), *args, "--accept-setup", "interval")
        for j, h in zip(from_json, told):
            assert (h["status"], h["thread"]) == (j["status"], j["thread"]) == ("INCONCLUSIVE", "t0")
            assert h["properties"]["missed_periods"] == j["properties"]["missed_periods"]  # type: ignore[index]
            assert "shorter than asked: measured for -l 5000" in str(h["reason"])
            assert "stopped early" not in str(h["reason"])
        _, told, _ = verdicts(tmp_path, str(spec), *args)
        assert {v["status"] for v in told} == {"ERROR"} and "measured -i 1000 for -l 5000" in str(told[0]["reason"])
    # Not told: read at the thresholds' set-up, and said to be so; short, but never "stopped early".
    _, guessed, _ = verdicts(tmp_path, str(spec), str(lone))
    assert all("shorter than asked" in str(v["reason"]) and "stopped early" not in str(v["reason"]) for v in guessed)
    assert "read at the thresholds' -i 250" in str(guessed[1]["reason"])


@pytest.mark.parametrize(
    "cmdline,needle",
    [
        ("cyclictest -i 500 -l 5000 -h 400", "-i 500, but the results say"),
        ("cyclictest -t 2 -i 1000 -l 5000", "runs 2 threads"),
        ("cyclictest -N -i 1000 -l 5000", "has -N"),
    ],
)
def test_a_told_command_line_that_contradicts_the_results_is_refused(tmp_path: Path, cmdline: str, needle: str) -> None:
    spec = thresholds(tmp_path, ASKS_250)
    r = rtgate("check", str(spec), str(AS_MADE / "ct-vq.stdout"), "--cmdline", cmdline)
    assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_v_header_contradicting_the_told_command_line_is_refused(tmp_path: Path) -> None:
    spec = thresholds(tmp_path, ASKS_250)
    r = rtgate("check", str(spec), str(AS_MADE / "ct-v-d500.stdout"), "--cmdline", "cyclictest -i 1000 -d 0 -l 2000")
    assert r.returncode == 2 and "'Interval: 1500'" in r.stderr, r.stderr
    r = rtgate("check", str(spec), str(AS_MADE / "ct-v-d500.stdout"), "--cmdline", "cyclictest -i 1000 -l 2000 -v")
    assert r.returncode != 2, r.stderr


def test_cmdline_is_refused_for_results_that_record_their_own(tmp_path: Path) -> None:
    spec = thresholds(tmp_path, ASKS_250)
    r = rtgate("check", str(spec), str(AS_MADE / "ct-l5000-h400.json"), "--cmdline", "cyclictest -i 250")
    assert r.returncode == 2 and "records how it was made" in r.stderr, r.stderr


def test_one_runs_thread_ids_are_the_same_in_every_format(tmp_path: Path) -> None:
    """-t 1 without -a: cyclictest's JSON states cpu 0 (libnuma pins it unasked), its text no CPU."""
    assert load_results(AS_MADE / "ct-l5000-h400.json").threads[0].cpu == 0
    spec = thresholds(tmp_path, "interval_us: 1000, loops: 5000, priority: 80, threads: [{name: all, count: 1}]")
    ids = {
        name: [v["thread"] for v in verdicts(tmp_path, str(spec), str(AS_MADE / name))[1]]
        for name in ("ct-l5000-h400.json", "ct-l5000-h400.hist")
    }
    assert ids == {"ct-l5000-h400.json": ["t0"], "ct-l5000-h400.hist": ["t0"]}


# ---------------------------------------------------------------- edited or incomplete files


def test_rtla_unit_header_edited_to_ns_is_refused(tmp_path: Path) -> None:
    """basic.txt FAILs max <= 100 us (4850 us); its header edited to ns made it 4.85 us and PASS."""
    path = tmp_path / "basic.txt"
    path.write_text(
        (FIXTURES / "rtla" / "basic.txt")
        .read_text()
        .replace("# Time unit is microseconds (us)", "# Time unit is nanoseconds (ns)")
    )
    with pytest.raises(ResultsError, match="'# Time unit' line is not its values'"):
        load_results(path)


def _sampler_doc(**rtgate_section: object) -> dict[str, object]:
    doc = json.loads((SAMPLER_FIX / "rs-sigint-l3000.json").read_text())
    doc["rtgate"].update(rtgate_section)
    return doc  # type: ignore[no-any-return]


def test_a_sigint_stopped_run_is_not_pass(tmp_path: Path) -> None:
    spec = thresholds(tmp_path, "interval_us: 1000, loops: 3000, priority: 80, threads: [{name: all, count: 1}]")
    code, vs, _ = verdicts(tmp_path, str(spec), str(SAMPLER_FIX / "rs-sigint-l3000.json"))
    assert code == 3 and vs[0]["status"] == "INCONCLUSIVE" and "SIGINT" in str(vs[0]["reason"])


@pytest.mark.parametrize(
    "edit,needle",
    [
        ({"stop_reason": "loops"}, "stop_reason is 'loops' but signal is 'SIGINT'"),
        ({"stop_reason": "loops", "signal": None}, "accounted for 1188 periods (cycles + missed) of loops 3000"),
        ({"stop_reason": "duration", "signal": None}, "stop_reason is 'duration'"),
        ({"stop_reason": "signal", "complete": False}, "complete is false"),
        ({"loops": 1000}, "command line says 3000"),
        ({"stop_reason": "breaktrace", "signal": None}, "break_thread is null"),
    ],
)
def test_a_stop_reason_the_counts_contradict_is_refused(tmp_path: Path, edit: dict[str, object], needle: str) -> None:
    """999 cycles + 1 missed of -l 3000 edited to stop_reason 'loops' PASSed: the counts contradict it."""
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_sampler_doc(**edit)))
    with pytest.raises(ResultsError, match="contradicts itself") as e:
        load_results(path)
    assert needle in str(e.value)


def test_an_interval_the_command_line_contradicts_is_refused(tmp_path: Path) -> None:
    doc = _sampler_doc()
    doc["rtgate"]["threads"][0]["interval_us"] = 250  # type: ignore[index]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ResultsError, match="interval_us is 250 but the command line gives thread 0 1000"):
        load_results(path)


def test_rt_tests_json_without_its_command_line_is_error(tmp_path: Path) -> None:
    """-i 200 (894 us max: missed periods) read at a file's -i 1000 PASSed a missed gate it fails. Without
    "cmdline:" the set-up is unknown: ERROR, unless --cmdline or --accept-setup says what it was."""
    spec = thresholds(
        tmp_path,
        "interval_us: 1000, loops: 5000, priority: 80, threads: [{name: all, cpus: [0, 1]}]",
        "      - {name: missed, kind: missed, max_count: 0}\n",
    )
    doc = json.loads((RT_TESTS / "ct-24-S-h300.json").read_text())
    cmdline = doc.pop("cmdline:")
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    code, vs, _ = verdicts(tmp_path, str(spec), str(path))
    assert code == 1 and {v["status"] for v in vs} == {"ERROR"}
    assert 'without its "cmdline:" key' in str(vs[0]["reason"])
    _, told, _ = verdicts(tmp_path, str(spec), str(path), "--cmdline", cmdline, "--accept-setup", "interval")
    _, whole, _ = verdicts(tmp_path, str(spec), str(RT_TESTS / "ct-24-S-h300.json"), "--accept-setup", "interval")
    assert [v["status"] for v in told] == [v["status"] for v in whole] and "FAIL" in {v["status"] for v in told}
    _, accepted, _ = verdicts(tmp_path, str(spec), str(path), "--accept-setup", "interval,duration")
    assert "ERROR" not in {v["status"] for v in accepted}


def test_a_recorded_duration_request_is_what_the_sampler_ran(tmp_path: Path) -> None:
    """`rtgate run --duration` records the request, which excuses a short run ("shortened on purpose"): a
    request the sampler's own -D contradicts makes the run invalid, never excused."""
    from rtgate.core import validity

    run = load_results(SAMPLER_FIX / "rs-sigint-l3000.json")
    record = {"format": validity.RECORD_FORMAT, "valid": True, "invalid": [], "results": validity.digest(run)}
    run.environment[validity.RECORD] = {**record, "request": {"duration_s": None, "strict": False}}
    assert validity.problems(run) == []
    run.environment[validity.RECORD] = {**record, "request": {"duration_s": 1, "strict": False}}
    assert validity.problems(run) == ["its validity record asks --duration 1 s but the sampler ran -D none"]


def test_the_command_line_rtgate_run_writes_is_read_as_the_sampler_ran() -> None:
    from rtgate.parsers.cmdline import parse_cmdline

    c = parse_cmdline("rtgate-sampler --thread-cpus=0,1 --thread-priorities=80,70 -i 500 -d 0 -D 3s -h 300 -q")
    assert (c.effective_policy(), c.priorities(2), c.intervals(2), c.duration_s) == ("fifo", [80, 70], [500, 500], 3)
    assert parse_cmdline("rtgate-sampler -t 2 -i 500 -l 400 -h 200").intervals(2) == [500, 500]  # -h drops -d


@pytest.mark.parametrize(
    "fixture,edit,needle",
    [
        ("ct-24-S-h300.json", ("-i 200", "-i 5000"), "take 24.995 s, but the run lasted at most 2 s"),
        ("ct-inject-D6.json", ("-i 1000", "-i 2000"), "3000 periods expected but thread 0 has 5612 cycles"),
    ],
)
def test_a_command_line_its_counts_or_clock_contradict_is_refused(
    tmp_path: Path, fixture: str, edit: tuple[str, str], needle: str
) -> None:
    """A longer interval edited into "cmdline:" hides missed periods (387 of the injected run became 15)."""
    doc = json.loads((RT_TESTS / fixture).read_text())
    doc["cmdline:"] = doc["cmdline:"].replace(*edit)
    if "-D" in doc["cmdline:"]:
        doc.pop("end_time")  # without a wall clock, the counts -D allows still tell
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ResultsError, match="contradicts its command line") as e:
        load_results(path)
    assert needle in str(e.value)
