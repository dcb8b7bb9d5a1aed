# SPDX-License-Identifier: GPL-2.0-or-later
"""Options the rtgate command and the pytest plugin share, each declared once: name, type, default, help.

A subcommand adds one with argparse as ``--<name>`` (add_to); the pytest plugin adds it as
``--rtgate-<name>`` with the ini setting ``rtgate_<name>`` (rtgate.pytest_plugin), from the same
declaration. tests/system/test_pytest_plugin.py holds the two equal.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rtgate.core.checker import parse_duration
from rtgate.core.setup import ASPECTS


def parse_seconds(text: str) -> int:
    """A duration option's text (30, 30s, 10m, 2h, 1d) as whole seconds."""
    try:
        return parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


@dataclass(frozen=True)
class Option:
    """One shared option (see the module's docstring)."""

    name: str  # the command's option without its dashes: output-dir is --output-dir, --rtgate-output-dir
    help: str
    metavar: str | None = None  # None: a flag, which takes no value
    default: Any = None  # the value when the option is not given (the plugin: nor its ini setting)
    type: Callable[[str], Any] | None = None  # turns the option's text into its value (None: the text)

    @property
    def flag(self) -> bool:
        return self.metavar is None

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")

    @property
    def plugin_option(self) -> str:
        return f"--rtgate-{self.name}"

    @property
    def ini(self) -> str:
        """The plugin's ini setting, which is also its option's dest."""
        return f"rtgate_{self.dest}"

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        """Add it to a subcommand's parser."""
        if self.flag:
            parser.add_argument(f"--{self.name}", action="store_true", default=self.default, help=self.help)
        else:
            typed: dict[str, Any] = {} if self.type is None else {"type": self.type}
            parser.add_argument(f"--{self.name}", metavar=self.metavar, default=self.default, help=self.help, **typed)


DURATION = Option("duration", "override every measurement's duration (e.g. 10s, 5m)", "TIME", type=parse_seconds)
SAMPLER = Option("sampler", "rtgate-sampler to use", "PATH")
OUTPUT_DIR = Option(
    "output-dir", "where results, histograms and logs go (default: rtgate-results)", "DIR", default="rtgate-results"
)
STRICT = Option(
    "strict",
    "a preflight warning (what rtgate doctor warns of) makes every gate of the measurement ERROR, unmeasured",
    default=False,
)
ACCEPT_SETUP = Option(
    "accept-setup",
    "accept these differences between how the results were measured and how the thresholds ask "
    f"({', '.join(ASPECTS)}, or all); every report shows them",
    "LIST",
    default="",
)
JUNIT = Option("junit", "write JUnit XML (one testcase per gate and thread)", "FILE")
JSON = Option("json", "write the verdicts as JSON", "FILE")
ALLOW_INCONCLUSIVE = Option(
    "allow-inconclusive", "do not fail on INCONCLUSIVE gates (too few samples, stopped early)", default=False
)

# Every shared option, in the order the plugin lists them. A command adds those it takes.
SHARED = (ACCEPT_SETUP, DURATION, SAMPLER, ALLOW_INCONCLUSIVE, OUTPUT_DIR, JUNIT, JSON, STRICT)
REPORTS = (JUNIT, JSON, ALLOW_INCONCLUSIVE)  # what every command that judges gates writes and how it exits
