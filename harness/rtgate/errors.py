# SPDX-License-Identifier: GPL-2.0-or-later
"""Errors that name the file, line and key or option at fault."""

from __future__ import annotations


class RtgateError(Exception):
    """An input or usage problem: the CLI prints it as one line and exits 2."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None, key: str | None = None) -> None:
        self.message = message
        self.path = path
        self.line = line
        self.key = key
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ""
        if self.path:
            where = str(self.path)
            if self.line:
                where += f":{self.line}"
            where += ": "
        if self.key:
            where += f"{self.key}: "
        return where + self.message


class ResultsError(RtgateError):
    """A results file that cannot be read completely."""


class ThresholdsError(RtgateError):
    """A threshold file that is not valid."""


class SamplerError(RtgateError):
    """The sampler could not be started or failed before measuring."""
