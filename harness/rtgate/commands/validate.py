# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate validate THRESHOLDS...: check threshold files without running anything."""

from __future__ import annotations

import argparse

from rtgate.commands import add_command, add_thresholds
from rtgate.core.thresholds import load_thresholds
from rtgate.core.words import plural


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "validate")
    add_thresholds(p, many=True)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    for path in args.thresholds:
        tf = load_thresholds(path)
        gates = sum(len(m.gates) for m in tf.measurements.values())
        print(
            f"OK: {path}: platform {tf.platform}, "
            f"{plural(len(tf.measurements), 'measurement')}, {plural(gates, 'gate')}"
        )
    return 0
