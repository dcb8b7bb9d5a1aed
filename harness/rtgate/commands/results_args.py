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
from rtgate.parsers.cmdline import TOLD_FORMATS, apply_command


def add_accept_setup(p: argparse.ArgumentParser) -> None:
    """--accept-setup, for every subcommand that judges existing results (check, report, export)."""
    ACCEPT_SETUP.add_to(p)


def add_cmdline(p: argparse.ArgumentParser) -> None:
    """--cmdline: how results that do not record it (text formats) were made."""
    p.add_argument(
        "--cmdline",
        metavar="COMMAND",
        help='the command line that made text results, e.g. "cyclictest -i 1000 -l 20000 -h 400 -q" '
        "(default: the NAME.cmdline file beside NAME.hist, as rtgate run writes it): its interval and "
        "length are the run's, not the thresholds'",
    )


CMDLINE_MAX = 64 * 1024  # a command line file holds one line of a few hundred characters


def _told(path: str, given: str | None) -> tuple[str, str] | None:
    """The command line that made `path`, and where it was said: --cmdline, or NAME.cmdline beside it."""
    if given is not None:
        return given, "--cmdline"
    beside = Path(path).with_suffix(".cmdline")
    try:
        if not beside.is_file():
            return None
        with beside.open("r", encoding="utf-8", errors="replace") as f:
            text = f.read(CMDLINE_MAX + 1)
    except (OSError, ValueError):
        return None
    if len(text) > CMDLINE_MAX or len(text.strip().splitlines()) != 1:
        raise RtgateError(f"{beside}: not a command line (one line, as rtgate run writes it)")
    return text.strip(), str(beside)


def _recorded_measurement(tf: ThresholdFile, run: RunResult) -> str | None:
    """The measurement `rtgate run` recorded in the results (or named the file after), when the thresholds have it."""
    named = recorded_measurement(run)
    return named if named in tf.measurements else None


def map_results(
    tf: ThresholdFile, items: list[str], fmt: str = "auto", unit: str | None = None, cmdline: str | None = None
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
        told = _told(path, cmdline)
        if told is not None and (cmdline is not None or (run.format in TOLD_FORMATS and not run.cmdline)):
            apply_command(run, *told)  # --cmdline for results that record their own is refused there
        if not run.format.endswith("json"):  # rtla's header is held as load_results holds it
            # Histogram text does not say its interval: the one the thresholds ask is the yardstick.
            check_plausible_unit(run, tf.measurements[name].sampler.interval_us, explicit=unit is not None)
        out.append((name, run))
    return out
