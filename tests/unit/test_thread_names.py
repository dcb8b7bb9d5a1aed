# SPDX-License-Identifier: GPL-2.0-or-later
"""One run, one set of thread names, whatever format it is read from.

Histogram text, T: lines and -v samples state no CPU; JSON does. Each case is the recordings of one run
(tests/fixtures/rt-tests) with the threshold file it was measured for: every format must name the threads
alike in the verdicts, the history, SQUAD's metrics and KCIDB's tests (the CPU the results state, else
the one the threshold file's plan places the thread on: thread_plan.named_cpu).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rtgate.core.gates import thread_names
from rtgate.core.setup import evaluate_measured
from rtgate.core.thread_plan import planned_cpus
from rtgate.core.thresholds import Measurement, load_thresholds
from rtgate.history.store import thread_ids as history_ids
from rtgate.parsers import load_results
from rtgate.reports.kcidb import kcidb_document
from rtgate.reports.squad import squad_documents

RT = Path(__file__).resolve().parent.parent / "fixtures" / "rt-tests"
SAME_RUN = RT / "inject-formats"

# (files of one run, the sampler section it was measured with, the thread names every format must give)
CASES = [
    pytest.param(
        [RT / "ct-24-S-h300.json", RT / "ct-24-S-h300.hist"],
        "{interval_us: 200, loops: 5000, priority: 80, threads: [{name: all, cpus: all}]}",
        ["cpu0", "cpu1"],
        id="cyclictest-2.4 -S",
    ),
    pytest.param(
        [RT / "ct-new-S-h300.json", RT / "ct-new-S-h300.hist"],
        "{interval_us: 200, loops: 5000, priority: 80, threads: [{name: all, cpus: all}]}",
        ["cpu0", "cpu1"],
        id="cyclictest-new -S",
    ),
    pytest.param(
        [RT / "ct-new-t2-H200.json", RT / "ct-new-t2-H200.hist"],
        "{interval_us: 500, loops: 3000, priority: 80, threads: [{name: all, count: 2}]}",
        ["t0", "t1"],  # not pinned: the JSON says cpu -1, the plan none
        id="cyclictest -t 2 unpinned",
    ),
    *(
        pytest.param(
            [SAME_RUN / run / "r.json", SAME_RUN / run / "h.txt", SAME_RUN / run / text],
            "{interval_us: 1000, duration: 4s, priority: 80, threads: [{name: all, cpus: [1]}]}",
            ["cpu1"],
            id=f"{run} (JSON, histogram text, {text})",
        )
        for run, text in (("ct-t", "t.txt"), ("ct-v", "v.txt"), ("rs-t", "t.txt"), ("rs-v", "v.txt"))
    ),
]


def _measurement(tmp_path: Path, section: str) -> Measurement:
    spec = tmp_path / "m.yaml"
    spec.write_text(
        f"platform: names\nmeasurements:\n  m:\n    sampler: {section}\n    gates:\n"
        "      - {name: max, kind: max, limit_us: 1000000}\n"
        "      - {name: p99, kind: percentile, percentile: 99, limit_us: 1000000}\n"
    )
    return load_thresholds(spec).measurements["m"]


@pytest.mark.parametrize(("files", "sampler_section", "names"), CASES)
def test_every_format_of_one_run_names_threads_alike(
    tmp_path: Path, files: list[Path], sampler_section: str, names: list[str]
) -> None:
    m = _measurement(tmp_path, sampler_section)
    for path in files:
        run = load_results(path)
        where = f"{path.relative_to(RT)} ({run.format})"
        verdicts = evaluate_measured(m, run, accept={"interval", "priority", "policy", "cpus", "duration"})
        assert sorted({v.thread for v in verdicts}) == names, where
        assert [thread_names(run, m)[t.index] for t in run.threads] == names, where
        assert history_ids(run.threads, planned_cpus(m, len(run.threads))) == names, where
        _, metrics = squad_documents("names", [("m", run, verdicts)], measurements={"m": m})
        thread_min = [key.split("/")[-1].removesuffix("-min") for key in metrics if key.endswith("-min")]
        assert sorted(thread_min) == names, where
        kcidb = kcidb_document("names", "names:1", "names", "m", run, verdicts, m=m)
        per_thread = {t["path"].split(".")[3] for t in kcidb["tests"] if t["path"].count(".") == 4}
        assert per_thread <= {*names, "max", "p99"} and set(names) <= per_thread, where


def test_a_gate_on_a_cpu_judges_the_thread_planned_there(tmp_path: Path) -> None:
    """Histogram text states no CPU: a gate on cpu 1 judges the thread the plan placed there, as in JSON."""
    spec = tmp_path / "m.yaml"
    spec.write_text(
        "platform: names\nmeasurements:\n  m:\n    sampler: {interval_us: 1000, duration: 4s, priority: 80, "
        "threads: [{name: all, cpus: [1]}]}\n    gates:\n      - {name: max, kind: max, limit_us: 1000, cpus: [1]}\n"
    )
    m = load_thresholds(spec).measurements["m"]
    shown = {}
    for name in ("r.json", "h.txt"):
        [v] = evaluate_measured(m, load_results(SAME_RUN / "ct-t" / name))
        shown[name] = (v.thread, v.status.value, v.value)
    assert shown["r.json"] == shown["h.txt"] == ("cpu1", "FAIL", 39817.0)
