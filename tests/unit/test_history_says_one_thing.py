# SPDX-License-Identifier: GPL-2.0-or-later
"""What `history` prints says one thing: one verdict per comparison (a drifted host gives NOT
COMPARABLE on every line, in the text, the JSON and the plot title), figures with their unit and
never in e-notation, `--plot` in the format its suffix names, and `history add` stores the
measurement the results record. Known answers from seeded runs and a recorded fixture."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from history_sim import latencies, run_result
from in_process import rtgate
from rtgate.history.compare import NOT_COMPARABLE, Settings, compare, latest_verdict, refuse_drift, text_lines
from rtgate.history.numbers import figure_text, plain
from rtgate.history.store import HistoryDB

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
E_NOTATION = re.compile(r"\d[eE][+-]?\d")


def _env(load: float) -> dict:
    system = {"kernel_release": "6.12", "cpu_model": "Cortex-A53", "cpu_count": 2, "loadavg": [load] * 3}
    return {"system": system, "loadavg_after": [load] * 3}


def _drifted_store(path: Path) -> None:
    """The same kernel on a quiet (load 0.2 per CPU) then a busy host (3.0), latencies in the
    thousands of us: the data alone would say little, the host says the comparison is void."""
    rng = np.random.default_rng(46)
    with HistoryDB(path) as db:
        for _ in range(5):
            for release, load in (("quiet", 0.4), ("busy", 6.0)):
                run = run_result([latencies(rng, 3000, 150.0) for _ in range(2)], environment=_env(load))
                db.add_run(run, "b", "m", release)


def test_drift_is_the_one_verdict_on_every_line(tmp_path: Path) -> None:
    _drifted_store(tmp_path / "h.db")
    r = rtgate(
        "history", "compare", "--db", "h.db", "--platform", "b", "--base", "quiet", "--new", "busy", "--json", "c.json",
        cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 4, r.stdout + r.stderr
    words = [line for line in r.stdout.splitlines()[1:] if not line.startswith(("DRIFT", "NOTE"))]
    verdicts = [line for line in words if line.startswith("VERDICT")]
    assert len(verdicts) == 1 and "NOT COMPARABLE" in verdicts[0] and "drift: load_per_cpu" in verdicts[0], r.stdout
    assert "--accept-drift" in verdicts[0]
    lines = [line for line in words if not line.startswith("VERDICT")]
    assert lines and all(line.startswith("NOT COMPARABLE") for line in lines), r.stdout
    assert "NO DETECTABLE CHANGE" not in r.stdout and "would have been found" not in r.stdout
    assert "no verdict" not in r.stdout  # the VERDICT line says it, once
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["verdict"] == NOT_COMPARABLE and doc["refused"] is True and "load_per_cpu" in doc["verdict_reason"]
    assert {c["decision"] for c in doc["comparisons"]} == {NOT_COMPARABLE}
    with HistoryDB(tmp_path / "h.db") as db:
        outcome = compare(db, "b", "m", "quiet", "busy", Settings())
    title = latest_verdict(outcome, "max", "quiet", "busy") or ""
    assert "NOT COMPARABLE" in title and "drift: load_per_cpu" in title and "NO DETECTABLE" not in title, title
    refuse_drift(outcome)  # the HTML report shows these lines
    assert text_lines(outcome, False)[-1] == verdicts[0]


def test_accepted_drift_keeps_the_verdict_and_says_so(tmp_path: Path) -> None:
    _drifted_store(tmp_path / "h.db")
    r = rtgate(
        "history", "compare", "--db", "h.db", "--platform", "b", "--base", "quiet", "--new", "busy", "--accept-drift",
        cwd=tmp_path,
    )  # fmt: skip
    verdict = r.stdout.splitlines()[-1]
    assert verdict.startswith("VERDICT") and "(drift accepted)" in verdict and "NOT COMPARABLE" not in r.stdout
    assert r.returncode in (0, 1, 3) and "DRIFT (accepted)" in r.stdout


def test_figures_carry_their_unit_and_no_e_notation(tmp_path: Path) -> None:
    assert [plain(v) for v in (-3370.4, 19560.0, 0.000012, 99.95, 0.0)] == ["-3370", "19560", "0.000012", "100", "0"]
    assert figure_text(-3370.4, "us", signed=True) == "-3370 us"
    assert figure_text(0.0123, "share") == "1.23 %" and figure_text(0.0005, "share", signed=True) == "+0.05 points of %"
    _drifted_store(tmp_path / "h.db")
    r = rtgate("history", "compare", "--db", "h.db", "--platform", "b", "--base", "quiet", "--new", "busy",
               "--accept-drift", cwd=tmp_path)  # fmt: skip
    t = rtgate("history", "trend", "--db", "h.db", "--platform", "b", "--metric", "max", cwd=tmp_path)
    assert t.returncode == 0, t.stderr
    for out in (r.stdout, t.stdout):
        assert not E_NOTATION.search(out), out
    rows = [line.split() for line in t.stdout.splitlines()[2:]]
    assert rows and all(row[3] == row[5] == row[7] == "us" for row in rows), t.stdout  # median, min, max in us
    assert float(rows[0][2]) > 1000  # thousands of us, written out


def test_plot_writes_the_format_its_suffix_names(tmp_path: Path) -> None:
    _drifted_store(tmp_path / "h.db")
    magic = {"trend.svg": b"<svg", "trend.pdf": b"%PDF", "trend.png": b"\x89PNG"}
    for name, head in magic.items():
        r = rtgate("history", "trend", "--db", "h.db", "--platform", "b", "--plot", name, cwd=tmp_path)
        assert r.returncode == 0 and f"wrote {name}" in r.stdout, r.stdout + r.stderr
        data = (tmp_path / name).read_bytes()
        assert head in data[:400], (name, data[:80])
    svg = (tmp_path / "trend.svg").read_text()
    assert "NOT COMPARABLE" in svg and "drift" in svg and "NO DETECTABLE" not in svg  # the title says the drift
    for name in ("trend.xyz", "trend"):
        r = rtgate("history", "trend", "--db", "h.db", "--platform", "b", "--plot", name, cwd=tmp_path)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert f"--plot {name}" in r.stderr and ".svg" in r.stderr and not (tmp_path / name).exists()


def test_add_stores_the_measurement_the_results_record(tmp_path: Path) -> None:
    doc = json.loads((FIXTURES / "rtgate-sampler" / "rs-t2-h200.json").read_text())
    doc["rtgate_run"] = {"format": 1, "measurement": "loaded", "valid": True, "invalid": []}
    (tmp_path / "r.json").write_text(json.dumps(doc))
    args = ("history", "add", "--db", "h.db", "--platform", "b", "--kernel-release", "6.1", "--force-label")
    r = rtgate(*args, "r.json", cwd=tmp_path)
    assert r.returncode == 0 and "b loaded (r.json)" in r.stdout, r.stdout + r.stderr
    r = rtgate(*args, "idle=r.json", cwd=tmp_path)  # a name given is the name stored
    assert r.returncode == 0 and "b idle (r.json)" in r.stdout, r.stdout + r.stderr
    del doc["rtgate_run"]
    (tmp_path / "plain.json").write_text(json.dumps(doc))
    r = rtgate(*args, "plain.json", cwd=tmp_path)
    assert r.returncode == 0 and "b default (plain.json)" in r.stdout, r.stdout + r.stderr
    with HistoryDB(tmp_path / "h.db") as db:
        assert sorted(db.measurements("b")) == ["default", "idle", "loaded"]
