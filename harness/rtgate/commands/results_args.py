# SPDX-License-Identifier: GPL-2.0-or-later
"""[MEASUREMENT=]RESULTS arguments, mapped onto a threshold file's measurements (check, plot, report, export)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rtgate.core.model import RunResult
from rtgate.core.recorded import refuse_own_files
from rtgate.core.thresholds import ThresholdFile
from rtgate.errors import RtgateError
from rtgate.history.record import recorded_measurement
from rtgate.options import ACCEPT_SETUP
from rtgate.parsers import check_plausible_unit, load_results


def add_accept_setup(p: argparse.ArgumentParser) -> None:
    """--accept-setup, for every subcommand that judges existing results (check, report, export)."""
    ACCEPT_SETUP.add_to(p)


def _recorded_measurement(tf: ThresholdFile, run: RunResult) -> str | None:
    """The measurement `rtgate run` recorded in the results (or named the file after), when the thresholds have it."""
    named = recorded_measurement(run)
    return named if named in tf.measurements else None


def map_results(
    tf: ThresholdFile, items: list[str], fmt: str = "auto", unit: str | None = None
) -> list[tuple[str, RunResult]]:
    out = []
    for item in items:
        name, sep, path = item.partition("=")
        run = None
        if not sep or Path(item).exists():
            path = item
            if len(tf.measurements) == 1:
                name = next(iter(tf.measurements))
            else:
                refuse_own_files(Path(path))
                run = load_results(path, fmt, unit)
                name = _recorded_measurement(tf, run) or ""
                if not name:
                    raise RtgateError(
                        f"{tf.path} has several measurements ({', '.join(tf.measurements)}) and {item} does not "
                        f"record which it is: write MEASUREMENT={item}"
                    )
        elif name not in tf.measurements:
            raise RtgateError(f"no measurement {name!r} in {tf.path} (measurements: {', '.join(tf.measurements)})")
        if run is None:
            refuse_own_files(Path(path))
            run = load_results(path, fmt, unit)
        if not run.format.endswith("json") and run.format != "rtla-timerlat-hist":  # these state their unit
            # Histogram text does not say its interval: the one the thresholds ask is the yardstick.
            check_plausible_unit(run, tf.measurements[name].sampler.interval_us, explicit=unit is not None)
        out.append((name, run))
    return out
