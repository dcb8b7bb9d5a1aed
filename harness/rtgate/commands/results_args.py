# SPDX-License-Identifier: GPL-2.0-or-later
"""[MEASUREMENT=]RESULTS arguments, mapped onto a threshold file's measurements (check, plot, report, export)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rtgate.core.model import RunResult
from rtgate.core.recorded import refuse_own_files
from rtgate.core.setup import ASPECTS
from rtgate.core.thresholds import ThresholdFile
from rtgate.errors import RtgateError
from rtgate.parsers import check_plausible_unit, load_results


def add_accept_setup(p: argparse.ArgumentParser) -> None:
    """--accept-setup, for every subcommand that judges existing results (check, report, export)."""
    p.add_argument(
        "--accept-setup",
        metavar="LIST",
        default="",
        help="accept these differences between how the results were measured and how the "
        f"thresholds ask ({', '.join(ASPECTS)}, or all); every report shows them",
    )


def map_results(
    tf: ThresholdFile, items: list[str], fmt: str = "auto", unit: str | None = None
) -> list[tuple[str, RunResult]]:
    out = []
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or Path(item).exists():
            if len(tf.measurements) != 1:
                raise RtgateError(
                    f"{tf.path} has several measurements ({', '.join(tf.measurements)}): write MEASUREMENT={item}"
                )
            name, path = next(iter(tf.measurements)), item
        elif name not in tf.measurements:
            raise RtgateError(f"no measurement {name!r} in {tf.path} (measurements: {', '.join(tf.measurements)})")
        refuse_own_files(Path(path))
        run = load_results(path, fmt, unit)
        if not run.format.endswith("json") and run.format != "rtla-timerlat-hist":  # these state their unit
            # Histogram text does not say its interval: the one the thresholds ask is the yardstick.
            check_plausible_unit(run, tf.measurements[name].sampler.interval_us, explicit=unit is not None)
        out.append((name, run))
    return out
