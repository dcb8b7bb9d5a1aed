# SPDX-License-Identifier: GPL-2.0-or-later
"""`rtgate lab`: gate a kernel on a lab of boards through LAVA. One job per board, rendered from the
board's threshold file, submitted through LAVA's REST API, followed until it ends, and read back.
LAVA is the distributed engine: rtgate schedules nothing itself. Every gate of every board gets a
verdict: a job that fails to boot, ends Incomplete or is cancelled makes the gates it did not
record ERROR, never missing."""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rtgate.core.checker import Checker, load_yaml_lines
from rtgate.core.gates import Status, Verdict
from rtgate.core.thresholds import ThresholdFile, find_thresholds, load_thresholds, parse_duration
from rtgate.errors import RtgateError
from rtgate.lava.client import LavaApiError, LavaServer, LavaTimeout
from rtgate.lava.job import JobOptions, render_job
from rtgate.lava.results import console_environments, console_statuses, read_log_items, verdicts_from_rows

MAX_LAB_BYTES = 1 << 20
IMAGE_KEYS = ("kernel", "ramdisk", "dtb", "rootfs")
BOARD_KEYS = {
    "name",
    "device_type",
    "device",
    "tags",
    "thresholds",
    "measurements",
    "duration",
    "cpus",
    "no_kvm",
    "arch",
    "prompt",
    "kernel_args",
    "sampler",
    "sampler_url",
    "template",
    "kernel_release",
    "inline",
    "testdef_repo",
    "testdef_revision",
    "allow_inconclusive",
    "initrd",
    *IMAGE_KEYS,
}
LAB_KEYS = {"name", "kernel_release", "defaults", "boards"}
_LINUX_VERSION = re.compile(r"Linux version (\d[^\s'\"]*)")
FINAL = "Finished"


@dataclass
class Board:
    name: str
    thresholds: ThresholdFile
    options: JobOptions
    measurements: list[str]
    kernel_release: str | None = None


@dataclass
class Lab:
    path: str
    name: str
    boards: list[Board]
    kernel_release: str | None = None


def load_lab(path: str | Path) -> Lab:
    p = Path(path)
    try:
        if p.stat().st_size > MAX_LAB_BYTES:
            raise RtgateError("larger than 1 MiB: not a lab file", path=str(p))
    except OSError as e:
        raise RtgateError(f"cannot read: {e.strerror}", path=str(p)) from e
    doc, lines = load_yaml_lines(p, error=RtgateError, what="lab")
    c = Checker(p, lines, RtgateError)  # the threshold files' checker: file, line and key alike
    if not isinstance(doc, dict):
        raise c.fail((), "a lab file is a mapping with 'boards'")
    c.mapping(doc, (), LAB_KEYS)
    defaults = doc.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise c.fail(("defaults",), "defaults is a mapping of board keys")
    c.mapping(defaults, ("defaults",), BOARD_KEYS - {"name"})
    boards_doc = doc.get("boards")
    if not isinstance(boards_doc, list) or not boards_doc:
        raise c.fail(("boards",), "boards is a non-empty list")
    boards: list[Board] = []
    seen: set[str] = set()
    for i, b in enumerate(boards_doc):
        if not isinstance(b, dict):
            raise c.fail(("boards", i), "a board is a mapping")
        c.mapping(b, ("boards", i), BOARD_KEYS)
        merged = {**defaults, **b}
        name = merged.get("name")
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
            raise c.fail(("boards", i, "name"), "every board needs a name: letters, digits, '-', '_', '.'")
        if name in seen:
            raise c.fail(("boards", i, "name"), f"two boards named {name!r}")
        seen.add(name)
        boards.append(_board(merged, p, lambda k, i=i: c.fail(("boards", i, k), "")))  # type: ignore[misc]
    return Lab(
        path=str(p),
        name=str(doc.get("name") or p.stem),
        boards=boards,
        kernel_release=str(doc["kernel_release"]) if doc.get("kernel_release") else None,
    )


def _board(b: dict[str, Any], lab_path: Path, where: Callable[[str], RtgateError]) -> Board:
    def bad(key: str, message: str) -> RtgateError:
        e = where(key)
        e.message = message
        return RtgateError(message, path=e.path, line=e.line, key=e.key)

    def text(key: str) -> str | None:
        v = b.get(key)
        if v is None:
            return None
        if not isinstance(v, (str, int, float)) or isinstance(v, bool):
            raise bad(key, f"{key} is a string")
        return str(v)

    tf, measurements = _board_thresholds(b, lab_path, text, bad)
    device_type = text("device_type")
    if not device_type:
        raise bad("device_type", "every board needs a device_type (LAVA schedules by device type)")
    images = {k: v for k in IMAGE_KEYS if (v := text(k))}
    if text("initrd") and "ramdisk" not in images:
        images["ramdisk"] = str(b["initrd"])
    duration = text("duration")
    try:
        duration_s = parse_duration(duration) if duration else None
    except ValueError as e:
        raise bad("duration", str(e)) from None
    _check_board_flags(b, bad)
    repo = text("testdef_repo")
    if not b.get("inline", False) and not repo:
        raise bad("testdef_repo", "give testdef_repo (a git repository holding lava-defs/) or inline: true")
    template = text("template")
    if template and not Path(template).is_absolute():
        template = str(lab_path.parent / template)
    opts = JobOptions(
        device_type=device_type,
        template=template,
        measurements=measurements,
        duration_s=duration_s,
        images=images,
        kernel_args=text("kernel_args"),
        arch=text("arch") or JobOptions.arch,
        prompt=text("prompt") or JobOptions.prompt,
        testdef_repository=repo,
        testdef_revision=text("testdef_revision"),
        testdef_inline=bool(b.get("inline", False)),
        sampler=text("sampler") or JobOptions.sampler,
        sampler_url=text("sampler_url") or "",
        allow_inconclusive=bool(b.get("allow_inconclusive", False)),
        no_kvm=bool(b.get("no_kvm", False)),
        cpus=b.get("cpus"),
        tags=_board_tags(b, bad),
        job_name=f"rtgate lab {b['name']}",
    )
    return Board(
        name=str(b["name"]),
        thresholds=tf,
        options=opts,
        measurements=measurements,
        kernel_release=text("kernel_release"),
    )


def _board_thresholds(
    b: dict[str, Any],
    lab_path: Path,
    text: Callable[[str], str | None],
    bad: Callable[[str, str], RtgateError],
) -> tuple[ThresholdFile, list[str]]:
    """The board's threshold file (beside the lab file, else a path or a shipped name) and the
    measurements it runs from it."""
    thresholds = text("thresholds")
    if not thresholds:
        raise bad("thresholds", "every board needs a threshold file (thresholds: PATH or a shipped name)")
    tpath = Path(thresholds)
    if not tpath.is_absolute() and (lab_path.parent / tpath).is_file():
        tpath = lab_path.parent / tpath
    else:
        tpath = find_thresholds(thresholds)
    tf = load_thresholds(tpath)
    measurements = b.get("measurements") or list(tf.measurements)
    if not isinstance(measurements, list) or not all(isinstance(m, str) for m in measurements):
        raise bad("measurements", "measurements is a list of names")
    for m in measurements:
        if m not in tf.measurements:
            raise bad("measurements", f"no measurement {m!r} in {tpath} (measurements: {', '.join(tf.measurements)})")
    return tf, measurements


def _board_tags(b: dict[str, Any], bad: Callable[[str, str], RtgateError]) -> list[str]:
    tags = b.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise bad("tags", "tags is a list of strings")
    if b.get("device"):  # a device of its own: LAVA pins a job to a device by a tag the device has
        tags = [*tags, str(b["device"])]
    return tags


def _check_board_flags(b: dict[str, Any], bad: Callable[[str, str], RtgateError]) -> None:
    cpus = b.get("cpus")
    if cpus is not None and (not isinstance(cpus, int) or isinstance(cpus, bool) or cpus < 1):
        raise bad("cpus", "cpus is a positive integer")
    for flag in ("inline", "no_kvm", "allow_inconclusive"):
        if not isinstance(b.get(flag, False), bool):
            raise bad(flag, f"{flag} is true or false")


@dataclass
class BoardRun:
    board: Board
    job_id: int | None = None
    state: str = "not submitted"
    health: str = ""
    verdicts: list[Verdict] = field(default_factory=list)
    kernel_release: str | None = None
    log_text: str = ""
    environments: dict[str, dict[str, Any]] = field(default_factory=dict)  # measurement -> the board's record


def _say(progress: Callable[[str], None], board: Board, text: str) -> None:
    progress(f"rtgate lab: {board.name}: {text}")


def _say_lab(progress: Callable[[str], None], text: str) -> None:
    progress(f"rtgate lab: {text}")


def _lava_failure(rows: list[dict[str, Any]]) -> str:
    """LAVA's own reason for an incomplete job, from its 'lava' suite (the first failed action's error)."""
    for r in rows:
        if str(r.get("suite")) == "lava" and str(r.get("result")) == "fail":
            meta = r.get("metadata") if isinstance(r.get("metadata"), dict) else {}
            msg = meta.get("error_msg") if meta else None
            if msg:
                return f"{r.get('name')}: {msg}"
    return ""


def _useful_log_line(line: bytes) -> bool:
    """The log lines collect() reads: rtgate.sh's console lines, and the kernel's banner."""
    return b"rtgate: " in line or b"Linux version" in line


def _read_job(server: LavaServer, run: BoardRun) -> tuple[list[dict[str, Any]], dict[Any, Any], str]:
    """The job's results rows and rtgate's console statuses, and what could not be read (or "")."""
    job_id = run.job_id
    if job_id is None:
        return [], {}, ""
    try:
        doc = server.results(job_id)
    except LavaApiError as e:
        run.log_text = f"cannot read the results of job {job_id}: {e}"
        server.notes.append(run.log_text)
        return [], {}, run.log_text
    rows = [r for r in doc if isinstance(r, dict)]
    try:  # only the lines read here are kept: a log of gigabytes costs one chunk of memory
        run.log_text = server.log_yaml(job_id, keep=_useful_log_line)
    except LavaApiError as e:  # LAVA's rows still count; the board's own statuses are then unknown
        run.log_text = f"cannot read the log of job {job_id}: {e}"
        server.notes.append(f"{run.log_text} (LAVA's results are used without the board's own statuses)")
        return rows, {}, ""
    items = read_log_items(run.log_text)
    run.environments = console_environments(items)
    for item in items:
        if isinstance(item, dict) and item.get("lvl") == "target" and isinstance(item.get("msg"), str):
            m = _LINUX_VERSION.search(item["msg"])  # the board's console, not LAVA's own lines
            if m:
                run.kernel_release = m.group(1)
                break
    return rows, console_statuses(items), ""


def collect(server: LavaServer, run: BoardRun, stopped_by: str | None = None, by_signal: bool = False) -> None:
    """Results of a finished (or abandoned) job as verdicts for every gate of the board."""
    board, job_id = run.board, run.job_id
    rows, console, unread = _read_job(server, run)
    if stopped_by and job_id is None:
        why = f"rtgate lab was stopped by {stopped_by} before the job was submitted"
    elif stopped_by:
        why = f"rtgate lab was stopped by {stopped_by} before LAVA job {job_id} finished (the job was cancelled)"
    elif job_id is None:
        why = f"the job was not submitted: {run.log_text}"
    elif unread:
        why = f"LAVA job {job_id} ended {run.health or run.state}, but {unread}"
    elif run.health != "Complete":
        failure = _lava_failure(rows)
        why = (
            f"LAVA job {job_id} ended {run.health or run.state}"
            + (f" ({failure})" if failure else "")
            + "; LAVA recorded no result for this gate"
        )
    else:
        why = f"LAVA job {job_id} recorded no result for this gate"
    verdicts = verdicts_from_rows(rows, board.thresholds, board.measurements, console, missing_reason=why)
    for v in verdicts:
        if by_signal and v.reason == why:
            v.status = Status.INCONCLUSIVE  # stopped early, as Ctrl-C is for `rtgate run`
        v.measurement = f"{board.name}/{v.measurement}"
        v.properties.update(
            {
                "board": board.name,
                "lava_job": job_id,
                "lava_health": run.health,
                "lava_url": server.job_url(job_id) if job_id is not None else None,
            }
        )
    run.verdicts = verdicts


class _Stop(Exception):
    pass


# Polling: one list query per tick for every job still running (LAVA's job list filtered by id), so
# the requests a minute do not grow with the boards; the tick stretches so that they stay under
# MAX_POLLS_PER_MINUTE, and backs off while the server does not answer, up to MAX_FAILED_POLLS ticks
# in a row (about ten minutes at the default --poll): then the server is given up.
MAX_POLLS_PER_MINUTE = 30
MAX_FAILED_POLLS = 8
# After cancelling: when to look whether LAVA kept each cancel (see _check_cancels), seconds apart.
CANCEL_CHECKS_S = (0.5, 1.0, 2.0)
UNCANCELLED_STATES = {"Submitted", "Scheduling", "Scheduled", "Running"}  # Canceling or Finished: kept
MAX_BACKOFF_S = 120.0
# Stopped (a signal, --timeout, a server given up): cancelling, checking the cancels and reading what the
# jobs recorded all end within this, however slowly the server answers.
STOP_GRACE_S = 5.0


class _GaveUp(Exception):
    pass


def run_lab(
    lab: Lab,
    server: LavaServer,
    progress: Callable[[str], None],
    poll_s: float = 5.0,
    timeout_s: float | None = None,
    lost: list[str] | None = None,
) -> list[BoardRun]:
    """Submit one job per board, follow them, and collect each as it finishes. One deadline covers it
    all: --timeout, then STOP_GRACE_S to cancel. A server given up is said in `lost` (the run is
    incomplete: exit 2)."""
    runs = [BoardRun(board=b) for b in lab.boards]
    stop: list[tuple[str, bool]] = []  # why, and whether it was a signal
    stopping = False

    def on_signal(signum: int, _frame: Any) -> None:
        stop.append((signal.Signals(signum).name, True))
        if not stopping:  # a second signal before the first is handled must not break the cancelling
            raise _Stop()  # also out of a blocked socket read: Python retries it only when a handler returns

    handlers = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    if timeout_s:
        server.deadline = time.monotonic() + timeout_s
    try:
        _submit(runs, server, progress)
        if not _follow(runs, server, progress, poll_s):
            stop.append((f"its --timeout ({timeout_s or 0:.0f} s)", False))
            raise _Stop()
    except (_Stop, _GaveUp) as e:
        # Ignore further signals while cancelling and collecting: the reports must still be written,
        # and all of it ends within STOP_GRACE_S.
        stopping = True
        for s in handlers:
            signal.signal(s, signal.SIG_IGN)
        server.deadline = time.monotonic() + STOP_GRACE_S
        if isinstance(e, _GaveUp):
            why, by_signal = "a LAVA server whose answers could not be used", False
            if lost is not None:
                lost.append(str(e))
        else:
            why, by_signal = stop[0] if stop else ("a signal", True)
        _abandon(runs, server, progress, why, by_signal)
    finally:
        for s, h in handlers.items():
            signal.signal(s, h)
    return runs


def _submit(runs: list[BoardRun], server: LavaServer, progress: Callable[[str], None]) -> None:
    for run in runs:
        try:
            definition = render_job(run.board.thresholds, run.board.options)
            run.job_id = server.submit(definition)
            run.state = "Submitted"
            _say(progress, run.board, f"job {run.job_id} submitted ({server.job_url(run.job_id)})")
        except LavaApiError as e:
            run.state, run.health, run.log_text = FINAL, "", str(e)
            _say(progress, run.board, f"not submitted: {e}")
            collect(server, run)


def _left(server: LavaServer) -> float:
    return server.deadline - time.monotonic() if server.deadline is not None else float("inf")


def _follow(runs: list[BoardRun], server: LavaServer, progress: Callable[[str], None], poll_s: float) -> bool:
    """Poll until every submitted job has finished (True) or the deadline passes (False). A server that
    answers no poll MAX_FAILED_POLLS times in a row is given up (_GaveUp)."""
    pending = [r for r in runs if r.job_id is not None]
    failures = 0
    while pending:
        try:
            polls = _poll(pending, server, progress)
            failures = 0
        except LavaApiError as e:
            polls, failures = 1, failures + 1
            if _left(server) > 0 and (failures >= MAX_FAILED_POLLS or not (e.retry or isinstance(e, LavaTimeout))):
                raise _GaveUp(
                    f"gave up on LAVA after {failures} failed polls in a row, cancelling the {len(pending)} "
                    f"jobs still running; the last: {e}"
                ) from None
            _say_lab(
                progress,
                f"cannot read the state of {len(pending)} jobs: {e}" + ("; retrying" if _left(server) > 0 else ""),
            )
        pending = [r for r in pending if r.state != FINAL]
        if pending and _left(server) <= 0:
            return False
        if pending:
            time.sleep(max(0.0, min(_pause(poll_s, polls, failures), _left(server))))
    return True


def _pause(poll_s: float, requests: int, failures: int) -> float:
    """Seconds to the next tick: the poll interval, doubled per failed tick (up to MAX_BACKOFF_S), and
    long enough that this tick's requests keep to MAX_POLLS_PER_MINUTE."""
    backoff = min(poll_s * 2**failures, max(poll_s, MAX_BACKOFF_S)) if failures else poll_s
    return max(backoff, requests * 60.0 / MAX_POLLS_PER_MINUTE)


def _poll(pending: list[BoardRun], server: LavaServer, progress: Callable[[str], None]) -> int:
    """One tick: every pending job's state in one list query (per 100 jobs); a job the list does not
    show is asked for alone. The polling requests it made (not the reads of finished jobs' results)."""
    before = server.requests
    jobs = server.jobs([r.job_id for r in pending if r.job_id is not None])
    polls = server.requests - before
    for run in pending:
        assert run.job_id is not None
        job = jobs.get(run.job_id)
        if job is None:
            polls += 1
            try:
                job = server.job(run.job_id)
            except LavaApiError as e:
                _say(progress, run.board, f"job {run.job_id}: {e}; retrying")
                continue
        _update(run, job, server, progress)
    return polls


def _update(run: BoardRun, job: dict[str, Any], server: LavaServer, progress: Callable[[str], None]) -> None:
    state, health = str(job.get("state")), str(job.get("health"))
    if state != run.state:
        device = f" on {job['actual_device']}" if job.get("actual_device") else ""
        _say(progress, run.board, f"job {run.job_id} {state}{device}" + (f", {health}" if state == FINAL else ""))
    run.state, run.health = state, health
    if state == FINAL:
        collect(server, run)
        _say_notes(server, run, progress)
        _say(progress, run.board, f"job {run.job_id} {health}: {_counts(run.verdicts)}")


def _say_notes(server: LavaServer, run: BoardRun, progress: Callable[[str], None]) -> None:
    """What the client cut while reading this job (a log too large), said once."""
    while server.notes:
        _say(progress, run.board, server.notes.pop(0))


def _abandon(
    runs: list[BoardRun], server: LavaServer, progress: Callable[[str], None], why: str, by_signal: bool
) -> None:
    """Stopped: cancel what still runs, and give every board its verdicts."""
    live = [run for run in runs if run.state != FINAL and run.job_id is not None]
    for run in live:
        _say(progress, run.board, f"stopped by {why}: cancelling job {run.job_id}")
        _cancel(server, run, progress)
    if live:
        _check_cancels(live, server, progress)
    for run in runs:
        if run.state == FINAL:
            if not run.verdicts:  # the signal came while its results were being read
                collect(server, run)
        else:
            collect(server, run, stopped_by=why, by_signal=by_signal)
        _say_notes(server, run, progress)


def _cancel(server: LavaServer, run: BoardRun, progress: Callable[[str], None]) -> None:
    try:
        server.cancel(run.job_id or 0)
    except LavaApiError as e:
        _say(progress, run.board, f"cannot cancel job {run.job_id}: {e}")


def _check_cancels(runs: list[BoardRun], server: LavaServer, progress: Callable[[str], None]) -> None:
    """Cancel again a job LAVA shows queued or running after its cancel. LAVA's scheduler can undo a
    cancel: it reads a Submitted job, and its save of that job as Scheduled (schedule_jobs_for_device
    in lava_scheduler_app/scheduler.py: no row lock, every column written) can land after the
    cancel has ended the job, which then runs to its end on the board. Seen within a second of a
    submission on a LAVA with lava-publisher; checked a few times, a little longer apart each."""
    ids = [run.job_id for run in runs if run.job_id is not None]
    for pause in CANCEL_CHECKS_S:
        if _left(server) <= pause:  # within the stop's grace, or not at all
            _say_lab(progress, f"no time left to check that {len(ids)} jobs were cancelled")
            return
        time.sleep(pause)
        try:
            jobs = server.jobs(ids)
        except LavaApiError as e:
            _say_lab(progress, f"cannot check that {len(ids)} jobs were cancelled: {e}")
            return
        for run in runs:
            state = jobs.get(run.job_id or 0, {}).get("state")
            if state in UNCANCELLED_STATES:
                _say(progress, run.board, f"job {run.job_id} is {state} after its cancel: cancelling it again")
                _cancel(server, run, progress)


def board_runs(runs: list[BoardRun]) -> list[tuple[str, Any]]:
    """(board/measurement, RunResult) with what each board recorded, for the reports."""
    from rtgate.lava.results import board_runs as as_runs

    out = []
    for run in runs:
        source = str(run.job_id) if run.job_id is not None else run.board.name
        out += [(f"{run.board.name}/{m}", r) for m, r in as_runs(run.environments, source)]
    return out


def _counts(verdicts: list[Verdict]) -> str:
    return ", ".join(f"{sum(v.status is s for v in verdicts)} {s.value.lower()}" for s in Status)


def record_history(
    db_path: str | Path, runs: list[BoardRun], lab: Lab, server: LavaServer, kernel_release: str | None
) -> int:
    """One history run per board and measurement: platform = board, the kernel release as given, or as
    the board's own boot log said."""
    from rtgate.core.model import RunResult
    from rtgate.history.store import HistoryDB

    added = 0
    with HistoryDB(db_path) as db:
        for run in runs:
            release = (
                kernel_release or run.board.kernel_release or lab.kernel_release or run.kernel_release or "unknown"
            )
            for m in run.board.measurements:
                mine = [v for v in run.verdicts if v.measurement == f"{run.board.name}/{m}"]
                result = RunResult(
                    source=server.job_url(run.job_id) if run.job_id is not None else lab.path,
                    format="lava",
                    unit="us",
                    threads=[],
                    complete=run.health == "Complete",
                    environment=run.environments.get(m, {}),
                )
                db.add_run(
                    result,
                    platform=run.board.name,
                    measurement=m,
                    kernel_release=release,
                    tags=[run.board.name],
                    verdicts=mine,
                    metadata={
                        "board": run.board.name,
                        "device_type": run.board.options.device_type,
                        "thresholds": run.board.thresholds.path,
                        "threshold_platform": run.board.thresholds.platform,
                        "lava_job": run.job_id,
                        "lava_health": run.health,
                        "lab": lab.name,
                    },
                )
                added += 1
    return added
