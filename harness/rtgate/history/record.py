# SPDX-License-Identifier: GPL-2.0-or-later
"""Adding results to the history: the release label from the data, the verdicts stored beside
the figures. Shared by `history add`, `run --history` and `lab`."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rtgate.errors import RtgateError

if TYPE_CHECKING:  # `history compare` and `trend` load this module but not the results model
    from rtgate.core.model import RunResult
    from rtgate.core.thresholds import ThresholdFile
    from rtgate.history.store import HistoryDB


def kernel_facts(run: RunResult) -> tuple[str | None, str | None]:
    """The kernel release and preemption model the results recorded, when they did."""
    from rtgate.core.recorded import recorded_environment

    env = recorded_environment(run)
    system = env.get("system") or {}
    sysinfo = env.get("sysinfo") or {}
    release = system.get("kernel_release") or sysinfo.get("release")
    config = system.get("preemption") or ("PREEMPT_RT" if sysinfo.get("realtime") == 1 else None)
    return release, config


def recorded_measurement(run: RunResult) -> str | None:
    """The measurement `rtgate run` recorded in the results (its "rtgate_run" record), or named
    the file after (rtgate-results/NAME.json, NAME.rtla.txt), when it did."""
    from pathlib import Path

    record = run.environment.get("rtgate_run")
    named = record.get("measurement") if isinstance(record, dict) else None
    if isinstance(named, str) and named:
        return named
    source = Path(run.source)
    if source.parent.name == "rtgate-results" or run.source.endswith(".rtla.txt"):
        return source.name.removesuffix(".rtla.txt").removesuffix(".json")
    return None


def release_label(run: RunResult, label: str | None, force: bool = False) -> str:
    """The release a run is stored under: the kernel its results name, unless a label is given;
    a label that contradicts the recorded kernel is refused unless forced (a mislabelled run
    silently moves a release's figures)."""
    found, _ = kernel_facts(run)
    if label is None:
        if not found:
            raise RtgateError(f"{run.source}: the results do not say the kernel release: give a release label")
        return str(found)
    if found and label != found and not force:
        raise RtgateError(
            f"{run.source}: label {label!r} contradicts the kernel the results recorded ({found}): "
            "drop the label, or give --force-label"
        )
    return label


def add_run(
    db: HistoryDB,
    run: RunResult,
    platform: str,
    measurement: str,
    tf: ThresholdFile | None,
    release: str | None = None,
    config: str | None = None,
    tags: list[str] | None = None,
    meta: dict[str, Any] | None = None,
    duration_s: int | None = None,
    pair_id: str | None = None,
    force_label: bool = False,
) -> int:
    label = release_label(run, release, force_label)
    m = tf.measurements.get(measurement) if tf else None
    verdicts: list[Any] = []
    if m:  # the gates (and the threshold loader's modules) only when there are gates to store
        from rtgate.core.setup import evaluate_measured

        verdicts = evaluate_measured(m, run, duration_s=duration_s)
    from rtgate.core.thread_plan import planned_cpus

    config = config or kernel_facts(run)[1]
    return db.add_run(
        run,
        platform,
        measurement,
        label,
        config,
        tags or [],
        meta or {},
        verdicts,
        pair_id=pair_id,
        planned=planned_cpus(m, len(run.threads)),
    )


def add_label_options(p: argparse.ArgumentParser, flag: str = "--kernel-release") -> None:
    """The release label and its override, for `history add` and `run --history`."""
    p.add_argument(
        flag,
        dest="kernel_release",
        metavar="R",
        help="release label (default: the kernel release the results recorded; a different one needs --force-label)",
    )
    p.add_argument(
        "--force-label", action="store_true", help="store under the given label even if the results name another kernel"
    )


def add_run_options(p: argparse.ArgumentParser) -> None:
    """`rtgate run`'s history options."""
    p.add_argument(
        "--history", metavar="DB", help="also add each run to this history database (file or postgresql:// URL)"
    )
    p.add_argument("--tag", action="append", default=[], metavar="TAG", help="with --history: tag the runs")
    p.add_argument("--pair-id", metavar="ID", help="with --history: the interleaved A/B pair of these runs")
    add_label_options(p, "--release")


def run_adder(args: argparse.Namespace, tf: ThresholdFile, name: str) -> Callable[[RunResult, list[Any]], None] | None:
    """For `run --history`: a callable storing each measured run with its verdicts, or None."""
    if not args.history:
        return None
    if args.kernel_release and not args.force_label:  # refused now, not after the measurement
        here = os.uname().release
        if args.kernel_release != here:
            raise RtgateError(
                f"--release {args.kernel_release!r} contradicts this machine's kernel ({here}): "
                "drop it, or give --force-label"
            )

    def add(run: RunResult, verdicts: list[Any]) -> None:
        from rtgate.history.store import HistoryDB

        with HistoryDB(args.history) as db:
            add_run(
                db,
                run,
                tf.platform,
                name,
                tf,
                release=args.kernel_release,
                tags=args.tag,
                duration_s=args.duration,
                pair_id=args.pair_id,
                force_label=args.force_label,
            )

    return add
