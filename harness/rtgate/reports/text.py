# SPDX-License-Identifier: GPL-2.0-or-later
"""The human summary: one line per gate and thread, then the overall answer."""

from __future__ import annotations

from rtgate.core.gates import Status, Verdict
from rtgate.core.setup import accepted_lines
from rtgate.core.words import plural


def limit_text(v: Verdict, units: bool = True) -> str:
    """A gate's limit as people read it: '0.1 %' for rates, '80 us' for latencies ('80' without units)."""
    return v.limit_text(units)


def summary_table(
    platform: str, verdicts: list[Verdict], allow_inconclusive: bool = False, header: list[str] | None = None
) -> str:
    """`header`: the conditions the measurements ran under, one or two lines (reports/described.py)."""
    rows = [("STATUS", "MEASUREMENT", "GATE", "THREAD", "VALUE", "LIMIT", "SAMPLES")]
    for v in verdicts:
        limit = limit_text(v)
        rows.append(
            (v.status.value, v.measurement, v.gate, v.thread, v.value_text or "-", limit or "-", str(v.samples or "-"))
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [f"rtgate: platform {platform}", *(header or [])]
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    lines.extend(accepted_lines(verdicts))
    # A critical gate (critical: true) guards what must never happen: its FAIL is listed first and
    # named again above the verdict, so it is never lost among the budget's other gates.
    critical = [v for v in verdicts if v.critical and v.status == Status.FAIL]
    first = {id(v) for v in critical}
    bad = critical + [v for v in verdicts if v.status != Status.PASS and id(v) not in first]
    # One line per distinct reason: four gates not measured for one reason are one line naming the four.
    reasons: dict[tuple[bool, str, str], list[str]] = {}
    for v in bad:
        reasons.setdefault((id(v) in first, v.status.value, v.reason), []).append(v.test_id)
    for (crit, status, reason), ids in reasons.items():
        lines.append(f"{'CRITICAL ' if crit else ''}{status}: {', '.join(ids)}: {reason}")
    quoted: set[str] = set()
    for v in bad:
        analysis = v.properties.get("analysis")
        if analysis and v.measurement not in quoted:  # rtla's analysis of the run, once per measurement
            quoted.add(v.measurement)
            lines.append(f"rtla analysis of {v.measurement}:")
            lines.extend("    " + ln for ln in str(analysis).splitlines())
    if critical:
        lines.append(
            f"rtgate: CRITICAL: {len(critical)} critical gate{'s' if len(critical) > 1 else ''} failed: "
            + ", ".join(v.test_id for v in critical)
        )
    counts = {s: sum(1 for v in verdicts if v.status == s) for s in Status}
    verdict = "PASS"
    if counts[Status.FAIL] or counts[Status.ERROR]:
        verdict = "FAIL"
    elif counts[Status.INCONCLUSIVE] and not allow_inconclusive:
        verdict = "INCONCLUSIVE"
    lines.append(
        f"rtgate: {verdict}: {counts[Status.PASS]} passed, {counts[Status.FAIL]} failed, "
        f"{counts[Status.INCONCLUSIVE]} inconclusive, {plural(counts[Status.ERROR], 'error')}"
    )
    return "\n".join(lines) + "\n"
